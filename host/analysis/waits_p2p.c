/*
 * waits_p2p.c - what a process blocked in a point-to-point call waits
 * for (MPI_Recv, MPI_Send, MPI_Wait*, MPI_Probe, ...): each pending
 * operation's peers, by its queues and its peers' (waits.h).
 */
#define _GNU_SOURCE
#include "analysis/waits_p2p.h"

#include "analysis/waits_coll.h"
#include "analysis/waitreq.h"
#include "base/dump.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Process i's label ("rank 3") in buf. */
static const char *label(const struct mqdh__waits *b, int i, char *buf, size_t len)
{
    return mqdh__waits_label(b, i, buf, len);
}

/* ---------------------------------------------------------------- point to point */

/* What op_targets returns for an operation that waits for nobody. */
enum { NEEDS_NOBODY = -1 };

static const char *verb(int q)
{
    return q == MQDH_SENDS ? "sends to" : "receives from";
}

/*
 * Does process tp's MPI record no sends on c (its send queue has no
 * information: MPICH without --enable-debuginfo keeps none), while its
 * receives are seen?  Then a receive posted for it, still unmatched, is
 * taken to have no matching send pending there: the receiver matches a
 * message as it arrives (MPIDIG's posted list), so once the job has
 * stopped moving a matching send would have reached it.  Said once, as a
 * note that blinds nobody.
 */
static int sends_unrecorded(struct mqdh__waits *b, int tp, const struct mqdh_comm *c)
{
    const struct mqdh_process *mp = &b->m.d->procs[tp];
    char who[32];
    int k = mqdh__comm_same(mp, c);
    if (k < 0 || mp->comms[k].queues[MQDH_SENDS].state != MQDH_QUEUE_NO_INFO ||
        mp->comms[k].queues[MQDH_RECEIVES].state != MQDH_QUEUE_OK)
        return 0;
    mqdh__unseen_note(b,
                      "%s's pending sends (its MPI records none): a send matching a receive "
                      "posted for it would have reached its receiver once the job has stopped "
                      "moving",
                      label(b, tp, who, sizeof who));
    return 1;
}

/*
 * The members i's receive o from MPI_ANY_SOURCE on ci waits for, into t:
 * their number, or NEEDS_NOBODY when one of them holds its match (said if
 * that cannot be seen) or some member is not in the dump (said).
 */
static int any_source_targets(struct mqdh__waits *b, int i, int ci, const struct mqdh_op *o,
                              struct mqdh__candidate *t)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    const struct mqdh_comm *c = &p->comms[ci];
    char me[32], peer[32];
    int n = 0;
    for (int m = 0; m < b->m.d->nprocs; m++) {
        const struct mqdh_process *mp = &b->m.d->procs[m];
        /* A finalizing process may have no communicators left, but it is
         * still a member of its world's MPI_COMM_WORLD. */
        int world_member = mqdh__process_terminal(mp) && mp->ncomms == 0 &&
                           mp->world == p->world && strcmp(c->name, "MPI_COMM_WORLD") == 0;
        if (m == i || (mqdh__comm_same(mp, c) < 0 && !world_member))
            continue;
        /* Its sends not recorded: as for a receive from it (sends_unrecorded). */
        int has = 0;
        if (!sends_unrecorded(b, m, c))
            has = mqdh__partner_pending(&b->m, i, m, c, MQDH_RECEIVES, o);
        if (has < 0)
            mqdh__unseen(b, i,
                         "%s's queues on \"%s\" (a member %s's receive from MPI_ANY_SOURCE "
                         "might match)",
                         label(b, m, peer, sizeof peer), c->name, label(b, i, me, sizeof me));
        if (has)
            return NEEDS_NOBODY;
        t[n].proc = m;
        t[n++].any = 1;
    }
    if (n < c->size - 1) {
        mqdh__unseen(b, i,
                     "%ld of the %ld members of \"%s\" that %s receives from with "
                     "MPI_ANY_SOURCE",
                     c->size - 1 - n, c->size - 1, c->name, label(b, i, me, sizeof me));
        return NEEDS_NOBODY;
    }
    return n;
}

/*
 * The process i's operation o (queue q of ci) names as its peer, or -1
 * when that cannot be told (said): no global rank and no group to trust, a
 * rank not in the dump or that two worlds have, or the process itself as
 * another vendor's DLL names an intercommunicator's remote rank.
 */
static int peer_of(struct mqdh__waits *b, int i, int ci, int q, const struct mqdh_op *o)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    const struct mqdh_comm *c = &p->comms[ci];
    char me[32];
    long g = mqdh__op_global(&b->m, i, ci, o->desired_local_rank, o->desired_global_rank);
    int tp = mqdh_process_by_global(b->m.d, g), shared = 0;
    if (tp < 0 && g < 0) {
        mqdh__unseen(b, i,
                     "which process is rank %ld of \"%s\", which %s %s (the DLL gives no "
                     "global rank, and no group that can be trusted)",
                     o->desired_local_rank, c->name, label(b, i, me, sizeof me), verb(q));
        return -1;
    }
    if (tp < 0) {
        for (int m = 0; m < b->m.d->nprocs; m++) /* an MPI-1 DLL's rank, of two worlds */
            shared += b->ids[m] == g;
        mqdh__unseen(b, i, "global rank %ld, which %s %s on \"%s\" (%s)", g,
                     label(b, i, me, sizeof me), verb(q), c->name,
                     shared ? "a rank of more than one world: the DLL does not say which"
                            : "not in the dump");
        return -1;
    }
    /* A process waiting for itself on a communicator it does not have to
     * itself: what another vendor's DLL says when it translates an
     * intercommunicator's remote rank through the local group (Open MPI's
     * does), so not a peer to build on.  mqd's own DLL tells the groups
     * apart. */
    if (tp == i && c->size > 1 && p->dll_source != MQDH_DLL_OWN) {
        mqdh__unseen(b, i,
                     "which process is rank %ld of \"%s\", which %s %s (the DLL names the "
                     "process itself, as a DLL that reads an intercommunicator's remote rank "
                     "in the local group does)",
                     o->desired_local_rank, c->name, label(b, i, me, sizeof me), verb(q));
        return -1;
    }
    return tp;
}

/*
 * Is i's operation o, which its MPI may not have marked (maybe_collective),
 * perhaps a nonblocking collective's, given what its peer tp holds?  Said
 * if so: then it waits for nobody that can be told.
 */
static int maybe_collectives(struct mqdh__waits *b, int i, int tp, int ci, int q,
                             const struct mqdh_op *o)
{
    const struct mqdh_comm *c = &b->m.d->procs[i].comms[ci];
    char me[32], peer[32];
    int twin = mqdh__collective_twin(&b->m, i, tp, c, q, o), send = q == MQDH_SENDS;
    if (!twin && !mqdh__peer_later_instance(&b->m, tp, c, o, o->desired_tag))
        return 0;
    mqdh__unseen(b, i,
                 "whether %s's %s %s %s with tag %ld on \"%s\" is MPI's own, for a "
                 "nonblocking collective (its MPI does not mark all of a collective's "
                 "traffic): %s %s",
                 label(b, i, me, sizeof me), send ? "send" : "receive", send ? "to" : "from",
                 label(b, tp, peer, sizeof peer), o->desired_tag, c->name, peer,
                 twin ? (send ? "has a collective's receive from it with that tag"
                              : "has a collective's send to it with that tag")
                      : "is in that nonblocking collective or a later one there, and shows no "
                        "message that would match it");
    return 1;
}

/*
 * The processes i's operation o (queue q of ci) waits for, into t (room
 * for nprocs): their number, or NEEDS_NOBODY when it needs nobody (in
 * flight) or what it needs cannot be seen (said).
 */
static int op_targets(struct mqdh__waits *b, int i, int ci, int q, const struct mqdh_op *o,
                      struct mqdh__candidate *t)
{
    const struct mqdh_comm *c = &b->m.d->procs[i].comms[ci];
    char me[32], peer[32];
    if (q == MQDH_RECEIVES && o->desired_local_rank < 0) /* any member */
        return any_source_targets(b, i, ci, o, t);
    int tp = peer_of(b, i, ci, q, o);
    if (tp < 0 || maybe_collectives(b, i, tp, ci, q, o))
        return NEEDS_NOBODY;
    int has = q == MQDH_RECEIVES && sends_unrecorded(b, tp, c)
                  ? 0
                  : mqdh__partner_pending(&b->m, i, tp, c, q, o);
    if (has < 0)
        mqdh__unseen(b, i, "%s's queues on \"%s\" (%s waits for it there)",
                     label(b, tp, peer, sizeof peer), c->name, label(b, i, me, sizeof me));
    if (has)
        return NEEDS_NOBODY;
    t[0].proc = tp;
    t[0].any = 0;
    return 1;
}

static void commit(struct mqdh__waits *b, int i, int group, int ci, int q, const struct mqdh_op *o,
                   const struct mqdh__candidate *t, int n)
{
    long g = mqdh__op_global(&b->m, i, ci, o->desired_local_rank, o->desired_global_rank);
    for (int k = 0; k < n && !b->nomem; k++) {
        struct mqdh_wait *w = mqdh__add_wait(b);
        if (!w)
            return;
        w->from = i;
        w->to = t[k].proc;
        w->group = group;
        w->comm = ci;
        w->kind = q == MQDH_SENDS ? MQDH_WAIT_SEND : MQDH_WAIT_RECV;
        w->any_source = t[k].any;
        w->peer_local = o->desired_local_rank;
        w->peer_global = g;
        w->tag = o->tag_wild ? -1 : o->desired_tag;
        w->tag_wild = o->tag_wild;
        w->bytes = o->desired_length;
    }
}

/* Process i's blocked send (its arguments: dest on ci, tag) waits for tp. */
static void add_send_wait(struct mqdh__waits *b, int i, int tp, int ci)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    struct mqdh_wait *w = mqdh__add_wait(b);
    if (!w)
        return;
    w->from = i;
    w->to = tp;
    w->kind = MQDH_WAIT_SEND;
    w->comm = ci;
    w->peer_local = p->where_dest;
    w->peer_global = b->ids[tp];
    w->tag = p->where_tag;
    w->bytes = -1;
}

/*
 * Process i is blocked in a send call and its own queues show no send
 * (MPICH records only nonblocking sends there), but the send's arguments
 * were read from its frame: its destination is known, so the wait is
 * exact.  A destination in MPI_Finalize never receives: it waits for it.
 * Its message at the destination, unexpected, still to be matched (a
 * rendezvous envelope, or any for MPI_Ssend): it waits for the
 * destination's receive.  A matching posted receive there: in flight.
 * Nothing of it there: it waits for the destination too (a rendezvous
 * send not yet arrived; see the analysis's model above).  Only a complete
 * eager message from i with its tag cannot be told from an earlier send's.
 * Returns 0 when the arguments do not name a process in the dump (the
 * caller then looks at every destination).
 */
static int blocked_send_exact(struct mqdh__waits *b, int i, int sync)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    unsigned need = MQDH_ARG_DEST | MQDH_ARG_TAG | MQDH_ARG_COMM;
    int ci = mqdh__comm_of_args(p);
    if ((p->where_args & need) != need || ci < 0 || p->where_dest < 0)
        return 0;
    const struct mqdh_comm *c = &p->comms[ci];
    int tp = mqdh_process_by_global(b->m.d, mqdh__op_global(&b->m, i, ci, p->where_dest, -1));
    if (tp >= 0 && mqdh__process_terminal(&b->m.d->procs[tp])) {
        /* It will never receive again; its queues may be gone already. */
        add_send_wait(b, i, tp, ci);
        return 1;
    }
    int k = tp >= 0 ? mqdh__comm_same(&b->m.d->procs[tp], c) : -1;
    if (k < 0)
        return 0;
    const struct mqdh_process *mp = &b->m.d->procs[tp];
    const struct mqdh_queue *q = &mp->comms[k].queues[MQDH_UNEXPECTED];
    char me[32], who[32];
    if (q->state != MQDH_QUEUE_OK) {
        mqdh__unseen(b, i, "%s's unexpected messages on \"%s\" (%s's blocked %s may be there)",
                     label(b, tp, who, sizeof who), mp->comms[k].name, label(b, i, me, sizeof me),
                     p->where_call);
        return 1;
    }
    int waiting = 0, complete = 0;
    for (int n = 0; n < q->nops; n++) {
        const struct mqdh_op *o = &q->ops[n];
        if (o->collective || o->actual_tag != p->where_tag ||
            mqdh__op_global(&b->m, tp, k, o->actual_local_rank, o->actual_global_rank) != b->ids[i])
            continue;
        if (!sync && o->status == MQDH_OP_COMPLETE)
            complete = 1;
        else
            waiting = 1;
    }
    if (!waiting && complete) {
        mqdh__unseen(b, i, "whether %s's blocked %s is the complete message to %s with tag %ld",
                     label(b, i, me, sizeof me), p->where_call, label(b, tp, who, sizeof who),
                     p->where_tag);
        return 1;
    }
    struct mqdh_op o;
    memset(&o, 0, sizeof o);
    o.desired_local_rank = p->where_dest;
    o.desired_global_rank = -1;
    o.desired_tag = p->where_tag;
    int has = waiting ? 0 : mqdh__partner_pending(&b->m, i, tp, c, MQDH_SENDS, &o);
    if (has < 0)
        mqdh__unseen(b, i, "%s's pending receives on \"%s\" (%s's blocked %s may be matched)",
                     label(b, tp, who, sizeof who), c->name, label(b, i, me, sizeof me),
                     p->where_call);
    if (!has) /* else matched: in flight */
        add_send_wait(b, i, tp, ci);
    return 1;
}

/*
 * Process i is blocked in a send call (MPI_Send, MPI_Ssend, MPI_Rsend) and
 * its own queues show no send: MPICH records only nonblocking sends there.
 * Its message may be at the destination, unexpected: the envelope of a
 * rendezvous send (status pending), or for MPI_Ssend also an eager message
 * whose data is there but whose sender waits for it to be matched.  Every
 * such message from i is a candidate (one of them is the blocked send: an
 * OR).  A complete eager message of MPI_Send or MPI_Rsend is a send that
 * already finished, not a candidate.  If some process's unexpected
 * messages cannot be seen, the blocked send may be there: unseen.  Used
 * when the send's arguments were not read (blocked_send_exact).
 */
static void blocked_send_waits(struct mqdh__waits *b, int i)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    int sync = mqdh__call_is(p->where_call, MQDH__MPI_SYNC), first_wait = b->a->nwaits;
    char me[32], who[32];
    if (mqdh__call_is(p->where_call, MQDH__MPI_BUFFERED)) /* buffered: waits for nobody */
        return;
    if (blocked_send_exact(b, i, sync))
        return;
    for (int m = 0; m < b->m.d->nprocs; m++) {
        const struct mqdh_process *mp = &b->m.d->procs[m];
        if (m == i)
            continue;
        if (mp->error && mp->ncomms == 0) {
            mqdh__unseen(b, i, "%s's unexpected messages (%s's blocked %s may be there)",
                         label(b, m, who, sizeof who), label(b, i, me, sizeof me), p->where_call);
            b->a->nwaits = first_wait;
            return;
        }
        for (int k = 0; k < mp->ncomms; k++) {
            const struct mqdh_queue *q = &mp->comms[k].queues[MQDH_UNEXPECTED];
            int ci = mqdh__comm_same(p, &mp->comms[k]);
            if (ci < 0)
                continue;
            if (q->state != MQDH_QUEUE_OK) {
                mqdh__unseen(b, i,
                             "%s's unexpected messages on \"%s\" (%s's blocked %s may be "
                             "there)",
                             label(b, m, who, sizeof who), mp->comms[k].name,
                             label(b, i, me, sizeof me), p->where_call);
                b->a->nwaits = first_wait;
                return;
            }
            for (int n = 0; n < q->nops; n++) {
                const struct mqdh_op *o = &q->ops[n];
                if (o->collective || (!sync && o->status == MQDH_OP_COMPLETE))
                    continue;
                if (mqdh__op_global(&b->m, m, k, o->actual_local_rank, o->actual_global_rank) !=
                    b->ids[i])
                    continue;
                struct mqdh_wait *w = mqdh__add_wait(b);
                if (!w)
                    return;
                w->from = i;
                w->to = m;
                w->group = 0;
                w->kind = MQDH_WAIT_SEND;
                w->comm = ci;
                w->peer_local = mp->comms[k].local_rank;
                w->peer_global = b->ids[m];
                w->tag = o->actual_tag;
                w->bytes = o->actual_length;
            }
        }
    }
    if (b->a->nwaits == first_wait)
        mqdh__unseen(b, i,
                     "what %s waits for in %s (its message is in no queue that could be seen)",
                     label(b, i, me, sizeof me), p->where_call);
}

/*
 * Process i is in MPI_Probe (or MPI_Mprobe), which posts nothing: what it
 * waits for is its arguments, read from its frame.  It waits as a receive
 * from source with tag on comm would (a negative source or tag is the
 * wildcard: a probe from MPI_PROC_NULL returns at once), unless its
 * message is already in its own unexpected queue (the probe is about to
 * return) or its sender's pending sends (in flight).
 */
void mqdh__probe_waits(struct mqdh__waits *b, int i, struct mqdh__candidate *t)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    char me[32];
    unsigned need = MQDH_ARG_SOURCE | MQDH_ARG_TAG | MQDH_ARG_COMM;
    int ci = mqdh__comm_of_args(p);
    if ((p->where_args & need) != need || ci < 0) {
        mqdh__unseen(b, i, "what %s waits for in %s (a probe posts nothing, and %s)",
                     label(b, i, me, sizeof me), p->where_call,
                     (p->where_args & need) != need
                         ? (p->where_args_why ? p->where_args_why : "its arguments were not read")
                         : "its comm argument is no communicator the DLL showed");
        return;
    }
    struct mqdh_op o;
    memset(&o, 0, sizeof o);
    o.desired_local_rank = p->where_source < 0 ? -1 : p->where_source;
    o.desired_global_rank = -1;
    o.tag_wild = p->where_tag < 0;
    o.desired_tag = o.tag_wild ? -1 : p->where_tag;
    o.desired_length = -1;
    int has = mqdh__own_unexpected(&b->m, i, ci, &o);
    if (has) {
        if (has < 0)
            mqdh__unseen(b, i, "%s's unexpected messages on \"%s\" (its %s may match one)",
                         label(b, i, me, sizeof me), p->comms[ci].name, p->where_call);
        return;
    }
    int n = op_targets(b, i, ci, MQDH_RECEIVES, &o, t);
    if (n != NEEDS_NOBODY)
        commit(b, i, 0, ci, MQDH_RECEIVES, &o, t, n);
}

/* What one MPI_Wait*-like call has found in its queues so far. */
struct p2p_scan {
    enum mqdh__call_kind k;
    int one; /* one request among the candidates: a single OR group */
    const struct mqdh_requests *rq; /* its requests, where all are known */
    int candidates, group, free_any, incomplete;
};

/* The pending operations of queue q of process i's communicator ci that
 * the call of s may wait on, each a wait or an alternative met. */
static void scan_queue(struct mqdh__waits *b, int i, int ci, int q, struct p2p_scan *s,
                       struct mqdh__candidate *t)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    const struct mqdh_queue *qu = &p->comms[ci].queues[q];
    char me[32];
    if (qu->state != MQDH_QUEUE_OK && s->rq && !mqdh__requests_in_queue(s->rq, q))
        return; /* none of its requests lives there */
    if (qu->state != MQDH_QUEUE_OK &&
        (s->rq || (q == MQDH_SENDS && s->k == MQDH__CALL_ONE_SEND && qu->state == MQDH_QUEUE_NO_INFO)))
        return; /* sends no queue holds: by their requests, or the call's arguments */
    if (qu->state != MQDH_QUEUE_OK) {
        mqdh__unseen(b, i, "%s's %s on \"%s\" (%s)", label(b, i, me, sizeof me),
                     q == MQDH_SENDS ? "pending sends" : "pending receives", p->comms[ci].name,
                     qu->state == MQDH_QUEUE_NO_INFO ? "the DLL has no information" : "error");
        s->incomplete = 1;
        return;
    }
    for (int n = 0; n < qu->nops; n++) {
        const struct mqdh_op *o = &qu->ops[n];
        if (o->collective || o->status == MQDH_OP_COMPLETE) /* not the user's, or done */
            continue;
        if (s->rq && !mqdh__requests_hold(s->rq, o))
            continue; /* not one the call waits on */
        s->candidates++;
        if (q == MQDH_RECEIVES && o->status == MQDH_OP_MATCHED) { /* data arriving */
            s->free_any = 1;
            continue;
        }
        int nt = op_targets(b, i, ci, q, o, t);
        if (nt == NEEDS_NOBODY)
            s->free_any = 1;
        else
            commit(b, i, s->one ? 0 : s->group++, ci, q, o, t, nt);
    }
}

/* Point-to-point waits of blocked process i in a call of kind k; t has
 * room for every process.  An MPI_Wait* whose requests are known
 * (waitreq.c) needs exactly the queue entries behind them, and the sends
 * no queue holds. */
void mqdh__p2p_waits(struct mqdh__waits *b, int i, enum mqdh__call_kind k,
                     struct mqdh__candidate *t)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    char me[32];
    int waitlike = k == MQDH__CALL_ONE || k == MQDH__CALL_ALL || k == MQDH__CALL_ANY;
    struct p2p_scan s = {
        .k = k,
        .one = k == MQDH__CALL_ONE || k == MQDH__CALL_ONE_RECV || k == MQDH__CALL_ONE_SEND ||
               k == MQDH__CALL_ANY,
        .rq = waitlike ? mqdh__call_requests(b, i) : NULL,
    };
    int first_wait = b->a->nwaits;

    if (s.rq && mqdh__requests_return(s.rq, s.one))
        return; /* a request it waits on is done: it returns */
    if (s.rq && mqdh__requests_all_collective(s.rq)) {
        if (b->coll_comm[i] >= 0)
            mqdh__nbc_waits(b, i);
        else /* no queue shows them: by the requests alone */
            mqdh__nbc_request_waits(b, i, s.rq, s.one);
        return;
    }
    for (int ci = 0; ci < p->ncomms; ci++)
        for (int q = MQDH_SENDS; q <= MQDH_RECEIVES; q++)
            if (!(k == MQDH__CALL_ONE_RECV && q != MQDH_RECEIVES) &&
                !(k == MQDH__CALL_ONE_SEND && q != MQDH_SENDS))
                scan_queue(b, i, ci, q, &s, t);
    if (s.rq) {
        mqdh__request_waits(b, i, s.rq, s.one, &s.group, &s.free_any);
        if (s.one && s.free_any)
            b->a->nwaits = first_wait;
        return;
    }
    if (s.candidates == 0 && !s.incomplete && waitlike && b->coll_comm[i] >= 0) {
        /* Nothing but a collective's traffic is pending: the request it
         * waits for is a nonblocking collective's (MPI_Ibarrier, MPI_Ireduce,
         * ... then MPI_Wait), a wait on its instances on that communicator. */
        mqdh__nbc_waits(b, i);
    } else if (s.candidates == 0 && !s.incomplete && k == MQDH__CALL_ONE_SEND) {
        blocked_send_waits(b, i);
    } else if (s.candidates == 0) {
        mqdh__unseen(b, i, "what %s waits for in %s (nothing of it is in its queues)",
                     label(b, i, me, sizeof me), p->where_call);
        b->a->nwaits = first_wait;
    } else if (s.one && (s.free_any || s.incomplete)) { /* an alternative needs nobody */
        b->a->nwaits = first_wait;
    }
}
