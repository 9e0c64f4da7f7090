/*
 * protocol.c - the MQD protocol over one process, in the specification's
 * order: choose and load the DLL, mqs_setup_image, mqs_image_has_queues,
 * mqs_setup_process, mqs_process_has_queues, (MPI-2: mqs_setup_job once
 * per session, mqs_set_process_identity); then, once every process is set
 * up, mqs_update_communicator_list and the communicators with their three
 * queues and groups.  What the DLL returns is turned here, in one place,
 * into the dump's typed records.
 */
#define _GNU_SOURCE
#include "protocol/protocol.h"
#include "protocol/callbacks.h"
#include "protocol/choose.h"
#include "protocol/images.h"

#include "base/array.h"
#include "base/dump.h"
#include "protocol/guard.h"
#include "target/pc.h"
#include "target/where.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A call of p's DLL, under the worker's guard (guard.h): entry point
 * mqs_FN, or one named otherwise (mqd's extensions). */
#define DLL(p, fn, ...) \
    (mqdh__callbacks_serve(p), MQDH__DLL_CALL((p)->dll, "mqs_" #fn, (p)->dll->fn(__VA_ARGS__)))
#define DLL_EXT(p, fn, name, ...) \
    (mqdh__callbacks_serve(p), MQDH__DLL_CALL((p)->dll, name, (p)->dll->fn(__VA_ARGS__)))

static int dll_fail(struct target *p, const char *what, int code)
{
    mqdh__process_error(p->out, "%s: %s (code %d)", what, mqdh__dll_strerror(p->dll, code), code);
    return MQDH_E_DLL;
}

/* A queue the DLL failed on: the error stays with that queue only. */
static int queue_failed(struct target *p, struct mqdh_queue *q, int rc)
{
    q->state = MQDH_QUEUE_ERROR;
    if (asprintf(&q->error, "%s (code %d)", mqdh__dll_strerror(p->dll, rc), rc) < 0)
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
static void import_op_info(struct target *p, struct mqdh_op *o)
{
    unsigned flags = 0;
    mqs_taddr_t request = 0;
    if (p->dll->get_operation_info &&
        DLL_EXT(p, get_operation_info, "mqd_get_operation_info", (mqs_process *)p, &flags,
                &request) == mqs_ok) {
        o->collective = (flags & MQD_OP_COLLECTIVE) != 0;
        o->maybe_collective = !o->collective && (flags & MQD_OP_MAYBE_COLLECTIVE) != 0;
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

static int read_queue(struct target *p, struct mqdh_queue *q, int which)
{
    mqs_process *mp = (mqs_process *)p;
    int rc = DLL(p, setup_operation_iterator, mp, which);
    q->state = MQDH_QUEUE_OK;
    if (rc == mqs_no_information) {
        q->state = MQDH_QUEUE_NO_INFO;
        return 0;
    }
    if (rc != mqs_ok && rc != mqs_end_of_list)
        return queue_failed(p, q, rc);
    int cap = 0;
    for (int guard = 0; guard < MQDH__MAX_LIST; guard++) {
        mqs_pending_operation op;
        memset(&op, 0, sizeof op);
        rc = DLL(p, next_operation, mp, &op);
        if (rc == mqs_end_of_list)
            return 0;
        if (rc != mqs_ok)
            return queue_failed(p, q, rc);
        if (MQDH__GROW(q->ops, cap, q->nops + 1) != 0)
            return MQDH_E_NOMEM;
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
    if (asprintf(&q->error, "more than %d entries: the list is probably corrupt",
                 MQDH__MAX_LIST) < 0)
        q->error = NULL;
    return 0;
}

/*
 * The current communicator's group, where the DLL has mqs_get_comm_group
 * (optional in the interface).  It must name this process at its own rank
 * (by its identity, or by its rank for an MPI-1 DLL); a group that does not
 * is dropped and group_error says why.  Returns 0 or MQDH_E_NOMEM.
 */
static int read_group(struct target *p, struct mqdh_comm *c)
{
    if (!p->dll->get_comm_group || c->size <= 0 || c->size > MQDH__MAX_LIST || c->local_rank < 0 ||
        c->local_rank >= c->size)
        return 0;
    int *g = calloc((size_t)c->size, sizeof *g);
    if (!g)
        return MQDH_E_NOMEM;
    int rc = DLL(p, get_comm_group, (mqs_process *)p, g);
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
                     mqdh__dll_strerror(p->dll, rc), rc) < 0)
            c->group_error = NULL;
    }
    free(g);
    return 0;
}

/* Every communicator of the process, with its queues, group and handle. */
static int read_comms(struct target *p)
{
    mqs_process *mp = (mqs_process *)p;
    int rc = DLL(p, setup_communicator_iterator, mp);
    if (rc == mqs_end_of_list)
        return MQDH_OK;
    if (rc != mqs_ok)
        return dll_fail(p, "mqs_setup_communicator_iterator", rc);
    int cap = 0;
    for (int guard = 0; guard < MQDH__MAX_LIST; guard++) {
        mqs_communicator c;
        memset(&c, 0, sizeof c);
        rc = DLL(p, get_communicator, mp, &c);
        if (rc == mqs_end_of_list)
            return MQDH_OK;
        if (rc != mqs_ok)
            return dll_fail(p, "mqs_get_communicator", rc);
        if (MQDH__GROW(p->out->comms, cap, p->out->ncomms + 1) != 0)
            return MQDH_E_NOMEM;
        struct mqdh_comm *out = &p->out->comms[p->out->ncomms++];
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
        if (p->dll->get_comm_handle &&
            DLL_EXT(p, get_comm_handle, "mqd_get_comm_handle", mp, &h) == mqs_ok) {
            out->handle = h;
            out->has_handle = 1;
        }
        rc = DLL(p, next_communicator, mp);
        if (rc == mqs_end_of_list)
            return MQDH_OK;
        if (rc != mqs_ok)
            return dll_fail(p, "mqs_next_communicator", rc);
    }
    mqdh__process_error(p->out, "more than %d communicators: the list is probably corrupt",
                        MQDH__MAX_LIST);
    return MQDH_E_DLL;
}

/*
 * The requests of the process's MPI_Wait* call (p->handles, read where it
 * is), as its DLL says they are (mqd_get_request_info, an mqd extension),
 * into p->requests; each named by the communicator it shows.  A DLL
 * without the extension, or requests not read, leave why.
 */
static int decode_requests(struct target *p)
{
    struct mqdh_requests *r = p->requests;
    const struct mqdh__request_handles *h = &p->handles;
    if (!r || h->n == 0)
        return MQDH_OK;
    mqdh__requests_clear(r);
    if (h->n < 0 || !p->dll->get_request_info) {
        r->n = -1;
        r->why = strdup(h->n < 0 ? h->why : "the DLL cannot say what a request is");
        return r->why ? MQDH_OK : MQDH_E_NOMEM;
    }
    if (!(r->v = calloc((size_t)h->n, sizeof *r->v)))
        return MQDH_E_NOMEM;
    r->n = h->n;
    for (int i = 0; i < h->n; i++) {
        struct mqdh_request *q = &r->v[i];
        mqd_request_info info;
        q->handle = h->h[i];
        q->comm = -1;
        int rc = DLL_EXT(p, get_request_info, "mqd_get_request_info", (mqs_process *)p,
                         h->h[i], &info);
        info.text[sizeof info.text - 1] = '\0';
        memcpy(q->text, info.text, sizeof q->text);
        if (rc != mqs_ok) {
            /* the DLL's reason, else its error's */
            if (!r->why && asprintf(&r->why, "request %#" PRIx64 ": %s", h->h[i],
                                    info.text[0] ? info.text : mqdh__dll_strerror(p->dll, rc)) < 0)
                r->why = NULL;
            continue;
        }
        q->decoded = 1;
        q->kind = (enum mqdh_request_kind)info.kind;
        q->done = info.state != MQD_REQ_PENDING;
        for (int c = 0; (info.known & MQD_REQ_KNOWN_COMM) && c < p->out->ncomms; c++)
            if (p->out->comms[c].unique_id == info.comm)
                q->comm = c;
        q->peer_known = (info.known & MQD_REQ_KNOWN_PEER) != 0;
        q->tag_known = (info.known & MQD_REQ_KNOWN_TAG) != 0;
        q->peer_local = info.peer_local;
        q->peer_global = info.peer_global;
        q->tag = info.tag;
        q->sched_tag = info.known & MQD_REQ_KNOWN_SCHED_TAG ? info.sched_tag : -1;
        q->sched_receives = (info.known & MQD_REQ_SCHED_RECEIVES) != 0;
        q->address = info.request;
    }
    return MQDH_OK;
}

/*
 * The tag each of the process's communicators' next nonblocking collective
 * will take (mqd_get_comm_nbc_tag, an mqd extension), into
 * p->requests->nbc_next_tag, -1 where the DLL does not say: how another
 * member's request tells that this process has not started its instance.
 * Left NULL without the extension or any answer.
 */
static int read_nbc_tags(struct target *p)
{
    struct mqdh_requests *r = p->requests;
    int n = p->out->ncomms, any = 0;
    if (!r || n <= 0 || !p->dll->get_comm_nbc_tag)
        return MQDH_OK;
    long *t = malloc((size_t)n * sizeof *t);
    if (!t)
        return MQDH_E_NOMEM;
    for (int c = 0; c < n; c++) {
        mqs_tword_t v = -1;
        int rc = DLL_EXT(p, get_comm_nbc_tag, "mqd_get_comm_nbc_tag", (mqs_process *)p,
                         p->out->comms[c].unique_id, &v);
        t[c] = rc == mqs_ok && v >= 0 ? (long)v : -1;
        any |= t[c] >= 0;
    }
    if (!any) {
        free(t);
        return MQDH_OK;
    }
    free(r->nbc_next_tag);
    r->nbc_next_tag = t;
    r->nbc_ncomms = n;
    return MQDH_OK;
}

int mqdh__proto_read(struct target *p)
{
    mqs_process *mp = (mqs_process *)p;
    int rc = DLL(p, update_communicator_list, mp);
    if (rc != mqs_ok)
        return dll_fail(p, "mqs_update_communicator_list", rc);
    unsigned state = 0;
    if (p->dll->get_process_state &&
        DLL_EXT(p, get_process_state, "mqd_get_process_state", mp, &state) == mqs_ok)
        p->out->mpi_finalized = (state & MQD_PROC_FINALIZED) != 0;
    if ((rc = read_comms(p)) != MQDH_OK)
        return rc;
    if ((rc = decode_requests(p)) != MQDH_OK)
        return rc;
    return read_nbc_tags(p);
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
/* What its program's objects import says of other worlds (mqdhost.h). */
static enum mqdh_other_worlds other_worlds(const struct mqdh__image *im)
{
    enum mqdh_other_worlds ow = MQDH_WORLDS_NONE;
    for (int i = 0; i < im->nmods; i++) {
        struct mqdh__file *f = im->mods[i].file;
        if (f && mqdh__is_mpi_library(f))
            continue;
        int r = f ? mqdh__file_reaches_worlds(f) : -1;
        if (r > 0)
            return MQDH_WORLDS_MAYBE;
        if (r < 0 && i == 0) /* the executable's symbols unreadable: not known */
            ow = MQDH_WORLDS_UNKNOWN;
    }
    return ow;
}

static void locate(struct target *p)
{
    struct mqdh__where w;
    char err[512];
    p->out->other_worlds = other_worlds(&p->elf);
    if (mqdh__where(&p->elf, &p->mem, &w, p->stack, p->session->opt->brief_mpi_frames, err,
                    sizeof err) != 0) {
        p->out->where_error = strdup(err);
        return;
    }
    if (!w.call[0])
        return;
    /* Set first: a call found but not recorded (no memory for its name)
     * is an unknown call, never "not in MPI" (analyze.c). */
    p->out->where_tid = w.tid;
    p->out->where_call = strdup(w.call);
    p->out->where_function = strdup(w.function[0] ? w.function : "??");
    p->out->where_file = w.file[0] ? strdup(w.file) : NULL;
    p->out->where_line = w.line;
    p->out->where_args = w.args & (MQDH_ARG_SOURCE | MQDH_ARG_DEST | MQDH_ARG_TAG |
                                   MQDH_ARG_ROOT | MQDH_ARG_COMM);
    p->handles = w.handles;
    p->out->where_source = w.source;
    p->out->where_dest = w.dest;
    p->out->where_tag = w.tag;
    p->out->where_root = w.root;
    p->out->where_comm = w.comm;
    p->out->where_args_why = w.args_why[0] ? strdup(w.args_why) : NULL;
    p->out->where_args_from = w.args_from[0] ? strdup(w.args_from) : NULL;
    p->out->where_comm_name = w.comm_name[0] ? strdup(w.comm_name) : NULL;
}

/* What needs the tracing thread or touches the whole session: the image,
 * where the process is, its DLL, the MPI-2 job. */
int mqdh__proto_prepare(struct target *p)
{
    struct session *s = p->session;
    char err[1024];
    int rc;

    if ((rc = mqdh__image_open_pid(&p->elf, p->out->pid, s->files, err, sizeof err)) != 0) {
        mqdh__process_error(p->out, "%s", err);
        return MQDH_E_IMAGE;
    }
    p->elf_open = 1;
    p->elf.owner = p;
    p->elf.att = p->att->attached ? p->att : NULL; /* its threads, for unwinding */
    locate(p);
    /* Unwound: its stack's pages, the most of what it read, go back to
     * the heap for the next process's; the set-up does not read them, and
     * the read's batch (learnt from the pilot) fetches again what the
     * read needs of them. */
    for (int k = 0; k < p->elf.nregions; k++)
        if (p->elf.regions[k].from_end)
            mqdh__mem_forget(&p->mem, p->elf.regions[k].start, p->elf.regions[k].end);
    p->out->image = strdup(p->elf.exe_path);
    if ((rc = mqdh__choose_dll(p)) != MQDH_OK)
        return rc;
    if (!p->dll->mpi2)
        p->out->identity = -1; /* identities are an MPI-2 notion */
    /* MPI-2: the job exists before any of its processes is set up. */
    if (p->dll->mpi2 && !s->job_dll && !s->no_job) {
        rc = DLL(p, setup_job, (mqs_job *)s, &mqdh__job_callbacks);
        if (rc != mqs_ok)
            return dll_fail(p, "mqs_setup_job", rc);
        s->job_dll = p->dll;
    }
    p->prepared = 1;
    return MQDH_OK;
}

/* The image's own answers (mqs_setup_image, mqs_image_has_queues), by
 * the process that has it alone, for every process of it (images.h). */
static void image_setup(struct target *p)
{
    struct dll_image *di = p->image;
    mqs_image *mi = (mqs_image *)di;
    di->setup_rc = DLL(p, setup_image, mi, &mqdh__image_callbacks);
    if (di->setup_rc == mqs_ok)
        di->queues_rc = DLL(p, image_has_queues, mi, &di->msg);
    di->set_up = 1;
}

/* What the image's answers say of p: MQDH_OK, or p's error. */
static int image_verdict(struct target *p)
{
    const struct dll_image *di = p->image;
    if (di->setup_rc != mqs_ok)
        return dll_fail(p, "mqs_setup_image", di->setup_rc);
    p->image_set_up = 1;
    if (di->queues_rc == mqs_ok)
        return MQDH_OK;
    char m[512] = "";
    if (di->msg) /* may be a printf format taking the image name */
        format_image_message(m, sizeof m, di->msg, p->elf.exe_path);
    /* Open MPI's DLL reads libmpi's types from its DWARF, which
     * distributions move into a separate package: say where it is. */
    const char *base = strrchr(p->dll->path, '/');
    int ompi = strcmp(base ? base + 1 : p->dll->path, "libompi_dbg_msgq.so") == 0;
    mqdh__process_error(p->out, "%s has no message queues: %s%s%s%s", p->elf.exe_path,
                        mqdh__dll_strerror(p->dll, di->queues_rc), m[0] ? ": " : "", m,
                        ompi ? " (Open MPI's DLL needs libmpi's debug information: install "
                               "its debug symbols, e.g. Debian's libopenmpi3-dbgsym, set "
                               "DEBUGINFOD_URLS to a debuginfod server that has them, or "
                               "use an Open MPI built with -g)"
                             : "");
    return MQDH_E_NO_QUEUES;
}

/* mqs_setup_process to mqs_set_process_identity. */
static int process_setup(struct target *p)
{
    struct session *s = p->session;
    mqs_process *mp = (mqs_process *)p;
    int rc = DLL(p, setup_process, mp, &mqdh__process_callbacks);
    if (rc != mqs_ok)
        return dll_fail(p, "mqs_setup_process", rc);
    p->process_set_up = 1;
    char *pmsg = NULL;
    rc = DLL(p, process_has_queues, mp, &pmsg);
    if (rc != mqs_ok) {
        /* Named by its program, as the image's reason is: the ranks of a
         * job that share the reason read as one line (analyze.c). */
        mqdh__process_error(p->out, "%s has no message queues: %s%s%s", p->elf.exe_path,
                            mqdh__dll_strerror(p->dll, rc), pmsg ? ": " : "", pmsg ? pmsg : "");
        return MQDH_E_NO_QUEUES;
    }
    if (p->dll->mpi2 && p->dll == s->job_dll) {
        /* The DLL enters the process in the job's table. */
        pthread_mutex_lock(&s->job_lock);
        rc = DLL(p, set_process_identity, mp, p->out->identity);
        pthread_mutex_unlock(&s->job_lock);
        if (rc != mqs_ok)
            return dll_fail(p, "mqs_set_process_identity", rc);
    }
    p->ready = 1;
    return MQDH_OK;
}

/* The rest up to the queues, on any thread; mqdh__proto_read reads them
 * once every process of the job is set up and named (MPI-2: a peer's
 * identity is known only after mqs_set_process_identity on that peer).
 * The image is the program's: set up once, by the first process to have
 * it alone (images.h). */
int mqdh__proto_setup(struct target *p)
{
    int alone = mqdh__images_claim(p);
    if (alone && !p->image->set_up)
        image_setup(p);
    int rc = image_verdict(p);
    if (rc == MQDH_OK)
        rc = process_setup(p);
    /* An image without queues has nothing more to learn. */
    if (alone)
        mqdh__images_release(p, rc == MQDH_OK || !p->image_set_up ||
                                    p->image->queues_rc != mqs_ok);
    return rc;
}
