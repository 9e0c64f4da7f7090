/*
 * target.c - the services of target.h: the debugger's callback table,
 * its memory and log, the image and process records' accessors, reading
 * and decoding target memory, and bounded, cycle-checked list walks.
 */
#include "handles.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>

/*
 * The only mutable global state (handles.h).  Atomic: a debugger may run
 * several dumps at once in its threads, each calling mqs_setup_job
 * (mqdhost does).
 */
static struct {
    _Atomic(const mqs_basic_callbacks *) basic;
    atomic_int mpi2;
} host;

const mqs_basic_callbacks *mqd__basic(void)
{
    return host.basic;
}

void mqd__set_basic(const mqs_basic_callbacks *cb)
{
    host.basic = cb;
    host.mpi2 = 0;
}

int mqd__mpi2(void)
{
    return host.mpi2;
}

void mqd__set_mpi2(void)
{
    host.mpi2 = 1;
}

/* ---------------------------------------------------------------- the debugger */

void *mqd_malloc(size_t n)
{
    const mqs_basic_callbacks *basic = host.basic;
    return basic ? basic->mqs_malloc_fp(n ? n : 1) : NULL;
}

void mqd_free(void *p)
{
    const mqs_basic_callbacks *basic = host.basic;
    if (p && basic)
        basic->mqs_free_fp(p);
}

void *mqd_calloc(size_t n, size_t size)
{
    if (size && n > (size_t)-1 / size)
        return NULL;
    void *p = mqd_malloc(n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

/* mqs_dprints_fp may be NULL: MPICH's stub debugger leaves it so, and
 * libtvmpich never calls it. */
void mqd_debug(const char *msg)
{
    const mqs_basic_callbacks *basic = host.basic;
    if (basic && basic->mqs_dprints_fp)
        basic->mqs_dprints_fp(msg);
}

const mqs_image_callbacks *mqd_image_cb(const struct mqd_image *im)
{
    return im->cb;
}

void *mqd_image_backend(const struct mqd_image *im)
{
    return im->backend;
}

void mqd_image_explain(struct mqd_image *im, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(im->explain, sizeof im->explain, fmt, ap);
    va_end(ap);
}

struct mqd_image *mqd_process_image(const struct mqd_process *p)
{
    return p->image;
}

void *mqd_process_backend(const struct mqd_process *p)
{
    return p->backend;
}

mqs_image *mqd_process_mqs_image(const struct mqd_process *p)
{
    return p->cb->mqs_get_image_fp(p->process);
}

void mqd_process_explain(struct mqd_process *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->explain, sizeof p->explain, fmt, ap);
    va_end(ap);
}

long mqd_process_global_rank(const struct mqd_process *p)
{
    return p->cb->mqs_get_global_rank_fp(p->process);
}

const mqs_target_type_sizes *mqd_sizes(const struct mqd_process *p)
{
    return &p->sizes;
}

/* ---------------------------------------------------------------- the target */

int mqd_read(struct mqd_process *p, mqs_taddr_t addr, void *buf, int size)
{
    if (!addr || size <= 0)
        return MQD_ERR_READ;
    return p->cb->mqs_fetch_data_fp(p->process, addr, size, buf) == mqs_ok ? mqs_ok
                                                                          : MQD_ERR_READ;
}

enum { ORDER_UNSEEN, ORDER_SAME, ORDER_SWAPPED, ORDER_ASK };

/*
 * How the debugger's mqs_target_to_host converts p's values, seen once on
 * a pattern of each size: as they are, or byte-reversed (a target of the
 * other byte order); a debugger that does something else is asked for
 * every value.  The DLL converts every field it reads: a callback each
 * was most of the time of reading a communicator's members.
 */
static int byte_order(struct mqd_process *p)
{
    if (p->byte_order != ORDER_UNSEEN)
        return p->byte_order;
    static const unsigned char pattern[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int same = 1, swapped = 1;
    for (int size = 2; size <= 8; size *= 2) {
        unsigned char out[8] = {0};
        p->cb->mqs_target_to_host_fp(p->process, pattern, out, size);
        for (int i = 0; i < size; i++) {
            same &= out[i] == pattern[i];
            swapped &= out[i] == pattern[size - 1 - i];
        }
    }
    p->byte_order = same ? ORDER_SAME : swapped ? ORDER_SWAPPED : ORDER_ASK;
    return p->byte_order;
}

uint64_t mqd_uint(struct mqd_process *p, const void *buf, int off, int size)
{
    const unsigned char *in = (const unsigned char *)buf + off;
    unsigned char value[8];
    int order = p->byte_order != ORDER_UNSEEN ? p->byte_order : byte_order(p);
    uint16_t v2;
    uint32_t v4;
    uint64_t v8;
    switch (size) {
    case 1:
        return in[0];
    case 2:
    case 4:
    case 8:
        break;
    default:
        return 0;
    }
    const unsigned char *src = in; /* the common case: as it is */
    if (order == ORDER_ASK) {
        p->cb->mqs_target_to_host_fp(p->process, in, value, size);
        src = value;
    } else if (order == ORDER_SWAPPED) {
        for (int i = 0; i < size; i++)
            value[i] = in[size - 1 - i];
        src = value;
    }
    switch (size) {
    case 2:
        memcpy(&v2, src, 2);
        return v2;
    case 4:
        memcpy(&v4, src, 4);
        return v4;
    default:
        memcpy(&v8, src, 8);
        return v8;
    }
}

int64_t mqd_int(struct mqd_process *p, const void *buf, int off, int size)
{
    uint64_t v = mqd_uint(p, buf, off, size);
    if (size < 8 && size > 0 && (v >> (8 * size - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * size);
    return (int64_t)v;
}

mqs_taddr_t mqd_ptr(struct mqd_process *p, const void *buf, int off)
{
    return (mqs_taddr_t)mqd_uint(p, buf, off, p->sizes.pointer_size);
}

int mqd_read_ptr(struct mqd_process *p, mqs_taddr_t addr, mqs_taddr_t *out)
{
    unsigned char buf[8];
    int rc = mqd_read(p, addr, buf, p->sizes.pointer_size);
    *out = rc == mqs_ok ? mqd_ptr(p, buf, 0) : 0;
    return rc;
}

int mqd_read_cstring(struct mqd_process *p, mqs_taddr_t addr, char *out, int len)
{
    int n = 0;
    while (n + 1 < len) {
        /* Never read across a page past the terminator: it may be unmapped. */
        mqs_taddr_t at = addr + (mqs_taddr_t)n;
        int chunk = (int)(4096 - (at & 4095));
        if (chunk > len - 1 - n)
            chunk = len - 1 - n;
        int rc = mqd_read(p, at, out + n, chunk);
        if (rc != mqs_ok && chunk > 1) {
            /* The readable memory may end before the page does: byte by byte. */
            for (int i = 0; i < chunk; i++) {
                if ((rc = mqd_read(p, at + (mqs_taddr_t)i, out + n + i, 1)) != mqs_ok)
                    return rc;
                if (out[n + i] == '\0')
                    return mqs_ok;
            }
        }
        if (rc != mqs_ok)
            return rc;
        void *nul = memchr(out + n, '\0', (size_t)chunk);
        if (nul)
            return mqs_ok;
        n += chunk;
    }
    out[len - 1] = '\0';
    return mqs_ok;
}

/* ---------------------------------------------------------------- walks */

void mqd_walk_init(struct mqd_walk *w)
{
    memset(w, 0, sizeof *w);
}

int mqd_walk_visit(struct mqd_walk *w, mqs_taddr_t node)
{
    if (w->n >= MQD_MAX_LIST)
        return MQD_ERR_TOO_LONG;
    if ((w->n + 1) * 2 > w->cap) {
        int cap = w->cap ? w->cap * 2 : 64;
        mqs_taddr_t *seen = mqd_calloc((size_t)cap, sizeof *seen);
        if (!seen)
            return MQD_ERR_NOMEM;
        for (int i = 0; i < w->cap; i++) {
            if (!w->seen[i])
                continue;
            unsigned h = (unsigned)((w->seen[i] >> 3) * 2654435761u) & (unsigned)(cap - 1);
            while (seen[h])
                h = (h + 1) & (unsigned)(cap - 1);
            seen[h] = w->seen[i];
        }
        mqd_free(w->seen);
        w->seen = seen;
        w->cap = cap;
    }
    unsigned h = (unsigned)((node >> 3) * 2654435761u) & (unsigned)(w->cap - 1);
    while (w->seen[h]) {
        if (w->seen[h] == node)
            return MQD_ERR_CYCLE;
        h = (h + 1) & (unsigned)(w->cap - 1);
    }
    w->seen[h] = node;
    w->n++;
    return mqs_ok;
}

void mqd_walk_fini(struct mqd_walk *w)
{
    mqd_free(w->seen);
    mqd_walk_init(w);
}

/* ---------------------------------------------------------------- types */

mqs_type *mqd_find_type(mqs_image *image, const mqs_image_callbacks *cb, const char *name)
{
    char alt[4][160];
    size_t len = strlen(name);
    int n = 0;
    if (!cb->mqs_find_type_fp || len + 8 > sizeof alt[0])
        return NULL;
    /* The name as given first, the other spellings only if it is not one
     * (a debugger's callback takes a char *: a copy of the name). */
    memcpy(alt[n++], name, len + 1);
    mqs_type *t = cb->mqs_find_type_fp(image, alt[0], mqs_lang_c);
    if (t)
        return t;
    snprintf(alt[n++], sizeof alt[0], "struct %s", name);
    if (len > 2 && strcmp(name + len - 2, "_t") == 0) {
        snprintf(alt[n++], sizeof alt[0], "%.*s", (int)(len - 2), name);
        snprintf(alt[n++], sizeof alt[0], "struct %.*s", (int)(len - 2), name);
    } else {
        snprintf(alt[n++], sizeof alt[0], "%s_t", name);
    }
    for (int i = 1; i < n; i++)
        if ((t = cb->mqs_find_type_fp(image, alt[i], mqs_lang_c)) != NULL)
            return t;
    return NULL;
}

mqs_type *mqd_find_type_memo(mqs_image *image, const mqs_image_callbacks *cb,
                             struct mqd_type_memo *memo, const char *name)
{
    size_t len = 0;
    unsigned hash = 2166136261u; /* FNV-1a */
    for (; name[len]; len++)
        hash = (hash ^ (unsigned char)name[len]) * 16777619u;
    if (!memo || len >= sizeof memo->v[0].name)
        return mqd_find_type(image, cb, name);
    if (memo->last < memo->n && memo->v[memo->last].hash == hash &&
        strcmp(memo->v[memo->last].name, name) == 0)
        return memo->v[memo->last].type;
    for (int i = 0; i < memo->n; i++)
        if (memo->v[i].hash == hash && strcmp(memo->v[i].name, name) == 0)
            return memo->v[memo->last = i].type;
    mqs_type *t = mqd_find_type(image, cb, name);
    if (memo->n < (int)(sizeof memo->v / sizeof memo->v[0])) {
        memcpy(memo->v[memo->n].name, name, len + 1);
        memo->v[memo->n].hash = hash;
        memo->v[memo->last = memo->n++].type = t;
    }
    return t;
}

int mqd_debugger_step(const void *ctx, const char *type, const char *field)
{
    const struct mqd_debugger_types *d = ctx;
    mqs_type *t = mqd_find_type_memo(d->image, d->cb, d->memo, type);
    if (!t)
        return -1;
    if (!field) /* mqs_sizeof_fp may be NULL (MPICH's stub debugger): sizes unknown */
        return d->cb->mqs_sizeof_fp ? d->cb->mqs_sizeof_fp(t) : -1;
    return d->cb->mqs_field_offset_fp ? d->cb->mqs_field_offset_fp(t, (char *)field) : -1;
}

int mqd_path_offset_by(mqd_step_fn step_fn, const void *ctx, const char *path)
{
    int total = 0;
    char buf[256];
    size_t len = strlen(path);
    if (len >= sizeof buf)
        return -1;
    memcpy(buf, path, len + 1);
    for (char *step = buf; step && *step;) {
        char *next = strchr(step, '/');
        if (next)
            *next++ = '\0';
        char *colon = strchr(step, ':');
        if (!colon)
            return -1;
        *colon = '\0';
        int off = step_fn(ctx, step, colon + 1);
        if (off < 0 || off > MQD_MAX_OFFSET - total)
            return -1; /* none, or no structure of an MPI's is that big */
        total += off;
        step = next;
    }
    return total;
}

int mqd_path_offset_memo(mqs_image *image, const mqs_image_callbacks *cb,
                         struct mqd_type_memo *memo, const char *path)
{
    struct mqd_debugger_types d = {image, cb, memo};
    if (!cb->mqs_field_offset_fp)
        return -1;
    return mqd_path_offset_by(mqd_debugger_step, &d, path);
}

int mqd_path_offset(mqs_image *image, const mqs_image_callbacks *cb, const char *path)
{
    return mqd_path_offset_memo(image, cb, NULL, path);
}

/* ---------------------------------------------------------------- text */

void mqd_set_text(char dst[64], const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, 64, fmt, ap);
    va_end(ap);
}

void mqd_add_text(mqs_pending_operation *op, const char *line)
{
    int l = 0;
    while (l < 5 && op->extra_text[l][0])
        l++;
    if (l < 5)
        mqd_set_text(op->extra_text[l], "%s", line);
    if (l + 1 < 5)
        op->extra_text[l + 1][0] = '\0';
}
