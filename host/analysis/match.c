/*
 * match.c - MPI's rules, as the analysis reads a dump by them (match.h):
 * the kind of each MPI call, the communicator and the peer an operation
 * names, and whether an operation's partner is pending.
 *
 * The MQD interface cannot say which requests a call was given, so a
 * process's wait is taken from the call it is blocked in and the
 * operations it has pending.  An operation whose partner already holds its
 * match (a send for a posted receive, a posted receive for a send) is in
 * flight: it needs nobody.  A receive from MPI_ANY_SOURCE waits for any
 * member of its communicator.
 */
#include "analysis/match.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- calls */

int mqdh__process_terminal(const struct mqdh_process *p)
{
    enum mqdh__call_kind k = mqdh__call_kind(p->where_call);
    return k == MQDH__CALL_FINALIZE || k == MQDH__CALL_ABORT || p->mpi_finalized;
}

int mqdh__process_finished(const struct mqdh_process *p)
{
    return p->mpi_finalized && mqdh__call_kind(p->where_call) != MQDH__CALL_FINALIZE;
}

/* ---------------------------------------------------------------- communicators */

int mqdh__comm_of_args(const struct mqdh_process *p)
{
    if (!(p->where_args & MQDH_ARG_COMM))
        return -1;
    int handles = 0, named = -1;
    for (int ci = 0; ci < p->ncomms; ci++) {
        const struct mqdh_comm *c = &p->comms[ci];
        if (c->has_handle && c->handle == p->where_comm)
            return ci;
        handles += c->has_handle;
        if (p->where_comm_name && strcmp(c->name, p->where_comm_name) == 0)
            named = named == -1 ? ci : -2;
    }
    /* A DLL without handles (Open MPI's): a predefined communicator by
     * its name, if exactly one communicator has it. */
    return handles == 0 && named >= 0 ? named : -1;
}

int mqdh__comm_of_traffic(const struct mqdh_process *p)
{
    for (int ci = 0; ci < p->ncomms; ci++)
        for (int q = MQDH_SENDS; q <= MQDH_RECEIVES; q++) {
            const struct mqdh_queue *qu = &p->comms[ci].queues[q];
            for (int n = 0; qu->state == MQDH_QUEUE_OK && n < qu->nops; n++)
                if (qu->ops[n].collective)
                    return ci;
        }
    return -1;
}

int mqdh__comm_same(const struct mqdh_process *p, const struct mqdh_comm *c)
{
    for (int k = 0; k < p->ncomms; k++) {
        const struct mqdh_comm *x = &p->comms[k];
        if (x->size != c->size || strcmp(x->name, c->name) != 0)
            continue;
        /* Where the DLL gave both groups, they must be the same: one
         * MPI_Comm_split's halves share their name (and, unnamed, their
         * context id), an intercommunicator's sides their name. */
        if (x->group && c->group && memcmp(x->group, c->group, (size_t)c->size * sizeof *c->group))
            continue;
        return k;
    }
    return -1;
}

/* ---------------------------------------------------------------- peers */

/*
 * Process i's communicator ci's group can name its peers: the DLL gave one
 * (and it named i at its own rank: protocol.c), and no process in the dump
 * has a communicator of that name and size with another group, which would
 * be the other side of an intercommunicator (whose peers are the remote
 * group, which the interface cannot tell from the local one).
 */
/* A communicator name and size, and whether its groups differ. */
struct mqdh__group_key {
    const char *name; /* NULL: an empty slot */
    long size;
    const long *group; /* the first one seen */
    int differs;
};

static size_t key_slot(const struct mqdh__group_key *t, size_t cap, const char *name, long size)
{
    uint64_t h = 14695981039346656037u ^ (uint64_t)size; /* FNV-1a */
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211u;
    size_t i = (size_t)h & (cap - 1);
    while (t[i].name && (t[i].size != size || strcmp(t[i].name, name) != 0))
        i = (i + 1) & (cap - 1);
    return i;
}

int mqdh__match_groups(struct mqdh__match *mc)
{
    size_t n = 0, cap = 16;
    for (int m = 0; m < mc->d->nprocs; m++)
        n += (size_t)mc->d->procs[m].ncomms;
    while (cap < 2 * n)
        cap *= 2;
    mc->groups = calloc(cap, sizeof *mc->groups);
    if (!mc->groups)
        return MQDH_E_NOMEM;
    mc->groups_cap = cap;
    for (int m = 0; m < mc->d->nprocs; m++)
        for (int k = 0; k < mc->d->procs[m].ncomms; k++) {
            const struct mqdh_comm *x = &mc->d->procs[m].comms[k];
            if (!x->group || x->size <= 0)
                continue;
            struct mqdh__group_key *e = &mc->groups[key_slot(mc->groups, cap, x->name, x->size)];
            if (!e->name)
                *e = (struct mqdh__group_key){x->name, x->size, x->group, 0};
            else if (!e->differs && e->group != x->group &&
                     memcmp(e->group, x->group, (size_t)x->size * sizeof *x->group))
                e->differs = 1;
        }
    return MQDH_OK;
}

void mqdh__match_fini(struct mqdh__match *mc)
{
    free(mc->groups);
    mc->groups = NULL;
    mc->groups_cap = 0;
}

/* By name and size alone (mqdh__comm_same would pass over the other side,
 * whose group differs): one look-up in the table mqdh__match_groups made,
 * not a pass over every process. */
static int group_names_peers(const struct mqdh__match *mc, int i, int ci)
{
    const struct mqdh_comm *c = &mc->d->procs[i].comms[ci];
    if (!c->group || !mc->groups)
        return 0;
    const struct mqdh__group_key *e =
        &mc->groups[key_slot(mc->groups, mc->groups_cap, c->name, c->size)];
    return e->name && !e->differs;
}

long mqdh__op_global(const struct mqdh__match *mc, int i, int ci, long local, long global)
{
    if (global >= 0 || local < 0)
        return global;
    const struct mqdh_process *p = &mc->d->procs[i];
    const struct mqdh_comm *c = &p->comms[ci];
    if (local >= c->size)
        return -1;
    if (mc->one_world && p->rank >= 0 && c->local_rank == p->rank &&
        strcmp(c->name, "MPI_COMM_WORLD") == 0)
        return local;
    if (group_names_peers(mc, i, ci))
        return c->group[local];
    return -1;
}

static int tags_match(long want, int wild, long tag)
{
    return wild || want == tag;
}

int mqdh__partner_pending(const struct mqdh__match *mc, int i, int t, const struct mqdh_comm *c,
                          int q, const struct mqdh_op *o)
{
    const struct mqdh_process *tp = &mc->d->procs[t];
    int k = mqdh__comm_same(tp, c);
    if (k < 0)
        return tp->error ? -1 : 0;
    const struct mqdh_queue *tq = &tp->comms[k].queues[q == MQDH_SENDS ? MQDH_RECEIVES : MQDH_SENDS];
    if (tq->state != MQDH_QUEUE_OK)
        return -1;
    for (int n = 0; n < tq->nops; n++) {
        const struct mqdh_op *m = &tq->ops[n];
        if (m->collective || m->status == MQDH_OP_COMPLETE)
            continue;
        long g = mqdh__op_global(mc, t, k, m->desired_local_rank, m->desired_global_rank);
        if (q == MQDH_SENDS) { /* t's receive must take i's send */
            int from_i = m->desired_local_rank < 0 || g == mc->ids[i] ||
                         (g < 0 && m->desired_local_rank == c->local_rank);
            if (from_i && tags_match(m->desired_tag, m->tag_wild, o->desired_tag))
                return 1;
        } else { /* t's send must match i's receive */
            int to_i = g == mc->ids[i] || (g < 0 && m->desired_local_rank == c->local_rank);
            if (to_i && tags_match(o->desired_tag, o->tag_wild, m->desired_tag))
                return 1;
        }
    }
    return 0;
}

int mqdh__collective_twin(const struct mqdh__match *mc, int i, int t, const struct mqdh_comm *c,
                          int q, const struct mqdh_op *o)
{
    const struct mqdh_process *tp = &mc->d->procs[t];
    int k = mqdh__comm_same(tp, c);
    if (k < 0 || !o->maybe_collective || o->tag_wild)
        return 0;
    const struct mqdh_queue *tq = &tp->comms[k].queues[q == MQDH_SENDS ? MQDH_RECEIVES : MQDH_SENDS];
    for (int n = 0; tq->state == MQDH_QUEUE_OK && n < tq->nops; n++) {
        const struct mqdh_op *m = &tq->ops[n];
        if (!(m->collective || (q == MQDH_RECEIVES && m->maybe_collective)) || m->tag_wild ||
            m->desired_tag != o->desired_tag || m->desired_local_rank < 0)
            continue;
        long g = mqdh__op_global(mc, t, k, m->desired_local_rank, m->desired_global_rank);
        if (g == mc->ids[i] || (g < 0 && m->desired_local_rank == c->local_rank))
            return 1;
    }
    return 0;
}

int mqdh__queue_has_instance(const struct mqdh_comm *c, int q, long from_tag)
{
    const struct mqdh_queue *qu = &c->queues[q];
    for (int n = 0; qu->state == MQDH_QUEUE_OK && n < qu->nops; n++) {
        const struct mqdh_op *m = &qu->ops[n];
        long tag = q == MQDH_UNEXPECTED ? m->actual_tag : m->desired_tag;
        if ((m->collective || m->maybe_collective) && m->status != MQDH_OP_COMPLETE &&
            tag >= from_tag)
            return 1;
    }
    return 0;
}

int mqdh__peer_later_instance(const struct mqdh__match *mc, int t, const struct mqdh_comm *c,
                              const struct mqdh_op *o, long from_tag)
{
    int k = mqdh__comm_same(&mc->d->procs[t], c);
    if (k < 0 || !o->maybe_collective)
        return 0;
    for (int q = MQDH_SENDS; q < MQDH_NQUEUES; q++)
        if (mqdh__queue_has_instance(&mc->d->procs[t].comms[k], q, from_tag))
            return 1;
    return 0;
}

int mqdh__own_unexpected(const struct mqdh__match *mc, int i, int ci, const struct mqdh_op *o)
{
    const struct mqdh_queue *q = &mc->d->procs[i].comms[ci].queues[MQDH_UNEXPECTED];
    if (q->state != MQDH_QUEUE_OK)
        return -1;
    for (int n = 0; n < q->nops; n++) {
        const struct mqdh_op *m = &q->ops[n];
        if (m->collective)
            continue;
        if ((o->desired_local_rank < 0 || m->actual_local_rank == o->desired_local_rank) &&
            tags_match(o->desired_tag, o->tag_wild, m->actual_tag))
            return 1;
    }
    return 0;
}
