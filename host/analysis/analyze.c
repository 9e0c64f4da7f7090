/*
 * analyze.c - who waits for whom in a dumped job, and what is deadlocked
 * (mqdh_analyze): the analysis, step by step.
 *
 * The wait-for graph is built from what a dump holds: where each process
 * is (the MPI call it is blocked in) and its queues.  What each call waits
 * for is MPI's semantics (match.c, waits.c); what in the graph can never
 * go on is graph theory (cycles.c, which knows no MPI); the words are
 * explain.c's.
 *
 * Deadlock is the greatest fixpoint of "cannot go on": a process is free if
 * it is not blocked, if nothing it waits for can be seen, or if each of its
 * AND groups has a free member; whatever never becomes free is stuck.  The
 * causes are the stuck strongly connected components no stuck edge leaves:
 * cycles when every edge in them is needed, knots when some are
 * alternatives.  The rest of the stuck processes are behind a deadlock.
 * Whatever could not be seen makes the analysis assume the process is
 * free, so a reported deadlock holds whatever it hides.
 */
#include "mqdhost.h"

#include "base/dump.h"
#include "analysis/cycles.h"
#include "analysis/match.h"
#include "analysis/calls.h"
#include "analysis/waits.h"
#include "analysis/waitreq.h"
#include "analysis/waits_coll.h"
#include "analysis/waits_p2p.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct mqdh_analysis *analysis_new(int n)
{
    struct mqdh_analysis *a = calloc(1, sizeof *a);
    size_t m = (size_t)(n ? n : 1);
    if (!a)
        return NULL;
    a->version = MQDH_VERSION;
    a->nprocs = n;
    a->activity = calloc(m, sizeof *a->activity);
    a->stuck = calloc(m, sizeof *a->stuck);
    if (!a->activity || !a->stuck) {
        mqdh_analysis_free(a);
        return NULL;
    }
    return a;
}

static int not_dumped(const struct mqdh_process *p)
{
    return p->error && p->ncomms == 0;
}

/* Process i not dumped, but unwound: where it is (in an MPI call, with
 * its arguments, or not in MPI) is known; its queues are not. */
static int calls_only(const struct mqdh_dump *d, int i)
{
    const struct mqdh_process *p = &d->procs[i];
    return not_dumped(p) && (p->where_call || (d->stacks && d->stacks[i].nthreads > 0));
}

/*
 * Process i dumped, in an MPI call, but not one of its queues could be
 * read (an MPI that keeps none a DLL can show: MPICH without
 * --enable-debuginfo records no send, and its ch4:ucx leaves the receives
 * to UCX): its waits come from its call, as a process not dumped does,
 * unless it is in an MPI_Wait* whose requests are known (waitreq.c reads
 * them).
 */
static int no_queue_read(const struct mqdh__waits *b, int i)
{
    const struct mqdh_process *p = &b->m.d->procs[i];
    if (not_dumped(p) || p->ncomms <= 0 || !p->where_call)
        return 0;
    for (int c = 0; c < p->ncomms; c++)
        for (int q = 0; q < MQDH_NQUEUES; q++)
            if (p->comms[c].queues[q].state == MQDH_QUEUE_OK)
                return 0;
    enum mqdh__call_kind k = mqdh__call_kind(p->where_call);
    return !((k == MQDH__CALL_ONE || k == MQDH__CALL_ALL || k == MQDH__CALL_ANY) &&
             mqdh__call_requests(b, i));
}

static int cmp_long(const void *x, const void *y)
{
    long a = *(const long *)x, b = *(const long *)y;
    return (a > b) - (a < b);
}

/*
 * Who among the processes not dumped has the same reason as process i
 * (i the first of them), and as it was or was not unwound: "rank 3" for one, "ranks [0-2,5]" for ranks of
 * the job's own world, else their labels one after another.  Each is
 * marked in done.  A job whose MPI keeps nothing for debuggers then reads
 * one line, not one a rank.
 */
static void same_reason(const struct mqdh_dump *d, int i, unsigned char *done, char *buf,
                        size_t len)
{
    long *ranks = malloc((size_t)d->nprocs * sizeof *ranks);
    int n = 0, world0 = 1;
    for (int j = i; j < d->nprocs; j++) {
        const struct mqdh_process *q = &d->procs[j];
        if (done[j] || !not_dumped(q) || calls_only(d, j) != calls_only(d, i) ||
            strcmp(q->error, d->procs[i].error) != 0)
            continue;
        done[j] = 1;
        world0 &= q->world == 0 && q->rank >= 0;
        if (ranks)
            ranks[n] = j;
        n++;
    }
    if (n == 1 || !ranks) {
        mqdh_process_label(&d->procs[i], buf, len);
        free(ranks);
        return;
    }
    size_t used = 0;
    if (world0) {
        for (int k = 0; k < n; k++)
            ranks[k] = d->procs[ranks[k]].rank;
        qsort(ranks, (size_t)n, sizeof *ranks, cmp_long);
        used = (size_t)snprintf(buf, len, "ranks [");
        for (int k = 0; k < n && used < len; k++) {
            int e = k;
            while (e + 1 < n && ranks[e + 1] == ranks[e] + 1)
                e++;
            used += (size_t)snprintf(buf + used, len - used, "%s%ld", k ? "," : "", ranks[k]);
            if (e > k && used < len)
                used += (size_t)snprintf(buf + used, len - used, "-%ld", ranks[e]);
            k = e;
        }
        if (used < len)
            snprintf(buf + used, len - used, "]");
    } else {
        for (int k = 0; k < n && used < len; k++) {
            char one[32];
            mqdh_process_label(&d->procs[ranks[k]], one, sizeof one);
            used += (size_t)snprintf(buf + used, len - used, "%s%s", k ? ", " : "", one);
        }
    }
    free(ranks);
}

/* What each process is doing, as far as can be seen: a process neither
 * dumped nor unwound is unknown, and that is unseen (processes not dumped
 * for the same reason in one line); one unwound but not dumped is in its
 * call, and its missing queues are said (its waits come from its call). */
static void activities(struct mqdh__waits *b)
{
    const struct mqdh_dump *d = b->m.d;
    char me[32], who[256];
    unsigned char *said = calloc((size_t)d->nprocs + 1, 1);
    if (!said)
        b->nomem = 1;
    for (int i = 0; i < d->nprocs; i++) {
        const struct mqdh_process *p = &d->procs[i];
        mqdh_process_label(p, me, sizeof me);
        if (calls_only(d, i) && !(said && said[i])) {
            if (said)
                same_reason(d, i, said, who, sizeof who);
            mqdh__unseen_note(b, "%s's message queues (the waits are read from the calls "
                              "instead)",
                              said ? who : me);
        }
        if (not_dumped(p) && !calls_only(d, i)) {
            b->a->activity[i] = MQDH_ACT_UNKNOWN;
            b->blind[i] = 1;
            if (said && said[i])
                continue;
            if (said)
                same_reason(d, i, said, who, sizeof who);
            mqdh__unseen(b, i, "%s: not dumped (%s)", said ? who : me, p->error);
        } else if (!p->where_call && p->where_error) {
            b->a->activity[i] = MQDH_ACT_UNKNOWN;
            mqdh__unseen(b, i, "where %s is (%s)", me, p->where_error);
        } else if (!p->where_call && p->where_tid > 0) {
            /* A call was found in that thread, and its name not kept. */
            b->a->activity[i] = MQDH_ACT_UNKNOWN;
            mqdh__unseen(b, i, "which MPI call %s is in (not recorded: out of memory)", me);
        } else {
            enum mqdh__call_kind k = mqdh__call_kind(p->where_call);
            b->a->activity[i] = k == MQDH__CALL_NOT_MPI  ? MQDH_ACT_RUNNING
                                : k == MQDH__CALL_RETURNS ? MQDH_ACT_IN_MPI
                                                         : MQDH_ACT_BLOCKED;
        }
    }
    free(said);
}

/*
 * A thread of process i other than the one in its MPI call that is in the
 * program's own code (a frame in its executable) and not in MPI: the
 * process may still send or receive whatever its MPI call waits for.
 * Threads of the MPI library and its runtimes have no such frame.  The
 * thread's id and its innermost program frame into *tid and *at; 0 if
 * none (or no stacks).
 */
static int other_thread_at_work(const struct mqdh_dump *d, int i, pid_t *tid,
                                const struct mqdh_frame **at)
{
    const struct mqdh_process *p = &d->procs[i];
    const struct mqdh_stack *st = d->stacks ? &d->stacks[i] : NULL;
    for (int t = 0; st && p->image && t < st->nthreads; t++) {
        const struct mqdh_thread *th = &st->threads[t];
        if (th->tid == p->where_tid || th->call)
            continue;
        for (int f = 0; f < th->nframes; f++)
            if (th->frames[f].module && strcmp(th->frames[f].module, p->image) == 0) {
                *tid = th->tid;
                *at = &th->frames[f];
                return 1;
            }
    }
    return 0;
}

/*
 * A cause that is processes past MPI_Finalize alone (no wait holds them:
 * they wait for nobody) is where waits end: it takes in the stuck
 * processes that wait on it directly, with those waits, and they leave
 * `behind`.  Its kind is MQDH_DEADLOCK_END.  0, or -1 out of memory (h
 * unchanged where it failed).
 */
static int end_causes(struct mqdh__hang *h, const struct mqdh__edge *edges, int ne,
                      const int *terminal, int n)
{
    for (int c = 0; c < h->ncauses; c++) {
        struct mqdh__cause *k = &h->causes[c];
        int ends = k->nedges == 0;
        for (int m = 0; m < k->nmembers && ends; m++)
            ends = terminal[k->members[m]] == 2;
        if (!ends)
            continue;
        int *in = calloc((size_t)n, sizeof *in);
        int *members = malloc((size_t)n * sizeof *members);
        int *held = malloc((size_t)(ne ? ne : 1) * sizeof *held);
        if (!in || !members || !held) {
            free(in);
            free(members);
            free(held);
            return -1;
        }
        for (int m = 0; m < k->nmembers; m++)
            in[k->members[m]] = 1;
        int nheld = 0;
        for (int e = 0; e < ne; e++)
            if (edges[e].never && in[edges[e].to] == 1 && h->stuck[edges[e].from]) {
                held[nheld++] = e;
                h->in_cause[e] = 1; /* these waits explain it */
                if (!in[edges[e].from])
                    in[edges[e].from] = 2;
            }
        int nm = 0;
        for (int v = 0; v < n; v++)
            if (in[v])
                members[nm++] = v;
        int nb = 0;
        for (int b = 0; b < h->nbehind; b++)
            if (!in[h->behind[b]])
                h->behind[nb++] = h->behind[b];
        h->nbehind = nb;
        free(k->members);
        free(k->edges);
        free(in);
        k->members = members;
        k->nmembers = nm;
        k->edges = held;
        k->nedges = nheld;
        k->knot = MQDH_DEADLOCK_END;
    }
    return 0;
}

/* The graph's causes as a's deadlocks (their members and waits move into
 * a), its behind as a's.  MQDH_OK, or MQDH_E_NOMEM with h freed. */
static int take_hang(struct mqdh_analysis *a, struct mqdh__hang *h)
{
    a->deadlocks = calloc((size_t)(h->ncauses ? h->ncauses : 1), sizeof *a->deadlocks);
    if (!a->deadlocks) {
        mqdh__hang_free(h);
        return MQDH_E_NOMEM;
    }
    for (int c = 0; c < h->ncauses; c++) {
        const struct mqdh__cause *k = &h->causes[c];
        a->deadlocks[c] = (struct mqdh_deadlock){.knot = k->knot,
                                                 .nmembers = k->nmembers,
                                                 .members = k->members,
                                                 .nwaits = k->nedges,
                                                 .waits = k->edges};
    }
    a->ndeadlocks = h->ncauses;
    a->nbehind = h->nbehind;
    a->behind = h->behind;
    free(h->causes);
    h->causes = NULL;
    h->behind = NULL;
    h->ncauses = h->nbehind = 0;
    return MQDH_OK;
}

/*
 * What can never go on (cycles.c): the processes are the vertices, the
 * blocked ones waiting, and each wait an edge.  A point-to-point wait on a
 * terminal process (in MPI_Finalize or MPI_Abort), which will never send
 * or receive again, is never met, stuck or not; so is any wait on a
 * process past MPI_Finalize.  MQDH_OK or MQDH_E_NOMEM.
 */
static int find_deadlocks(struct mqdh_analysis *a, const struct mqdh_dump *d)
{
    int n = a->nprocs, ne = a->nwaits, rc = MQDH_E_NOMEM;
    int *waiting = calloc((size_t)(n ? n : 1), sizeof *waiting);
    int *terminal = calloc((size_t)(n ? n : 1), sizeof *terminal);
    int *in_cause = calloc((size_t)(ne ? ne : 1), sizeof *in_cause);
    struct mqdh__edge *edges = calloc((size_t)(ne ? ne : 1), sizeof *edges);
    if (!waiting || !terminal || !in_cause || !edges)
        goto out;
    for (int i = 0; i < n; i++) {
        waiting[i] = a->activity[i] == MQDH_ACT_BLOCKED;
        /* 2: past MPI_Finalize, where even a collective is never joined */
        terminal[i] = mqdh__process_finished(&d->procs[i])
                          ? 2
                          : waiting[i] && mqdh__process_terminal(&d->procs[i]);
    }
    for (int e = 0; e < ne; e++) {
        const struct mqdh_wait *w = &a->waits[e];
        edges[e] = (struct mqdh__edge){
            w->from, w->to, w->group,
            terminal[w->to] == 2 || (w->kind != MQDH_WAIT_COLLECTIVE && terminal[w->to])};
    }
    struct mqdh__graph g = {.n = n, .waiting = waiting, .nedges = ne, .edges = edges};
    struct mqdh__hang h = {.stuck = a->stuck, .in_cause = in_cause};
    if (mqdh__graph_hang(&g, &h) != MQDH_OK)
        goto out;
    if (end_causes(&h, edges, ne, terminal, n) != 0) {
        mqdh__hang_free(&h);
        goto out;
    }
    if (take_hang(a, &h) != MQDH_OK)
        goto out;
    for (int e = 0; e < ne; e++)
        a->waits[e].in_deadlock = in_cause[e];
    rc = MQDH_OK;
out:
    free(waiting);
    free(terminal);
    free(in_cause);
    free(edges);
    return rc;
}

/*
 * A job without a deadlock whose blocked processes wait, directly or not,
 * on one that is not in MPI goes on only if that one still sends or
 * receives what they wait for, which no snapshot can promise (it may
 * compute for ever, or go on to MPI_Finalize): a note for each such
 * process, saying where it is.  It leaves nobody blind: the process can
 * move, and "no deadlock found" says no more than that.
 */
static void note_running_peers(struct mqdh__waits *b)
{
    const struct mqdh_analysis *a = b->a;
    const struct mqdh_dump *d = b->m.d;
    for (int e = 0; e < a->nwaits && !b->nomem; e++) {
        const struct mqdh_wait *w = &a->waits[e];
        if (w->kind == MQDH_WAIT_COLLECTIVE || a->activity[w->to] != MQDH_ACT_RUNNING ||
            mqdh__process_finished(&d->procs[w->to]))
            continue;
        char who[32], at[200] = "";
        mqdh_process_label(&d->procs[w->to], who, sizeof who);
        const struct mqdh_frame *f = mqdh_user_frame(d, w->to);
        if (f && f->function && f->file)
            snprintf(at, sizeof at, " (in %s at %s:%d)", f->function, f->file, f->line);
        else if (f && f->function)
            snprintf(at, sizeof at, " (in %s)", f->function);
        mqdh__unseen_note(b,
                          "whether %s will still send or receive what the processes waiting "
                          "on it need: it is not in MPI%s, so it may, or may never",
                          who, at);
    }
}

/* The waits of process i, blocked (a->activity[i], as every process's,
 * set), from its queues and its call, into a->waits, one after another,
 * by the kind of call it is in (waits_p2p.c, waits_coll.c); b->nomem if
 * memory ran out. */
static void waits_of(struct mqdh__waits *b, int i)
{
    enum mqdh__call_kind k = mqdh__call_kind(b->m.d->procs[i].where_call);
    switch (k) { /* every kind: -Wswitch says if one is missing */
    case MQDH__CALL_COLLECTIVE:
        mqdh__collective_waits(b, i);
        break;
    case MQDH__CALL_FINALIZE:
        mqdh__finalize_waits(b, i);
        break;
    case MQDH__CALL_ABORT:
        break; /* waits for nobody; waits on it are never met */
    case MQDH__CALL_PROBE:
        mqdh__probe_waits(b, i, b->cand);
        break;
    case MQDH__CALL_NOT_MPI:
    case MQDH__CALL_RETURNS:
    case MQDH__CALL_ONE_RECV:
    case MQDH__CALL_ONE_SEND:
    case MQDH__CALL_ONE:
    case MQDH__CALL_ALL:
    case MQDH__CALL_ANY:
        mqdh__p2p_waits(b, i, k, b->cand);
        break;
    }
}

/* "No deadlock" only when nothing a process waits for went unseen: an
 * unseen part is taken to free its process, which can hide one. */
static void verdict(struct mqdh_analysis *a, const int *blind)
{
    for (int i = 0; i < a->nprocs; i++)
        a->nblind += blind[i];
    a->verdict = a->ndeadlocks               ? MQDH_VERDICT_DEADLOCK
                 : a->nblind || a->nprocs == 0 ? MQDH_VERDICT_UNKNOWN
                                               : MQDH_VERDICT_NONE;
}

int mqdh_analyze(const struct mqdh_dump *d, struct mqdh_analysis **out)
{
    if (!out)
        return MQDH_E_USAGE;
    *out = NULL;
    if (!d || d->nprocs < 0)
        return MQDH_E_USAGE;
    /* A dump built without an index is analysed through a copy with one
     * (the same processes): every peer is looked up by global rank. */
    struct mqdh_dump indexed = *d;
    struct mqdh_index *own_index = d->index ? NULL : mqdh__index_build(d);
    if (own_index) /* without it (no memory), look-ups scan */
        indexed.index = own_index;
    struct mqdh_analysis *a = analysis_new(d->nprocs);
    struct mqdh__waits b;
    if (!a || mqdh__waits_init(&b, &indexed, a) != MQDH_OK) {
        mqdh_analysis_free(a);
        mqdh__index_free(own_index);
        return MQDH_E_NOMEM;
    }
    int rc = MQDH_E_NOMEM;
    activities(&b);
    for (int i = 0; i < d->nprocs && !b.nomem; i++) {
        if (a->activity[i] != MQDH_ACT_BLOCKED)
            continue;
        pid_t tid;
        const struct mqdh_frame *at;
        if (other_thread_at_work(d, i, &tid, &at)) {
            char me[32];
            mqdh_process_label(&d->procs[i], me, sizeof me);
            mqdh__unseen(&b, i,
                         "whether %s waits in %s: its thread %d is in %s%s%s, not in MPI, and may "
                         "still send or receive",
                         me, d->procs[i].where_call, (int)tid, at->function ? at->function : "??",
                         at->file ? " at " : "", at->file ? at->file : "");
            continue;
        }
        /* Without queues, from its call (MPI_Finalize's waits need none). */
        int queueless = calls_only(d, i) || no_queue_read(&b, i);
        int from_call = queueless && mqdh__call_kind(d->procs[i].where_call) != MQDH__CALL_FINALIZE;
        a->ncalls_only += queueless;
        if (from_call)
            mqdh__call_waits(&b, i);
        else
            waits_of(&b, i);
    }
    if (!b.nomem && find_deadlocks(a, &indexed) == MQDH_OK) {
        if (a->ndeadlocks == 0)
            note_running_peers(&b);
        verdict(a, b.blind);
        rc = MQDH_OK;
    }
    mqdh__waits_fini(&b);
    mqdh__index_free(own_index);
    if (rc != MQDH_OK) {
        mqdh_analysis_free(a);
        return rc;
    }
    *out = a;
    return MQDH_OK;
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
