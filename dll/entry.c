/*
 * entry.c - the top of mqd's debug DLL: every mqs_* entry point of the
 * interface (and mqd's extensions, mqd_get_*), with the argument and state
 * checks a debugger expects, the error messages, the communicator cache,
 * the communicator and operation iterators, and global ranks.  The
 * backend (backend.h) knows the MPI; the services below both (target.h)
 * know the debugger and the target.
 */
#include "backend.h"
#include "handles.h"

#include <string.h>

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
    return "not an error code of this mqd DLL";
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
    mqd__set_basic(usable ? cb : NULL);
}

/* ---------------------------------------------------------------- images */

MQD_EXPORT int mqs_setup_image(mqs_image *image, const mqs_image_callbacks *cb)
{
    const mqs_basic_callbacks *basic = mqd__basic();
    if (!basic)
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
    basic->mqs_put_image_info_fp(image, (mqs_image_info *)im);
    int rc = mqd_be_setup_image(image, im, &im->backend);
    im->setup_rc = rc;
    if (rc != mqs_ok && !im->explain[0])
        mqd_image_explain(im, "%s", mqs_dll_error_string(rc));
    return mqs_ok;
}

MQD_EXPORT int mqs_image_has_queues(mqs_image *image, const char **message)
{
    const mqs_basic_callbacks *basic = mqd__basic();
    struct mqd_image *im = basic ? (struct mqd_image *)basic->mqs_get_image_info_fp(image)
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

static struct process_state *proc(mqs_process *process)
{
    const mqs_basic_callbacks *basic = mqd__basic();
    return basic ? (struct process_state *)basic->mqs_get_process_info_fp(process) : NULL;
}

MQD_EXPORT int mqs_setup_process(mqs_process *process, const mqs_process_callbacks *cb)
{
    const mqs_basic_callbacks *basic = mqd__basic();
    if (!basic)
        return MQD_ERR_NOT_SET_UP;
    /* Required; the MPI-2 members exist only in an MPI-2 debugger's table. */
    if (!cb || !cb->mqs_get_image_fp || !cb->mqs_fetch_data_fp || !cb->mqs_target_to_host_fp ||
        !cb->mqs_get_global_rank_fp)
        return MQD_ERR_MISSING_CALLBACK;
    mqs_image *image = cb->mqs_get_image_fp(process);
    struct mqd_image *im = (struct mqd_image *)basic->mqs_get_image_info_fp(image);
    if (!im || !im->backend)
        return MQD_ERR_NOT_SET_UP;
    struct process_state *ps = mqd_calloc(1, sizeof *ps);
    if (!ps)
        return MQD_ERR_NOMEM;
    struct mqd_process *p = &ps->base;
    p->process = process;
    p->cb = cb;
    p->image = im;
    ps->identity = -1;
    ps->comm_pos = -1;
    im->cb->mqs_get_type_sizes_fp(process, &p->sizes);
    if (p->sizes.pointer_size != 4 && p->sizes.pointer_size != 8) {
        mqd_free(ps);
        return MQD_ERR_BAD_LAYOUT;
    }
    basic->mqs_put_process_info_fp(process, (mqs_process_info *)ps);
    int rc = mqd_be_setup_process(process, p, &p->backend);
    p->setup_rc = rc;
    if (rc != mqs_ok && !p->explain[0])
        mqd_process_explain(p, "%s", mqs_dll_error_string(rc));
    return mqs_ok;
}

MQD_EXPORT int mqs_process_has_queues(mqs_process *process, char **message)
{
    struct process_state *ps = proc(process);
    *message = NULL;
    if (!ps)
        return MQD_ERR_NOT_SET_UP;
    if (!ps->base.backend) {
        *message = ps->base.explain;
        return ps->base.setup_rc != mqs_ok ? ps->base.setup_rc : MQD_ERR_NO_DEBUG_QUEUES;
    }
    return mqs_ok;
}

static void forget_queues(struct process_state *ps)
{
    for (int q = 0; q < 3; q++) {
        mqd_ops_free(&ps->queues[q]);
        ps->queue_read[q] = 0;
    }
    ps->op_state = 0;
}

MQD_EXPORT void mqs_destroy_process_info(mqs_process_info *info)
{
    struct process_state *ps = (struct process_state *)info;
    if (!ps)
        return;
    forget_queues(ps);
    mqd_comms_free(ps->comms, ps->ncomms);
    mqd_be_destroy_process(ps->base.backend);
    mqd_free(ps);
}

struct process_state *mqd__ready(mqs_process *process)
{
    struct process_state *ps = proc(process);
    return ps && ps->base.backend ? ps : NULL;
}

/* ---------------------------------------------------------------- communicators */

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

/*
 * A backend that has no key for this process (mqd_be_process_key) gives
 * world ranks.  They are the debugger's identities only if it numbers
 * this process's world by rank, as it does the launched job; for a
 * process it numbered otherwise (a spawned world's) they would name the
 * wrong processes: only the process itself is known.  Returns that
 * process's identity in that case, else -1.
 */
static long unnamed_identity(struct process_state *ps)
{
    char key[MQD_MAX_KEY] = "";
    struct mqd_process *p = &ps->base;
    if (ps->identity >= 0 && mqd_be_process_key(p, key, sizeof key) == mqs_ok && !key[0] &&
        ps->identity != mqd_process_global_rank(p))
        return ps->identity;
    return -1;
}

/* The process's communicators from now on: comms (n of them, owned from
 * now on), known or not; the iterator starts again. */
static void replace_comms(struct process_state *ps, struct mqd_comm *comms, int n, int known)
{
    mqd_comms_free(ps->comms, ps->ncomms);
    ps->comms = comms;
    ps->ncomms = n;
    ps->have_comms = known;
    ps->comm_pos = -1;
}

/*
 * Called at every stop: queues are read afresh (lazily), communicators
 * only when the list changed.  On failure the previous list is kept only
 * if it is still current; otherwise there is none.
 */
MQD_EXPORT int mqs_update_communicator_list(mqs_process *process)
{
    struct process_state *ps = mqd__ready(process);
    if (!ps)
        return MQD_ERR_NOT_SET_UP;
    struct mqd_process *p = &ps->base;
    forget_queues(ps);
    int changed = 1;
    int rc = mqd_be_comms_changed(p, &ps->stamp, &changed);
    if (rc != mqs_ok)
        return rc;
    struct mqd_job *job = mqd__job_of(p);
    if (ps->have_comms && !changed && (!job || mqd__job_generation(job) == ps->job_generation))
        return mqs_ok;
    if (job)
        ps->job_generation = mqd__job_generation(job);
    long unnamed = unnamed_identity(ps);
    struct mqd_comm *comms = NULL;
    int n = 0;
    rc = mqd_be_read_comms(p, &comms, &n);
    if (rc == mqs_ok)
        rc = finish_comms(comms, &n, unnamed);
    if (rc != mqs_ok) {
        mqd_comms_free(comms, n);
        replace_comms(ps, NULL, 0, 0);
        return rc;
    }
    replace_comms(ps, comms, n, 1);
    return mqs_ok;
}

MQD_EXPORT int mqs_setup_communicator_iterator(mqs_process *process)
{
    struct process_state *ps = mqd__ready(process);
    if (!ps)
        return MQD_ERR_NOT_SET_UP;
    if (!ps->have_comms) {
        int rc = mqs_update_communicator_list(process);
        if (rc != mqs_ok)
            return rc;
    }
    ps->comm_pos = 0;
    ps->op_state = 0;
    return ps->ncomms ? mqs_ok : mqs_end_of_list;
}

MQD_EXPORT int mqs_get_communicator(mqs_process *process, mqs_communicator *comm)
{
    struct process_state *ps = mqd__ready(process);
    if (!ps)
        return MQD_ERR_NOT_SET_UP;
    if (ps->comm_pos < 0)
        return MQD_ERR_NO_COMM;
    if (ps->comm_pos >= ps->ncomms)
        return mqs_end_of_list;
    const struct mqd_comm *c = &ps->comms[ps->comm_pos];
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
    struct process_state *ps = mqd__ready(process);
    if (!ps)
        return MQD_ERR_NOT_SET_UP;
    if (ps->comm_pos < 0)
        return MQD_ERR_NO_COMM;
    if (ps->comm_pos < ps->ncomms)
        ps->comm_pos++;
    ps->op_state = 0;
    return ps->comm_pos < ps->ncomms ? mqs_ok : mqs_end_of_list;
}

/* The communicator the iterator is at, into *out; mqs_ok or why not. */
static int current_comm(mqs_process *process, const struct mqd_comm **out)
{
    struct process_state *ps = mqd__ready(process);
    if (!ps)
        return MQD_ERR_NOT_SET_UP;
    if (ps->comm_pos < 0 || ps->comm_pos >= ps->ncomms)
        return MQD_ERR_NO_COMM;
    *out = &ps->comms[ps->comm_pos];
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

long mqd__to_global(const struct mqd_comm *c, long peer)
{
    if (peer < 0 || peer >= c->remote_size || !c->peer_global)
        return -1;
    return c->peer_global[peer];
}

/* Queue `queue` of this stop, read once. */
static void read_queue(struct process_state *ps, int queue)
{
    if (ps->queue_read[queue])
        return;
    mqd_ops_free(&ps->queues[queue]);
    ps->queue_rc[queue] = mqd_be_read_queue(&ps->base, queue, &ps->queues[queue]);
    if (ps->queue_rc[queue] != mqs_ok)
        mqd_ops_free(&ps->queues[queue]);
    ps->queue_read[queue] = 1;
}

/* The queue as read, or NULL if it could not be. */
static const struct mqd_ops *queue_read_ok(const struct process_state *ps, int queue)
{
    return ps->queue_rc[queue] == mqs_ok ? &ps->queues[queue] : NULL;
}

MQD_EXPORT int mqs_setup_operation_iterator(mqs_process *process, int queue)
{
    struct process_state *ps = mqd__ready(process);
    if (!ps)
        return MQD_ERR_NOT_SET_UP;
    if (queue < mqs_pending_sends || queue > mqs_unexpected_messages)
        return MQD_ERR_BAD_QUEUE;
    if (ps->comm_pos < 0 || ps->comm_pos >= ps->ncomms)
        return MQD_ERR_NO_COMM;
    if (queue == mqs_pending_sends && !ps->queue_read[queue]) {
        /* The sends last: the receive side tells of them (mqd_be_refine_sends). */
        read_queue(ps, mqs_pending_receives);
        read_queue(ps, mqs_unexpected_messages);
        read_queue(ps, queue);
        if (ps->queue_rc[queue] == mqs_ok)
            mqd_be_refine_sends(&ps->base, &ps->queues[queue],
                                queue_read_ok(ps, mqs_pending_receives),
                                queue_read_ok(ps, mqs_unexpected_messages));
    }
    read_queue(ps, queue);
    ps->op_state = 0;
    ps->op_returned = 0;
    if (ps->queue_rc[queue] != mqs_ok)
        return ps->queue_rc[queue];
    ps->op_queue = queue;
    ps->op_pos = 0;
    ps->op_state = 1;
    const struct mqd_comm *c = &ps->comms[ps->comm_pos];
    for (int i = 0; i < ps->queues[queue].n; i++)
        if (mqd_be_op_in_comm(c, queue, &ps->queues[queue].v[i]))
            return mqs_ok;
    return mqs_end_of_list;
}

MQD_EXPORT int mqs_next_operation(mqs_process *process, mqs_pending_operation *op)
{
    struct process_state *ps = mqd__ready(process);
    if (!ps)
        return MQD_ERR_NOT_SET_UP;
    if (ps->op_state != 1 || ps->comm_pos < 0 || ps->comm_pos >= ps->ncomms)
        return mqs_end_of_list;
    const struct mqd_comm *c = &ps->comms[ps->comm_pos];
    const struct mqd_ops *q = &ps->queues[ps->op_queue];
    while (ps->op_pos < q->n) {
        const struct mqd_raw_op *r = &q->v[ps->op_pos++];
        int in = mqd_be_op_in_comm(c, ps->op_queue, r);
        if (!in)
            continue;
        *op = r->op;
        op->desired_global_rank = mqd__to_global(c, op->desired_local_rank);
        op->actual_global_rank = mqd__to_global(c, op->actual_local_rank);
        if (in == 2) /* for a debugger's reader: a line saying so, if there is room */
            mqd_add_text(op, "part of a collective operation");
        ps->op_returned = 1;
        ps->op_flags = r->text_address | (in == 2 ? MQD_OP_COLLECTIVE : 0u) |
                       (in == 1 && r->maybe_internal ? MQD_OP_MAYBE_COLLECTIVE : 0u);
        ps->op_request = r->request;
        return mqs_ok;
    }
    ps->op_returned = 0;
    return mqs_end_of_list;
}

MQD_EXPORT int mqd_get_operation_info(mqs_process *process, unsigned *flags,
                                      mqs_taddr_t *request)
{
    struct process_state *ps = mqd__ready(process);
    if (!ps)
        return MQD_ERR_NOT_SET_UP;
    if (!flags || !request)
        return MQD_ERR_BUF_SMALL;
    if (ps->op_state != 1 || !ps->op_returned)
        return mqs_no_information;
    *flags = ps->op_flags;
    *request = ps->op_request;
    return mqs_ok;
}

/*
 * mqd's extension (mpi_interface.h): the process as a whole, as the last
 * mqs_update_communicator_list read it (MPICH: in MPI_Finalize or past
 * it, its communicators freed).
 */
MQD_EXPORT int mqd_get_process_state(mqs_process *process, unsigned *flags)
{
    struct process_state *ps = mqd__ready(process);
    if (!ps)
        return MQD_ERR_NOT_SET_UP;
    if (!flags)
        return MQD_ERR_BUF_SMALL;
    if (!ps->have_comms)
        return mqs_no_information;
    *flags = mqd_be_process_flags(&ps->base);
    return mqs_ok;
}

/* ---------------------------------------------------------------- MPI-2 */

MQD_EXPORT int mqs_setup_job(mqs_job *job, const mqs_job_callbacks *cb)
{
    const mqs_basic_callbacks *basic = mqd__basic();
    if (!basic)
        return MQD_ERR_NOT_SET_UP;
    /* From now on the debugger's tables have their MPI-2 members. */
    mqd__set_mpi2();
    struct mqd_job *j = mqd__job_new(cb);
    if (!j)
        return MQD_ERR_NOMEM;
    basic->mqs_put_job_info_fp(job, (mqs_job_info *)j);
    return mqs_ok;
}

MQD_EXPORT int mqs_destroy_job_info(mqs_job_info *info)
{
    mqd__job_free((struct mqd_job *)info);
    return mqs_ok;
}

MQD_EXPORT int mqs_set_process_identity(mqs_process *process, int identity)
{
    if (!mqd__mpi2())
        return MQD_ERR_NOT_MPI2;
    struct process_state *ps = proc(process);
    if (!ps)
        return MQD_ERR_NOT_SET_UP;
    if (ps->identity != identity)
        ps->have_comms = 0; /* its communicators name it by its identity */
    ps->identity = identity;
    /* Enter this process in the job's table under the MPI library's own
     * name for it, so that other processes can name it as a peer. */
    struct mqd_job *job = mqd__job_of(&ps->base);
    char key[MQD_MAX_KEY] = "";
    if (!job || !ps->base.backend)
        return mqs_ok;
    int rc = mqd_be_process_key(&ps->base, key, sizeof key);
    if (rc != mqs_ok || !key[0])
        return rc;
    return mqd__job_register(job, key, identity);
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

/* No backend has a hook for the processes a process spawned: MPICH keeps
 * no list of them that a debugger could read, and the launcher's
 * MPIR_proctable is where they are found. */
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
