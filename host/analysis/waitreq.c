/*
 * waitreq.c - what a blocked MPI_Wait, MPI_Waitall, MPI_Waitany or
 * MPI_Waitsome waits for, by the requests it was given (mqdh_dump.requests:
 * read from the program, decoded by the DLL), for waits.c.
 *
 * Without them, such a call needs one (or all) of whatever its queues hold
 * that is the program's, and a queue that cannot be read leaves it unseen.
 * With them, exactly the queue entries behind its requests count (a
 * queue entry names its request: mqdh_op.request), a request already done
 * lets MPI_Wait and MPI_Waitany return, and a send no queue holds (an MPI
 * that keeps no record of sends: MPICH without --enable-debuginfo) waits
 * for its destination to post a matching receive, as a blocked MPI_Send
 * does.
 */
#define _GNU_SOURCE
#include "analysis/waitreq.h"

#include "analysis/calls.h"

#include "base/dump.h"

#include <stdio.h>
#include <string.h>

static const char *who(const struct mqdh__waits *b, int i, char *buf, size_t len)
{
    mqdh_process_label(&b->m.d->procs[i], buf, len);
    return buf;
}

const struct mqdh_requests *mqdh__call_requests(const struct mqdh__waits *b, int i)
{
    const struct mqdh_requests *rq = b->m.d->requests ? &b->m.d->requests[i] : NULL;
    if (!rq || rq->n <= 0 || rq->why)
        return NULL; /* not such a call, or not every request is known */
    for (int r = 0; r < rq->n; r++)
        if (!rq->v[r].decoded)
            return NULL;
    return rq;
}

int mqdh__requests_return(const struct mqdh_requests *rq, int one)
{
    int pending = 0;
    for (int r = 0; r < rq->n; r++) {
        if (rq->v[r].done && one)
            return 1; /* MPI_Wait, MPI_Waitany: one done is enough */
        pending += !rq->v[r].done;
    }
    return pending == 0;
}

/* Does request r live in queue q (a send's, a receive's), when pending? */
static int in_queue(const struct mqdh_request *r, int q)
{
    switch (r->kind) {
    case MQDH_REQ_SEND:
    case MQDH_REQ_PERSISTENT_SEND:
        return q == MQDH_SENDS;
    case MQDH_REQ_RECV:
    case MQDH_REQ_PERSISTENT_RECV:
        return q == MQDH_RECEIVES;
    case MQDH_REQ_NULL:
    case MQDH_REQ_PERSISTENT_COLL:
    case MQDH_REQ_COLLECTIVE:
    case MQDH_REQ_GENERALIZED:
    case MQDH_REQ_PARTITIONED:
    case MQDH_REQ_RMA:
    case MQDH_REQ_OTHER:
        break;
    }
    return 0;
}

int mqdh__requests_in_queue(const struct mqdh_requests *rq, int q)
{
    for (int r = 0; r < rq->n; r++)
        if (!rq->v[r].done && in_queue(&rq->v[r], q))
            return 1;
    return 0;
}

int mqdh__requests_hold(const struct mqdh_requests *rq, const struct mqdh_op *o)
{
    for (int r = 0; o->request && r < rq->n; r++)
        if (!rq->v[r].done && rq->v[r].address == o->request)
            return 1;
    return 0;
}

/* Is request r's operation in one of process i's queues? */
static int queued(const struct mqdh_process *p, const struct mqdh_request *r)
{
    for (int c = 0; c < p->ncomms; c++)
        for (int q = 0; q < MQDH_NQUEUES; q++)
            for (int n = 0; n < p->comms[c].queues[q].nops; n++)
                if (r->address && p->comms[c].queues[q].ops[n].request == r->address)
                    return 1;
    return 0;
}

/*
 * Could a pending receive of process tp on its communicator k take process
 * i's send with tag (tag_known 0: any)?  1 yes (or it cannot be seen), 0
 * no.
 */
static int may_receive(const struct mqdh__waits *b, int i, int tp, int k, long tag, int tag_known)
{
    const struct mqdh_process *mp = &b->m.d->procs[tp];
    const struct mqdh_queue *qu = &mp->comms[k].queues[MQDH_RECEIVES];
    if (qu->state != MQDH_QUEUE_OK)
        return 1;
    for (int n = 0; n < qu->nops; n++) {
        const struct mqdh_op *o = &qu->ops[n];
        if (o->collective || o->status == MQDH_OP_COMPLETE)
            continue;
        int from = o->desired_local_rank < 0 ||
                   mqdh__op_global(&b->m, tp, k, o->desired_local_rank, o->desired_global_rank) ==
                       b->ids[i];
        if (from && (o->tag_wild || !tag_known || o->desired_tag == tag))
            return 1;
    }
    return 0;
}

/* Is request r a pending send of process i to process tp on i's
 * communicator ci? */
static int send_to(const struct mqdh__waits *b, int i, const struct mqdh_request *r, int tp,
                   int ci)
{
    return !r->done && r->comm == ci && r->peer_known && r->peer_local >= 0 &&
           (r->kind == MQDH_REQ_SEND || r->kind == MQDH_REQ_PERSISTENT_SEND) &&
           mqdh__op_global(&b->m, i, ci, r->peer_local, r->peer_global) == b->ids[tp];
}

/*
 * Process i's pending send request r (one of its call's, rq) to tp (its
 * communicator k there), its tag not recorded: is it a message tp's
 * unexpected queue holds with its envelope only, which none of tp's
 * receives takes?  Once the job has stopped moving every pending send has
 * reached its destination, and one not matched waits there, envelope only
 * (its data, or the rest of it, still at the sender, which is why the send
 * is pending).  So where i's call waits on as many pending sends to tp on
 * that communicator, none with its tag recorded, as tp's queue holds such
 * messages from i, those are the sends (i's other pending sends to tp
 * would be there too).  1, *tag the messages' tag (-1 if they differ), if
 * none of tp's receives may take any; else 0.
 */
static int arrived_unmatched(const struct mqdh__waits *b, int i, const struct mqdh_requests *rq,
                             const struct mqdh_request *r, int tp, int k, long *tag)
{
    const struct mqdh_queue *ux = &b->m.d->procs[tp].comms[k].queues[MQDH_UNEXPECTED];
    int sends = 0, there = 0;
    for (int n = 0; n < rq->n; n++) {
        if (!send_to(b, i, &rq->v[n], tp, r->comm))
            continue;
        if (rq->v[n].tag_known)
            return 0;
        sends++;
    }
    if (ux->state != MQDH_QUEUE_OK || sends == 0)
        return 0;
    *tag = -2;
    for (int n = 0; n < ux->nops; n++) {
        const struct mqdh_op *o = &ux->ops[n];
        if (o->collective || o->status == MQDH_OP_COMPLETE || o->actual_tag < 0 ||
            mqdh__op_global(&b->m, tp, k, o->actual_local_rank, o->actual_global_rank) !=
                b->ids[i])
            continue;
        if (may_receive(b, i, tp, k, o->actual_tag, 1))
            return 0;
        *tag = *tag == -2 || *tag == o->actual_tag ? o->actual_tag : -1;
        there++;
    }
    return there == sends;
}

/*
 * Process i's pending send request r (one of its call's, rq), in no queue
 * (its MPI records no sends): it waits for its destination to post a
 * receive that takes it.  One that may (from i or any, with its tag or
 * any, or i's tag not known): in flight, or it may be; a destination in
 * MPI_Finalize never receives.  Returns 1 if a wait was added, 0 if i is
 * free by it (said why).
 */
static int send_request_wait(struct mqdh__waits *b, int i, const struct mqdh_requests *rq,
                             const struct mqdh_request *r, int group)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    char me[32], them[32];
    long g = r->comm >= 0 && r->peer_known
                 ? mqdh__op_global(&b->m, i, r->comm, r->peer_local, r->peer_global)
                 : -1;
    int tp = g >= 0 ? mqdh_process_by_global(b->m.d, g) : -1;
    if (tp < 0 || tp == i) {
        mqdh__unseen(b, i, "where %s's send request 0x%llx in %s goes (%s)",
                     who(b, i, me, sizeof me), (unsigned long long)r->handle, p->where_call,
                     r->peer_known ? "its destination is not in the dump"
                                   : "its destination is not recorded");
        return 0;
    }
    const struct mqdh_process *mp = &b->m.d->procs[tp];
    int k = mqdh__comm_same(mp, &p->comms[r->comm]);
    long tag = r->tag_known ? r->tag : -1;
    int arrived = !r->tag_known && k >= 0 && arrived_unmatched(b, i, rq, r, tp, k, &tag);
    if (!mqdh__process_terminal(mp) && !arrived &&
        (k < 0 || may_receive(b, i, tp, k, r->tag, r->tag_known))) {
        if (k < 0 || !r->tag_known)
            mqdh__unseen(b, i, "whether %s's receive on \"%s\" takes %s's send (%s)",
                         who(b, tp, them, sizeof them), p->comms[r->comm].name,
                         who(b, i, me, sizeof me),
                         k < 0 ? "its queues there cannot be seen"
                               : "the send's tag is not recorded");
        return 0;
    }
    if (arrived)
        mqdh__unseen_note(b, "the tags of sends their MPI does not record: each is the message "
                          "its destination holds unexpected, envelope only, which holds once "
                          "the job has stopped moving (every pending send has reached its "
                          "destination by then)");
    struct mqdh_wait *w = mqdh__add_wait(b);
    if (!w)
        return 0;
    w->from = i;
    w->to = tp;
    w->group = group;
    w->kind = MQDH_WAIT_SEND;
    w->comm = r->comm;
    w->peer_local = r->peer_local;
    w->peer_global = b->ids[tp];
    w->tag_unknown = tag < 0;
    w->tag = tag;
    w->bytes = -1;
    return 1;
}

/*
 * May process m's blocked call be the partner of i's pending point-to-point
 * request r (i sends: m receives from it; else m sends to it), whatever
 * m's queues (which cannot be read)?  By m's call and its arguments, or its
 * own MPI_Wait*'s requests: 1 yes or maybe, 0 no (a call that can match
 * nothing of the kind: MPI_Finalize, a collective, one in the same
 * direction, requests of no such kind).
 */
static int may_partner(const struct mqdh__waits *b, int i, int m, int sends)
{
    const struct mqdh_process *q = &b->m.d->procs[m];
    long me = b->m.d->procs[i].rank;
    enum mqdh__call_kind k = mqdh__call_kind(q->where_call);
    if (mqdh__process_terminal(q) || k == MQDH__CALL_COLLECTIVE)
        return 0;
    if (k == MQDH__CALL_ONE_RECV || k == MQDH__CALL_PROBE || k == MQDH__CALL_ONE_SEND) {
        int recv = k != MQDH__CALL_ONE_SEND;
        unsigned bit = recv ? MQDH_ARG_SOURCE : MQDH_ARG_DEST;
        long peer = recv ? q->where_source : q->where_dest;
        int named = (q->where_args & bit) && q->where_comm_name &&
                    strcmp(q->where_comm_name, "MPI_COMM_WORLD") == 0;
        return recv == sends && (!named || peer < 0 || peer == me);
    }
    const struct mqdh_requests *rq = mqdh__call_requests(b, m);
    if (!rq)
        return 1; /* another call, or requests not known */
    for (int n = 0; n < rq->n; n++) {
        const struct mqdh_request *r = &rq->v[n];
        int rsend = r->kind == MQDH_REQ_SEND || r->kind == MQDH_REQ_PERSISTENT_SEND;
        int rrecv = r->kind == MQDH_REQ_RECV || r->kind == MQDH_REQ_PERSISTENT_RECV;
        if (!r->done && (sends ? rrecv : rsend) &&
            (!r->peer_known || r->peer_local < 0 || r->peer_global == b->ids[i]))
            return 1;
    }
    return 0;
}

/*
 * Process i's pending point-to-point request r whose queue cannot be read
 * (an MPI that matches messages in its network library: UCX): it waits for
 * its peer, or, not recorded, for any member of its communicator (one not
 * recorded either: any process of the job, when the dump holds the whole
 * job), as a call whose arguments were not read does (calls.c): a member
 * not blocked, or blocked in a call (or an MPI_Wait* on requests) that may
 * be its partner, leaves i free.  One group of alternatives.  Returns 1 if
 * waits were added.
 */
static int call_like_request_waits(struct mqdh__waits *b, int i, const struct mqdh_request *r,
                                   int group)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    const struct mqdh_comm *c = r->comm >= 0 ? &p->comms[r->comm] : NULL;
    int sends = r->kind == MQDH_REQ_SEND || r->kind == MQDH_REQ_PERSISTENT_SEND;
    int any = !c || !r->peer_known || r->peer_local < 0, first = b->a->nwaits, members = 0;
    char me[32], them[32], why[300];
    if (!c && !mqdh__whole_job(b, i, why, sizeof why)) {
        mqdh__unseen(b, i, "which process %s's %s request 0x%llx names (its communicator is not "
                     "recorded, and %s)", who(b, i, me, sizeof me), sends ? "send" : "receive",
                     (unsigned long long)r->handle, why);
        return 0;
    }
    for (int m = 0; m < b->m.d->nprocs; m++) {
        int k = m == i ? -1 : c ? mqdh__comm_same(&b->m.d->procs[m], c) : 0;
        if (k < 0 || (!any && b->ids[m] != r->peer_global))
            continue;
        members++;
        if (b->a->activity[m] != MQDH_ACT_BLOCKED || may_partner(b, i, m, sends)) {
            if (b->a->activity[m] == MQDH_ACT_BLOCKED)
                mqdh__unseen(b, i, "whether %s's %s is the partner of %s's %s request 0x%llx",
                             who(b, m, them, sizeof them), b->m.d->procs[m].where_call,
                             who(b, i, me, sizeof me), sends ? "send" : "receive",
                             (unsigned long long)r->handle);
            b->a->nwaits = first;
            return 0;
        }
        struct mqdh_wait *w = mqdh__add_wait(b);
        if (!w)
            return 0;
        *w = (struct mqdh_wait){.from = i, .to = m, .group = group, .comm = c ? r->comm : -2,
                                .kind = sends ? MQDH_WAIT_SEND : MQDH_WAIT_RECV,
                                .any_source = any, .peer_unknown = !r->peer_known,
                                .peer_local = any ? -1 : r->peer_local,
                                .peer_global = c ? b->ids[m] : -1, .tag_unknown = !r->tag_known,
                                .tag_wild = r->tag_known && r->tag < 0,
                                .tag = r->tag_known && r->tag >= 0 ? r->tag : -1, .bytes = -1,
                                .from_call = 1};
    }
    if (c && members + 1 < c->size) { /* a member not in the dump may be the partner */
        mqdh__unseen(b, i, "%ld of the %ld members of \"%s\", which %s's request 0x%llx may "
                     "name", c->size - 1 - members, c->size - 1, c->name,
                     who(b, i, me, sizeof me), (unsigned long long)r->handle);
        b->a->nwaits = first;
        return 0;
    }
    if (b->a->nwaits > first)
        mqdh__unseen_note(b, "the receive side of processes whose MPI keeps it in its network "
                          "library: their waits are read from their calls and requests instead, "
                          "which holds once the job has stopped moving (a matching message "
                          "would by then have reached its rank)");
    return b->a->nwaits > first;
}

/*
 * Can process i's request r not be told from the queues that could show
 * its partner: a receive whose own queue cannot be read, a send whose
 * destination's receives cannot be (or whose destination is not known)?
 */
static int queue_unread(const struct mqdh__waits *b, int i, const struct mqdh_request *r)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    if (r->comm < 0) /* UCX's receives keep none: their queues are UCX's too */
        return p->ncomms > 0 && p->comms[0].queues[MQDH_RECEIVES].state != MQDH_QUEUE_OK;
    if (r->kind == MQDH_REQ_RECV || r->kind == MQDH_REQ_PERSISTENT_RECV)
        return p->comms[r->comm].queues[MQDH_RECEIVES].state != MQDH_QUEUE_OK;
    long g = r->peer_known && r->peer_local >= 0
                 ? mqdh__op_global(&b->m, i, r->comm, r->peer_local, r->peer_global)
                 : -1;
    int tp = g >= 0 ? mqdh_process_by_global(b->m.d, g) : -1;
    int k = tp >= 0 ? mqdh__comm_same(&b->m.d->procs[tp], &p->comms[r->comm]) : -1;
    return k < 0 || b->m.d->procs[tp].comms[k].queues[MQDH_RECEIVES].state != MQDH_QUEUE_OK;
}

void mqdh__request_waits(struct mqdh__waits *b, int i, const struct mqdh_requests *rq, int one,
                         int *group, int *free_any)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    char me[32];
    for (int n = 0; n < rq->n; n++) {
        const struct mqdh_request *r = &rq->v[n];
        if (r->done || queued(p, r))
            continue; /* done, or its queue entry waits (waits.c) */
        int send = r->kind == MQDH_REQ_SEND || r->kind == MQDH_REQ_PERSISTENT_SEND;
        int recv = r->kind == MQDH_REQ_RECV || r->kind == MQDH_REQ_PERSISTENT_RECV;
        if ((send || recv) && queue_unread(b, i, r)) {
            if (call_like_request_waits(b, i, r, one ? 0 : (*group)++))
                continue;
            *free_any = 1;
            continue;
        }
        if (send && send_request_wait(b, i, rq, r, one ? 0 : (*group)++))
            continue;
        if (!send)
            mqdh__unseen(b, i, "what %s's %s request 0x%llx in %s waits for (%s)",
                         who(b, i, me, sizeof me), recv ? "receive" : "pending",
                         (unsigned long long)r->handle, p->where_call,
                         recv ? "its receive is in no queue that could be seen (the netmod's "
                                "own)"
                              : r->text);
        *free_any = 1; /* it may be met: an alternative needs nobody */
    }
}

int mqdh__requests_all_collective(const struct mqdh_requests *rq)
{
    int any = 0;
    for (int r = 0; r < rq->n; r++) {
        if (rq->v[r].done)
            continue;
        if (rq->v[r].kind != MQDH_REQ_COLLECTIVE)
            return 0;
        any = 1;
    }
    return any;
}

/* ---------------------------------------------------------------- nonblocking collectives */

/*
 * Process i's pending nonblocking collective r, whose schedule receives
 * from one member next: the process m that is, in *m, and 1 if m has not
 * started r's instance (MPICH numbers a communicator's nonblocking
 * collectives, the n-th taking tag 287 + n - 1 on every member: m's next
 * tag at most r's schedule tag means m has not started it, and sends it
 * nothing until it does).  0 (unseen said) if that cannot be told.
 */
static int nbc_not_started(struct mqdh__waits *b, int i, const struct mqdh_request *r, int *m,
                           int *mk)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    char me[32], them[32];
    *m = *mk = -1;
    if (r->comm >= 0 && r->sched_tag >= 0 && r->peer_known && r->sched_receives &&
        r->peer_global >= 0)
        *m = mqdh_process_by_global(b->m.d, r->peer_global);
    if (*m >= 0 && *m != i)
        *mk = mqdh__comm_same(&b->m.d->procs[*m], &p->comms[r->comm]);
    if (*mk < 0) {
        mqdh__unseen(b, i, "what %s's nonblocking collective (request 0x%llx) waits for in %s "
                     "(%s)", who(b, i, me, sizeof me), (unsigned long long)r->handle,
                     p->where_call, *m < 0 ? "the member its schedule receives from next is "
                     "not known, or not in the dump" : "that member shows no such communicator");
        return 0;
    }
    long next = mqdh__next_nbc_tag(b->m.d, *m, *mk);
    if (b->a->activity[*m] == MQDH_ACT_UNKNOWN || next < 0 || next > r->sched_tag) {
        mqdh__unseen(b, i, "whether %s is in %s's nonblocking collective on \"%s\" (schedule "
                     "tag %ld): %s", who(b, *m, them, sizeof them), who(b, i, me, sizeof me),
                     p->comms[r->comm].name, r->sched_tag,
                     b->a->activity[*m] == MQDH_ACT_UNKNOWN ? "where it is is not known"
                     : next < 0 ? "how many it has started is not known"
                                : "it has started that one or a later one");
        return 0;
    }
    return 1;
}

/*
 * Each of i's pending nonblocking collectives waits for the member its
 * schedule receives from next, which has not started that instance: i
 * cannot go on until that member starts it, which it does only once the
 * call it is in has returned (a blocked one never starts it).  MPI_Wait
 * and MPI_Waitany need one of them (one group of alternatives), MPI_Waitall
 * every one (a group each).  A request that cannot be told leaves i
 * unseen.
 */
void mqdh__nbc_request_waits(struct mqdh__waits *b, int i, const struct mqdh_requests *rq,
                             int one)
{
    int first = b->a->nwaits, group = 0;
    for (int n = 0; n < rq->n; n++) {
        const struct mqdh_request *r = &rq->v[n];
        int m, mk;
        if (r->done)
            continue;
        if (!nbc_not_started(b, i, r, &m, &mk)) {
            if (one)
                b->a->nwaits = first;
            return;
        }
        struct mqdh_wait *w = mqdh__add_collective_wait(
            b, i, m, one ? 0 : group++, r->comm, b->m.d->procs[m].comms[mk].local_rank);
        if (!w)
            return;
    }
}
