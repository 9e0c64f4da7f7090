/*
 * callbacks.c - the host's side of the MQD interface: the four callback
 * tables a DLL calls into.
 *
 * Every callback that can name its process counts itself on that process
 * (mqdh_stats.callbacks) through counted(); the type callbacks find the
 * process through the image the type was found in.
 */
#define _GNU_SOURCE
#include "protocol/callbacks.h"
#include "protocol/guard.h"
#include "protocol/images.h"

#include "target/types.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The session whose DLL calls this thread is making, for mqs_dprints: the
 * interface hands it no process, image or job.  Thread-local, so sessions
 * in other threads keep their own.
 */
static _Thread_local const struct session *bound;

/*
 * What this thread's DLL calls were answered before.  Every rank of a
 * program asks the same questions of the same files (a type's size, its
 * fields' offsets), and a worker answers the next rank's from here,
 * without the files' lock or libdw: keyed by the type's DWARF entry
 * (mqdh__type_key, the same in every image of its file) and the field's
 * name.  Thread-local, dropped when the thread is bound to another
 * session or to none (the files the keys point into are the session's).
 */
struct answer {
    const void *key; /* NULL: a free slot */
    char *field;     /* NULL: the type's size */
    int value;
};

static _Thread_local struct {
    struct answer *slots;
    size_t cap, n; /* cap a power of two; n < cap / 2 */
} answers;

static void answers_forget(void)
{
    for (size_t i = 0; i < answers.cap; i++)
        free(answers.slots[i].field);
    free(answers.slots);
    answers.slots = NULL;
    answers.cap = answers.n = 0;
}

/* The process this thread calls the DLL for (mqdh__callbacks_serve). */
static _Thread_local struct target *serving;

void mqdh__callbacks_bind(const struct session *s)
{
    if (s != bound)
        answers_forget();
    bound = s;
    serving = NULL;
}

void mqdh__callbacks_serve(struct target *p)
{
    serving = p;
}

static size_t answer_hash(const void *key, const char *field)
{
    size_t h = (size_t)(uintptr_t)key * 0x9e3779b97f4a7c15u;
    for (const char *c = field; c && *c; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3u;
    return h ^ (h >> 29);
}

/* key and field's slot: the answer's, or the free one it would take. */
static struct answer *answer_slot(struct answer *slots, size_t cap, const void *key,
                                  const char *field)
{
    for (size_t i = answer_hash(key, field) & (cap - 1);; i = (i + 1) & (cap - 1)) {
        struct answer *a = &slots[i];
        if (!a->key || (a->key == key && (a->field == field ||
                                          (a->field && field && !strcmp(a->field, field)))))
            return a;
    }
}

/* 1 and *value if the thread was asked this before. */
static int answer_known(const void *key, const char *field, int *value)
{
    if (!key || !answers.cap)
        return 0;
    const struct answer *a = answer_slot(answers.slots, answers.cap, key, field);
    if (!a->key)
        return 0;
    *value = a->value;
    return 1;
}

/* Keep an answer, if there is room (else it is asked again: no harm). */
static void answer_keep(const void *key, const char *field, int value)
{
    if (!key || !bound)
        return;
    if (answers.n + 1 >= answers.cap / 2) {
        size_t cap = answers.cap ? answers.cap * 2 : 256;
        struct answer *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return;
        for (size_t i = 0; i < answers.cap; i++)
            if (answers.slots[i].key)
                *answer_slot(slots, cap, answers.slots[i].key, answers.slots[i].field) =
                    answers.slots[i];
        free(answers.slots);
        answers.slots = slots;
        answers.cap = cap;
    }
    char *copy = field ? strdup(field) : NULL;
    if (field && !copy)
        return;
    *answer_slot(answers.slots, answers.cap, key, field) =
        (struct answer){.key = key, .field = copy, .value = value};
    answers.n++;
}

/* The one place a callback is counted. */
static struct target *counted(struct target *p)
{
    p->out->stats.callbacks++;
    return p;
}

static struct target *of_process(mqs_process *process)
{
    return counted((struct target *)process);
}

/* The process an image's callback answers for: the one the DLL is
 * serving, if the image is its; else the one the image was set up for. */
static struct target *of_image(mqs_image *image)
{
    const struct dll_image *di = (const struct dll_image *)image;
    return counted(serving && serving->image == di ? serving : di->owner);
}

/* ---------------------------------------------------------------- basic */

static void *cb_malloc(size_t n)
{
    mqdh__guard_point();
    return malloc(n);
}

static void cb_free(void *p)
{
    mqdh__guard_point();
    free(p);
}

static void cb_dprints(const char *s)
{
    mqdh__guard_point();
    char shown[1024]; /* what the DLL says may quote the target */
    if (bound && bound->opt->verbose && s) {
        mqdh_escape(shown, sizeof shown, s);
        fprintf(stderr, "mqdump: DLL: %s\n", shown);
    }
}

static char *cb_errorstring(int code)
{
    mqdh__guard_point();
    switch ((enum mqdh__cb_error)code) {
    case MQDH__CB_ERR_READ:
        return (char *)"cannot read target memory";
    case MQDH__CB_ERR_NOSYM:
        return (char *)"symbol not found";
    case MQDH__CB_ERR_BADARG:
        return (char *)"invalid argument from the DLL";
    }
    return (char *)"unknown host error";
}

static void cb_put_image_info(mqs_image *image, mqs_image_info *info)
{
    mqdh__guard_point();
    of_image(image);
    ((struct dll_image *)image)->info = info;
}

static mqs_image_info *cb_get_image_info(mqs_image *image)
{
    mqdh__guard_point();
    of_image(image);
    return ((struct dll_image *)image)->info;
}

static void cb_put_process_info(mqs_process *process, mqs_process_info *info)
{
    mqdh__guard_point();
    of_process(process)->info = info;
}

static mqs_process_info *cb_get_process_info(mqs_process *process)
{
    mqdh__guard_point();
    return of_process(process)->info;
}

static void cb_put_job_info(mqs_job *job, mqs_job_info *info)
{
    mqdh__guard_point();
    ((struct session *)job)->info = info;
}

static mqs_job_info *cb_get_job_info(mqs_job *job)
{
    mqdh__guard_point();
    return ((struct session *)job)->info;
}

const mqs_basic_callbacks mqdh__basic_callbacks = {
    .mqs_malloc_fp = cb_malloc,
    .mqs_free_fp = cb_free,
    .mqs_dprints_fp = cb_dprints,
    .mqs_errorstring_fp = cb_errorstring,
    .mqs_put_image_info_fp = cb_put_image_info,
    .mqs_get_image_info_fp = cb_get_image_info,
    .mqs_put_process_info_fp = cb_put_process_info,
    .mqs_get_process_info_fp = cb_get_process_info,
    .mqs_put_job_info_fp = cb_put_job_info,
    .mqs_get_job_info_fp = cb_get_job_info,
};

/* ---------------------------------------------------------------- image */

static void cb_get_type_sizes(mqs_process *process, mqs_target_type_sizes *ts)
{
    mqdh__guard_point();
    int wide = of_process(process)->elf.elf_class == 2; /* ELFCLASS64 */
    /* Only the five specified fields: the DLL's buffer may be no larger. */
    ts->short_size = 2;
    ts->int_size = 4;
    ts->long_size = wide ? 8 : 4;
    ts->long_long_size = 8;
    ts->pointer_size = wide ? 8 : 4;
}

/* The files (libdw, libelf) are the session's: one worker at a time. */
static void files_lock(const struct target *p)
{
    pthread_mutex_lock(&p->session->files_lock);
}

static void files_unlock(const struct target *p)
{
    pthread_mutex_unlock(&p->session->files_lock);
}

static int find_symbol(mqs_image *image, const char *name, int functions, mqs_taddr_t *addr)
{
    struct target *p = of_image(image);
    uint64_t a;
    if (!name)
        return MQDH__CB_ERR_BADARG;
    files_lock(p);
    int rc = mqdh__images_symbol(p, name, functions, &a);
    files_unlock(p);
    if (rc != 0)
        return MQDH__CB_ERR_NOSYM;
    if (addr)
        *addr = (mqs_taddr_t)a;
    return mqs_ok;
}

static int cb_find_function(mqs_image *image, char *name, mqs_lang_code lang, mqs_taddr_t *addr)
{
    mqdh__guard_point();
    (void)lang;
    return find_symbol(image, name, 1, addr);
}

static int cb_find_symbol(mqs_image *image, char *name, mqs_taddr_t *addr)
{
    mqdh__guard_point();
    return find_symbol(image, name, 0, addr);
}

static mqs_type *cb_find_type(mqs_image *image, char *name, mqs_lang_code lang)
{
    mqdh__guard_point();
    (void)lang;
    struct target *p = of_image(image);
    if (!name)
        return NULL;
    files_lock(p);
    mqs_type *t = (mqs_type *)mqdh__type_find(&p->elf, name);
    files_unlock(p);
    return t;
}

/* A type is counted on the process whose image it was found in. */
static struct target *of_type(const struct mqdh__type *t)
{
    return counted(mqdh__type_image(t)->owner);
}

static int cb_field_offset(mqs_type *type, char *field)
{
    mqdh__guard_point();
    const struct mqdh__type *t = (const struct mqdh__type *)type;
    if (!t)
        return -1;
    struct target *p = of_type(t);
    const void *key = mqdh__type_key(t);
    int off;
    if (!field || answer_known(key, field, &off))
        return field ? off : -1;
    files_lock(p);
    off = mqdh__type_field_offset(t, field);
    files_unlock(p);
    answer_keep(key, field, off);
    return off;
}

static int cb_sizeof(mqs_type *type)
{
    mqdh__guard_point();
    const struct mqdh__type *t = (const struct mqdh__type *)type;
    if (!t)
        return -1;
    struct target *p = of_type(t);
    const void *key = mqdh__type_key(t);
    int size;
    if (answer_known(key, NULL, &size))
        return size;
    files_lock(p);
    size = mqdh__type_size(t);
    files_unlock(p);
    answer_keep(key, NULL, size);
    return size;
}

const mqs_image_callbacks mqdh__image_callbacks = {
    .mqs_get_type_sizes_fp = cb_get_type_sizes,
    .mqs_find_function_fp = cb_find_function,
    .mqs_find_symbol_fp = cb_find_symbol,
    .mqs_find_type_fp = cb_find_type,
    .mqs_field_offset_fp = cb_field_offset,
    .mqs_sizeof_fp = cb_sizeof,
};

/* ---------------------------------------------------------------- process */

static int cb_get_global_rank(mqs_process *process)
{
    mqdh__guard_point();
    return of_process(process)->out->rank;
}

static mqs_image *cb_get_image(mqs_process *process)
{
    mqdh__guard_point();
    return (mqs_image *)of_process(process)->image;
}

static int cb_fetch_data(mqs_process *process, mqs_taddr_t addr, int size, void *buf)
{
    mqdh__guard_point();
    struct target *p = of_process(process);
    p->out->stats.fetches++;
    if (size < 0 || (size > 0 && !buf))
        return MQDH__CB_ERR_BADARG;
    return mqdh__mem_read(&p->mem, addr, buf, (size_t)size) == 0 ? mqs_ok : MQDH__CB_ERR_READ;
}

static void cb_target_to_host(mqs_process *process, const void *in, void *out, int size)
{
    mqdh__guard_point();
    mqdh__target_to_host(of_process(process)->elf.big_endian, in, out, size);
}

static mqs_job *cb_get_process_job(mqs_process *process)
{
    mqdh__guard_point();
    return (mqs_job *)of_process(process)->session;
}

static int cb_get_process_identity(mqs_process *process)
{
    mqdh__guard_point();
    return of_process(process)->out->identity;
}

const mqs_process_callbacks mqdh__process_callbacks = {
    .mqs_get_global_rank_fp = cb_get_global_rank,
    .mqs_get_image_fp = cb_get_image,
    .mqs_fetch_data_fp = cb_fetch_data,
    .mqs_target_to_host_fp = cb_target_to_host,
    .mqs_get_process_job_fp = cb_get_process_job,
    .mqs_get_process_identity_fp = cb_get_process_identity,
};

/* ---------------------------------------------------------------- job */

static mqs_process *cb_get_process(mqs_job *job, int identity)
{
    mqdh__guard_point();
    struct session *s = (struct session *)job;
    for (int i = 0; i < s->n; i++)
        if (s->targets[i].out->identity == identity)
            return (mqs_process *)&s->targets[i];
    return NULL;
}

const mqs_job_callbacks mqdh__job_callbacks = {
    .mqs_get_process_fp = cb_get_process,
};
