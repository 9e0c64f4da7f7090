/*
 * waits.c - what each blocked process waits for (waits.h), by the MPI call
 * it is in (match.h has how each kind of call waits), its own queues and
 * what its peers' queues hold.
 *
 * Each wait is an edge of the wait-for graph (mqdh_wait): a process's
 * edges of one group are alternatives, its groups all needed.  Whatever
 * could not be seen is said (mqdh__unseen) and makes the analysis assume
 * the process is free, so that a deadlock found holds whatever it hides.
 */
#define _GNU_SOURCE
#include "waits.h"

#include "dump.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void collective_waits(struct mqdh__waits *b, int i);
static void nbc_waits(struct mqdh__waits *b, int i);
static int receive_beside_message(const struct mqdh__waits *b, int x, int k, long peer, long tag);

/* ---------------------------------------------------------------- building */

/* One operation's targets, pending edges before they are committed. */
struct mqdh__candidate {
    int proc;
    int any;
};

static void add_unseen(struct mqdh__waits *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

void mqdh__unseen(struct mqdh__waits *b, int who, const char *fmt, ...)
{
    b->blind[who] = 1;
    va_list ap;
    va_start(ap, fmt);
    add_unseen(b, fmt, ap);
    va_end(ap);
}

void mqdh__unseen_note(struct mqdh__waits *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_unseen(b, fmt, ap);
    va_end(ap);
}

static void add_unseen(struct mqdh__waits *b, const char *fmt, va_list ap)
{
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    struct mqdh_analysis *a = b->a;
    for (int i = 0; i < a->nunseen; i++)
        if (strcmp(a->unseen[i], line) == 0)
            return;
    if (a->nunseen == b->cap_unseen) {
        int cap = b->cap_unseen ? 2 * b->cap_unseen : 8;
        char **n = realloc(a->unseen, (size_t)cap * sizeof *n);
        if (!n) {
            b->nomem = 1;
            return;
        }
        a->unseen = n;
        b->cap_unseen = cap;
    }
    if (!(a->unseen[a->nunseen] = strdup(line)))
        b->nomem = 1;
    else
        a->nunseen++;
}

static const char *label(const struct mqdh__waits *b, int i, char *buf, size_t len)
{
    mqdh_process_label(&b->m.d->procs[i], buf, len);
    return buf;
}

struct mqdh_wait *mqdh__add_wait(struct mqdh__waits *b)
{
    struct mqdh_analysis *a = b->a;
    if (a->nwaits == b->cap_waits) {
        int cap = b->cap_waits ? 2 * b->cap_waits : 16;
        struct mqdh_wait *n = realloc(a->waits, (size_t)cap * sizeof *n);
        if (!n) {
            b->nomem = 1;
            return NULL;
        }
        a->waits = n;
        b->cap_waits = cap;
    }
    struct mqdh_wait *w = &a->waits[a->nwaits++];
    memset(w, 0, sizeof *w);
    return w;
}

/* ---------------------------------------------------------------- point to point */

/*
 * Does process tp's MPI record no sends on c (its send queue has no
 * information: MPICH without --enable-debuginfo keeps none), while its
 * receives are seen?  Then i's posted receive from it, still unmatched, is
 * taken to have no matching send pending there: the receiver matches a
 * message as it arrives (MPIDIG's posted list), so once the job has
 * stopped moving a matching send would have reached i.  Said once, as a
 * note that blinds nobody.
 */
static int sends_unrecorded(struct mqdh__waits *b, int i, int tp, const struct mqdh_comm *c)
{
    const struct mqdh_process *mp = &b->m.d->procs[tp];
    char who[32];
    int k = mqdh__comm_same(mp, c);
    if (k < 0 || mp->comms[k].queues[MQDH_SENDS].state != MQDH_QUEUE_NO_INFO ||
        mp->comms[k].queues[MQDH_RECEIVES].state != MQDH_QUEUE_OK)
        return 0;
    (void)i;
    mqdh__unseen_note(b, "%s's pending sends (its MPI records none): a send matching a receive "
                      "posted for it would have reached its receiver once the job has stopped "
                      "moving", label(b, tp, who, sizeof who));
    return 1;
}

/*
 * The processes i's operation o waits for, into t (room for nprocs).
 * Returns their number; 0 with *free set when it needs nobody (in flight)
 * or when what it needs cannot be seen.
 */
static int op_targets(struct mqdh__waits *b, int i, int ci, int q, const struct mqdh_op *o,
                      struct mqdh__candidate *t, int *free)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    const struct mqdh_comm *c = &p->comms[ci];
    char me[32], peer[32];
    int n = 0;
    *free = 0;
    if (q == MQDH_RECEIVES && o->desired_local_rank < 0) { /* any member */
        for (int m = 0; m < b->m.d->nprocs; m++) {
            const struct mqdh_process *mp = &b->m.d->procs[m];
            /* A finalizing process may have no communicators left, but it is
             * still a member of its world's MPI_COMM_WORLD. */
            int world_member = mqdh__process_terminal(mp) && mp->ncomms == 0 &&
                               mp->world == p->world && strcmp(c->name, "MPI_COMM_WORLD") == 0;
            if (m == i || (mqdh__comm_same(mp, c) < 0 && !world_member))
                continue;
            int has = mqdh__partner_pending(&b->m, i, m, c, q, o);
            if (has) {
                if (has < 0)
                    mqdh__unseen(b, i,
                                 "%s's queues on \"%s\" (a member %s's receive from "
                                 "MPI_ANY_SOURCE might match)",
                                 label(b, m, peer, sizeof peer), c->name,
                                 label(b, i, me, sizeof me));
                *free = 1;
                return 0;
            }
            t[n].proc = m;
            t[n++].any = 1;
        }
        if (n < c->size - 1) {
            mqdh__unseen(b, i,
                         "%ld of the %ld members of \"%s\" that %s receives from with "
                         "MPI_ANY_SOURCE",
                         c->size - 1 - n, c->size - 1, c->name, label(b, i, me, sizeof me));
            *free = 1;
            return 0;
        }
        return n;
    }
    long g = mqdh__op_global(&b->m, i, ci, o->desired_local_rank, o->desired_global_rank);
    int tp = mqdh_process_by_global(b->m.d, g);
    if (tp < 0 && g < 0) {
        mqdh__unseen(b, i,
                     "which process is rank %ld of \"%s\", which %s %s (the DLL gives no "
                     "global rank, and no group that can be trusted)",
                     o->desired_local_rank, c->name, label(b, i, me, sizeof me),
                     q == MQDH_SENDS ? "sends to" : "receives from");
        *free = 1;
        return 0;
    }
    if (tp < 0) {
        int shared = 0; /* an MPI-1 DLL's rank, which two worlds have */
        for (int m = 0; m < b->m.d->nprocs; m++)
            shared += b->ids[m] == g;
        mqdh__unseen(b, i, "global rank %ld, which %s %s on \"%s\" (%s)", g,
                     label(b, i, me, sizeof me), q == MQDH_SENDS ? "sends to" : "receives from",
                     c->name,
                     shared ? "a rank of more than one world: the DLL does not say which"
                            : "not in the dump");
        *free = 1;
        return 0;
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
                     o->desired_local_rank, c->name, label(b, i, me, sizeof me),
                     q == MQDH_SENDS ? "sends to" : "receives from");
        *free = 1;
        return 0;
    }
    int twin = mqdh__collective_twin(&b->m, i, tp, c, q, o);
    if (twin || mqdh__peer_later_instance(&b->m, tp, c, o, o->desired_tag)) {
        int send = q == MQDH_SENDS;
        mqdh__unseen(b, i,
                     "whether %s's %s %s %s with tag %ld on \"%s\" is MPI's own, for a "
                     "nonblocking collective (its MPI does not mark all of a collective's "
                     "traffic): %s %s",
                     label(b, i, me, sizeof me), send ? "send" : "receive", send ? "to" : "from",
                     label(b, tp, peer, sizeof peer), o->desired_tag, c->name, peer,
                     twin ? (send ? "has a collective's receive from it with that tag"
                                  : "has a collective's send to it with that tag")
                          : "is in that nonblocking collective or a later one there, and "
                            "shows no message that would match it");
        *free = 1;
        return 0;
    }
    int has = q == MQDH_RECEIVES && sends_unrecorded(b, i, tp, c)
                  ? 0
                  : mqdh__partner_pending(&b->m, i, tp, c, q, o);
    if (has) {
        if (has < 0)
            mqdh__unseen(b, i, "%s's queues on \"%s\" (%s waits for it there)",
                         label(b, tp, peer, sizeof peer), c->name, label(b, i, me, sizeof me));
        *free = 1;
        return 0;
    }
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
    int sync = strcmp(p->where_call, "MPI_Ssend") == 0, first_wait = b->a->nwaits;
    char me[32], who[32];
    if (strcmp(p->where_call, "MPI_Bsend") == 0) /* buffered: waits for nobody */
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
static void probe_waits(struct mqdh__waits *b, int i, struct mqdh__candidate *t)
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
    int fr, n = op_targets(b, i, ci, MQDH_RECEIVES, &o, t, &fr);
    if (!fr)
        commit(b, i, 0, ci, MQDH_RECEIVES, &o, t, n);
}

/* Point-to-point waits of blocked process i in a call of kind k; t has
 * room for every process.  An MPI_Wait* whose requests are known
 * (waitreq.c) needs exactly the queue entries behind them, and the sends
 * no queue holds. */
static void p2p_waits(struct mqdh__waits *b, int i, enum mqdh__call_kind k,
                      struct mqdh__candidate *t)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    char me[32];
    int candidates = 0, group = 0, free_any = 0, incomplete = 0;
    /* one request among the candidates: a single OR group */
    int one = k == MQDH_CALL_ONE || k == MQDH_CALL_ONE_RECV || k == MQDH_CALL_ONE_SEND ||
              k == MQDH_CALL_ANY;
    int first_wait = b->a->nwaits;
    const struct mqdh_requests *rq =
        k == MQDH_CALL_ONE || k == MQDH_CALL_ALL || k == MQDH_CALL_ANY ? mqdh__call_requests(b, i)
                                                                        : NULL;
    if (rq && mqdh__requests_return(rq, one))
        return; /* a request it waits on is done: it returns */
    if (rq && mqdh__requests_all_collective(rq)) {
        if (b->coll_comm[i] >= 0)
            nbc_waits(b, i);
        else /* no queue shows them: by the requests alone */
            mqdh__nbc_request_waits(b, i, rq, one);
        return;
    }
    for (int ci = 0; ci < p->ncomms; ci++) {
        for (int q = MQDH_SENDS; q <= MQDH_RECEIVES; q++) {
            if ((k == MQDH_CALL_ONE_RECV && q != MQDH_RECEIVES) ||
                (k == MQDH_CALL_ONE_SEND && q != MQDH_SENDS))
                continue;
            const struct mqdh_queue *qu = &p->comms[ci].queues[q];
            if (qu->state != MQDH_QUEUE_OK && rq && !mqdh__requests_in_queue(rq, q))
                continue; /* none of its requests lives there */
            if (qu->state != MQDH_QUEUE_OK && (rq || (q == MQDH_SENDS && k == MQDH_CALL_ONE_SEND &&
                                                      qu->state == MQDH_QUEUE_NO_INFO)))
                continue; /* sends no queue holds: by their requests, or the call's arguments */
            if (qu->state != MQDH_QUEUE_OK) {
                mqdh__unseen(
                    b, i, "%s's %s on \"%s\" (%s)", label(b, i, me, sizeof me),
                    q == MQDH_SENDS ? "pending sends" : "pending receives", p->comms[ci].name,
                    qu->state == MQDH_QUEUE_NO_INFO ? "the DLL has no information" : "error");
                incomplete = 1;
                continue;
            }
            for (int n = 0; n < qu->nops; n++) {
                const struct mqdh_op *o = &qu->ops[n];
                if (o->collective || o->status == MQDH_OP_COMPLETE) /* not the user's, or done */
                    continue;
                if (rq && !mqdh__requests_hold(rq, o))
                    continue; /* not one the call waits on */
                candidates++;
                if (q == MQDH_RECEIVES && o->status == MQDH_OP_MATCHED) { /* data arriving */
                    free_any = 1;
                    continue;
                }
                int fr;
                int nt = op_targets(b, i, ci, q, o, t, &fr);
                if (fr)
                    free_any = 1;
                else
                    commit(b, i, one ? 0 : group++, ci, q, o, t, nt);
            }
        }
    }
    if (rq) {
        mqdh__request_waits(b, i, rq, one, &group, &free_any);
        if (one && free_any)
            b->a->nwaits = first_wait;
        return;
    }
    if (candidates == 0 && !incomplete &&
        (k == MQDH_CALL_ONE || k == MQDH_CALL_ALL || k == MQDH_CALL_ANY) && b->coll_comm[i] >= 0) {
        /* Nothing but a collective's traffic is pending: the request it
         * waits for is a nonblocking collective's (MPI_Ibarrier, MPI_Ireduce,
         * ... then MPI_Wait), a wait on its instances on that communicator. */
        nbc_waits(b, i);
    } else if (candidates == 0 && !incomplete && k == MQDH_CALL_ONE_SEND) {
        blocked_send_waits(b, i);
    } else if (candidates == 0) {
        mqdh__unseen(b, i, "what %s waits for in %s (nothing of it is in its queues)",
                     label(b, i, me, sizeof me), p->where_call);
        b->a->nwaits = first_wait;
    } else if (one && (free_any || incomplete)) { /* an alternative needs nobody */
        b->a->nwaits = first_wait;
    }
}

/* ---------------------------------------------------------------- collectives */

struct mqdh_wait *mqdh__add_collective_wait(struct mqdh__waits *b, int i, int m, int g, int comm,
                                           long local)
{
    struct mqdh_wait *w = mqdh__add_wait(b);
    if (!w)
        return NULL;
    w->from = i;
    w->to = m;
    w->group = g;
    w->kind = MQDH_WAIT_COLLECTIVE;
    w->comm = comm;
    w->peer_local = local;
    w->peer_global = b->ids[m];
    w->tag = -1;
    return w;
}

/*
 * Processes i and m in the same blocking collective on one communicator
 * (ci of i, mk of m) whose calls differ all the same: a receive of one
 * from the other beside a message of the other with its tag, unmatched
 * (receive_beside_message: another algorithm, count or type, which MPICH
 * runs apart).  The tag, or -1 if the queues show no such thing.
 */
static long calls_differ(const struct mqdh__waits *b, int i, int ci, int m, int mk)
{
    for (int side = 0; side < 2; side++) {
        int x = side ? m : i, k = side ? mk : ci, y = side ? i : m;
        const struct mqdh_queue *r = &b->m.d->procs[x].comms[k].queues[MQDH_RECEIVES];
        for (int n = 0; r->state == MQDH_QUEUE_OK && n < r->nops; n++) {
            const struct mqdh_op *o = &r->ops[n];
            if (o->collective && o->status == MQDH_OP_PENDING && !o->tag_wild &&
                receive_beside_message(b, x, k, b->ids[y], o->desired_tag))
                return o->desired_tag;
        }
    }
    return -1;
}

static void collective_waits(struct mqdh__waits *b, int i)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    char me[32], who[32];
    int ci = b->coll_comm[i];
    if (ci < 0) {
        mqdh__unseen(b, i, "the communicator of %s's %s (its queues show no traffic of it)",
                     label(b, i, me, sizeof me), p->where_call);
        return;
    }
    const struct mqdh_comm *c = &p->comms[ci];
    int members = 0, first_wait = b->a->nwaits, group = 0,
        rooted = mqdh__call_rooted(p->where_call);
    int root_unread = -1; /* a member in it whose root, or i's, was not read */
    for (int m = 0; m < b->m.d->nprocs; m++) {
        if (m == i)
            continue;
        const struct mqdh_process *mp = &b->m.d->procs[m];
        int mk = mqdh__comm_same(mp, c);
        if (mk < 0)
            continue;
        members++;
        if (b->a->activity[m] == MQDH_ACT_UNKNOWN) {
            mqdh__unseen(b, i, "whether %s is in %s's %s on \"%s\"", label(b, m, who, sizeof who),
                         label(b, i, me, sizeof me), p->where_call, c->name);
            b->a->nwaits = first_wait;
            return;
        }
        int in_it = mp->where_call && strcmp(mp->where_call, p->where_call) == 0 &&
                    (b->coll_comm[m] < 0 || b->coll_comm[m] == mk);
        long differ = in_it ? calls_differ(b, i, ci, m, mk) : -1;
        if (differ >= 0) {
            if (!mqdh__add_collective_wait(b, i, m, group++, ci, mp->comms[mk].local_rank))
                return;
            b->a->waits[b->a->nwaits - 1].tag = differ;
            continue;
        }
        if (in_it && rooted) {
            /*
             * The same rooted collective with another root (read from both
             * calls' frames): MPI requires every member to give the same
             * root, and the library's algorithm, run with two roots, waits
             * for contributions the other side never sends.  i cannot go on
             * until m calls it as i does, which it never will.
             */
            if (!(p->where_args & mp->where_args & MQDH_ARG_ROOT)) {
                if (root_unread < 0)
                    root_unread = m;
                continue;
            }
            if (p->where_root == mp->where_root)
                continue;
            if (!mqdh__add_collective_wait(b, i, m, group++, ci, mp->comms[mk].local_rank))
                return;
            struct mqdh_wait *w = &b->a->waits[b->a->nwaits - 1];
            w->roots_differ = 1;
            w->root = p->where_root;
            w->peer_root = mp->where_root;
            continue;
        }
        if (in_it)
            continue;
        if (!mqdh__add_collective_wait(b, i, m, group++, ci, mp->comms[mk].local_rank))
            return;
    }
    if (members == c->size - 1 && b->a->nwaits == first_wait && root_unread >= 0) {
        /* Every member is in it: whether it can complete rests on the roots. */
        const struct mqdh_process *rp = &b->m.d->procs[root_unread];
        const char *why = !(p->where_args & MQDH_ARG_ROOT) ? p->where_args_why : rp->where_args_why;
        mqdh__unseen(b, i, "whether %s and %s give %s on \"%s\" the same root (%s)",
                     label(b, i, me, sizeof me), label(b, root_unread, who, sizeof who),
                     p->where_call, c->name, why ? why : "not read from their frames");
        return;
    }
    if (members != c->size - 1) { /* a member not dumped, or names that clash */
        mqdh__unseen(b, i,
                     "which processes are the %ld other members of \"%s\", where %s is in %s "
                     "(%d found: not all dumped, or communicators sharing its name)",
                     c->size - 1, c->name, label(b, i, me, sizeof me), p->where_call, members);
        b->a->nwaits = first_wait;
    }
}

/* ---------------------------------------------------------------- nonblocking collectives */

/*
 * MPICH numbers the nonblocking collectives of each communicator: the
 * n-th one's schedule sends and receives with tag MPIR_FIRST_NBC_TAG + n - 1
 * (MPIR_Sched_next_tag; mpir_tags.h: MPIR_LAST_HCOLL_TAG + 1, 287 in MPICH
 * 4.x), so that the same tag on two members is the same instance, and a
 * higher one a later instance.  The blocking collectives use the fixed
 * tags below it (MPIR_BARRIER_TAG 1, ...).  Tags wrap only after MPI_TAG_UB
 * instances, which the rules below do not consider.
 */
enum { NBC_FIRST_TAG = 287 };

/* What one of i's pending collective receives tells of its instance. */
enum nbc_state {
    NBC_MET,         /* its data is arriving: it completes */
    NBC_UNKNOWN,     /* said (unseen): the member is in it, or may be */
    NBC_NOT_ENTERED, /* the member shows nothing of that instance or a later one */
    NBC_DIFFER,      /* the member started another collective as that instance */
    NBC_FREE         /* the member is not in MPI: it can still do anything */
};

/*
 * Does process x's communicator k hold both a pending collective receive
 * from peer (a global rank) with tag and a collective message from peer
 * with that tag, unexpected?  MPI matches a message to a posted receive
 * of the same source, tag and communicator whichever comes first, so the
 * two were not made for each other: MPICH keeps collectives apart beyond
 * what the queues show (a collective's own context, node-level
 * sub-communicators), and the two sides' n-th nonblocking collectives are
 * different ones.
 */
static int receive_beside_message(const struct mqdh__waits *b, int x, int k, long peer, long tag)
{
    const struct mqdh_comm *c = &b->m.d->procs[x].comms[k];
    const struct mqdh_queue *r = &c->queues[MQDH_RECEIVES], *u = &c->queues[MQDH_UNEXPECTED];
    int posted = 0, message = 0;
    for (int n = 0; r->state == MQDH_QUEUE_OK && n < r->nops; n++) {
        const struct mqdh_op *o = &r->ops[n];
        posted |= o->collective && o->status == MQDH_OP_PENDING && !o->tag_wild &&
                  o->desired_tag == tag && o->desired_local_rank >= 0 &&
                  mqdh__op_global(&b->m, x, k, o->desired_local_rank, o->desired_global_rank) ==
                      peer;
    }
    for (int n = 0; posted && u->state == MQDH_QUEUE_OK && n < u->nops; n++) {
        const struct mqdh_op *o = &u->ops[n];
        message |= o->collective && o->actual_tag == tag &&
                   mqdh__op_global(&b->m, x, k, o->actual_local_rank, o->actual_global_rank) ==
                       peer;
    }
    return posted && message;
}

/*
 * Has process m started its nonblocking collective with tag on its
 * communicator k, or a later one: a pending collective receive or send
 * of it with that tag or a higher one (or one that may be a collective's:
 * maybe_collective)?  (A message of m's at i with such
 * a tag, checked by the caller, says the same.)  -1: its queues there
 * could not be seen.
 */
static int started_instance(const struct mqdh_comm *c, long tag)
{
    for (int q = MQDH_SENDS; q <= MQDH_RECEIVES; q++) {
        if (c->queues[q].state != MQDH_QUEUE_OK)
            return -1;
        if (mqdh__queue_has_instance(c, q, tag))
            return 1;
    }
    return 0;
}

/* Has i's communicator ci a collective message from peer (a global rank)
 * with tag or a higher one among its unexpected messages? */
static int message_from_later(const struct mqdh__waits *b, int i, int ci, long peer, long tag)
{
    const struct mqdh_queue *u = &b->m.d->procs[i].comms[ci].queues[MQDH_UNEXPECTED];
    for (int n = 0; u->state == MQDH_QUEUE_OK && n < u->nops; n++) {
        const struct mqdh_op *o = &u->ops[n];
        if (o->collective && o->actual_tag >= tag &&
            mqdh__op_global(&b->m, i, ci, o->actual_local_rank, o->actual_global_rank) == peer)
            return 1;
    }
    return 0;
}

/*
 * Process i's pending collective receive o (on its communicator ci, from
 * the process that rank names) in its nonblocking collective with o's tag:
 * who it waits for (*m) and what can be told of it.  Says what it cannot
 * see (unseen) before NBC_UNKNOWN.
 */
static enum nbc_state nbc_receive(struct mqdh__waits *b, int i, int ci, const struct mqdh_op *o,
                                  int *m)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    const struct mqdh_comm *c = &p->comms[ci];
    char me[32], who[32];
    long tag = o->desired_tag;
    *m = -1;
    if (o->status == MQDH_OP_MATCHED)
        return NBC_MET;
    long g = o->desired_local_rank < 0
                 ? -1
                 : mqdh__op_global(&b->m, i, ci, o->desired_local_rank, o->desired_global_rank);
    int t = mqdh_process_by_global(b->m.d, g);
    if (o->tag_wild || tag < NBC_FIRST_TAG || t < 0 || t == i) {
        mqdh__unseen(b, i,
                     "which collective %s waits for in %s (a receive of it on \"%s\" names no "
                     "instance of a nonblocking collective, or no process in the dump)",
                     label(b, i, me, sizeof me), p->where_call, c->name);
        return NBC_UNKNOWN;
    }
    *m = t;
    const struct mqdh_process *mp = &b->m.d->procs[t];
    int mk = mqdh__comm_same(mp, c);
    if (b->a->activity[t] == MQDH_ACT_UNKNOWN || mk < 0) {
        mqdh__unseen(b, i, "whether %s is in %s's nonblocking collective on \"%s\"",
                     label(b, t, who, sizeof who), label(b, i, me, sizeof me), c->name);
        return NBC_UNKNOWN;
    }
    if (receive_beside_message(b, i, ci, b->ids[t], tag) ||
        receive_beside_message(b, t, mk, b->ids[i], tag))
        return NBC_DIFFER;
    int started = started_instance(&mp->comms[mk], tag);
    if (started < 0) {
        mqdh__unseen(b, i, "%s's queues on \"%s\" (whether it is in %s's nonblocking collective)",
                     label(b, t, who, sizeof who), c->name, label(b, i, me, sizeof me));
        return NBC_UNKNOWN;
    }
    if (!started && !message_from_later(b, i, ci, b->ids[t], tag))
        return NBC_NOT_ENTERED;
    if (b->a->activity[t] == MQDH_ACT_RUNNING)
        return NBC_FREE;
    mqdh__unseen(b, i,
                 "whether %s's and %s's nonblocking collectives on \"%s\" with MPICH's tag %ld "
                 "are the same collective (both started one as that instance; no queue shows "
                 "them apart)",
                 label(b, i, me, sizeof me), label(b, t, who, sizeof who), c->name, tag);
    return NBC_UNKNOWN;
}

/*
 * Process i is in MPI_Wait & co. and nothing but collective traffic is
 * pending in its queues: it waits for one (MPI_Wait) or more of its
 * nonblocking collectives, the instances (on any of its communicators)
 * its pending collective receives belong to.  A receive whose data is
 * arriving, or whose peer is in the same instance as far as can be told,
 * may let i go on: with one instance pending that is all (met, or cannot
 * tell); with several, which one MPI_Wait waits for is not known, so i
 * waits only where every instance is held.  Each held receive is an edge
 * to its peer: one that has not entered the instance (nothing of it or a
 * later one in its queues), one that started another collective as it
 * (instances differ: neither completes), or one not in MPI.  The edges
 * are alternatives (one group): whichever of them is met may be the
 * instance i waits for, so i is stuck only if every one of them is.
 */
/* What nbc_waits finds of a process's instances. */
struct nbc_found {
    int instances;    /* instances with a pending receive */
    int may_complete; /* one of them has no held receive */
    int met;          /* one of those has its data arriving, nothing unseen */
};

/* nbc_waits on process i's communicator ci: each instance with a pending
 * collective receive there, its held receives as edges (group 0). */
static void nbc_instances(struct mqdh__waits *b, int i, int ci, struct nbc_found *f)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    const struct mqdh_queue *r = &p->comms[ci].queues[MQDH_RECEIVES];
    char me[32], who[32];
    for (int n = 0; r->state == MQDH_QUEUE_OK && n < r->nops && !b->nomem; n++) {
        const struct mqdh_op *o = &r->ops[n];
        int seen = 0, held = 0, unknown = 0, arriving = 0;
        if (!o->collective || o->status == MQDH_OP_COMPLETE)
            continue;
        for (int e = 0; e < n; e++) /* each instance once, at its first receive */
            seen |= r->ops[e].collective && r->ops[e].status != MQDH_OP_COMPLETE &&
                    r->ops[e].desired_tag == o->desired_tag;
        if (seen)
            continue;
        f->instances++;
        for (int e = n; e < r->nops && !b->nomem; e++) {
            const struct mqdh_op *x = &r->ops[e];
            if (!x->collective || x->status == MQDH_OP_COMPLETE || x->desired_tag != o->desired_tag)
                continue;
            int m;
            enum nbc_state st = nbc_receive(b, i, ci, x, &m);
            unknown |= st == NBC_UNKNOWN;
            arriving |= st == NBC_MET;
            if (st == NBC_MET || st == NBC_UNKNOWN)
                continue;
            held = 1;
            const struct mqdh_process *mp = &b->m.d->procs[m];
            int mk = mqdh__comm_same(mp, &p->comms[ci]);
            struct mqdh_wait *w =
                mqdh__add_collective_wait(b, i, m, 0, ci, mp->comms[mk].local_rank);
            if (!w)
                return;
            w->tag = st == NBC_DIFFER ? x->desired_tag : -1;
            w->bytes = x->desired_length;
            if (st == NBC_DIFFER && b->a->activity[m] != MQDH_ACT_BLOCKED)
                /* Never met, whatever m does; but m is not held by it, and
                 * the graph counts on m to free i: no promise either way. */
                mqdh__unseen(b, i,
                             "whether the job can go on: %s's nonblocking collective on \"%s\" "
                             "with MPICH tag %ld is another collective than %s's, so it never "
                             "completes, and %s is not blocked in MPI",
                             label(b, i, me, sizeof me), p->comms[ci].name, x->desired_tag,
                             label(b, m, who, sizeof who), who);
        }
        if (!held) {
            f->may_complete = 1;
            f->met |= arriving && !unknown;
        }
    }
}

static void nbc_waits(struct mqdh__waits *b, int i)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    int first = b->a->nwaits;
    struct nbc_found f = {0, 0, 0};
    char me[32];
    for (int ci = 0; ci < p->ncomms && !b->nomem; ci++) /* on any of its communicators */
        nbc_instances(b, i, ci, &f);
    if (f.instances == 0) {
        mqdh__unseen(b, i,
                     "which collective %s waits for in %s (its queues hold only messages of "
                     "other processes' collectives)",
                     label(b, i, me, sizeof me), p->where_call);
        return;
    }
    if (!f.may_complete)
        return; /* every instance held: whichever it waits for */
    /* An instance may complete: i goes on if that is the one it waits for
     * (met: the only one, its data arriving), else what it waits for is
     * not known (an instance whose peer was not told apart is unseen). */
    b->a->nwaits = first;
    if (f.met && f.instances > 1)
        mqdh__unseen(b, i,
                     "which of its %d nonblocking collectives %s waits for in %s (one of them "
                     "is completing)",
                     f.instances, label(b, i, me, sizeof me), p->where_call);
}

/*
 * Process i is in MPI_Finalize, collective over its MPI_COMM_WORLD: it
 * waits for every other process of its world not in MPI_Finalize yet.
 * Its communicators may be gone already (MPICH frees them early), so the
 * world's size comes from any process of that world that still shows it.
 */
static void finalize_waits(struct mqdh__waits *b, int i)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    char me[32], who[32];
    long size = -1;
    int wc = -1; /* i's own MPI_COMM_WORLD, if it still has one */
    for (int m = 0; m < b->m.d->nprocs; m++) {
        const struct mqdh_process *mp = &b->m.d->procs[m];
        for (int k = 0; mp->world == p->world && k < mp->ncomms; k++)
            if (strcmp(mp->comms[k].name, "MPI_COMM_WORLD") == 0) {
                size = mp->comms[k].size;
                if (m == i)
                    wc = k;
            }
    }
    if (size < 0 && p->world_size > 0)
        size = p->world_size; /* none shows it: the launcher's word */
    int members = 0, first_wait = b->a->nwaits, group = 0;
    for (int m = 0; m < b->m.d->nprocs; m++) {
        const struct mqdh_process *mp = &b->m.d->procs[m];
        if (m == i || mp->world != p->world)
            continue;
        members++;
        if (b->a->activity[m] == MQDH_ACT_UNKNOWN) {
            mqdh__unseen(b, i, "whether %s is in MPI_Finalize, which %s waits for",
                         label(b, m, who, sizeof who), label(b, i, me, sizeof me));
            b->a->nwaits = first_wait;
            return;
        }
        if (mqdh__process_terminal(mp))
            continue;
        if (!mqdh__add_collective_wait(b, i, m, group++, wc, mp->rank))
            return;
    }
    if (size < 0 || members != size - 1) {
        char found[64];
        if (size < 0)
            snprintf(found, sizeof found, "no process shows its size");
        else
            snprintf(found, sizeof found, "%d of %ld found", members, size - 1);
        mqdh__unseen(b, i,
                     "which processes are the other members of %s's MPI_COMM_WORLD, where it "
                     "is in MPI_Finalize (%s)",
                     label(b, i, me, sizeof me), found);
        b->a->nwaits = first_wait;
    }
}

/* ---------------------------------------------------------------- entry */

int mqdh__waits_init(struct mqdh__waits *b, const struct mqdh_dump *d, struct mqdh_analysis *a)
{
    size_t m = (size_t)(d->nprocs ? d->nprocs : 1);
    memset(b, 0, sizeof *b);
    b->a = a;
    b->ids = calloc(m, sizeof *b->ids);
    b->blind = calloc(m, sizeof *b->blind);
    b->coll_comm = calloc(m, sizeof *b->coll_comm);
    b->cand = calloc(m, sizeof *b->cand);
    if (!b->ids || !b->blind || !b->coll_comm || !b->cand) {
        mqdh__waits_fini(b);
        return MQDH_E_NOMEM;
    }
    b->memo_world = -2;
    b->m.d = d;
    b->m.ids = b->ids;
    b->m.one_world = 1;
    for (int i = 0; i < d->nprocs; i++) {
        const struct mqdh_process *p = &d->procs[i];
        b->m.one_world &= p->world <= 0;
        b->ids[i] = mqdh__process_global(p);
        /* A blocking collective's communicator is its comm argument where it
         * was read; else the one whose queues hold its traffic. */
        int ac =
            mqdh__call_kind(p->where_call) == MQDH_CALL_COLLECTIVE ? mqdh__comm_of_args(p) : -1;
        b->coll_comm[i] = ac >= 0 ? ac : mqdh__comm_of_traffic(p);
    }
    return MQDH_OK;
}

void mqdh__waits_fini(struct mqdh__waits *b)
{
    free(b->ids);
    free(b->blind);
    free(b->coll_comm);
    free(b->cand);
    b->ids = NULL;
    b->blind = b->coll_comm = NULL;
    b->cand = NULL;
}

void mqdh__waits_of(struct mqdh__waits *b, int i)
{
    enum mqdh__call_kind k = mqdh__call_kind(b->m.d->procs[i].where_call);
    switch (k) { /* every kind: -Wswitch says if one is missing */
    case MQDH_CALL_COLLECTIVE:
        collective_waits(b, i);
        break;
    case MQDH_CALL_FINALIZE:
        finalize_waits(b, i);
        break;
    case MQDH_CALL_ABORT:
        break; /* waits for nobody; waits on it are never met */
    case MQDH_CALL_PROBE:
        probe_waits(b, i, b->cand);
        break;
    case MQDH_CALL_NOT_MPI:
    case MQDH_CALL_RETURNS:
    case MQDH_CALL_ONE_RECV:
    case MQDH_CALL_ONE_SEND:
    case MQDH_CALL_ONE:
    case MQDH_CALL_ALL:
    case MQDH_CALL_ANY:
        p2p_waits(b, i, k, b->cand);
        break;
    }
}
