/*
 * dump.c - run the MQD protocol over a set of stopped processes.
 *
 * The flow is the specification's: attach every process -> per process:
 * choose and load the DLL, mqs_setup_image, mqs_image_has_queues,
 * mqs_setup_process, mqs_process_has_queues, (MPI-2: mqs_setup_job and
 * mqs_set_process_identity), mqs_update_communicator_list, iterate
 * communicators and their three queues -> destroy what the DLL hung on the
 * host's objects -> detach every process.
 */
#define _GNU_SOURCE
#include "mqdhost.h"

#include "analyze.h"
#include "attach.h"
#include "image.h"
#include "loader.h"
#include "memory.h"
#include "proc.h"
#include "types.h"
#include "where.h"

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Host error codes handed to the DLL from callbacks (never mqs_ok). */
enum { CB_ERR_READ = 1001, CB_ERR_NOSYM, CB_ERR_BADARG };

struct hjob;

/* mqs_image: the process's objects, as the DLL sees them. */
struct himage {
    struct hproc *proc;
    mqs_image_info *info;
};

/* mqs_process. */
struct hproc {
    struct mqdh_process *out;
    struct himage image;
    struct mqdh_image img;
    int have_img;
    struct mqdh_attach att;
    struct mqdh_mem mem;
    struct mqdh_dll *dll;
    mqs_process_info *info;
    struct hjob *job;
    int image_set_up, process_set_up;
    int ready; /* set up (and named): its queues can be read */
};

/* mqs_job: every process dumped together. */
struct hjob {
    int n;
    struct hproc *procs;
    mqs_job_info *info;
    int verbose;
    struct mqdh_dll *job_dll; /* the MPI-2 DLL mqs_setup_job was called for */
    struct mqdh_typeshare *types; /* DWARF indexes shared by every image */
    /* mqd's own DLL (mqdh_own_dll), looked up once per dump: 0 not yet,
     * 1 found in own_dll, -1 not installed. */
    int own_state;
    char own_dll[PATH_MAX];
};

static const char *const error_messages[] = {
#define MQDH_MSG_(name, value, msg) [value] = msg,
    MQDH_ERRORS(MQDH_MSG_)
#undef MQDH_MSG_
};

const char *mqdh_strerror(int code)
{
    if (code >= 0 && code < (int)(sizeof error_messages / sizeof error_messages[0]) &&
        error_messages[code])
        return error_messages[code];
    return "unknown mqdhost error";
}

/* ---------------------------------------------------------------- callbacks */

static struct hjob *current_job; /* for the basic callbacks, which get no handle */

static void *cb_malloc(size_t n)
{
    return malloc(n);
}

static void cb_free(void *p)
{
    free(p);
}

static void cb_dprints(const char *s)
{
    if (current_job && current_job->verbose && s)
        fprintf(stderr, "mqdump: DLL: %s\n", s);
}

static char *cb_errorstring(int code)
{
    switch (code) {
    case CB_ERR_READ:
        return (char *)"cannot read target memory";
    case CB_ERR_NOSYM:
        return (char *)"symbol not found";
    case CB_ERR_BADARG:
        return (char *)"invalid argument from the DLL";
    default:
        return (char *)"unknown host error";
    }
}

static void cb_put_image_info(mqs_image *image, mqs_image_info *info)
{
    struct himage *im = (struct himage *)image;
    im->proc->out->stats.callbacks++;
    im->info = info;
}

static mqs_image_info *cb_get_image_info(mqs_image *image)
{
    struct himage *im = (struct himage *)image;
    im->proc->out->stats.callbacks++;
    return im->info;
}

static void cb_put_process_info(mqs_process *process, mqs_process_info *info)
{
    struct hproc *p = (struct hproc *)process;
    p->out->stats.callbacks++;
    p->info = info;
}

static mqs_process_info *cb_get_process_info(mqs_process *process)
{
    struct hproc *p = (struct hproc *)process;
    p->out->stats.callbacks++;
    return p->info;
}

static void cb_put_job_info(mqs_job *job, mqs_job_info *info)
{
    ((struct hjob *)job)->info = info;
}

static mqs_job_info *cb_get_job_info(mqs_job *job)
{
    return ((struct hjob *)job)->info;
}

static const mqs_basic_callbacks basic_callbacks = {
    cb_malloc,        cb_free,           cb_dprints,          cb_errorstring,
    cb_put_image_info, cb_get_image_info, cb_put_process_info, cb_get_process_info,
    cb_put_job_info,  cb_get_job_info,
};

static void cb_get_type_sizes(mqs_process *process, mqs_target_type_sizes *ts)
{
    struct hproc *p = (struct hproc *)process;
    p->out->stats.callbacks++;
    int wide = p->img.elf_class == 2; /* ELFCLASS64 */
    /* Only the five specified fields: the DLL's buffer may be no larger. */
    ts->short_size = 2;
    ts->int_size = 4;
    ts->long_size = wide ? 8 : 4;
    ts->long_long_size = 8;
    ts->pointer_size = wide ? 8 : 4;
}

static int find_symbol(mqs_image *image, char *name, int functions, mqs_taddr_t *addr)
{
    struct himage *im = (struct himage *)image;
    im->proc->out->stats.callbacks++;
    uint64_t a;
    if (!name)
        return CB_ERR_BADARG;
    if (mqdh_image_symbol(&im->proc->img, name, functions, &a, NULL) != 0)
        return CB_ERR_NOSYM;
    if (addr)
        *addr = (mqs_taddr_t)a;
    return mqs_ok;
}

static int cb_find_function(mqs_image *image, char *name, mqs_lang_code lang, mqs_taddr_t *addr)
{
    (void)lang;
    return find_symbol(image, name, 1, addr);
}

static int cb_find_symbol(mqs_image *image, char *name, mqs_taddr_t *addr)
{
    return find_symbol(image, name, 0, addr);
}

static mqs_type *cb_find_type(mqs_image *image, char *name, mqs_lang_code lang)
{
    (void)lang;
    struct himage *im = (struct himage *)image;
    im->proc->out->stats.callbacks++;
    return name ? (mqs_type *)mqdh_type_find(&im->proc->img, name) : NULL;
}

/* Type callbacks get no process: count them on the job being dumped. */
static struct hproc *current_proc;

static int cb_field_offset(mqs_type *type, char *field)
{
    if (current_proc)
        current_proc->out->stats.callbacks++;
    return mqdh_type_field_offset((struct mqdh_type *)type, field);
}

static int cb_sizeof(mqs_type *type)
{
    if (current_proc)
        current_proc->out->stats.callbacks++;
    return mqdh_type_size((struct mqdh_type *)type);
}

static const mqs_image_callbacks image_callbacks = {
    cb_get_type_sizes, cb_find_function, cb_find_symbol, cb_find_type, cb_field_offset, cb_sizeof,
};

static int cb_get_global_rank(mqs_process *process)
{
    struct hproc *p = (struct hproc *)process;
    p->out->stats.callbacks++;
    return p->out->rank;
}

static mqs_image *cb_get_image(mqs_process *process)
{
    struct hproc *p = (struct hproc *)process;
    p->out->stats.callbacks++;
    return (mqs_image *)&p->image;
}

static int cb_fetch_data(mqs_process *process, mqs_taddr_t addr, int size, void *buf)
{
    struct hproc *p = (struct hproc *)process;
    p->out->stats.callbacks++;
    p->out->stats.fetches++;
    if (size < 0 || (size > 0 && !buf))
        return CB_ERR_BADARG;
    return mqdh_mem_read(&p->mem, addr, buf, (size_t)size) == 0 ? mqs_ok : CB_ERR_READ;
}

static void cb_target_to_host(mqs_process *process, const void *in, void *out, int size)
{
    struct hproc *p = (struct hproc *)process;
    p->out->stats.callbacks++;
    mqdh_target_to_host(p->img.big_endian, in, out, size);
}

static mqs_job *cb_get_process_job(mqs_process *process)
{
    struct hproc *p = (struct hproc *)process;
    p->out->stats.callbacks++;
    return (mqs_job *)p->job;
}

static int cb_get_process_identity(mqs_process *process)
{
    struct hproc *p = (struct hproc *)process;
    p->out->stats.callbacks++;
    return p->out->identity;
}

static const mqs_process_callbacks process_callbacks = {
    cb_get_global_rank, cb_get_image,       cb_fetch_data,
    cb_target_to_host,  cb_get_process_job, cb_get_process_identity,
};

static mqs_process *cb_get_process(mqs_job *job, int identity)
{
    struct hjob *j = (struct hjob *)job;
    for (int i = 0; i < j->n; i++)
        if (j->procs[i].out->identity == identity)
            return (mqs_process *)&j->procs[i];
    return NULL;
}

static const mqs_job_callbacks job_callbacks = {cb_get_process};

/* ---------------------------------------------------------------- helpers */

static void set_error(struct hproc *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void set_error(struct hproc *p, const char *fmt, ...)
{
    if (p->out->error)
        return; /* the first error is the one that matters */
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&p->out->error, fmt, ap) < 0)
        p->out->error = NULL;
    va_end(ap);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The DLLs the target names: MPIR_dll_name (MPICH and most MPIs), then each
 * entry of Open MPI's NULL-terminated char **mpimsgq_dll_locations.  Up to
 * max paths of PATH_MAX into paths; returns how many.
 */
enum { MAX_TARGET_DLLS = 8, DLL_PATH_MAX = 4096 };

static int target_dlls(struct hproc *p, char (*paths)[DLL_PATH_MAX], int max)
{
    int n = 0;
    uint64_t addr;
    if (mqdh_image_symbol(&p->img, "MPIR_dll_name", 0, &addr, NULL) == 0 &&
        mqdh_mem_read_string(&p->mem, addr, paths[n], DLL_PATH_MAX) == 0 && paths[n][0])
        n++;
    int ptr_size = p->img.elf_class == 2 ? 8 : 4;
    int be = p->img.big_endian;
    uint64_t list, entry;
    if (mqdh_image_symbol(&p->img, "mpimsgq_dll_locations", 0, &addr, NULL) != 0 ||
        mqdh_mem_read_word(&p->mem, addr, ptr_size, be, &list) != 0)
        return n;
    for (int i = 0; list && i < 64 && n < max; i++) {
        if (mqdh_mem_read_word(&p->mem, list + (uint64_t)i * (uint64_t)ptr_size, ptr_size, be,
                               &entry) != 0 ||
            !entry)
            break;
        if (mqdh_mem_read_string(&p->mem, entry, paths[n], DLL_PATH_MAX) == 0 && paths[n][0])
            n++;
    }
    return n;
}

int mqdh_own_dll(char *buf, size_t len)
{
    static const char *const where[] = {"", "/../lib"};
    Dl_info info;
    char self[PATH_MAX];
    /* This library's own file: libmqdhost.so, or a program it is linked into. */
    if (!dladdr((void *)mqdh_own_dll, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, self))
        return -1;
    char *dir = dirname(self);
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s%s/libmqd_mpich.so", dir, where[i]);
        char real[PATH_MAX];
        if (realpath(path, real) && access(real, R_OK) == 0 &&
            (size_t)snprintf(buf, len, "%s", real) < len)
            return 0;
    }
    return -1;
}

/*
 * Is this a process of an MPI mqd ships a DLL for?  MPICH (and the MPIs
 * built from it) is known by its symbols, not by the name of the DLL it
 * names: the communicator list of a build with debugger support, else the
 * version strings every MPICH build has.  The symbol found goes in why.
 */
static int is_mpich(struct hproc *p, const char **why)
{
    static const char *const marks[] = {"MPIR_All_communicators", "MPII_Version_device"};
    uint64_t a;
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        if (mqdh_image_symbol(&p->img, marks[i], 0, &a, NULL) == 0) {
            *why = marks[i];
            return 1;
        }
    }
    return 0;
}

static void set_dll(struct hproc *p, const char *path, enum mqdh_dll_source src, const char *fmt,
                    ...) __attribute__((format(printf, 4, 5)));

static void set_dll(struct hproc *p, const char *path, enum mqdh_dll_source src, const char *fmt,
                    ...)
{
    va_list ap;
    free(p->out->dll);
    free(p->out->dll_why);
    p->out->dll = strdup(path);
    p->out->dll_source = src;
    va_start(ap, fmt);
    if (vasprintf(&p->out->dll_why, fmt, ap) < 0)
        p->out->dll_why = NULL;
    va_end(ap);
}

/*
 * The DLL for process p, in the order DESIGN.md gives: the caller's
 * (--dll), $MQD_DLL, mqd's own for an MPI it ships one for, then the one
 * the target names, under the trust rule.
 */
static int choose_dll(struct hproc *p, const struct mqdh_options *opt)
{
    char paths[MAX_TARGET_DLLS][DLL_PATH_MAX];
    char why[1024] = "", first_why[1024] = "";
    const char *env = getenv("MQD_DLL"), *mark = NULL;
    int mpich = is_mpich(p, &mark), want_own = mpich && !(opt && opt->target_dll);
    struct hjob *job = p->job;
    if (want_own && !job->own_state)
        job->own_state = mqdh_own_dll(job->own_dll, sizeof job->own_dll) == 0 ? 1 : -1;
    if (opt && opt->dll) {
        set_dll(p, opt->dll, MQDH_DLL_OPTION, "given with --dll");
    } else if (env && *env) {
        set_dll(p, env, MQDH_DLL_ENVIRONMENT, "given in $MQD_DLL");
    } else if (want_own && job->own_state > 0) {
        set_dll(p, job->own_dll, MQDH_DLL_OWN, "mqd's DLL for MPICH: the process has %s", mark);
    } else {
        int n = target_dlls(p, paths, MAX_TARGET_DLLS);
        if (n == 0) {
            set_error(p, "no debug DLL: the process names none in MPIR_dll_name or "
                      "mpimsgq_dll_locations (not an MPI program, or an MPI built without "
                      "debugger support)%s and none was given with --dll",
                      want_own ? ", mqd's own libmqd_mpich.so is not installed next to "
                                 "libmqdhost,"
                               : "");
            return MQDH_E_NO_DLL;
        }
        int chosen = -1;
        for (int i = 0; i < n && chosen < 0; i++) {
            if ((opt && opt->trust_target_dll) ||
                mqdh_dll_trusted(paths[i], why, sizeof why) == 0)
                chosen = i;
            else if (!first_why[0])
                snprintf(first_why, sizeof first_why, "%s", why);
        }
        if (chosen < 0) {
            set_error(p, "refusing the debug DLL the process names: %s (pass --dll to choose "
                      "one, or --trust-target-dll)", first_why);
            return MQDH_E_DLL_UNTRUSTED;
        }
        set_dll(p, paths[chosen], MQDH_DLL_TARGET, "named by the process%s",
                want_own ? "; mqd's own DLL for MPICH is not installed next to libmqdhost"
                : mpich  ? ", as --target-dll asks"
                         : "");
    }
    int rc = mqdh_dll_load(p->out->dll, &basic_callbacks, &p->dll, why, sizeof why);
    if (rc != MQDH_OK)
        set_error(p, "%s", why);
    return rc;
}

/* ---------------------------------------------------------------- iteration */

static int dll_fail(struct hproc *p, const char *what, int code)
{
    set_error(p, "%s: %s (code %d)", what, mqdh_dll_strerror(p->dll, code), code);
    return MQDH_E_DLL;
}

/* A queue the DLL failed on: the error stays with that queue only. */
static int queue_failed(struct hproc *p, struct mqdh_queue *q, int rc)
{
    q->state = MQDH_QUEUE_ERROR;
    if (asprintf(&q->error, "%s (code %d)", mqdh_dll_strerror(p->dll, rc), rc) < 0)
        q->error = NULL;
    return 0;
}

/*
 * What the interface's record cannot say, typed: from the DLL's
 * mqd_get_operation_info (an mqd extension, mpi_interface.h) where it has
 * it.  A DLL without it marks no traffic as a collective's and gives no
 * request; its lines that show a hexadecimal number ("0x") are taken for
 * address lines.  That is the host's only reading of a DLL's words, and
 * it is made here alone.
 */
static void import_op_info(struct hproc *p, struct mqdh_op *o)
{
    unsigned flags = 0;
    mqs_taddr_t request = 0;
    if (p->dll->get_operation_info &&
        p->dll->get_operation_info((mqs_process *)p, &flags, &request) == mqs_ok) {
        o->collective = (flags & MQD_OP_COLLECTIVE) != 0;
        o->request = request;
        for (int l = 0; l < 5; l++)
            if (flags & MQD_OP_TEXT_ADDRESS(l))
                o->text_address |= 1u << l;
        return;
    }
    for (int l = 0; l < 5 && o->extra_text[l][0]; l++)
        if (strstr(o->extra_text[l], "0x"))
            o->text_address |= 1u << l;
}

static int read_queue(struct hproc *p, struct mqdh_queue *q, int which)
{
    mqs_process *mp = (mqs_process *)p;
    int rc = p->dll->setup_operation_iterator(mp, which);
    q->state = MQDH_QUEUE_OK;
    if (rc == mqs_no_information) {
        q->state = MQDH_QUEUE_NO_INFO;
        return 0;
    }
    if (rc != mqs_ok && rc != mqs_end_of_list)
        return queue_failed(p, q, rc);
    int cap = 0;
    for (int guard = 0; guard < 1000000; guard++) {
        mqs_pending_operation op;
        memset(&op, 0, sizeof op);
        rc = p->dll->next_operation(mp, &op);
        if (rc == mqs_end_of_list)
            return 0;
        if (rc != mqs_ok)
            return queue_failed(p, q, rc);
        if (q->nops == cap) {
            int nc = cap ? cap * 2 : 8;
            struct mqdh_op *ops = realloc(q->ops, (size_t)nc * sizeof *ops);
            if (!ops)
                return MQDH_E_NOMEM;
            q->ops = ops;
            cap = nc;
        }
        struct mqdh_op *o = &q->ops[q->nops++];
        memset(o, 0, sizeof *o);
        o->status = op.status >= mqs_st_pending && op.status <= mqs_st_complete
                        ? (enum mqdh_op_status)op.status
                        : MQDH_OP_UNKNOWN;
        o->desired_local_rank = op.desired_local_rank;
        o->desired_global_rank = op.desired_global_rank;
        o->tag_wild = op.tag_wild;
        o->desired_tag = op.desired_tag;
        o->desired_length = op.desired_length;
        o->system_buffer = op.system_buffer;
        o->buffer = op.buffer;
        o->actual_local_rank = op.actual_local_rank;
        o->actual_global_rank = op.actual_global_rank;
        o->actual_tag = op.actual_tag;
        o->actual_length = op.actual_length;
        /* Lines end at the first empty one; each is made terminated. */
        int ended = 0;
        for (int l = 0; l < 5; l++) {
            if (ended || op.extra_text[l][0] == '\0') {
                ended = 1;
                o->extra_text[l][0] = '\0';
                continue;
            }
            memcpy(o->extra_text[l], op.extra_text[l], 63);
            o->extra_text[l][63] = '\0';
        }
        import_op_info(p, o);
    }
    q->state = MQDH_QUEUE_ERROR;
    q->error = strdup("more than a million entries: the list is probably corrupt");
    return 0;
}

/*
 * The current communicator's group, where the DLL has mqs_get_comm_group
 * (optional in the interface).  It must name this process at its own rank
 * (by its identity, or by its rank for an MPI-1 DLL); a group that does not
 * is dropped and group_error says why.  Returns 0 or MQDH_E_NOMEM.
 */
static int read_group(struct hproc *p, struct mqdh_comm *c)
{
    if (!p->dll->get_comm_group || c->size <= 0 || c->size > (1L << 24) || c->local_rank < 0 ||
        c->local_rank >= c->size)
        return 0;
    int *g = calloc((size_t)c->size, sizeof *g);
    if (!g)
        return MQDH_E_NOMEM;
    int rc = p->dll->get_comm_group((mqs_process *)p, g);
    long self = p->out->identity >= 0 ? p->out->identity : p->out->rank;
    if (rc == mqs_ok && self >= 0 && g[c->local_rank] != self) {
        if (asprintf(&c->group_error, "the DLL's group has %d at this process's rank %ld, "
                     "not %ld", g[c->local_rank], c->local_rank, self) < 0)
            c->group_error = NULL;
    } else if (rc == mqs_ok) {
        c->group = malloc((size_t)c->size * sizeof *c->group);
        if (!c->group) {
            free(g);
            return MQDH_E_NOMEM;
        }
        for (long i = 0; i < c->size; i++)
            c->group[i] = g[i];
    } else if (rc != mqs_no_information) {
        if (asprintf(&c->group_error, "mqs_get_comm_group: %s (code %d)",
                     mqdh_dll_strerror(p->dll, rc), rc) < 0)
            c->group_error = NULL;
    }
    free(g);
    return 0;
}

static int iterate(struct hproc *p)
{
    mqs_process *mp = (mqs_process *)p;
    int rc = p->dll->update_communicator_list(mp);
    if (rc != mqs_ok)
        return dll_fail(p, "mqs_update_communicator_list", rc);
    rc = p->dll->setup_communicator_iterator(mp);
    if (rc == mqs_end_of_list)
        return MQDH_OK;
    if (rc != mqs_ok)
        return dll_fail(p, "mqs_setup_communicator_iterator", rc);
    for (int guard = 0; guard < 100000; guard++) {
        mqs_communicator c;
        memset(&c, 0, sizeof c);
        rc = p->dll->get_communicator(mp, &c);
        if (rc == mqs_end_of_list)
            return MQDH_OK;
        if (rc != mqs_ok)
            return dll_fail(p, "mqs_get_communicator", rc);
        struct mqdh_comm *cs = realloc(p->out->comms, (size_t)(p->out->ncomms + 1) * sizeof *cs);
        if (!cs)
            return MQDH_E_NOMEM;
        p->out->comms = cs;
        struct mqdh_comm *out = &cs[p->out->ncomms++];
        memset(out, 0, sizeof *out);
        out->unique_id = c.unique_id;
        out->local_rank = c.local_rank;
        out->size = c.size;
        memcpy(out->name, c.name, 63);
        out->name[63] = '\0';
        for (int q = 0; q < MQDH_NQUEUES; q++)
            if ((rc = read_queue(p, &out->queues[q], q)) != 0)
                return rc;
        if ((rc = read_group(p, out)) != 0)
            return rc;
        mqs_taddr_t h;
        if (p->dll->get_comm_handle && p->dll->get_comm_handle(mp, &h) == mqs_ok) {
            out->handle = h;
            out->has_handle = 1;
        }
        rc = p->dll->next_communicator(mp);
        if (rc == mqs_end_of_list)
            return MQDH_OK;
        if (rc != mqs_ok)
            return dll_fail(p, "mqs_next_communicator", rc);
    }
    set_error(p, "more than 100000 communicators: the list is probably corrupt");
    return MQDH_E_DLL;
}

/*
 * mqs_image_has_queues' message may be a printf format with one %s for the
 * image name (MPICH's is).  Expand that one conversion and %%; anything
 * else is shown as it is, never handed to printf.
 */
static void format_image_message(char *out, size_t len, const char *msg, const char *image)
{
    size_t o = 0;
    for (const char *c = msg; *c && o + 1 < len; c++) {
        if (c[0] == '%' && c[1] == 's') {
            o += (size_t)snprintf(out + o, len - o, "%s", image);
            if (o >= len)
                o = len - 1;
            c++;
        } else if (c[0] == '%' && c[1] == '%') {
            out[o++] = '%';
            c++;
        } else {
            out[o++] = *c;
        }
    }
    out[o] = '\0';
}

/* Where the stopped process is (where.c); failing that is not fatal. */
static void locate(struct hproc *p)
{
    struct mqdh_where w;
    char err[512];
    if (mqdh_where(p->img.dwfl, p->out->pid, &p->mem, &w, err, sizeof err) != 0) {
        p->out->where_error = strdup(err);
        return;
    }
    if (!w.call[0])
        return;
    p->out->where_call = strdup(w.call);
    p->out->where_function = strdup(w.function[0] ? w.function : "??");
    p->out->where_file = w.file[0] ? strdup(w.file) : NULL;
    p->out->where_line = w.line;
    p->out->where_tid = w.tid;
    p->out->where_args = w.args;
    p->out->where_source = w.source;
    p->out->where_dest = w.dest;
    p->out->where_tag = w.tag;
    p->out->where_root = w.root;
    p->out->where_comm = w.comm;
    p->out->where_args_why = w.args_why[0] ? strdup(w.args_why) : NULL;
}

/* Everything up to the queues; iterate() reads them once every process
 * of the job is set up and named (MPI-2: a peer's identity is known only
 * after mqs_set_process_identity on that peer). */
static int setup_one(struct hproc *p, const struct mqdh_options *opt, struct hjob *job)
{
    char err[1024];
    int rc;
    mqs_process *mp = (mqs_process *)p;
    mqs_image *mi = (mqs_image *)&p->image;

    if ((rc = mqdh_image_open_pid(&p->img, p->out->pid, err, sizeof err)) != 0) {
        set_error(p, "%s", err);
        return MQDH_E_IMAGE;
    }
    p->have_img = 1;
    p->img.share = job->types;
    locate(p);
    p->out->image = strdup(p->img.exe_path);
    if ((rc = choose_dll(p, opt)) != MQDH_OK)
        return rc;
    if (!p->dll->mpi2)
        p->out->identity = -1; /* identities are an MPI-2 notion */
    /* MPI-2: the job exists before any of its processes is set up. */
    if (p->dll->mpi2 && !job->job_dll) {
        rc = p->dll->setup_job((mqs_job *)job, &job_callbacks);
        if (rc != mqs_ok)
            return dll_fail(p, "mqs_setup_job", rc);
        job->job_dll = p->dll;
    }

    current_proc = p;
    rc = p->dll->setup_image(mi, &image_callbacks);
    if (rc != mqs_ok)
        return dll_fail(p, "mqs_setup_image", rc);
    p->image_set_up = 1;
    const char *msg = NULL;
    rc = p->dll->image_has_queues(mi, &msg);
    if (rc != mqs_ok) {
        char m[512] = "";
        if (msg) /* may be a printf format taking the image name */
            format_image_message(m, sizeof m, msg, p->img.exe_path);
        set_error(p, "%s has no message queues: %s%s%s", p->img.exe_path,
                  mqdh_dll_strerror(p->dll, rc), m[0] ? ": " : "", m);
        return MQDH_E_NO_QUEUES;
    }
    rc = p->dll->setup_process(mp, &process_callbacks);
    if (rc != mqs_ok)
        return dll_fail(p, "mqs_setup_process", rc);
    p->process_set_up = 1;
    char *pmsg = NULL;
    rc = p->dll->process_has_queues(mp, &pmsg);
    if (rc != mqs_ok) {
        set_error(p, "process %d has no message queues: %s%s%s", (int)p->out->pid,
                  mqdh_dll_strerror(p->dll, rc), pmsg ? ": " : "", pmsg ? pmsg : "");
        return MQDH_E_NO_QUEUES;
    }
    if (p->dll->mpi2 && p->dll == job->job_dll) {
        rc = p->dll->set_process_identity(mp, p->out->identity);
        if (rc != mqs_ok)
            return dll_fail(p, "mqs_set_process_identity", rc);
    }
    p->ready = 1;
    return MQDH_OK;
}

/* ---------------------------------------------------------------- entry */

/* A process's place in the order identities are handed out in. */
struct order {
    int later; /* 0 world 0 with a rank, 1 another world, 2 neither */
    int world, rank, index;
    pid_t spawner;
};

static int cmp_order(const void *a, const void *b)
{
    const struct order *x = a, *y = b;
    if (x->later != y->later)
        return x->later - y->later;
    if (x->world != y->world)
        return x->world - y->world;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return x->index - y->index;
}

/*
 * Each process's rank (ranks[i] if given and >= 0, else from its
 * environment), its world, and an identity no other process in the dump has,
 * for the DLL to name it by: a world 0 process's own rank (so a DLL's
 * global ranks read as ranks, as they do without spawns), then the other
 * worlds' processes by world and rank, and last any whose rank is unknown
 * or taken twice.  Spawned processes whose spawn hydra did not number are
 * put in worlds of their own after the numbered ones, one per parent.
 * Returns MQDH_OK or MQDH_E_NOMEM.
 */
static int name_processes(struct mqdh_process *procs, const int *ranks, int n)
{
    struct order *o = calloc((size_t)(n ? n : 1), sizeof *o);
    if (!o)
        return MQDH_E_NOMEM;
    int top = 0;
    for (int i = 0; i < n; i++) {
        int env = mqdh_proc_env_rank(procs[i].pid, &o[i].world, &o[i].spawner);
        procs[i].rank = ranks && ranks[i] >= 0 ? ranks[i] : env;
        o[i].index = i;
        o[i].rank = procs[i].rank;
        if (o[i].world == -1 && procs[i].rank >= 0)
            o[i].world = 0; /* a rank the caller gave: a launched process */
        if (o[i].world > top)
            top = o[i].world;
    }
    /* Unnumbered spawns: one new world per spawner, in spawner order. */
    for (;;) {
        pid_t next = -1;
        for (int i = 0; i < n; i++)
            if (o[i].world == -2 && (next < 0 || o[i].spawner < next))
                next = o[i].spawner;
        if (next < 0)
            break;
        top++;
        for (int i = 0; i < n; i++)
            if (o[i].world == -2 && o[i].spawner == next)
                o[i].world = top;
    }
    for (int i = 0; i < n; i++) {
        procs[i].world = o[i].world;
        o[i].later = o[i].rank < 0 || o[i].world < 0 ? 2 : o[i].world > 0;
    }
    qsort(o, (size_t)n, sizeof *o, cmp_order);
    int next = 0, k = 0;
    for (; k < n && o[k].later == 0; k++) {
        struct mqdh_process *p = &procs[o[k].index];
        if (p->rank >= next) {
            p->identity = p->rank;
            next = p->rank + 1;
        } else {
            p->identity = -1; /* a second process with this rank */
        }
    }
    for (int i = 0; i < n; i++)
        if (procs[o[i].index].identity < 0 || i >= k)
            procs[o[i].index].identity = next++;
    free(o);
    return MQDH_OK;
}

int mqdh_dump_processes(const pid_t *pids, const int *ranks, const char *const *hosts, int n,
                        const struct mqdh_options *opt, struct mqdh_dump **out)
{
    *out = NULL;
    if (n < 0 || (n > 0 && !pids))
        return MQDH_E_USAGE;
    struct mqdh_dump *d = calloc(1, sizeof *d);
    struct hproc *procs = calloc((size_t)(n ? n : 1), sizeof *procs);
    if (!d || !(d->procs = calloc((size_t)(n ? n : 1), sizeof *d->procs)) || !procs) {
        if (d)
            free(d->procs);
        free(d);
        free(procs);
        return MQDH_E_NOMEM;
    }
    d->nprocs = n;
    struct hjob job = {.n = n, .procs = procs, .verbose = opt ? opt->verbose : 0,
                       .types = mqdh_typeshare_new()};
    current_job = &job;
    int first_error = MQDH_OK;

    for (int i = 0; i < n; i++)
        d->procs[i].pid = pids[i];
    if (name_processes(d->procs, ranks, n) != MQDH_OK) {
        mqdh_dump_free(d);
        free(procs);
        mqdh_typeshare_free(job.types);
        current_job = NULL;
        return MQDH_E_NOMEM;
    }
    /* Stop everything first: one consistent state across the job. */
    for (int i = 0; i < n; i++) {
        struct hproc *p = &procs[i];
        char err[512];
        p->out = &d->procs[i];
        p->image.proc = p;
        p->job = &job;
        p->out->host = hosts && hosts[i] ? strdup(hosts[i]) : NULL;
        mqdh_mem_init(&p->mem, pids[i]);
        if (mqdh_attach(&p->att, pids[i], err, sizeof err) != 0) {
            set_error(p, "%s", err);
            if (!first_error)
                first_error = MQDH_E_ATTACH;
        }
    }
    for (int i = 0; i < n; i++) {
        struct hproc *p = &procs[i];
        if (p->out->error)
            continue;
        double t0 = now();
        int rc = setup_one(p, opt, &job);
        p->out->stats.seconds = now() - t0;
        if (rc != MQDH_OK && !first_error)
            first_error = rc;
    }
    for (int i = 0; i < n; i++) {
        struct hproc *p = &procs[i];
        if (!p->ready)
            continue;
        double t0 = now();
        current_proc = p;
        int rc = iterate(p);
        p->out->stats.seconds += now() - t0;
        if (rc != MQDH_OK && !first_error)
            first_error = rc;
    }
    /* Let everything go, then clean up what the DLL hung on our objects. */
    for (int i = 0; i < n; i++) {
        struct hproc *p = &procs[i];
        mqdh_detach(&p->att);
        p->out->stats.bytes = p->mem.bytes_read;
        p->out->stats.syscalls = p->mem.syscalls;
        if (p->dll && p->info)
            p->dll->destroy_process_info(p->info);
        if (p->dll && p->image.info)
            p->dll->destroy_image_info(p->image.info);
        mqdh_mem_fini(&p->mem);
    }
    /* After every process's information, as the specification orders. */
    if (job.job_dll && job.info)
        job.job_dll->destroy_job_info(job.info);
    /* Types of one image may point into another's DWARF: close them last. */
    for (int i = 0; i < n; i++)
        if (procs[i].have_img)
            mqdh_image_close(&procs[i].img);
    mqdh_typeshare_free(job.types);
    current_job = NULL;
    current_proc = NULL;
    free(procs);
    mqdh_dump_index(d); /* without it (no memory), look-ups scan */
    *out = d;
    return first_error;
}

void mqdh_release_all(void)
{
    mqdh_detach_all_emergency();
}

void mqdh_dump_free(struct mqdh_dump *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->nprocs; i++) {
        struct mqdh_process *p = &d->procs[i];
        for (int c = 0; c < p->ncomms; c++) {
            for (int q = 0; q < MQDH_NQUEUES; q++) {
                free(p->comms[c].queues[q].ops);
                free(p->comms[c].queues[q].error);
            }
            free(p->comms[c].group);
            free(p->comms[c].group_error);
        }
        free(p->comms);
        free(p->host);
        free(p->image);
        free(p->dll);
        free(p->dll_why);
        free(p->error);
        free(p->where_call);
        free(p->where_function);
        free(p->where_file);
        free(p->where_error);
        free(p->where_args_why);
    }
    free(d->procs);
    mqdh_index_free(d->index);
    free(d);
}

int mqdh_dll_check(const char *path, char *version, size_t versionlen, int *mpi2, char *err,
                   size_t errlen)
{
    struct mqdh_dll *dll;
    int rc = mqdh_dll_load(path, &basic_callbacks, &dll, err, errlen);
    if (rc != MQDH_OK)
        return rc;
    if (version)
        snprintf(version, versionlen, "%s", dll->version);
    if (mpi2)
        *mpi2 = dll->mpi2;
    return MQDH_OK;
}
