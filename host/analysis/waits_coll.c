/*
 * waits_coll.c - what a process blocked in a collective waits for: a
 * blocking collective's members not in it (or in it with another root, or
 * another call), a nonblocking collective's members by its instance
 * (MPICH's per-communicator tags), MPI_Finalize's world (waits.h).
 */
#define _GNU_SOURCE
#include "analysis/waits_coll.h"
#include "base/dump.h"
#include "mpi_interface.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Process i's label ("rank 3") in buf. */
static const char *label(const struct mqdh__waits *b, int i, char *buf, size_t len)
{
    return mqdh__waits_label(b, i, buf, len);
}

static int receive_beside_message(const struct mqdh__waits *b, int x, int k, long peer, long tag);

/* ---------------------------------------------------------------- collectives */


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

/*
 * Member m of process i's rooted collective, in it too (mk its
 * communicator that is i's ci).  The same rooted collective with another
 * root (read from both calls' frames): MPI requires every member to give
 * the same root, and the library's algorithm, run with two roots, waits
 * for contributions the other side never sends: i cannot go on until m
 * calls it as i does, which it never will - a wait (group *group).  A root
 * not read: the first such member kept in *unread.  0, or -1 without
 * memory.
 */
static int roots_wait(struct mqdh__waits *b, int i, int ci, int m, int mk, int *group, int *unread)
{
    const struct mqdh_process *p = &b->m.d->procs[i], *mp = &b->m.d->procs[m];
    if (!(p->where_args & mp->where_args & MQDH_ARG_ROOT)) {
        if (*unread < 0)
            *unread = m;
        return 0;
    }
    if (p->where_root == mp->where_root)
        return 0;
    struct mqdh_wait *w =
        mqdh__add_collective_wait(b, i, m, (*group)++, ci, mp->comms[mk].local_rank);
    if (!w)
        return -1;
    w->roots_differ = 1;
    w->root = p->where_root;
    w->peer_root = mp->where_root;
    return 0;
}

void mqdh__collective_waits(struct mqdh__waits *b, int i)
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
        rooted = mqdh__call_is(p->where_call, MQDH__MPI_ROOTED);
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
        if (in_it && rooted && roots_wait(b, i, ci, m, mk, &group, &root_unread) != 0)
            return;
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
 * The DLLs number the nonblocking collectives of each communicator as
 * MPICH does (mpi_interface.h, MQD_NBC_FIRST_TAG; mqd's Open MPI DLL maps
 * libnbc's tags there): the n-th one's schedule sends and receives with
 * tag MQD_NBC_FIRST_TAG + n - 1 (MPICH: MPIR_Sched_next_tag, from
 * MPIR_FIRST_NBC_TAG, 287 in 4.x), so that the same tag on two members is
 * the same instance, and a higher one a later instance.  The blocking
 * collectives use fixed tags below it (MPIR_BARRIER_TAG 1, ...).  Tags
 * wrap only after MPI_TAG_UB
 * instances, which the rules below do not consider.
 */

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
    if (o->tag_wild || tag < MQD_NBC_FIRST_TAG || t < 0 || t == i) {
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
    /* Its queues not seen (an MPI that records no sends): how many it has
     * started says whether this instance is among them. */
    long next = started < 0 ? mqdh__next_nbc_tag(b->m.d, t, mk) : -1;
    if (started < 0 && next >= 0)
        started = next > tag;
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
                 "whether %s's and %s's nonblocking collectives on \"%s\" with schedule tag %ld "
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
                             "with schedule tag %ld is another collective than %s's, so it never "
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

void mqdh__nbc_waits(struct mqdh__waits *b, int i)
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
void mqdh__finalize_waits(struct mqdh__waits *b, int i)
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
