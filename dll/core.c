/*
 * core.c - the vendor-neutral half of mqd's debug DLL: every mqs_* entry
 * point, callbacks, errors, reading, list walks, the communicator cache,
 * iterators and global ranks.  See core.h.
 */
#include "core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>

/*
 * The only mutable global state: the debugger's basic callbacks (the ABI
 * hands them over once, at load) and whether it speaks MPI-2, which says
 * whether the MPI-2 members of its callback tables exist at all.  Atomic:
 * a debugger may run several dumps at once in its threads, each calling
 * mqs_setup_job (mqdhost does).
 */
static struct {
    _Atomic(const mqs_basic_callbacks *) basic;
    atomic_int mpi2;
} host;

struct mqd_image {
    const mqs_image_callbacks *cb;
    void *backend;
    int setup_rc; /* why backend is NULL */
    char explain[256];
};

struct mqd_process {
    mqs_process *process;
    const mqs_process_callbacks *cb;
    struct mqd_image *image;
    void *backend;
    mqs_target_type_sizes sizes;
    int identity; /* MPI-2: given by the debugger; -1 until then */
    int setup_rc; /* why backend is NULL */
    char explain[256];

    /* Communicators: re-read only when the backend says the list moved,
     * or (MPI-2) when the job's identity table has changed since. */
    uint64_t stamp;
    unsigned job_generation;
    int have_comms;
    struct mqd_comm *comms;
    int ncomms;
    int comm_pos; /* the iterator; -1 before setup */

    /* Queues: read whole, once per stop, then shown per communicator. */
    int queue_read[3], queue_rc[3];
    struct mqd_ops queues[3];
    int op_queue, op_pos, op_state; /* op_state: 0 none, 1 iterating */
    /* What mqd_get_operation_info says of the last operation returned. */
    int op_returned;
    unsigned op_flags;
    uint64_t op_request;
};

/* MPI-2: the translation table from the MPI library's own name of a
 * process (a backend's key) to the identity the debugger gave it. */
struct mqd_job_entry {
    char key[MQD_MAX_KEY];
    int identity;
};

struct mqd_job {
    const mqs_job_callbacks *cb;
    int n, cap;
    struct mqd_job_entry *v;
    unsigned generation; /* moves whenever an entry is added or changed */
};

/* ---------------------------------------------------------------- helpers */

void *mqd_malloc(size_t n)
{
    return host.basic ? host.basic->mqs_malloc_fp(n ? n : 1) : NULL;
}

void mqd_free(void *p)
{
    if (p && host.basic)
        host.basic->mqs_free_fp(p);
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
    if (host.basic && host.basic->mqs_dprints_fp)
        host.basic->mqs_dprints_fp(msg);
}

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

int mqd_read(struct mqd_process *p, mqs_taddr_t addr, void *buf, int size)
{
    if (!addr || size <= 0)
        return MQD_ERR_READ;
    return p->cb->mqs_fetch_data_fp(p->process, addr, size, buf) == mqs_ok ? mqs_ok
                                                                          : MQD_ERR_READ;
}

uint64_t mqd_uint(struct mqd_process *p, const void *buf, int off, int size)
{
    unsigned char in[8];
    if (size != 1 && size != 2 && size != 4 && size != 8)
        return 0;
    memcpy(in, (const unsigned char *)buf + off, (size_t)size);
    switch (size) {
    case 1:
        return in[0];
    case 2: {
        uint16_t v;
        p->cb->mqs_target_to_host_fp(p->process, in, &v, 2);
        return v;
    }
    case 4: {
        uint32_t v;
        p->cb->mqs_target_to_host_fp(p->process, in, &v, 4);
        return v;
    }
    default: {
        uint64_t v;
        p->cb->mqs_target_to_host_fp(p->process, in, &v, 8);
        return v;
    }
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

int mqd_ops_push(struct mqd_ops *ops, const struct mqd_raw_op *op)
{
    if (ops->n == ops->cap) {
        int cap = ops->cap ? ops->cap * 2 : 16;
        struct mqd_raw_op *v = mqd_malloc((size_t)cap * sizeof *v);
        if (!v)
            return MQD_ERR_NOMEM;
        if (ops->n)
            memcpy(v, ops->v, (size_t)ops->n * sizeof *v);
        mqd_free(ops->v);
        ops->v = v;
        ops->cap = cap;
    }
    ops->v[ops->n++] = *op;
    return mqs_ok;
}

void mqd_ops_reverse(struct mqd_ops *ops)
{
    for (int i = 0, j = ops->n - 1; i < j; i++, j--) {
        struct mqd_raw_op t = ops->v[i];
        ops->v[i] = ops->v[j];
        ops->v[j] = t;
    }
}

void mqd_ops_free(struct mqd_ops *ops)
{
    mqd_free(ops->v);
    memset(ops, 0, sizeof *ops);
}

void mqd_comms_free(struct mqd_comm *comms, int n)
{
    for (int i = 0; comms && i < n; i++) {
        mqd_free(comms[i].peer_global);
        mqd_free(comms[i].local_global);
    }
    mqd_free(comms);
}

/* ---------------------------------------------------------------- errors */

static const char *const error_strings[] = {
#define MQD_MSG_(name, msg) [name - mqs_first_user_code] = msg,
    MQD_ERRORS(MQD_MSG_)
#undef MQD_MSG_
};

MQD_EXPORT const char *mqs_dll_error_string(int code)
{
    switch (code) {
    case mqs_ok:
        return "no error";
    case mqs_no_information:
        return "no information is available";
    case mqs_end_of_list:
        return "end of list";
    }
    if (code >= mqs_first_user_code && code < MQD_ERR_LAST_)
        return error_strings[code - mqs_first_user_code];
    return "not an error code of mqd's MPICH DLL";
}

/* ---------------------------------------------------------------- startup */

MQD_EXPORT const char *mqs_version_string(void)
{
    return mqd_be_version();
}

/* 2: an MPI-1 debugger can use this DLL; MPI-2 ones find mqs_setup_job. */
MQD_EXPORT int mqs_version_compatibility(void)
{
    return 2;
}

MQD_EXPORT int mqs_dll_taddr_width(void)
{
    return (int)sizeof(mqs_taddr_t);
}

/*
 * The basic callbacks the DLL cannot work without.  Every other member may
 * be NULL (real debuggers leave mqs_dprints_fp and mqs_errorstring_fp so)
 * and is checked before each call; a table missing one of these is
 * refused, so the DLL stays unset-up and every later call fails cleanly.
 */
MQD_EXPORT void mqs_setup_basic_callbacks(const mqs_basic_callbacks *cb)
{
    int usable = cb && cb->mqs_malloc_fp && cb->mqs_free_fp && cb->mqs_put_image_info_fp &&
                 cb->mqs_get_image_info_fp && cb->mqs_put_process_info_fp &&
                 cb->mqs_get_process_info_fp;
    host.basic = usable ? cb : NULL;
    host.mpi2 = 0;
}

/* ---------------------------------------------------------------- images */

MQD_EXPORT int mqs_setup_image(mqs_image *image, const mqs_image_callbacks *cb)
{
    if (!host.basic)
        return MQD_ERR_NOT_SET_UP;
    /* Required; mqs_sizeof_fp and mqs_find_function_fp may be NULL. */
    if (!cb || !cb->mqs_get_type_sizes_fp || !cb->mqs_find_symbol_fp)
        return MQD_ERR_MISSING_CALLBACK;
    struct mqd_image *im = mqd_calloc(1, sizeof *im);
    if (!im)
        return MQD_ERR_NOMEM;
    im->cb = cb;
    /* Hung on the image even when the backend fails, so that
     * mqs_image_has_queues can say why and destroy can free it. */
    host.basic->mqs_put_image_info_fp(image, (mqs_image_info *)im);
    int rc = mqd_be_setup_image(image, im, &im->backend);
    im->setup_rc = rc;
    if (rc != mqs_ok && !im->explain[0])
        mqd_image_explain(im, "%s", mqs_dll_error_string(rc));
    return mqs_ok;
}

MQD_EXPORT int mqs_image_has_queues(mqs_image *image, const char **message)
{
    struct mqd_image *im = host.basic ? (struct mqd_image *)host.basic->mqs_get_image_info_fp(image)
                                      : NULL;
    *message = NULL;
    if (!im)
        return MQD_ERR_NOT_SET_UP;
    if (!im->backend) {
        *message = im->explain; /* no '%' conversions: the backend writes none */
        return im->setup_rc != mqs_ok ? im->setup_rc : MQD_ERR_NO_DEBUG_QUEUES;
    }
    return mqs_ok;
}

MQD_EXPORT void mqs_destroy_image_info(mqs_image_info *info)
{
    struct mqd_image *im = (struct mqd_image *)info;
    if (!im)
        return;
    mqd_be_destroy_image(im->backend);
    mqd_free(im);
}

/* ---------------------------------------------------------------- processes */

static struct mqd_process *proc(mqs_process *process)
{
    return host.basic ? (struct mqd_process *)host.basic->mqs_get_process_info_fp(process) : NULL;
}

MQD_EXPORT int mqs_setup_process(mqs_process *process, const mqs_process_callbacks *cb)
{
    if (!host.basic)
        return MQD_ERR_NOT_SET_UP;
    /* Required; the MPI-2 members exist only in an MPI-2 debugger's table. */
    if (!cb || !cb->mqs_get_image_fp || !cb->mqs_fetch_data_fp || !cb->mqs_target_to_host_fp ||
        !cb->mqs_get_global_rank_fp)
        return MQD_ERR_MISSING_CALLBACK;
    mqs_image *image = cb->mqs_get_image_fp(process);
    struct mqd_image *im = (struct mqd_image *)host.basic->mqs_get_image_info_fp(image);
    if (!im || !im->backend)
        return MQD_ERR_NOT_SET_UP;
    struct mqd_process *p = mqd_calloc(1, sizeof *p);
    if (!p)
        return MQD_ERR_NOMEM;
    p->process = process;
    p->cb = cb;
    p->image = im;
    p->identity = -1;
    p->comm_pos = -1;
    im->cb->mqs_get_type_sizes_fp(process, &p->sizes);
    if (p->sizes.pointer_size != 4 && p->sizes.pointer_size != 8) {
        mqd_free(p);
        return MQD_ERR_BAD_LAYOUT;
    }
    host.basic->mqs_put_process_info_fp(process, (mqs_process_info *)p);
    int rc = mqd_be_setup_process(process, p, &p->backend);
    p->setup_rc = rc;
    if (rc != mqs_ok && !p->explain[0])
        mqd_process_explain(p, "%s", mqs_dll_error_string(rc));
    return mqs_ok;
}

MQD_EXPORT int mqs_process_has_queues(mqs_process *process, char **message)
{
    struct mqd_process *p = proc(process);
    *message = NULL;
    if (!p)
        return MQD_ERR_NOT_SET_UP;
    if (!p->backend) {
        *message = p->explain;
        return p->setup_rc != mqs_ok ? p->setup_rc : MQD_ERR_NO_DEBUG_QUEUES;
    }
    return mqs_ok;
}

static void forget_queues(struct mqd_process *p)
{
    for (int q = 0; q < 3; q++) {
        mqd_ops_free(&p->queues[q]);
        p->queue_read[q] = 0;
    }
    p->op_state = 0;
}

MQD_EXPORT void mqs_destroy_process_info(mqs_process_info *info)
{
    struct mqd_process *p = (struct mqd_process *)info;
    if (!p)
        return;
    forget_queues(p);
    mqd_comms_free(p->comms, p->ncomms);
    mqd_be_destroy_process(p->backend);
    mqd_free(p);
}

/* ---------------------------------------------------------------- communicators */

/*
 * Called at every stop: queues are read afresh (lazily), communicators
 * only when the list changed.  On failure the previous list is kept only
 * if it is still current; otherwise there is none.
 */
/* The job of a process, once the debugger has set one up (MPI-2). */
static struct mqd_job *job_of(struct mqd_process *p)
{
    if (!host.mpi2 || !p->cb->mqs_get_process_job_fp)
        return NULL;
    mqs_job *job = p->cb->mqs_get_process_job_fp(p->process);
    return job ? (struct mqd_job *)host.basic->mqs_get_job_info_fp(job) : NULL;
}

/* Where key is in the job's table (kept sorted: every peer of every
 * process is looked up), or where it would go; *found says which. */
static int job_find(const struct mqd_job *job, const char *key, int *found)
{
    int lo = 0, hi = job->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(job->v[mid].key, key);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

long mqd_job_identity(struct mqd_process *p, const char *key)
{
    struct mqd_job *job = job_of(p);
    int found = 0, i = job && key[0] ? job_find(job, key, &found) : 0;
    return found ? job->v[i].identity : -1;
}

static int job_register(struct mqd_job *job, const char *key, int identity)
{
    int found, at = job_find(job, key, &found);
    if (found) {
        if (job->v[at].identity != identity)
            job->generation++;
        job->v[at].identity = identity;
        return mqs_ok;
    }
    if (job->n == job->cap) {
        int nc = job->cap ? job->cap * 2 : 16;
        struct mqd_job_entry *nv = mqd_calloc((size_t)nc, sizeof *nv);
        if (!nv)
            return MQD_ERR_NOMEM;
        if (job->n)
            memcpy(nv, job->v, (size_t)job->n * sizeof *nv);
        mqd_free(job->v);
        job->v = nv;
        job->cap = nc;
    }
    memmove(&job->v[at + 1], &job->v[at], (size_t)(job->n - at) * sizeof job->v[0]);
    snprintf(job->v[at].key, MQD_MAX_KEY, "%s", key);
    job->v[at].identity = identity;
    job->n++;
    job->generation++;
    return mqs_ok;
}

/* Every member of c unknown (-1) but this process, at its rank, as self. */
static void only_self_known(struct mqd_comm *c, long self)
{
    for (long r = 0; c->peer_global && r < c->remote_size; r++)
        c->peer_global[r] = !c->inter && r == c->local_rank ? self : -1;
    for (long r = 0; c->local_global && r < c->size; r++)
        c->local_global[r] = r == c->local_rank ? self : -1;
}

/*
 * What every backend's communicators need (mqd_be_read_comms): keep the
 * user's (the rest freed), an intracommunicator's group is its peers, and
 * a peer beyond MPI_COMM_WORLD (a spawned or connected process) has no
 * world rank: without MPI-2 identities it is unknown (-1).  unnamed >= 0
 * is this process's identity when the debugger numbers processes
 * otherwise than the backend can (see mqs_update_communicator_list).
 */
static int finish_comms(struct mqd_comm *all, int *n, long unnamed)
{
    long world_size = -1;
    for (int i = 0; i < *n; i++)
        if (all[i].world)
            world_size = all[i].size;
    int k = 0;
    for (int i = 0; i < *n; i++) {
        struct mqd_comm *c = &all[i];
        if (c->internal) {
            mqd_free(c->peer_global);
            mqd_free(c->local_global);
            continue;
        }
        for (long r = 0; !c->globals_final && c->peer_global && r < c->remote_size; r++)
            if (world_size > 0 && c->peer_global[r] >= world_size)
                c->peer_global[r] = -1;
        if (!c->local_global && !c->inter && c->peer_global) {
            c->local_global = mqd_malloc((size_t)c->size * sizeof(long));
            if (!c->local_global) {
                all[k++] = *c;
                for (int j = i + 1; j < *n; j++)
                    all[k++] = all[j];
                *n = k;
                return MQD_ERR_NOMEM;
            }
            memcpy(c->local_global, c->peer_global, (size_t)c->size * sizeof(long));
        }
        if (unnamed >= 0)
            only_self_known(c, unnamed);
        all[k++] = *c;
    }
    *n = k;
    return mqs_ok;
}

MQD_EXPORT int mqs_update_communicator_list(mqs_process *process)
{
    struct mqd_process *p = proc(process);
    if (!p || !p->backend)
        return MQD_ERR_NOT_SET_UP;
    forget_queues(p);
    int changed = 1;
    int rc = mqd_be_comms_changed(p, &p->stamp, &changed);
    if (rc != mqs_ok)
        return rc;
    struct mqd_job *job = job_of(p);
    if (p->have_comms && !changed && (!job || job->generation == p->job_generation))
        return mqs_ok;
    if (job)
        p->job_generation = job->generation;
    /* A backend that has no key for this process (mqd_be_process_key) gives
     * world ranks.  They are the debugger's identities only if it numbers
     * this process's world by rank, as it does the launched job; for a
     * process it numbered otherwise (a spawned world's) they would name
     * the wrong processes: only the process itself is known. */
    char key[MQD_MAX_KEY] = "";
    long unnamed = -1;
    if (p->identity >= 0 && mqd_be_process_key(p, key, sizeof key) == mqs_ok && !key[0] &&
        p->identity != mqd_process_global_rank(p))
        unnamed = p->identity;
    struct mqd_comm *comms = NULL;
    int n = 0;
    rc = mqd_be_read_comms(p, &comms, &n);
    if (rc == mqs_ok)
        rc = finish_comms(comms, &n, unnamed);
    if (rc != mqs_ok) {
        mqd_comms_free(comms, n);
        mqd_comms_free(p->comms, p->ncomms);
        p->comms = NULL;
        p->ncomms = 0;
        p->have_comms = 0;
        p->comm_pos = -1;
        return rc;
    }
    mqd_comms_free(p->comms, p->ncomms);
    p->comms = comms;
    p->ncomms = n;
    p->have_comms = 1;
    p->comm_pos = -1;
    return mqs_ok;
}

MQD_EXPORT int mqs_setup_communicator_iterator(mqs_process *process)
{
    struct mqd_process *p = proc(process);
    if (!p || !p->backend)
        return MQD_ERR_NOT_SET_UP;
    if (!p->have_comms) {
        int rc = mqs_update_communicator_list(process);
        if (rc != mqs_ok)
            return rc;
    }
    p->comm_pos = 0;
    p->op_state = 0;
    return p->ncomms ? mqs_ok : mqs_end_of_list;
}

MQD_EXPORT int mqs_get_communicator(mqs_process *process, mqs_communicator *comm)
{
    struct mqd_process *p = proc(process);
    if (!p || !p->backend)
        return MQD_ERR_NOT_SET_UP;
    if (p->comm_pos < 0)
        return MQD_ERR_NO_COMM;
    if (p->comm_pos >= p->ncomms)
        return mqs_end_of_list;
    const struct mqd_comm *c = &p->comms[p->comm_pos];
    memset(comm, 0, sizeof *comm);
    comm->unique_id = c->addr;
    comm->local_rank = c->local_rank;
    comm->size = c->size;
    memcpy(comm->name, c->name, sizeof comm->name);
    comm->name[sizeof comm->name - 1] = '\0';
    return mqs_ok;
}

MQD_EXPORT int mqs_next_communicator(mqs_process *process)
{
    struct mqd_process *p = proc(process);
    if (!p || !p->backend)
        return MQD_ERR_NOT_SET_UP;
    if (p->comm_pos < 0)
        return MQD_ERR_NO_COMM;
    if (p->comm_pos < p->ncomms)
        p->comm_pos++;
    p->op_state = 0;
    return p->comm_pos < p->ncomms ? mqs_ok : mqs_end_of_list;
}

/* The communicator the iterator is at, into *out; mqs_ok or why not. */
static int current_comm(mqs_process *process, const struct mqd_comm **out)
{
    struct mqd_process *p = proc(process);
    if (!p || !p->backend)
        return MQD_ERR_NOT_SET_UP;
    if (p->comm_pos < 0 || p->comm_pos >= p->ncomms)
        return MQD_ERR_NO_COMM;
    *out = &p->comms[p->comm_pos];
    return mqs_ok;
}

MQD_EXPORT int mqs_get_comm_group(mqs_process *process, int *group)
{
    const struct mqd_comm *c;
    int rc = current_comm(process, &c);
    if (rc != mqs_ok)
        return rc;
    if (!group)
        return MQD_ERR_BUF_SMALL;
    /* Only a group the backend knows, whole: never a guess, never -1s. */
    if (!c->local_global)
        return mqs_no_information;
    for (long i = 0; i < c->size; i++)
        group[i] = (int)c->local_global[i];
    return mqs_ok;
}

/*
 * mqd's extension (mpi_interface.h): the handle the program holds for the
 * current communicator, so that a debugger can tell which communicator a
 * call's comm argument is.
 */
MQD_EXPORT int mqd_get_comm_handle(mqs_process *process, mqs_taddr_t *handle)
{
    const struct mqd_comm *c;
    int rc = current_comm(process, &c);
    if (rc != mqs_ok)
        return rc;
    if (!handle)
        return MQD_ERR_BUF_SMALL;
    if (!c->has_handle)
        return mqs_no_information;
    *handle = c->handle;
    return mqs_ok;
}

/* ---------------------------------------------------------------- operations */

static long to_global(const struct mqd_comm *c, long peer)
{
    if (peer < 0 || peer >= c->remote_size || !c->peer_global)
        return -1;
    return c->peer_global[peer];
}

MQD_EXPORT int mqs_setup_operation_iterator(mqs_process *process, int queue)
{
    struct mqd_process *p = proc(process);
    if (!p || !p->backend)
        return MQD_ERR_NOT_SET_UP;
    if (queue < mqs_pending_sends || queue > mqs_unexpected_messages)
        return MQD_ERR_BAD_QUEUE;
    if (p->comm_pos < 0 || p->comm_pos >= p->ncomms)
        return MQD_ERR_NO_COMM;
    if (!p->queue_read[queue]) {
        mqd_ops_free(&p->queues[queue]);
        p->queue_rc[queue] = mqd_be_read_queue(p, queue, &p->queues[queue]);
        if (p->queue_rc[queue] != mqs_ok)
            mqd_ops_free(&p->queues[queue]);
        p->queue_read[queue] = 1;
    }
    p->op_state = 0;
    p->op_returned = 0;
    if (p->queue_rc[queue] != mqs_ok)
        return p->queue_rc[queue];
    p->op_queue = queue;
    p->op_pos = 0;
    p->op_state = 1;
    const struct mqd_comm *c = &p->comms[p->comm_pos];
    for (int i = 0; i < p->queues[queue].n; i++)
        if (mqd_be_op_in_comm(c, queue, &p->queues[queue].v[i]))
            return mqs_ok;
    return mqs_end_of_list;
}

MQD_EXPORT int mqs_next_operation(mqs_process *process, mqs_pending_operation *op)
{
    struct mqd_process *p = proc(process);
    if (!p || !p->backend)
        return MQD_ERR_NOT_SET_UP;
    if (p->op_state != 1 || p->comm_pos < 0 || p->comm_pos >= p->ncomms)
        return mqs_end_of_list;
    const struct mqd_comm *c = &p->comms[p->comm_pos];
    const struct mqd_ops *q = &p->queues[p->op_queue];
    while (p->op_pos < q->n) {
        const struct mqd_raw_op *r = &q->v[p->op_pos++];
        int in = mqd_be_op_in_comm(c, p->op_queue, r);
        if (!in)
            continue;
        *op = r->op;
        op->desired_global_rank = to_global(c, op->desired_local_rank);
        op->actual_global_rank = to_global(c, op->actual_local_rank);
        if (in == 2) /* for a debugger's reader: a line saying so, if there is room */
            mqd_add_text(op, "part of a collective operation");
        p->op_returned = 1;
        p->op_flags = r->text_address | (in == 2 ? MQD_OP_COLLECTIVE : 0u);
        p->op_request = r->request;
        return mqs_ok;
    }
    p->op_returned = 0;
    return mqs_end_of_list;
}

MQD_EXPORT int mqd_get_operation_info(mqs_process *process, unsigned *flags,
                                      mqs_taddr_t *request)
{
    struct mqd_process *p = proc(process);
    if (!p || !p->backend)
        return MQD_ERR_NOT_SET_UP;
    if (!flags || !request)
        return MQD_ERR_BUF_SMALL;
    if (p->op_state != 1 || !p->op_returned)
        return mqs_no_information;
    *flags = p->op_flags;
    *request = p->op_request;
    return mqs_ok;
}

/* ---------------------------------------------------------------- MPI-2 */

MQD_EXPORT int mqs_setup_job(mqs_job *job, const mqs_job_callbacks *cb)
{
    if (!host.basic)
        return MQD_ERR_NOT_SET_UP;
    /* From now on the debugger's tables have their MPI-2 members. */
    host.mpi2 = 1;
    struct mqd_job *j = mqd_calloc(1, sizeof *j);
    if (!j)
        return MQD_ERR_NOMEM;
    j->cb = cb;
    host.basic->mqs_put_job_info_fp(job, (mqs_job_info *)j);
    return mqs_ok;
}

MQD_EXPORT int mqs_destroy_job_info(mqs_job_info *info)
{
    struct mqd_job *j = (struct mqd_job *)info;
    if (j)
        mqd_free(j->v);
    mqd_free(j);
    return mqs_ok;
}

MQD_EXPORT int mqs_set_process_identity(mqs_process *process, int identity)
{
    if (!host.mpi2)
        return MQD_ERR_NOT_MPI2;
    struct mqd_process *p = proc(process);
    if (!p)
        return MQD_ERR_NOT_SET_UP;
    if (p->identity != identity)
        p->have_comms = 0; /* its communicators name it by its identity */
    p->identity = identity;
    /* Enter this process in the job's table under the MPI library's own
     * name for it, so that other processes can name it as a peer. */
    struct mqd_job *job = job_of(p);
    char key[MQD_MAX_KEY] = "";
    if (!job || !p->backend)
        return mqs_ok;
    int rc = mqd_be_process_key(p, key, sizeof key);
    if (rc != mqs_ok || !key[0])
        return rc;
    return job_register(job, key, identity);
}

MQD_EXPORT int mqs_spawn_breakpoint_name(mqs_process *process, char *buf, int len)
{
    (void)process;
    const char *name = mqd_be_spawn_breakpoint();
    if (!buf || len <= (int)strlen(name))
        return MQD_ERR_BUF_SMALL;
    memcpy(buf, name, strlen(name) + 1);
    return mqs_ok;
}

/* MPICH keeps no list of the processes a process spawned that a debugger
 * could read: the launcher's MPIR_proctable is where they are found. */
MQD_EXPORT int mqs_setup_new_process_iterator(mqs_process *process)
{
    (void)process;
    return mqs_no_information;
}

MQD_EXPORT int mqs_next_new_process(mqs_process *process, mqs_process_location *loc)
{
    (void)process;
    (void)loc;
    return mqs_end_of_list;
}

/* The name some vendors' debuggers call (the specification's). */
MQD_EXPORT int next_new_process(mqs_process *process, mqs_process_location *loc)
{
    return mqs_next_new_process(process, loc);
}
