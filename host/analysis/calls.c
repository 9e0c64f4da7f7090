/*
 * calls.c - what a blocked process waits for when none of its queues can
 * be read (mqdh__call_waits, calls.h): its MPI keeps no queues for
 * debuggers (MPICH without --enable-debuginfo, an Open MPI whose DLL finds
 * no types), so the wait is the call it is blocked in and that call's
 * arguments (where.c read them from the MPI library's DWARF or from the
 * caller's call site).
 *
 * The model.  A process blocked in MPI runs MPI's progress engine: a
 * message already sent that would release a blocked receive (or a receive
 * posted that would release a blocked send) is matched while both are in
 * MPI.  So once a job has stopped moving, a process blocked in
 * MPI_Recv(source=1, tag=5) waits for rank 1 whatever the queues that
 * cannot be read hold, unless rank 1 is itself blocked in a call that is
 * that message (a send to it, with that tag, on that communicator): then
 * the pair is in flight.  The queues matter only while the job still moves;
 * the analysis says so (mqdh_analysis.ncalls_only).
 *
 * A communicator is named by value only where the MPI makes it the same
 * in every process (where_comm_name: MPI_COMM_WORLD); its members are the
 * processes of the same world, all of them only when the launcher's world
 * size says the dump holds every one.  Whatever a call does not say
 * (a request's operation in MPI_Wait, an argument not read) is unseen,
 * which leaves the process free: a deadlock found holds whatever it hides.
 */
#define _GNU_SOURCE
#include "analysis/calls.h"

#include "base/dump.h"

#include <stdio.h>
#include <string.h>

static const char *who(const struct mqdh__waits *b, int i, char *buf, size_t len)
{
    mqdh_process_label(&b->m.d->procs[i], buf, len);
    return buf;
}

/* The predefined communicator process i's call names, NULL if not known. */
static const char *call_comm(const struct mqdh_process *p)
{
    return (p->where_args & MQDH_ARG_COMM) ? p->where_comm_name : NULL;
}

/* The process of i's world with rank r there, or -1. */
static int world_rank(const struct mqdh__waits *b, int i, long r)
{
    const struct mqdh_dump *d = b->m.d;
    const struct mqdh_process *p = &d->procs[i];
    if (p->world < 0 || r < 0)
        return -1;
    if (p->world == 0) {
        int m = mqdh_process_by_global(d, r);
        if (m >= 0 && d->procs[m].world == 0 && d->procs[m].rank == r)
            return m;
    }
    for (int m = 0; m < d->nprocs; m++)
        if (d->procs[m].world == p->world && d->procs[m].rank == r)
            return m;
    return -1;
}

/*
 * Does the dump hold every process of i's MPI_COMM_WORLD?  Its size is the
 * launcher's (world_size, which every member must agree on), and each rank
 * below it must be there once.  0 with the reason in why[len] if not.
 */
static int check_whole(const struct mqdh__waits *b, int i, char *why, size_t len)
{
    const struct mqdh_dump *d = b->m.d;
    const struct mqdh_process *p = &d->procs[i];
    int size = p->world_size, n = 0;
    if (p->world < 0 || p->rank < 0) {
        snprintf(why, len, "its world or rank is not known");
        return 0;
    }
    if (size <= 0) {
        snprintf(why, len, "the launcher did not say its size");
        return 0;
    }
    for (int m = 0; m < d->nprocs; m++) {
        const struct mqdh_process *q = &d->procs[m];
        if (q->world != p->world)
            continue;
        if (q->world_size != size || q->rank < 0 || q->rank >= size) {
            snprintf(why, len, "the launcher did not give every member its world's size");
            return 0;
        }
        n++;
    }
    if (n != size) {
        snprintf(why, len, "%d of its %d processes are in the dump", n, size);
        return 0;
    }
    for (long r = 0; r < size; r++)
        if (world_rank(b, i, r) < 0) {
            snprintf(why, len, "rank %ld of it is not in the dump", r);
            return 0;
        }
    return 1;
}

/*
 * Can the processes of i's world be told apart by rank: its world and
 * rank known, and no two of its members with the same rank (two jobs'
 * world 0 given by pid)?  0 with the reason in why[len] if not.
 */
static int check_sane(const struct mqdh__waits *b, int i, char *why, size_t len)
{
    const struct mqdh_dump *d = b->m.d;
    const struct mqdh_process *p = &d->procs[i];
    if (p->world < 0 || p->rank < 0) {
        snprintf(why, len, "its world or rank is not known");
        return 0;
    }
    for (int m = 0; m < d->nprocs; m++) {
        const struct mqdh_process *q = &d->procs[m];
        if (q->world != p->world || m == i)
            continue;
        if (q->rank < 0 || q->rank == p->rank || world_rank(b, i, q->rank) != m) {
            snprintf(why, len, "its world has %s", q->rank < 0 ? "a process of unknown rank"
                                                           : "two processes of one rank");
            return 0;
        }
    }
    return 1;
}

enum partner { PARTNER_NO, PARTNER_YES, PARTNER_UNKNOWN };

/* Process i's point-to-point operation as its call gives it: it sends (or
 * receives) with tag (negative: MPI_ANY_TAG) on the predefined
 * communicator comm (NULL: not known); tag_known 0 if the tag was not
 * read, which matters only where a call of the peer could be the partner
 * but for the tag. */
struct p2p {
    int sends;
    long tag;
    int tag_known;
    const char *comm;
};

/* Does process q show a queue that could be read? */
static int queues_read(const struct mqdh_process *q)
{
    for (int k = 0; k < q->ncomms; k++)
        for (int n = 0; n < MQDH_NQUEUES; n++)
            if (q->comms[k].queues[n].state == MQDH_QUEUE_OK)
                return 1;
    return 0;
}

/*
 * m shows queues: an operation there from (or to) i's rank, or from any,
 * not a collective's and not done, whose tag takes i's: yes.  One whose
 * tag only i's unknown tag could match: unknown.  A queue of m's that
 * cannot be read (its MPI keeps none: Debian's MPICH) says nothing, and
 * m's call decides, as for a process not dumped: a pending operation of
 * m's that i's takes would have met it once the job stopped moving.
 */
static enum partner queued_partner(const struct mqdh__waits *b, int i, int m,
                                   const struct p2p *o2, char *why, size_t len)
{
    const struct mqdh_process *p = &b->m.d->procs[i], *q = &b->m.d->procs[m];
    char mine[32], other[32];
    enum partner found = PARTNER_NO;
    for (int k = 0; k < q->ncomms; k++) {
        if (strcmp(q->comms[k].name, o2->comm) != 0)
            continue;
        const struct mqdh_queue *qu = &q->comms[k].queues[o2->sends ? MQDH_RECEIVES : MQDH_SENDS];
        if (qu->state != MQDH_QUEUE_OK)
            continue;
        for (int n = 0; n < qu->nops; n++) {
            const struct mqdh_op *o = &qu->ops[n];
            int peer = o->desired_local_rank < 0 || o->desired_local_rank == p->rank;
            if (o->collective || o->status == MQDH_OP_COMPLETE || !peer)
                continue;
            if (o->tag_wild || (o2->tag_known && (o2->tag < 0 || o->desired_tag == o2->tag)))
                return PARTNER_YES;
            if (!o2->tag_known) {
                snprintf(why, len, "whether %s's operation with tag %ld is %s's (%s's tag was "
                         "not read)", who(b, m, mine, sizeof mine), o->desired_tag,
                         who(b, i, other, sizeof other), p->where_call);
                found = PARTNER_UNKNOWN;
            }
        }
    }
    return found;
}

/*
 * Is process m's blocked call the partner of process i's point-to-point
 * operation o2 (i sends to m, or receives from m)?  A send of m to i's
 * rank with a tag i takes, or a receive (or probe) of m from i's rank or
 * MPI_ANY_SOURCE taking that tag: yes, the pair is in flight.  A process
 * that shows queues answers from them.  Unknown, with why[len], when m's
 * call could be the partner but its arguments were not read, i's tag was
 * not (and m's takes not every tag), or a communicator not known leaves
 * the ranks open.  A call that can be no partner whatever the arguments
 * (MPI_Finalize, a collective, a receive where i receives) is none.
 */
static enum partner partner(const struct mqdh__waits *b, int i, int m, const struct p2p *o2,
                            char *why, size_t len)
{
    const struct mqdh_process *p = &b->m.d->procs[i], *q = &b->m.d->procs[m];
    char mine[32], other[32];
    int sends = o2->sends;
    long tag = o2->tag;
    if (b->a->activity[m] != MQDH_ACT_BLOCKED)
        return PARTNER_NO; /* it can act: i's wait on it is met or not, it is free */
    if (!o2->comm && queues_read(q)) {
        snprintf(why, len, "%s's queues (%s's communicator is not known)",
                 who(b, m, mine, sizeof mine), who(b, i, other, sizeof other));
        return PARTNER_UNKNOWN;
    }
    enum partner queued = o2->comm ? queued_partner(b, i, m, o2, why, len) : PARTNER_NO;
    if (queued != PARTNER_NO)
        return queued;
    enum mqdh__call_kind k = mqdh__call_kind(q->where_call);
    int recv_like = k == MQDH__CALL_ONE_RECV || k == MQDH__CALL_PROBE;
    int send_like = k == MQDH__CALL_ONE_SEND;
    if (mqdh__call_is(q->where_call, MQDH__MPI_BOTH)) {
        snprintf(why, len, "whether %s's %s %s %s (its send and receive tags are not read)",
                 who(b, m, mine, sizeof mine), q->where_call, sends ? "receives from" : "sends to",
                 who(b, i, other, sizeof other));
        return PARTNER_UNKNOWN;
    }
    if (sends ? !recv_like : !send_like)
        return PARTNER_NO;
    unsigned need = sends ? MQDH_ARG_SOURCE : MQDH_ARG_DEST;
    const char *qcomm = call_comm(q);
    if ((q->where_args & need) != need) {
        snprintf(why, len, "whether %s's %s is the partner of %s's (%s)",
                 who(b, m, mine, sizeof mine), q->where_call, who(b, i, other, sizeof other),
                 q->where_args_why ? q->where_args_why : "its arguments were not read");
        return PARTNER_UNKNOWN;
    }
    /* The tags: either side's MPI_ANY_TAG (the receiver's) takes the other;
     * else they must be equal, which a tag not read leaves open. */
    int qtag_known = (q->where_args & MQDH_ARG_TAG) != 0;
    long qtag = q->where_tag;
    int any_tag = sends ? qtag_known && qtag < 0 : o2->tag_known && tag < 0;
    int tags_known = o2->tag_known && qtag_known;
    if (!any_tag && tags_known && qtag != tag)
        return PARTNER_NO; /* on any communicator */
    if (o2->comm && qcomm && strcmp(qcomm, o2->comm) != 0)
        return PARTNER_NO;
    long peer = sends ? q->where_source : q->where_dest;
    int peer_ok = sends ? (peer < 0 || peer == p->rank) : peer == p->rank;
    /* Ranks compare on MPI_COMM_WORLD only: on m's, a peer that is not
     * i's rank is not i whatever i's communicator is. */
    if (qcomm && strcmp(qcomm, "MPI_COMM_WORLD") == 0 && !peer_ok)
        return PARTNER_NO;
    if (o2->comm && qcomm && !peer_ok)
        return PARTNER_NO;
    if (o2->comm && qcomm && (tags_known || any_tag))
        return PARTNER_YES;
    if (o2->comm && qcomm)
        snprintf(why, len, "whether %s's %s is the partner of %s's (%s)",
                 who(b, m, mine, sizeof mine), q->where_call, who(b, i, other, sizeof other),
                 !o2->tag_known ? (p->where_args_why ? p->where_args_why : "its tag was not read")
                 : q->where_args_why ? q->where_args_why
                                     : "the latter's tag was not read");
    else
        snprintf(why, len, "whether %s's %s is the partner of %s's (%s communicator is not "
                 "known)", who(b, m, mine, sizeof mine), q->where_call,
                 who(b, i, other, sizeof other), o2->comm ? "its" : "the latter's");
    return PARTNER_UNKNOWN;
}

static struct mqdh_wait *call_wait(struct mqdh__waits *b, int i, int m, enum mqdh_wait_kind kind)
{
    struct mqdh_wait *w = mqdh__add_wait(b);
    if (!w)
        return NULL;
    w->from = i;
    w->to = m;
    w->kind = kind;
    w->comm = -1; /* MPI_COMM_WORLD: i shows none */
    w->peer_global = b->ids[m];
    w->bytes = -1;
    w->from_call = 1;
    return w;
}

/*
 * Does the dump hold every process of the job, i's world being the only
 * one, and no program able to reach another (mqdh_process.other_worlds)?
 * 0 with the reason in why[len] if not.
 */
static int check_job(const struct mqdh__waits *b, int i, char *why, size_t len)
{
    char w[200];
    if (!check_whole(b, i, w, sizeof w)) {
        snprintf(why, len, "of its MPI_COMM_WORLD %s", w);
        return 0;
    }
    for (int m = 0; m < b->m.d->nprocs; m++) {
        const struct mqdh_process *q = &b->m.d->procs[m];
        if (q->world != b->m.d->procs[i].world) {
            snprintf(why, len, "the dump holds processes of more than one world");
            return 0;
        }
        if (q->other_worlds != MQDH_WORLDS_NONE) {
            char them[32];
            snprintf(why, len, "%s %s processes outside its world",
                     who(b, m, them, sizeof them),
                     q->other_worlds == MQDH_WORLDS_MAYBE
                         ? "calls MPI_Comm_spawn, _connect, _accept, _join or _get_parent: it may "
                           "reach"
                         : "may reach (what its program calls could not be read)");
            return 0;
        }
    }
    return 1;
}

/*
 * The checks of i's world above, each made once for the world (they hold
 * for every process of it; made per process they cost O(n^2) at scale):
 * 1, or 0 with the reason in why[len].
 */
enum world_check { WORLD_WHOLE, WORLD_SANE, WORLD_JOB };

static int world_check(struct mqdh__waits *b, int i, enum world_check c, char *why, size_t len)
{
    static int (*const checks[])(const struct mqdh__waits *, int, char *, size_t) = {
        [WORLD_WHOLE] = check_whole, [WORLD_SANE] = check_sane, [WORLD_JOB] = check_job};
    int w = b->m.d->procs[i].world;
    if (b->memo_world != w) {
        b->memo_world = w;
        memset(b->memo, -1, sizeof b->memo);
    }
    if (b->memo[c] < 0)
        b->memo[c] = (signed char)checks[c](b, i, b->memo_why[c], sizeof b->memo_why[c]);
    snprintf(why, len, "%s", b->memo[c] ? "" : b->memo_why[c]);
    return b->memo[c];
}

/*
 * Process i blocked in a receive (MPI_Recv, MPI_Probe) or a send
 * (MPI_Send, MPI_Ssend, MPI_Rsend), from its arguments: it waits for its
 * peer (any member of the communicator for MPI_ANY_SOURCE: one group of
 * alternatives), unless the peer's call is its partner.  On a
 * communicator that is not known (its comm not read, or not predefined)
 * the rank names a process of the job, which one is not known: it waits
 * for any other, when the dump holds the whole job.  An argument that
 * was not read blocks a wait only where it could matter: a peer not read
 * is any member (each an alternative, as for MPI_ANY_SOURCE), a tag not
 * read is unseen only against a member whose call could be the partner
 * but for the tag; a member in a call that is no partner whatever the
 * arguments (MPI_Finalize, a collective, the same direction) is waited
 * for all the same.
 */
static void p2p_call_waits(struct mqdh__waits *b, int i, int sends)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    char me[32], why[400];
    const char *comm = call_comm(p);
    unsigned peer_bit = sends ? MQDH_ARG_DEST : MQDH_ARG_SOURCE;
    int peer_known = (p->where_args & peer_bit) != 0;
    struct p2p o2 = {sends, p->where_tag, (p->where_args & MQDH_ARG_TAG) != 0, comm};
    if (comm && strcmp(comm, "MPI_COMM_WORLD") != 0) {
        mqdh__unseen(b, i, "what %s waits for in %s on %s (only itself can be its peer there)",
                     who(b, i, me, sizeof me), p->where_call, comm);
        return;
    }
    if (sends && peer_known && p->where_dest < 0) /* MPI_PROC_NULL: it returns at once */
        return;
    if (!world_check(b, i, WORLD_SANE, why, sizeof why)) {
        mqdh__unseen(b, i, "which process %s's %s names (%s)", who(b, i, me, sizeof me),
                     p->where_call, why);
        return;
    }
    if (!comm && !world_check(b, i, WORLD_JOB, why, sizeof why)) {
        mqdh__unseen(b, i,
                     "which process %s's %s names (%s, and %s)", who(b, i, me, sizeof me),
                     p->where_call,
                     (p->where_args & MQDH_ARG_COMM)
                         ? "its communicator is none MPI predefines"
                         : (p->where_args_why ? p->where_args_why : "its comm was not read"),
                     why);
        return;
    }
    long peer = !peer_known ? -1 : sends ? p->where_dest : p->where_source;
    int first = b->a->nwaits;
    for (int m = 0; m < b->m.d->nprocs; m++) {
        const struct mqdh_process *q = &b->m.d->procs[m];
        if (m == i || q->world != p->world || (comm && peer >= 0 && q->rank != peer))
            continue;
        enum partner pa = partner(b, i, m, &o2, why, sizeof why);
        if (pa != PARTNER_NO) {
            if (pa == PARTNER_UNKNOWN)
                mqdh__unseen(b, i, "%s", why);
            b->a->nwaits = first; /* in flight, or it may be: i is free */
            return;
        }
        struct mqdh_wait *w = call_wait(b, i, m, sends ? MQDH_WAIT_SEND : MQDH_WAIT_RECV);
        if (!w)
            return;
        w->any_source = peer < 0;
        w->peer_unknown = !peer_known;
        w->peer_local = peer < 0 ? -1 : peer;
        w->tag_unknown = !o2.tag_known;
        w->tag_wild = o2.tag_known && o2.tag < 0;
        w->tag = o2.tag_known && o2.tag >= 0 ? o2.tag : -1;
        if (!comm) { /* some process of the job: which, the rank does not say */
            w->comm = -2;
            w->peer_global = -1;
        }
    }
    if (!comm)
        return;
    if (peer >= 0 && b->a->nwaits == first)
        mqdh__unseen(b, i, "rank %ld of %s's MPI_COMM_WORLD, which it %s in %s (not in the dump)",
                     peer, who(b, i, me, sizeof me), sends ? "sends to" : "receives from",
                     p->where_call);
    else if (peer < 0 && !world_check(b, i, WORLD_WHOLE, why, sizeof why)) {
        mqdh__unseen(b, i, "which processes can %s %s, which %s in %s (of its MPI_COMM_WORLD %s)",
                     sends ? "receive from" : "send to", who(b, i, me, sizeof me),
                     peer_known ? "receives from MPI_ANY_SOURCE" : "names a peer not read",
                     p->where_call, why);
        b->a->nwaits = first;
    }
}

/* Process i's wait, from its call, for m to enter its collective on
 * MPI_COMM_WORLD (alone in its group g); NULL out of memory. */
static struct mqdh_wait *collective_call_wait(struct mqdh__waits *b, int i, int m, int g)
{
    struct mqdh_wait *w = mqdh__add_collective_wait(b, i, m, g, -1, b->m.d->procs[m].rank);
    if (w) {
        w->bytes = -1;
        w->from_call = 1;
    }
    return w;
}

/* The predefined communicator process m's collective runs on, NULL if not
 * known: its argument, or where it shows queues, theirs. */
static const char *collective_comm(const struct mqdh__waits *b, int m)
{
    const struct mqdh_process *q = &b->m.d->procs[m];
    if (call_comm(q))
        return call_comm(q);
    int k = b->coll_comm[m];
    return k >= 0 ? q->comms[k].name : NULL;
}

/*
 * Process i blocked in a collective on MPI_COMM_WORLD, from its call: it
 * waits for every member not in the same collective on it (a rooted one
 * with another root: the roots must agree).
 */
static void collective_call_waits(struct mqdh__waits *b, int i)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    char me[32], them[32], why[160];
    const char *comm = call_comm(p);
    int rooted = mqdh__call_is(p->where_call, MQDH__MPI_ROOTED), first = b->a->nwaits, group = 0;
    if (!comm || strcmp(comm, "MPI_COMM_WORLD") != 0) {
        mqdh__unseen(b, i, "which communicator %s's %s runs on (%s)", who(b, i, me, sizeof me),
                     p->where_call,
                     !(p->where_args & MQDH_ARG_COMM)
                         ? (p->where_args_why ? p->where_args_why : "its comm was not read")
                     : comm ? "MPI_COMM_SELF: it waits for nobody else"
                            : "it is none MPI predefines, and no DLL showed it");
        return;
    }
    if (!world_check(b, i, WORLD_SANE, why, sizeof why)) {
        mqdh__unseen(b, i, "who takes part in %s's %s on MPI_COMM_WORLD (%s)",
                     who(b, i, me, sizeof me), p->where_call, why);
        return;
    }
    int root_unread = -1;
    for (int m = 0; m < b->m.d->nprocs; m++) {
        const struct mqdh_process *q = &b->m.d->procs[m];
        if (m == i || q->world != p->world)
            continue;
        if (b->a->activity[m] == MQDH_ACT_UNKNOWN) {
            mqdh__unseen(b, i, "whether %s is in %s's %s on %s", who(b, m, them, sizeof them),
                         who(b, i, me, sizeof me), p->where_call, comm);
            b->a->nwaits = first;
            return;
        }
        if (q->where_call && strcmp(q->where_call, p->where_call) == 0) {
            const char *qc = collective_comm(b, m);
            if (!qc) {
                mqdh__unseen(b, i, "whether %s's %s is on %s, as %s's is (%s)",
                             who(b, m, them, sizeof them), q->where_call, comm,
                             who(b, i, me, sizeof me),
                             q->where_args_why ? q->where_args_why : "its comm was not read");
                b->a->nwaits = first;
                return;
            }
            if (strcmp(qc, comm) == 0) { /* in it */
                if (!rooted)
                    continue;
                if (!(p->where_args & q->where_args & MQDH_ARG_ROOT)) {
                    if (root_unread < 0)
                        root_unread = m;
                    continue;
                }
                if (p->where_root == q->where_root)
                    continue;
                struct mqdh_wait *w = collective_call_wait(b, i, m, group++);
                if (!w)
                    return;
                w->roots_differ = 1;
                w->root = p->where_root;
                w->peer_root = q->where_root;
                continue;
            }
        }
        if (!collective_call_wait(b, i, m, group++))
            return;
    }
    if (b->a->nwaits > first)
        return; /* each is needed, whoever else is a member */
    if (!world_check(b, i, WORLD_WHOLE, why, sizeof why)) {
        mqdh__unseen(b, i,
                     "whether every member of MPI_COMM_WORLD is in %s's %s (of its world %s)",
                     who(b, i, me, sizeof me), p->where_call, why);
        return;
    }
    if (root_unread >= 0) {
        const struct mqdh_process *rp = &b->m.d->procs[root_unread];
        const char *rwhy = !(p->where_args & MQDH_ARG_ROOT) ? p->where_args_why : rp->where_args_why;
        mqdh__unseen(b, i, "whether %s and %s give %s on %s the same root (%s)",
                     who(b, i, me, sizeof me), who(b, root_unread, them, sizeof them),
                     p->where_call, comm, rwhy ? rwhy : "not read from their calls");
    }
}

int mqdh__whole_job(struct mqdh__waits *b, int i, char *why, size_t len)
{
    return world_check(b, i, WORLD_JOB, why, len);
}

void mqdh__call_waits(struct mqdh__waits *b, int i)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    char me[32];
    switch (mqdh__call_kind(p->where_call)) { /* every kind: -Wswitch says if one is missing */
    case MQDH__CALL_ONE_RECV:
    case MQDH__CALL_PROBE:
        if (mqdh__call_is(p->where_call, MQDH__MPI_MATCHED))
            break; /* its message was matched by MPI_Mprobe: it waits for its data */
        p2p_call_waits(b, i, 0);
        return;
    case MQDH__CALL_ONE_SEND:
        if (!mqdh__call_is(p->where_call, MQDH__MPI_BUFFERED)) /* buffered: waits for nobody */
            p2p_call_waits(b, i, 1);
        return;
    case MQDH__CALL_COLLECTIVE:
        collective_call_waits(b, i);
        return;
    case MQDH__CALL_ONE:
    case MQDH__CALL_ALL:
    case MQDH__CALL_ANY:
        break;
    case MQDH__CALL_FINALIZE: /* waits.c's: it needs no queue */
    case MQDH__CALL_ABORT:
    case MQDH__CALL_NOT_MPI:
    case MQDH__CALL_RETURNS:
        return;
    }
    mqdh__unseen(b, i,
                 "what %s waits for in %s (the operations of its requests are in the MPI "
                 "library's queues, which cannot be read)",
                 who(b, i, me, sizeof me), p->where_call);
}
