/*
 * analyze.c - who waits for whom in a dumped job, and what is deadlocked.
 *
 * The graph is built from what a dump holds: where each process is (the MPI
 * call it is blocked in) and its queues.  The MQD interface cannot say which
 * requests a call was given, so a process's wait is taken from the call and
 * the operations it has pending:
 *
 *   MPI_Waitall, MPI_Sendrecv      every pending operation is needed (AND)
 *   MPI_Recv, MPI_Send, MPI_Wait   one of them is (OR over the candidates;
 *                                  exact when there is one)
 *   MPI_Waitany, MPI_Waitsome      any one of them (OR)
 *   a collective                   every member of its communicator that is
 *                                  not in the same collective (AND)
 *
 * An operation whose partner already holds its match (a send for a posted
 * receive, a posted receive for a send) is in flight: it needs nobody.  A
 * receive from MPI_ANY_SOURCE waits for any member of its communicator.
 *
 * Deadlock is the greatest fixpoint of "cannot go on": a process is free if
 * it is not blocked, if nothing it waits for can be seen, or if each of its
 * AND groups has a free member; whatever never becomes free is stuck.  The
 * causes are the stuck strongly connected components no stuck edge leaves
 * (found with Tarjan's algorithm): cycles when every edge in them is needed,
 * knots when some are alternatives.  The rest of the stuck processes are
 * behind a deadlock.  Whatever could not be seen makes the analysis assume
 * the process is free, so a reported deadlock holds whatever it hides.
 */
#define _GNU_SOURCE
#include "mqdhost.h"

#include "analyze.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How a call waits; see above. */
enum call_kind {
    CALL_NOT_MPI,
    CALL_RETURNS,  /* MPI_Test, MPI_Iprobe, MPI_Comm_rank, ...: not blocked */
    CALL_ONE_RECV, /* one receive */
    CALL_ONE_SEND, /* one send */
    CALL_ONE,      /* one request, either */
    CALL_ALL,
    CALL_ANY,
    CALL_PROBE,    /* waits for a message the queues do not show */
    CALL_COLLECTIVE,
    /*
     * MPI_Finalize: after it a process sends, receives and joins nothing
     * again, so a point-to-point wait on it can never be met; and it is
     * collective over MPI_COMM_WORLD (MPI-4.0 11.2.2: it returns once every
     * process of the world has called it), so it waits for every member
     * not in it yet.
     */
    CALL_FINALIZE,
    CALL_ABORT /* terminal too, and waits for nobody */
};

static const struct {
    const char *name;
    enum call_kind kind;
} known_calls[] = {
    {"MPI_Recv", CALL_ONE_RECV},       {"MPI_Mrecv", CALL_ONE_RECV},
    {"MPI_Send", CALL_ONE_SEND},       {"MPI_Ssend", CALL_ONE_SEND},
    {"MPI_Rsend", CALL_ONE_SEND},      {"MPI_Bsend", CALL_ONE_SEND},
    {"MPI_Wait", CALL_ONE},            {"MPI_Waitall", CALL_ALL},
    {"MPI_Sendrecv", CALL_ALL},        {"MPI_Sendrecv_replace", CALL_ALL},
    {"MPI_Waitany", CALL_ANY},         {"MPI_Waitsome", CALL_ANY},
    {"MPI_Probe", CALL_PROBE},         {"MPI_Mprobe", CALL_PROBE},
    {"MPI_Barrier", CALL_COLLECTIVE},  {"MPI_Bcast", CALL_COLLECTIVE},
    {"MPI_Reduce", CALL_COLLECTIVE},   {"MPI_Allreduce", CALL_COLLECTIVE},
    {"MPI_Gather", CALL_COLLECTIVE},   {"MPI_Gatherv", CALL_COLLECTIVE},
    {"MPI_Scatter", CALL_COLLECTIVE},  {"MPI_Scatterv", CALL_COLLECTIVE},
    {"MPI_Allgather", CALL_COLLECTIVE}, {"MPI_Allgatherv", CALL_COLLECTIVE},
    {"MPI_Alltoall", CALL_COLLECTIVE}, {"MPI_Alltoallv", CALL_COLLECTIVE},
    {"MPI_Alltoallw", CALL_COLLECTIVE}, {"MPI_Reduce_scatter", CALL_COLLECTIVE},
    {"MPI_Reduce_scatter_block", CALL_COLLECTIVE}, {"MPI_Scan", CALL_COLLECTIVE},
    {"MPI_Exscan", CALL_COLLECTIVE},   {"MPI_Comm_dup", CALL_COLLECTIVE},
    {"MPI_Comm_dup_with_info", CALL_COLLECTIVE}, {"MPI_Comm_split", CALL_COLLECTIVE},
    {"MPI_Comm_split_type", CALL_COLLECTIVE}, {"MPI_Comm_create", CALL_COLLECTIVE},
    {"MPI_Intercomm_create", CALL_COLLECTIVE}, {"MPI_Intercomm_merge", CALL_COLLECTIVE},
    {"MPI_Win_fence", CALL_COLLECTIVE}, {"MPI_Finalize", CALL_FINALIZE},
    {"MPI_Abort", CALL_ABORT},
};

static enum call_kind classify(const char *call)
{
    if (!call)
        return CALL_NOT_MPI;
    for (size_t i = 0; i < sizeof known_calls / sizeof known_calls[0]; i++)
        if (strcmp(call, known_calls[i].name) == 0)
            return known_calls[i].kind;
    if (strncmp(call, "MPI_Neighbor_", 13) == 0)
        return CALL_COLLECTIVE;
    return CALL_RETURNS;
}

/* A collective with a root argument, which every member must give alike. */
static int is_rooted(const char *call)
{
    static const char *const rooted[] = {"MPI_Bcast",   "MPI_Reduce",   "MPI_Gather",
                                         "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv"};
    for (size_t i = 0; call && i < sizeof rooted / sizeof rooted[0]; i++)
        if (strcmp(call, rooted[i]) == 0)
            return 1;
    return 0;
}

/* A process that will never send, receive or join anything again. */
static int is_terminal(const struct mqdh_process *p)
{
    enum call_kind k = classify(p->where_call);
    return k == CALL_FINALIZE || k == CALL_ABORT;
}


/* ---------------------------------------------------------------- naming */

void mqdh_process_label(const struct mqdh_process *p, char *buf, size_t len)
{
    if (p->rank >= 0 && p->world > 0)
        snprintf(buf, len, "world %d rank %d", p->world, p->rank);
    else if (p->rank >= 0)
        snprintf(buf, len, "rank %d", p->rank);
    else
        snprintf(buf, len, "pid %d", (int)p->pid);
}

/* Processes by global rank: sorted pairs, a rank two processes have (an
 * MPI-1 DLL's, over two worlds) standing once with process -1; and each
 * world's size (world 0 counting the processes of no known world). */
struct mqdh_index {
    int n;
    struct index_entry {
        long g;
        int proc;
    } * v;
    int nworlds;
    int *world_size;
};

int mqdh_world_size(const struct mqdh_dump *d, int world)
{
    if (d && d->index && world < d->index->nworlds)
        return d->index->world_size[world < 0 ? 0 : world];
    int n = 0;
    for (int i = 0; d && i < d->nprocs; i++)
        n += d->procs[i].world == world || (world <= 0 && d->procs[i].world <= 0);
    return n;
}

void mqdh__peer_label(long g, int self, int n, int relative, char *buf, size_t len)
{
    if (!relative || self < 0 || n <= 0 || g < 0 || g >= n) {
        snprintf(buf, len, "rank %ld", g);
        return;
    }
    long dist = ((g - self) % n + n) % n;
    if (dist == 0)
        snprintf(buf, len, "rank");
    else if (dist <= n / 2)
        snprintf(buf, len, "rank+%ld", dist);
    else
        snprintf(buf, len, "rank-%ld", n - dist);
}

/* ---------------------------------------------------------------- building */

struct builder {
    const struct mqdh_dump *d;
    struct mqdh_analysis *a;
    long *ids;      /* per process: the global rank its peers name it by */
    int *blind;     /* per process: what it waits for was not (all) seen */
    int *terminal;  /* per process: in MPI_Finalize or MPI_Abort */
    int *coll_comm; /* per process: the communicator of its collective, -1 */
    int one_world;  /* every process is in the job's own MPI_COMM_WORLD */
    int cap_waits, cap_unseen, nomem;
};

/* Something the analysis could not see, which leaves what process `who`
 * waits for (or whether it waits) unknown. */
static void unseen(struct builder *b, int who, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void unseen(struct builder *b, int who, const char *fmt, ...)
{
    char line[512];
    b->blind[who] = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
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

static const char *label(const struct builder *b, int i, char *buf, size_t len)
{
    mqdh_process_label(&b->d->procs[i], buf, len);
    return buf;
}

/* The communicator process p's call names by its comm argument (read from
 * its frame, matched by handle: mqdh_process.where_comm), or -1. */
static int arg_comm(const struct mqdh_process *p)
{
    if (!(p->where_args & MQDH_ARG_COMM))
        return -1;
    for (int ci = 0; ci < p->ncomms; ci++)
        if (p->comms[ci].has_handle && p->comms[ci].handle == p->where_comm)
            return ci;
    return -1;
}

/* The global rank a DLL names process p by. */
static long global_id(const struct mqdh_process *p)
{
    return p->identity >= 0 ? p->identity : p->rank;
}

static int by_rank_then_process(const void *x, const void *y)
{
    const struct index_entry *a = x, *b = y;
    if (a->g != b->g)
        return a->g < b->g ? -1 : 1;
    return (a->proc > b->proc) - (a->proc < b->proc);
}

void mqdh__index_free(struct mqdh_index *x)
{
    if (x) {
        free(x->v);
        free(x->world_size);
    }
    free(x);
}

static struct mqdh_index *index_build(const struct mqdh_dump *d)
{
    struct mqdh_index *x = calloc(1, sizeof *x);
    int worlds = 1;
    for (int i = 0; i < d->nprocs; i++)
        if (d->procs[i].world >= worlds)
            worlds = d->procs[i].world + 1;
    if (!x || !(x->v = malloc((size_t)(d->nprocs ? d->nprocs : 1) * sizeof *x->v)) ||
        !(x->world_size = calloc((size_t)worlds, sizeof *x->world_size))) {
        mqdh__index_free(x);
        return NULL;
    }
    x->nworlds = worlds;
    for (int i = 0; i < d->nprocs; i++)
        x->world_size[d->procs[i].world < 0 ? 0 : d->procs[i].world]++;
    for (int i = 0; i < d->nprocs; i++)
        if (global_id(&d->procs[i]) >= 0)
            x->v[x->n++] = (struct index_entry){global_id(&d->procs[i]), i};
    qsort(x->v, (size_t)x->n, sizeof *x->v, by_rank_then_process);
    int k = 0;
    for (int i = 0; i < x->n; i++) {
        if (k > 0 && x->v[k - 1].g == x->v[i].g)
            x->v[k - 1].proc = -1;
        else
            x->v[k++] = x->v[i];
    }
    x->n = k;
    return x;
}

int mqdh_dump_index(struct mqdh_dump *d)
{
    mqdh__index_free(d->index);
    d->index = index_build(d);
    return d->index ? MQDH_OK : MQDH_E_NOMEM;
}

static int index_find(const struct mqdh_index *x, long g)
{
    for (int lo = 0, hi = x->n; g >= 0 && lo < hi;) {
        int mid = lo + (hi - lo) / 2;
        if (x->v[mid].g == g)
            return x->v[mid].proc;
        if (x->v[mid].g < g)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int mqdh_process_by_global(const struct mqdh_dump *d, long g)
{
    if (d && d->index)
        return index_find(d->index, g);
    int found = -1;
    for (int i = 0; d && g >= 0 && i < d->nprocs; i++) {
        if (global_id(&d->procs[i]) != g)
            continue;
        if (found >= 0)
            return -1; /* ranks of two worlds, from an MPI-1 DLL */
        found = i;
    }
    return found;
}

void mqdh_peer_text(const struct mqdh_dump *d, int self, long local, long global, int relative,
                    char *buf, size_t len)
{
    const struct mqdh_process *p = &d->procs[self];
    int ti = mqdh_process_by_global(d, global);
    const struct mqdh_process *t = ti >= 0 ? &d->procs[ti] : NULL;
    char who[48];
    if (local < 0) {
        snprintf(buf, len, "ANY");
    } else if (!t) {
        if (global >= 0 && global != local)
            snprintf(buf, len, "%ld (global %ld)", local, global);
        else
            snprintf(buf, len, "%ld", local);
    } else if (relative && t->world == p->world && t->rank >= 0 && p->rank >= 0) {
        mqdh__peer_label(t->rank, p->rank, mqdh_world_size(d, p->world), 1, buf, len);
    } else if (t->world == p->world && t->rank == local) {
        snprintf(buf, len, "%ld", local);
    } else {
        mqdh_process_label(t, who, sizeof who);
        snprintf(buf, len, "%ld (%s)", local, who);
    }
}

/* Process i's communicator that is `c` of another process: the same name
 * and size (the interface gives no job-wide identity), or -1. */
static int same_comm(const struct mqdh_process *p, const struct mqdh_comm *c)
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

/*
 * Process i's communicator ci's group can name its peers: the DLL gave one
 * (and it named i at its own rank: dump.c), and no process in the dump has
 * a communicator of that name and size with another group, which would be
 * the other side of an intercommunicator (whose peers are the remote group,
 * which the interface cannot tell from the local one).
 */
static int group_names_peers(const struct builder *b, int i, int ci)
{
    const struct mqdh_comm *c = &b->d->procs[i].comms[ci];
    if (!c->group)
        return 0;
    for (int m = 0; m < b->d->nprocs; m++) {
        int k = same_comm(&b->d->procs[m], c);
        if (k < 0 || !b->d->procs[m].comms[k].group)
            continue;
        if (memcmp(b->d->procs[m].comms[k].group, c->group, (size_t)c->size * sizeof *c->group))
            return 0;
    }
    return 1;
}

/*
 * The global rank of the peer that process i's operation on communicator
 * ci names by its rank `local` there, when the DLL gave none (MPICH's
 * libtvmpich.so gives none): what is certain instead.  On MPI_COMM_WORLD
 * of a job of one world, a rank is the world rank; else the communicator's
 * group where the DLL gave one that can be trusted (group_names_peers).
 * -1 when nothing is certain.
 */
static long op_global(const struct builder *b, int i, int ci, long local, long global)
{
    if (global >= 0 || local < 0)
        return global;
    const struct mqdh_process *p = &b->d->procs[i];
    const struct mqdh_comm *c = &p->comms[ci];
    if (local >= c->size)
        return -1;
    if (b->one_world && p->rank >= 0 && c->local_rank == p->rank &&
        strcmp(c->name, "MPI_COMM_WORLD") == 0)
        return local;
    if (group_names_peers(b, i, ci))
        return c->group[local];
    return -1;
}

static int tags_match(long want, int wild, long tag)
{
    return wild || want == tag;
}

/* Does process t hold the partner of process i's operation o (queue q of
 * communicator c)?  1 yes, 0 no, -1 cannot be seen. */
static int partner_pending(const struct builder *b, int i, int t, const struct mqdh_comm *c,
                           int q, const struct mqdh_op *o)
{
    const struct mqdh_process *tp = &b->d->procs[t];
    int k = same_comm(tp, c);
    if (k < 0)
        return tp->error ? -1 : 0;
    const struct mqdh_queue *tq = &tp->comms[k].queues[q == MQDH_SENDS ? MQDH_RECEIVES : MQDH_SENDS];
    if (tq->state != MQDH_QUEUE_OK)
        return -1;
    for (int n = 0; n < tq->nops; n++) {
        const struct mqdh_op *m = &tq->ops[n];
        if (m->collective || m->status == MQDH_OP_COMPLETE)
            continue;
        long g = op_global(b, t, k, m->desired_local_rank, m->desired_global_rank);
        if (q == MQDH_SENDS) { /* t's receive must take i's send */
            int from_i = m->desired_local_rank < 0 || g == b->ids[i] ||
                         (g < 0 && m->desired_local_rank == c->local_rank);
            if (from_i && tags_match(m->desired_tag, m->tag_wild, o->desired_tag))
                return 1;
        } else { /* t's send must match i's receive */
            int to_i = g == b->ids[i] || (g < 0 && m->desired_local_rank == c->local_rank);
            if (to_i && tags_match(o->desired_tag, o->tag_wild, m->desired_tag))
                return 1;
        }
    }
    return 0;
}

static struct mqdh_wait *add_wait(struct builder *b)
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

/* One operation's targets, pending edges before they are committed. */
struct target {
    int proc;
    int any;
};

/*
 * The processes i's operation o waits for, into t (room for nprocs).
 * Returns their number; 0 with *free set when it needs nobody (in flight)
 * or when what it needs cannot be seen.
 */
static int op_targets(struct builder *b, int i, int ci, int q, const struct mqdh_op *o,
                      struct target *t, int *free)
{
    const struct mqdh_process *p = &b->d->procs[i];
    const struct mqdh_comm *c = &p->comms[ci];
    char me[32], peer[32];
    int n = 0;
    *free = 0;
    if (q == MQDH_RECEIVES && o->desired_local_rank < 0) { /* any member */
        for (int m = 0; m < b->d->nprocs; m++) {
            const struct mqdh_process *mp = &b->d->procs[m];
            /* A finalizing process may have no communicators left, but it is
             * still a member of its world's MPI_COMM_WORLD. */
            int world_member = is_terminal(mp) && mp->ncomms == 0 && mp->world == p->world &&
                               strcmp(c->name, "MPI_COMM_WORLD") == 0;
            if (m == i || (same_comm(mp, c) < 0 && !world_member))
                continue;
            int has = partner_pending(b, i, m, c, q, o);
            if (has) {
                if (has < 0)
                    unseen(b, i, "%s's queues on \"%s\" (a member %s's receive from "
                              "MPI_ANY_SOURCE might match)", label(b, m, peer, sizeof peer),
                           c->name, label(b, i, me, sizeof me));
                *free = 1;
                return 0;
            }
            t[n].proc = m;
            t[n++].any = 1;
        }
        if (n < c->size - 1) {
            unseen(b, i, "%ld of the %ld members of \"%s\" that %s receives from with "
                      "MPI_ANY_SOURCE", c->size - 1 - n, c->size - 1, c->name,
                   label(b, i, me, sizeof me));
            *free = 1;
            return 0;
        }
        return n;
    }
    long g = op_global(b, i, ci, o->desired_local_rank, o->desired_global_rank);
    int tp = mqdh_process_by_global(b->d, g);
    if (tp < 0 && g < 0) {
        unseen(b, i, "which process is rank %ld of \"%s\", which %s %s (the DLL gives no "
                     "global rank, and no group that can be trusted)", o->desired_local_rank,
               c->name, label(b, i, me, sizeof me),
               q == MQDH_SENDS ? "sends to" : "receives from");
        *free = 1;
        return 0;
    }
    if (tp < 0) {
        int shared = 0; /* an MPI-1 DLL's rank, which two worlds have */
        for (int m = 0; m < b->d->nprocs; m++)
            shared += b->ids[m] == g;
        unseen(b, i, "global rank %ld, which %s %s on \"%s\" (%s)", g,
               label(b, i, me, sizeof me), q == MQDH_SENDS ? "sends to" : "receives from",
               c->name,
               shared ? "a rank of more than one world: the DLL does not say which"
                      : "not in the dump");
        *free = 1;
        return 0;
    }
    int has = partner_pending(b, i, tp, c, q, o);
    if (has) {
        if (has < 0)
            unseen(b, i, "%s's queues on \"%s\" (%s waits for it there)",
                   label(b, tp, peer, sizeof peer), c->name, label(b, i, me, sizeof me));
        *free = 1;
        return 0;
    }
    t[0].proc = tp;
    t[0].any = 0;
    return 1;
}

static void commit(struct builder *b, int i, int group, int ci, int q, const struct mqdh_op *o,
                   const struct target *t, int n)
{
    long g = op_global(b, i, ci, o->desired_local_rank, o->desired_global_rank);
    for (int k = 0; k < n && !b->nomem; k++) {
        struct mqdh_wait *w = add_wait(b);
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

static void collective_waits(struct builder *b, int i);

/* Process i's blocked send (its arguments: dest on ci, tag) waits for tp. */
static void add_send_wait(struct builder *b, int i, int tp, int ci)
{
    const struct mqdh_process *p = &b->d->procs[i];
    struct mqdh_wait *w = add_wait(b);
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
static int blocked_send_exact(struct builder *b, int i, int sync)
{
    const struct mqdh_process *p = &b->d->procs[i];
    unsigned need = MQDH_ARG_DEST | MQDH_ARG_TAG | MQDH_ARG_COMM;
    int ci = arg_comm(p);
    if ((p->where_args & need) != need || ci < 0 || p->where_dest < 0)
        return 0;
    const struct mqdh_comm *c = &p->comms[ci];
    int tp = mqdh_process_by_global(b->d, op_global(b, i, ci, p->where_dest, -1));
    if (tp >= 0 && is_terminal(&b->d->procs[tp])) {
        /* It will never receive again; its queues may be gone already. */
        add_send_wait(b, i, tp, ci);
        return 1;
    }
    int k = tp >= 0 ? same_comm(&b->d->procs[tp], c) : -1;
    if (k < 0)
        return 0;
    const struct mqdh_process *mp = &b->d->procs[tp];
    const struct mqdh_queue *q = &mp->comms[k].queues[MQDH_UNEXPECTED];
    char me[32], who[32];
    if (q->state != MQDH_QUEUE_OK) {
        unseen(b, i, "%s's unexpected messages on \"%s\" (%s's blocked %s may be there)",
               label(b, tp, who, sizeof who), mp->comms[k].name, label(b, i, me, sizeof me),
               p->where_call);
        return 1;
    }
    int waiting = 0, complete = 0;
    for (int n = 0; n < q->nops; n++) {
        const struct mqdh_op *o = &q->ops[n];
        if (o->collective || o->actual_tag != p->where_tag ||
            op_global(b, tp, k, o->actual_local_rank, o->actual_global_rank) != b->ids[i])
            continue;
        if (!sync && o->status == MQDH_OP_COMPLETE)
            complete = 1;
        else
            waiting = 1;
    }
    if (!waiting && complete) {
        unseen(b, i, "whether %s's blocked %s is the complete message to %s with tag %ld",
               label(b, i, me, sizeof me), p->where_call, label(b, tp, who, sizeof who),
               p->where_tag);
        return 1;
    }
    struct mqdh_op o;
    memset(&o, 0, sizeof o);
    o.desired_local_rank = p->where_dest;
    o.desired_global_rank = -1;
    o.desired_tag = p->where_tag;
    int has = waiting ? 0 : partner_pending(b, i, tp, c, MQDH_SENDS, &o);
    if (has < 0)
        unseen(b, i, "%s's pending receives on \"%s\" (%s's blocked %s may be matched)",
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
static void blocked_send_waits(struct builder *b, int i)
{
    const struct mqdh_process *p = &b->d->procs[i];
    int sync = strcmp(p->where_call, "MPI_Ssend") == 0, first_wait = b->a->nwaits;
    char me[32], who[32];
    if (strcmp(p->where_call, "MPI_Bsend") == 0) /* buffered: waits for nobody */
        return;
    if (blocked_send_exact(b, i, sync))
        return;
    for (int m = 0; m < b->d->nprocs; m++) {
        const struct mqdh_process *mp = &b->d->procs[m];
        if (m == i)
            continue;
        if (mp->error && mp->ncomms == 0) {
            unseen(b, i, "%s's unexpected messages (%s's blocked %s may be there)",
                   label(b, m, who, sizeof who), label(b, i, me, sizeof me), p->where_call);
            b->a->nwaits = first_wait;
            return;
        }
        for (int k = 0; k < mp->ncomms; k++) {
            const struct mqdh_queue *q = &mp->comms[k].queues[MQDH_UNEXPECTED];
            int ci = same_comm(p, &mp->comms[k]);
            if (ci < 0)
                continue;
            if (q->state != MQDH_QUEUE_OK) {
                unseen(b, i, "%s's unexpected messages on \"%s\" (%s's blocked %s may be "
                             "there)", label(b, m, who, sizeof who), mp->comms[k].name,
                       label(b, i, me, sizeof me), p->where_call);
                b->a->nwaits = first_wait;
                return;
            }
            for (int n = 0; n < q->nops; n++) {
                const struct mqdh_op *o = &q->ops[n];
                if (o->collective || (!sync && o->status == MQDH_OP_COMPLETE))
                    continue;
                if (op_global(b, m, k, o->actual_local_rank, o->actual_global_rank) != b->ids[i])
                    continue;
                struct mqdh_wait *w = add_wait(b);
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
        unseen(b, i, "what %s waits for in %s (its message is in no queue that could be seen)",
               label(b, i, me, sizeof me), p->where_call);
}

/* Does process i's unexpected queue on ci hold a message o (a receive or a
 * probe) takes?  1 yes, 0 no, -1 cannot be seen. */
static int own_unexpected(const struct builder *b, int i, int ci, const struct mqdh_op *o)
{
    const struct mqdh_queue *q = &b->d->procs[i].comms[ci].queues[MQDH_UNEXPECTED];
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

/*
 * Process i is in MPI_Probe (or MPI_Mprobe), which posts nothing: what it
 * waits for is its arguments, read from its frame.  It waits as a receive
 * from source with tag on comm would (a negative source or tag is the
 * wildcard: a probe from MPI_PROC_NULL returns at once), unless its
 * message is already in its own unexpected queue (the probe is about to
 * return) or its sender's pending sends (in flight).
 */
static void probe_waits(struct builder *b, int i, struct target *t)
{
    const struct mqdh_process *p = &b->d->procs[i];
    char me[32];
    unsigned need = MQDH_ARG_SOURCE | MQDH_ARG_TAG | MQDH_ARG_COMM;
    int ci = arg_comm(p);
    if ((p->where_args & need) != need || ci < 0) {
        unseen(b, i, "what %s waits for in %s (a probe posts nothing, and %s)",
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
    int has = own_unexpected(b, i, ci, &o);
    if (has) {
        if (has < 0)
            unseen(b, i, "%s's unexpected messages on \"%s\" (its %s may match one)",
                   label(b, i, me, sizeof me), p->comms[ci].name, p->where_call);
        return;
    }
    int fr, n = op_targets(b, i, ci, MQDH_RECEIVES, &o, t, &fr);
    if (!fr)
        commit(b, i, 0, ci, MQDH_RECEIVES, &o, t, n);
}

/* Point-to-point waits of blocked process i in a call of kind k; t has
 * room for every process. */
static void p2p_waits(struct builder *b, int i, enum call_kind k, struct target *t)
{
    const struct mqdh_process *p = &b->d->procs[i];
    char me[32];
    int candidates = 0, group = 0, free_any = 0, incomplete = 0;
    /* one request among the candidates: a single OR group */
    int one = k == CALL_ONE || k == CALL_ONE_RECV || k == CALL_ONE_SEND || k == CALL_ANY;
    int first_wait = b->a->nwaits;

    for (int ci = 0; ci < p->ncomms; ci++) {
        for (int q = MQDH_SENDS; q <= MQDH_RECEIVES; q++) {
            if ((k == CALL_ONE_RECV && q != MQDH_RECEIVES) ||
                (k == CALL_ONE_SEND && q != MQDH_SENDS))
                continue;
            const struct mqdh_queue *qu = &p->comms[ci].queues[q];
            if (qu->state != MQDH_QUEUE_OK) {
                unseen(b, i, "%s's %s on \"%s\" (%s)", label(b, i, me, sizeof me),
                       q == MQDH_SENDS ? "pending sends" : "pending receives", p->comms[ci].name,
                       qu->state == MQDH_QUEUE_NO_INFO ? "the DLL has no information" : "error");
                incomplete = 1;
                continue;
            }
            for (int n = 0; n < qu->nops; n++) {
                const struct mqdh_op *o = &qu->ops[n];
                if (o->collective || o->status == MQDH_OP_COMPLETE) /* not the user's, or done */
                    continue;
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
    if (candidates == 0 && !incomplete && (k == CALL_ONE || k == CALL_ALL || k == CALL_ANY) &&
        b->coll_comm[i] >= 0) {
        /* Nothing but a collective's traffic is pending: the request it
         * waits for is a nonblocking collective's (MPI_Ibarrier, MPI_Ireduce,
         * ... then MPI_Wait), a collective wait on that communicator. */
        collective_waits(b, i);
    } else if (candidates == 0 && !incomplete && k == CALL_ONE_SEND) {
        blocked_send_waits(b, i);
    } else if (candidates == 0) {
        unseen(b, i, "what %s waits for in %s (nothing of it is in its queues)",
               label(b, i, me, sizeof me), p->where_call);
        b->a->nwaits = first_wait;
    } else if (one && (free_any || incomplete)) { /* an alternative needs nobody */
        b->a->nwaits = first_wait;
    }
}

/* The communicator process i's collective runs on: the one whose queues
 * hold MPI's traffic for a collective, or -1. */
static int collective_comm(const struct mqdh_process *p)
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

/* Process i waits for m to enter its collective (alone in its group g);
 * comm is i's communicator index (-1: see mqdh_wait), local m's rank
 * there.  0, or -1 out of memory. */
static int add_collective_wait(struct builder *b, int i, int m, int g, int comm, long local)
{
    struct mqdh_wait *w = add_wait(b);
    if (!w)
        return -1;
    w->from = i;
    w->to = m;
    w->group = g;
    w->kind = MQDH_WAIT_COLLECTIVE;
    w->comm = comm;
    w->peer_local = local;
    w->peer_global = b->ids[m];
    w->tag = -1;
    return 0;
}

static void collective_waits(struct builder *b, int i)
{
    const struct mqdh_process *p = &b->d->procs[i];
    char me[32], who[32];
    int ci = b->coll_comm[i];
    if (ci < 0) {
        unseen(b, i, "the communicator of %s's %s (its queues show no traffic of it)",
               label(b, i, me, sizeof me), p->where_call);
        return;
    }
    const struct mqdh_comm *c = &p->comms[ci];
    int members = 0, first_wait = b->a->nwaits, group = 0, rooted = is_rooted(p->where_call);
    int root_unread = -1; /* a member in it whose root, or i's, was not read */
    for (int m = 0; m < b->d->nprocs; m++) {
        if (m == i)
            continue;
        const struct mqdh_process *mp = &b->d->procs[m];
        int mk = same_comm(mp, c);
        if (mk < 0)
            continue;
        members++;
        if (b->a->activity[m] == MQDH_ACT_UNKNOWN) {
            unseen(b, i, "whether %s is in %s's %s on \"%s\"", label(b, m, who, sizeof who),
                   label(b, i, me, sizeof me), p->where_call, c->name);
            b->a->nwaits = first_wait;
            return;
        }
        int in_it = mp->where_call && strcmp(mp->where_call, p->where_call) == 0 &&
                    (b->coll_comm[m] < 0 || b->coll_comm[m] == mk);
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
            if (add_collective_wait(b, i, m, group++, ci, mp->comms[mk].local_rank) != 0)
                return;
            struct mqdh_wait *w = &b->a->waits[b->a->nwaits - 1];
            w->roots_differ = 1;
            w->root = p->where_root;
            w->peer_root = mp->where_root;
            continue;
        }
        if (in_it)
            continue;
        if (add_collective_wait(b, i, m, group++, ci, mp->comms[mk].local_rank) != 0)
            return;
    }
    if (members == c->size - 1 && b->a->nwaits == first_wait && root_unread >= 0) {
        /* Every member is in it: whether it can complete rests on the roots. */
        const struct mqdh_process *rp = &b->d->procs[root_unread];
        const char *why = !(p->where_args & MQDH_ARG_ROOT) ? p->where_args_why : rp->where_args_why;
        unseen(b, i, "whether %s and %s give %s on \"%s\" the same root (%s)",
               label(b, i, me, sizeof me), label(b, root_unread, who, sizeof who), p->where_call,
               c->name, why ? why : "not read from their frames");
        return;
    }
    if (members != c->size - 1) { /* a member not dumped, or names that clash */
        unseen(b, i, "which processes are the %ld other members of \"%s\", where %s is in %s "
                  "(%d found: not all dumped, or communicators sharing its name)",
               c->size - 1, c->name, label(b, i, me, sizeof me), p->where_call, members);
        b->a->nwaits = first_wait;
    }
}

/*
 * Process i is in MPI_Finalize, collective over its MPI_COMM_WORLD: it
 * waits for every other process of its world not in MPI_Finalize yet.
 * Its communicators may be gone already (MPICH frees them early), so the
 * world's size comes from any process of that world that still shows it.
 */
static void finalize_waits(struct builder *b, int i)
{
    const struct mqdh_process *p = &b->d->procs[i];
    char me[32], who[32];
    long size = -1;
    int wc = -1; /* i's own MPI_COMM_WORLD, if it still has one */
    for (int m = 0; m < b->d->nprocs; m++) {
        const struct mqdh_process *mp = &b->d->procs[m];
        for (int k = 0; mp->world == p->world && k < mp->ncomms; k++)
            if (strcmp(mp->comms[k].name, "MPI_COMM_WORLD") == 0) {
                size = mp->comms[k].size;
                if (m == i)
                    wc = k;
            }
    }
    int members = 0, first_wait = b->a->nwaits, group = 0;
    for (int m = 0; m < b->d->nprocs; m++) {
        const struct mqdh_process *mp = &b->d->procs[m];
        if (m == i || mp->world != p->world)
            continue;
        members++;
        if (b->a->activity[m] == MQDH_ACT_UNKNOWN) {
            unseen(b, i, "whether %s is in MPI_Finalize, which %s waits for",
                   label(b, m, who, sizeof who), label(b, i, me, sizeof me));
            b->a->nwaits = first_wait;
            return;
        }
        if (is_terminal(mp))
            continue;
        if (add_collective_wait(b, i, m, group++, wc, mp->rank) != 0)
            return;
    }
    if (size < 0 || members != size - 1) {
        char found[64];
        if (size < 0)
            snprintf(found, sizeof found, "no process shows its size");
        else
            snprintf(found, sizeof found, "%d of %ld found", members, size - 1);
        unseen(b, i, "which processes are the other members of %s's MPI_COMM_WORLD, where it "
                     "is in MPI_Finalize (%s)", label(b, i, me, sizeof me), found);
        b->a->nwaits = first_wait;
    }
}

/* ---------------------------------------------------------------- explaining */

/* A source position as people read it: "ring.c:44" (the file's last
 * component), into buf[len]; "" without one. */
static void position(const char *file, int line, char *buf, size_t len)
{
    const char *base = file ? strrchr(file, '/') : NULL;
    if (file)
        snprintf(buf, len, "%s:%d", base ? base + 1 : file, line);
    else
        buf[0] = '\0';
}

/* Where process i's MPI call was made, as " at ring.c:44" or " from
 * solve" (no line information), into buf[len]; "" if not known. */
static void call_site(const struct mqdh_process *p, char *buf, size_t len)
{
    char pos[160];
    position(p->where_file, p->where_line, pos, sizeof pos);
    if (pos[0])
        snprintf(buf, len, " at %s", pos);
    else if (p->where_function && strcmp(p->where_function, "??") != 0)
        snprintf(buf, len, " called from %s", p->where_function);
    else
        buf[0] = '\0';
}

void mqdh_explain_wait(const struct mqdh_dump *d, const struct mqdh_wait *w, int relative,
                       char *buf, size_t len)
{
    const struct mqdh_process *p = &d->procs[w->from], *t = &d->procs[w->to];
    /* -1: MPI_Finalize's MPI_COMM_WORLD, gone from the process already */
    const char *cname = w->comm >= 0 ? p->comms[w->comm].name : "MPI_COMM_WORLD";
    char me[48], them[48], args[200], state[400], rootmsg[96], site[200], tsite[200];
    const char *call = p->where_call ? p->where_call : "MPI";
    mqdh_process_label(p, me, sizeof me);
    if (relative && t->rank >= 0 && t->world == p->world)
        mqdh__peer_label(t->rank, p->rank, mqdh_world_size(d, p->world), 1, them, sizeof them);
    else
        mqdh_process_label(t, them, sizeof them);
    call_site(p, site, sizeof site);
    call_site(t, tsite, sizeof tsite);

    const struct mqdh_frame *at = t->where_call ? NULL : mqdh_user_frame(d, w->to);
    if (is_terminal(t) && w->kind != MQDH_WAIT_COLLECTIVE)
        snprintf(state, sizeof state, " (it is in %s%s: it will never send or receive again)",
                 t->where_call, tsite);
    else if (t->where_call)
        snprintf(state, sizeof state, " (it is in %s%s)", t->where_call, tsite);
    else if (t->where_error || t->error)
        snprintf(state, sizeof state, " (where it is is not known)");
    else if (at) {
        char pos[160];
        position(at->file, at->line, pos, sizeof pos);
        snprintf(state, sizeof state, " (it is not in MPI: in %s%s%s)",
                 at->function ? at->function : "??", pos[0] ? " at " : "", pos);
    } else
        snprintf(state, sizeof state, " (it is not in MPI)");

    char peer[64], tag[32];
    if (w->tag_wild)
        snprintf(tag, sizeof tag, "ANY");
    else
        snprintf(tag, sizeof tag, "%ld", w->tag);
    if (w->any_source)
        snprintf(peer, sizeof peer, "ANY");
    else
        mqdh_peer_text(d, w->from, w->peer_local, w->peer_global, relative, peer, sizeof peer);

    int own = 0; /* the call is the operation itself: MPI_Recv(source=...) */
    enum call_kind k = classify(p->where_call);
    const char *reason = "?";
    args[0] = '\0';
    switch (w->kind) { /* every kind: -Wswitch says if one is missing */
    case MQDH_WAIT_RECV:
        own = k == CALL_ONE_RECV || k == CALL_PROBE;
        snprintf(args, sizeof args, "%ssource=%s, tag=%s, comm=%s", own ? "" : "receive(",
                 peer, tag, cname);
        reason = "has no matching send pending";
        break;
    case MQDH_WAIT_SEND:
        own = k == CALL_ONE_SEND;
        snprintf(args, sizeof args, "%sdest=%s, tag=%s, comm=%s", own ? "" : "send(", peer, tag,
                 cname);
        reason = "has posted no matching receive";
        break;
    case MQDH_WAIT_COLLECTIVE:
        /* MPI_Wait & co. on a nonblocking collective: say so. */
        own = k == CALL_COLLECTIVE || k == CALL_FINALIZE;
        if (w->roots_differ) {
            snprintf(args, sizeof args, "comm=%s, root=%ld", cname, w->root);
            snprintf(rootmsg, sizeof rootmsg, "calls it with root %ld: the roots must agree",
                     w->peer_root);
            reason = rootmsg;
            break;
        }
        snprintf(args, sizeof args, "%scomm=%s", own ? "" : "nonblocking collective(", cname);
        reason = own ? "has not entered it" : "has not entered it or a matching one";
        break;
    }
    /* MPI_Recv(source=0, ...) at f.c:20; MPI_Waitall at f.c:63: receive(...) */
    snprintf(buf, len, "%s%swaits in %s%s%s%s%s%s - %s %s%s", relative ? "" : me,
             relative ? "" : " ", call, own ? "(" : site, own ? "" : ": ", args, ")",
             own ? site : "", them, reason, state);
}

/* ---------------------------------------------------------------- deadlock */

struct tarjan {
    const struct mqdh_analysis *a;
    int *index, *low, *on_stack, *stack, *comp;
    int **adj, *nadj;
    int *path, *edge; /* the vertices being visited, and each one's next edge */
    int next, sp, ncomp;
};

static void tarjan_visit(struct tarjan *t, int v)
{
    t->index[v] = t->low[v] = t->next++;
    t->stack[t->sp++] = v;
    t->on_stack[v] = 1;
}

/* Tarjan's strongly connected components reachable from root, without
 * recursion (its depth would be the job's size). */
static void strongconnect(struct tarjan *t, int root)
{
    int depth = 0;
    tarjan_visit(t, root);
    t->path[0] = root;
    t->edge[0] = 0;
    while (depth >= 0) {
        int v = t->path[depth];
        if (t->edge[depth] < t->nadj[v]) {
            int w = t->adj[v][t->edge[depth]++];
            if (t->index[w] < 0) {
                tarjan_visit(t, w);
                t->path[++depth] = w;
                t->edge[depth] = 0;
            } else if (t->on_stack[w] && t->index[w] < t->low[v]) {
                t->low[v] = t->index[w];
            }
            continue;
        }
        if (t->low[v] == t->index[v]) {
            int w;
            do {
                w = t->stack[--t->sp];
                t->on_stack[w] = 0;
                t->comp[w] = t->ncomp;
            } while (w != v);
            t->ncomp++;
        }
        if (--depth >= 0 && t->low[v] < t->low[t->path[depth]])
            t->low[t->path[depth]] = t->low[v];
    }
}

/* Can wait e never be met?  Its target is stuck, or it is a
 * point-to-point wait on a terminal process (MPI_Finalize, MPI_Abort),
 * which will never send or receive again, stuck or not. */
static int wait_held(const struct mqdh_analysis *a, const int *terminal, int e)
{
    const struct mqdh_wait *w = &a->waits[e];
    return a->stuck[w->to] || (w->kind != MQDH_WAIT_COLLECTIVE && terminal[w->to]);
}

/* Is group g of process i held only by waits that can never be met? */
static int group_stuck(const struct mqdh_analysis *a, const int *terminal, int i, int g,
                       const int *first, const int *count)
{
    int any = 0;
    for (int e = first[i]; e < first[i] + count[i]; e++) {
        if (a->waits[e].group != g)
            continue;
        any = 1;
        if (!wait_held(a, terminal, e))
            return 0;
    }
    return any;
}

/* Is stuck process i held: is one of its ngroups groups of waits all on
 * waits that can never be met? */
static int held(const struct mqdh_analysis *a, const int *terminal, int i, int ngroups,
                const int *first, const int *count)
{
    for (int g = 0; g < ngroups; g++)
        if (group_stuck(a, terminal, i, g, first, count))
            return 1;
    return 0;
}

static int find_deadlocks(struct mqdh_analysis *a, const int *terminal)
{
    int n = a->nprocs, rc = MQDH_E_NOMEM;
    int *first = calloc((size_t)n, sizeof *first), *count = calloc((size_t)n, sizeof *count);
    int *ngroups = calloc((size_t)n, sizeof *ngroups);
    struct tarjan t = {.a = a};
    t.index = malloc((size_t)n * sizeof *t.index);
    t.low = calloc((size_t)n, sizeof *t.low);
    t.on_stack = calloc((size_t)n, sizeof *t.on_stack);
    t.stack = calloc((size_t)n, sizeof *t.stack);
    t.comp = calloc((size_t)n, sizeof *t.comp);
    t.adj = calloc((size_t)n, sizeof *t.adj);
    t.nadj = calloc((size_t)n, sizeof *t.nadj);
    t.path = calloc((size_t)n, sizeof *t.path);
    t.edge = calloc((size_t)n, sizeof *t.edge);
    /* Waits by their target (process to's: by_target[into[to] ...]). */
    int *into = calloc((size_t)n + 1, sizeof *into);
    int *by_target = calloc((size_t)(a->nwaits ? a->nwaits : 1), sizeof *by_target);
    int *queue = calloc((size_t)n, sizeof *queue);
    int *leaves = NULL, *cstart = NULL, *cmembers = NULL;
    if (!first || !count || !ngroups || !t.index || !t.low || !t.on_stack || !t.stack ||
        !t.comp || !t.adj || !t.nadj || !t.path || !t.edge || !into || !by_target || !queue)
        goto out;
    /* Edges are added process by process: each one's are contiguous. */
    for (int e = a->nwaits - 1; e >= 0; e--) {
        first[a->waits[e].from] = e;
        count[a->waits[e].from]++;
        if (a->waits[e].group + 1 > ngroups[a->waits[e].from])
            ngroups[a->waits[e].from] = a->waits[e].group + 1;
    }
    for (int e = 0; e < a->nwaits; e++)
        into[a->waits[e].to + 1]++;
    for (int i = 0; i < n; i++)
        into[i + 1] += into[i];
    for (int e = 0; e < a->nwaits; e++) /* queue: for now, a cursor per target */
        by_target[into[a->waits[e].to] + queue[a->waits[e].to]++] = e;
    /* Greatest fixpoint: blocked with waits is stuck until shown free.  A
     * process found free may free those that wait for it: a work list, so
     * that a process is looked at again only when one it waits for is
     * freed (a pass over all until nothing changes is quadratic on a
     * chain). */
    int nq = 0;
    for (int i = 0; i < n; i++)
        a->stuck[i] = a->activity[i] == MQDH_ACT_BLOCKED && count[i] > 0;
    for (int i = 0; i < n; i++)
        if (a->stuck[i] && !held(a, terminal, i, ngroups[i], first, count)) {
            a->stuck[i] = 0;
            queue[nq++] = i;
        }
    for (int k = 0; k < nq; k++) {
        int f = queue[k];
        for (int x = into[f]; x < into[f + 1]; x++) {
            int v = a->waits[by_target[x]].from;
            if (a->stuck[v] && !held(a, terminal, v, ngroups[v], first, count)) {
                a->stuck[v] = 0;
                queue[nq++] = v;
            }
        }
    }
    /* A terminal process a stuck one waits for is part of the hang even if
     * it waits for nobody stuck itself (MPI_Abort; a finalizing process of
     * another world): it is where the waits end. */
    for (int i = 0; i < n; i++)
        for (int e = first[i]; a->stuck[i] && e < first[i] + count[i]; e++)
            if (terminal[a->waits[e].to] && a->waits[e].kind != MQDH_WAIT_COLLECTIVE &&
                group_stuck(a, terminal, i, a->waits[e].group, first, count))
                a->stuck[a->waits[e].to] = 1;
    /* The graph of what holds the stuck: edges of their all-stuck groups. */
    for (int i = 0; i < n; i++) {
        t.index[i] = -1;
        if (!a->stuck[i])
            continue;
        t.adj[i] = malloc((size_t)count[i] * sizeof *t.adj[i]);
        if (!t.adj[i])
            goto out;
        for (int e = first[i]; e < first[i] + count[i]; e++) {
            if (group_stuck(a, terminal, i, a->waits[e].group, first, count)) {
                a->waits[e].in_deadlock = 1;
                int dup = 0;
                for (int x = 0; x < t.nadj[i]; x++)
                    dup |= t.adj[i][x] == a->waits[e].to;
                if (!dup)
                    t.adj[i][t.nadj[i]++] = a->waits[e].to;
            }
        }
    }
    for (int i = 0; i < n; i++)
        if (a->stuck[i] && t.index[i] < 0)
            strongconnect(&t, i);
    /* Components no edge leaves are the causes. */
    leaves = calloc((size_t)(t.ncomp ? t.ncomp : 1), sizeof *leaves);
    if (!leaves)
        goto out;
    for (int c = 0; c < t.ncomp; c++)
        leaves[c] = 1;
    for (int i = 0; i < n; i++)
        for (int x = 0; a->stuck[i] && x < t.nadj[i]; x++)
            if (t.comp[t.adj[i][x]] != t.comp[i])
                leaves[t.comp[i]] = 0;
    int nleaves = 0;
    for (int c = 0; c < t.ncomp; c++)
        nleaves += leaves[c];
    a->deadlocks = calloc((size_t)(nleaves ? nleaves : 1), sizeof *a->deadlocks);
    a->behind = calloc((size_t)(n ? n : 1), sizeof *a->behind);
    if (!a->deadlocks || !a->behind)
        goto out;
    for (int i = 0; i < n; i++)
        if (a->stuck[i] && !leaves[t.comp[i]])
            a->behind[a->nbehind++] = i;
    /* Each component's members in process order (a counting sort). */
    cstart = calloc((size_t)t.ncomp + 1, sizeof *cstart);
    cmembers = calloc((size_t)(n ? n : 1), sizeof *cmembers);
    if (!cstart || !cmembers)
        goto out;
    for (int i = 0; i < n; i++)
        if (a->stuck[i])
            cstart[t.comp[i] + 1]++;
    for (int c = 0; c < t.ncomp; c++)
        cstart[c + 1] += cstart[c];
    for (int i = 0; i < n; i++) /* queue: a cursor per component */
        queue[i] = 0;
    for (int i = 0; i < n; i++)
        if (a->stuck[i])
            cmembers[cstart[t.comp[i]] + queue[t.comp[i]]++] = i;
    /* Deadlocks in the order of their lowest member. */
    for (int i = 0; i < n; i++) {
        if (!a->stuck[i] || !leaves[t.comp[i]])
            continue;
        int c = t.comp[i];
        leaves[c] = 0; /* done */
        struct mqdh_deadlock *dl = &a->deadlocks[a->ndeadlocks++];
        int m = cstart[c + 1] - cstart[c], nw = 0;
        for (int k = cstart[c]; k < cstart[c + 1]; k++)
            for (int e = first[cmembers[k]]; e < first[cmembers[k]] + count[cmembers[k]]; e++)
                nw += a->waits[e].in_deadlock;
        dl->members = malloc((size_t)m * sizeof *dl->members);
        dl->waits = malloc((size_t)(nw ? nw : 1) * sizeof *dl->waits);
        if (!dl->members || !dl->waits)
            goto out;
        for (int k = cstart[c]; k < cstart[c + 1]; k++) {
            int j = cmembers[k];
            dl->members[dl->nmembers++] = j;
            for (int e = first[j]; e < first[j] + count[j]; e++) {
                if (!a->waits[e].in_deadlock)
                    continue;
                dl->waits[dl->nwaits++] = e;
                int alternatives = 0;
                for (int f = first[j]; f < first[j] + count[j]; f++)
                    alternatives += a->waits[f].group == a->waits[e].group &&
                                    a->waits[f].to != a->waits[e].to;
                if (alternatives)
                    dl->knot = 1;
            }
        }
    }
    /* Waits out of behind processes are not what explains a deadlock. */
    for (int k = 0; k < a->nbehind; k++)
        for (int e = first[a->behind[k]]; e < first[a->behind[k]] + count[a->behind[k]]; e++)
            a->waits[e].in_deadlock = 0;
    rc = MQDH_OK;
out:
    for (int i = 0; t.adj && i < n; i++)
        free(t.adj[i]);
    free(t.adj);
    free(t.nadj);
    free(t.index);
    free(t.low);
    free(t.on_stack);
    free(t.stack);
    free(t.comp);
    free(t.path);
    free(t.edge);
    free(into);
    free(by_target);
    free(queue);
    free(cstart);
    free(cmembers);
    free(first);
    free(count);
    free(ngroups);
    free(leaves);
    return rc;
}

/* ---------------------------------------------------------------- entry */

int mqdh_analyze(const struct mqdh_dump *d, struct mqdh_analysis **out)
{
    if (!out)
        return MQDH_E_USAGE;
    *out = NULL;
    if (!d || d->nprocs < 0)
        return MQDH_E_USAGE;
    int n = d->nprocs;
    struct mqdh_analysis *a = calloc(1, sizeof *a);
    if (a)
        a->version = MQDH_VERSION;
    /* A dump built without an index is analysed through a copy with one
     * (the same processes): every peer is looked up by global rank. */
    struct mqdh_dump indexed = *d;
    struct mqdh_index *own_index = d->index ? NULL : index_build(d);
    if (own_index) /* without it (no memory), look-ups scan */
        indexed.index = own_index;
    d = &indexed;
    struct builder b = {.d = d, .a = a};
    struct target *t = NULL;
    if (!a) {
        mqdh__index_free(own_index);
        return MQDH_E_NOMEM;
    }
    a->nprocs = n;
    size_t m = (size_t)(n ? n : 1);
    a->activity = calloc(m, sizeof *a->activity);
    a->stuck = calloc(m, sizeof *a->stuck);
    b.ids = calloc(m, sizeof *b.ids);
    b.coll_comm = calloc(m, sizeof *b.coll_comm);
    b.blind = calloc(m, sizeof *b.blind);
    b.terminal = calloc(m, sizeof *b.terminal);
    t = calloc(m, sizeof *t);
    if (!a->activity || !a->stuck || !b.ids || !b.coll_comm || !b.blind || !b.terminal || !t)
        goto nomem;
    b.one_world = 1;
    for (int i = 0; i < n; i++)
        b.one_world &= d->procs[i].world <= 0;

    char me[32];
    for (int i = 0; i < n; i++) {
        const struct mqdh_process *p = &d->procs[i];
        b.ids[i] = global_id(p);
        /* A blocking collective's communicator is its comm argument where it
         * was read; else the one whose queues hold its traffic. */
        int ac = classify(p->where_call) == CALL_COLLECTIVE ? arg_comm(p) : -1;
        b.coll_comm[i] = ac >= 0 ? ac : collective_comm(p);
        if (p->error && p->ncomms == 0) {
            a->activity[i] = MQDH_ACT_UNKNOWN;
            unseen(&b, i, "%s: not dumped (%s)", label(&b, i, me, sizeof me), p->error);
        } else if (!p->where_call && p->where_error) {
            a->activity[i] = MQDH_ACT_UNKNOWN;
            unseen(&b, i, "where %s is (%s)", label(&b, i, me, sizeof me), p->where_error);
        } else {
            enum call_kind k = classify(p->where_call);
            a->activity[i] = k == CALL_NOT_MPI  ? MQDH_ACT_RUNNING
                             : k == CALL_RETURNS ? MQDH_ACT_IN_MPI
                                                 : MQDH_ACT_BLOCKED;
        }
    }
    for (int i = 0; i < n && !b.nomem; i++) {
        if (a->activity[i] != MQDH_ACT_BLOCKED)
            continue;
        enum call_kind k = classify(d->procs[i].where_call);
        if (k == CALL_COLLECTIVE)
            collective_waits(&b, i);
        else if (k == CALL_FINALIZE)
            finalize_waits(&b, i);
        else if (k == CALL_ABORT)
            ; /* waits for nobody; waits on it are never met */
        else if (k == CALL_PROBE)
            probe_waits(&b, i, t);
        else
            p2p_waits(&b, i, k, t);
    }
    if (b.nomem)
        goto nomem;
    for (int i = 0; i < n; i++)
        b.terminal[i] = a->activity[i] == MQDH_ACT_BLOCKED && is_terminal(&d->procs[i]);
    if (find_deadlocks(a, b.terminal) != MQDH_OK)
        goto nomem;
    /* "No deadlock" only when nothing a process waits for went unseen: an
     * unseen part is taken to free its process, which can hide one. */
    for (int i = 0; i < n; i++)
        a->nblind += b.blind[i];
    a->verdict = a->ndeadlocks ? MQDH_VERDICT_DEADLOCK
                 : a->nblind || n == 0 ? MQDH_VERDICT_UNKNOWN
                                       : MQDH_VERDICT_NONE;
    free(t);
    free(b.ids);
    free(b.coll_comm);
    free(b.blind);
    free(b.terminal);
    mqdh__index_free(own_index);
    *out = a;
    return MQDH_OK;
nomem:
    free(t);
    free(b.ids);
    free(b.coll_comm);
    free(b.blind);
    free(b.terminal);
    mqdh__index_free(own_index);
    mqdh_analysis_free(a);
    return MQDH_E_NOMEM;
}

void mqdh_analysis_free(struct mqdh_analysis *a)
{
    if (!a)
        return;
    for (int i = 0; i < a->ndeadlocks; i++) {
        free(a->deadlocks[i].members);
        free(a->deadlocks[i].waits);
    }
    for (int i = 0; i < a->nunseen; i++)
        free(a->unseen[i]);
    free(a->unseen);
    free(a->deadlocks);
    free(a->behind);
    free(a->waits);
    free(a->activity);
    free(a->stuck);
    free(a);
}
