/*
 * request.c - mqd's extension mqd_get_request_info (mpi_interface.h): the
 * operation behind one of the program's request handles, read by the
 * backend (mqd_be_read_request), named by the communicators this process
 * shows, and said only where what the backend read agrees with them.
 */
#include "handles.h"

#include <string.h>

/* Does context belong to c, as a receive's (queue receives) or a send's
 * context would? */
static int context_in(const struct mqd_comm *c, uint64_t context, int queue)
{
    struct mqd_raw_op op;
    memset(&op, 0, sizeof op);
    op.context = context;
    return mqd_be_op_in_comm(c, queue, &op) != 0;
}

/* The communicator of r among the process's: by its address, else by its
 * context; NULL if none shown (MPI's own, freed, or not told). */
static const struct mqd_comm *request_comm(const struct process_state *ps,
                                           const struct mqd_raw_request *r, int queue)
{
    for (int i = 0; r->comm_addr && i < ps->ncomms; i++)
        if (ps->comms[i].addr == r->comm_addr)
            return &ps->comms[i];
    for (int i = 0; !r->comm_addr && r->has_context && i < ps->ncomms; i++)
        if (context_in(&ps->comms[i], r->context, queue))
            return &ps->comms[i];
    return NULL;
}

/*
 * What r says of its envelope, if it agrees with its communicator c: the
 * context (where read) one of c's for that kind of operation, the peer
 * one of c's ranks (or any).  A request's union read as the wrong member
 * (the netmod's own request) fails that.
 */
static void envelope(const struct mqd_comm *c, const struct mqd_raw_request *r, int queue,
                     mqd_request_info *info)
{
    int agrees = !r->has_context || context_in(c, r->context, queue);
    if (r->known & MQD_REQ_KNOWN_PEER)
        agrees = agrees && r->peer >= -1 && r->peer < c->remote_size;
    if (!agrees)
        return;
    if (r->known & MQD_REQ_KNOWN_PEER) {
        info->known |= MQD_REQ_KNOWN_PEER | (r->known & MQD_REQ_SCHED_RECEIVES);
        info->peer_local = r->peer;
        info->peer_global = r->peer >= 0 ? mqd__to_global(c, r->peer) : -1;
    }
    if (r->known & MQD_REQ_KNOWN_TAG) {
        info->known |= MQD_REQ_KNOWN_TAG;
        info->tag = r->tag;
    }
}

MQD_EXPORT int mqd_get_request_info(mqs_process *process, mqs_taddr_t handle,
                                    mqd_request_info *info)
{
    struct process_state *ps = mqd__ready(process);
    if (!ps)
        return MQD_ERR_NOT_SET_UP;
    if (!info)
        return MQD_ERR_BUF_SMALL;
    memset(info, 0, sizeof *info);
    info->peer_local = info->peer_global = info->tag = info->sched_tag = -1;
    if (!ps->have_comms) {
        int rc = mqs_update_communicator_list(process);
        if (rc != mqs_ok)
            return rc;
    }
    struct mqd_raw_request r;
    int rc = mqd_be_read_request(&ps->base, handle, &r);
    memcpy(info->text, r.text, sizeof info->text);
    info->text[sizeof info->text - 1] = '\0';
    if (rc != mqs_ok)
        return rc;
    info->kind = r.kind;
    info->state = r.state;
    info->request = r.addr;
    int queue = r.kind == MQD_REQ_SEND || r.kind == MQD_REQ_PERSISTENT_SEND ? mqs_pending_sends
                                                                            : mqs_pending_receives;
    const struct mqd_comm *c = request_comm(ps, &r, queue);
    if (c) {
        info->known |= MQD_REQ_KNOWN_COMM;
        info->comm = c->addr;
        envelope(c, &r, queue, info);
    }
    if (r.known & MQD_REQ_KNOWN_SCHED_TAG) {
        info->known |= MQD_REQ_KNOWN_SCHED_TAG;
        info->sched_tag = r.sched_tag;
    }
    return mqs_ok;
}

MQD_EXPORT int mqd_get_comm_nbc_tag(mqs_process *process, mqs_taddr_t comm, mqs_tword_t *next_tag)
{
    struct process_state *ps = mqd__ready(process);
    if (!ps)
        return MQD_ERR_NOT_SET_UP;
    if (!next_tag)
        return MQD_ERR_BUF_SMALL;
    for (int i = 0; ps->have_comms && i < ps->ncomms; i++) {
        if (ps->comms[i].addr != comm)
            continue;
        if (ps->comms[i].nbc_next_tag < 0)
            return mqs_no_information;
        *next_tag = ps->comms[i].nbc_next_tag;
        return mqs_ok;
    }
    return mqs_no_information;
}
