/*
 * watch.c - what moved between two looks at the same processes
 * (mqdh_watch_compare, mqdhost.h), for mqdump --watch and any tool.
 *
 * A process moved if, between the looks, one of its threads' stacks
 * changed (compared as the merged tree shows them: the MPI library's and
 * the system libraries' frames folded into the call the program made, so
 * that MPI's progress loop spinning inside MPI_Recv is no change), a
 * thread started or ended, an entry of its queues appeared, went, or
 * changed status or length, or a thread used CPU time other than inside
 * the one MPI call it was in at both looks.  CPU time spent inside that
 * call is MPI's progress loop: no progress.  A process in a call that
 * returns by itself (MPI_Test, MPI_Iprobe) at both looks, having used CPU
 * time there, may have left it and come back: that is said, and no claim
 * that nothing moved is made.
 */
#define _GNU_SOURCE
#include "mqdhost.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- stacks */

/* A thread's path as the merged tree shows it (mqdh_thread_path). */
struct path {
    int n;
    struct mqdh_path_frame f[MQDH_PATH_MAX_FRAMES];
};

static void path_of(const struct mqdh_thread *t, int main_thread, struct path *p)
{
    p->n = mqdh_thread_path(t, main_thread, 0, p->f, MQDH_PATH_MAX_FRAMES);
    if (p->n > MQDH_PATH_MAX_FRAMES)
        p->n = MQDH_PATH_MAX_FRAMES;
}

static int same_string(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* The same frame at both looks: the same function and line, and, for a
 * frame not folded, the same instruction (a thread computing in one line
 * is elsewhere in it; a caller's is its call). */
static int same_frame(const struct mqdh_path_frame *a, const struct mqdh_path_frame *b)
{
    return same_string(a->function, b->function) && same_string(a->file, b->file) &&
           a->line == b->line && a->folded == b->folded &&
           (a->folded || a->frame->pc == b->frame->pc);
}

/* The first frame, from the outermost, where paths a and b differ; -1 if
 * they are the same. */
static int first_difference(const struct path *a, const struct path *b)
{
    int k = 0;
    while (k < a->n && k < b->n && same_frame(&a->f[k], &b->f[k]))
        k++;
    return k == a->n && k == b->n ? -1 : k;
}

/* Frame k of path p in words, malloc'd; NULL if p has none there. */
static char *frame_at(const struct path *p, int k)
{
    if (k < 0 || k >= p->n)
        return NULL;
    char buf[512];
    const struct mqdh_path_frame *f = &p->f[k];
    mqdh_frame_words(buf, sizeof buf, f->function, f->file, f->line, NULL,
                !f->folded && f->frame->inlined);
    return strdup(buf);
}

/* Where a thread is, in words, malloc'd: its innermost frame, and, when
 * that is a call folded (into MPI or a system library), its caller. */
static char *where_words(const struct path *p)
{
    if (p->n == 0)
        return strdup("(no frames)");
    char *in = frame_at(p, p->n - 1), *out = NULL;
    if (p->f[p->n - 1].folded && p->n > 1) {
        char *from = frame_at(p, p->n - 2);
        if (in && from && asprintf(&out, "%s from %s", in, from) < 0)
            out = NULL;
        free(from);
        free(in);
        return out;
    }
    return in;
}

/* Inside MPI: in an MPI call, or in the MPI library's own code (a
 * progress thread of its runtime). */
static int thread_in_mpi(const struct mqdh_thread *t)
{
    if (t->call)
        return 1;
    for (int i = 0; i < t->nframes; i++)
        if (t->frames[i].kind != MQDH_FRAME_SYSTEM)
            return t->frames[i].kind == MQDH_FRAME_MPI;
    return 0;
}

static const struct mqdh_thread *thread_by_tid(const struct mqdh_stack *st, pid_t tid, int *index)
{
    for (int i = 0; i < st->nthreads; i++)
        if (st->threads[i].tid == tid) {
            *index = i;
            return &st->threads[i];
        }
    return NULL;
}

/* A thread's CPU time at a look, in nanoseconds: 0 and *ns, or -1 if
 * not known. */
static int thread_ns(const struct mqdh_dump *d, int i, pid_t tid, uint64_t *ns)
{
    const struct mqdh_cpu *c = d->cpu ? &d->cpu[i] : NULL;
    for (int k = 0; c && c->known && k < c->nthreads; k++)
        if (c->threads[k].tid == tid) {
            *ns = c->threads[k].ns;
            return 0;
        }
    return -1;
}

/* The first changed frame, the same in words at both looks (elsewhere
 * in one line): its instruction said too. */
static void name_by_pc(struct mqdh_moves *wp, const struct mqdh_path_frame *b,
                       const struct mqdh_path_frame *a)
{
    char *before = NULL, *after = NULL;
    if (asprintf(&before, "%s, pc 0x%" PRIx64, wp->frame_before, b->frame->pc) < 0)
        before = NULL;
    if (asprintf(&after, "%s, pc 0x%" PRIx64, wp->frame_after, a->frame->pc) < 0)
        after = NULL;
    if (before && after) {
        free(wp->frame_before);
        free(wp->frame_after);
        wp->frame_before = before;
        wp->frame_after = after;
        return;
    }
    free(before);
    free(after);
}

/* Scratch for comparing one thread: its paths at both looks. */
struct scratch {
    struct path before, after;
};

/* Thread ta (index k of process i's second look) against the same thread
 * at the first look: its stack, and where its CPU time went. */
static int compare_thread(struct mqdh_moves *wp, const struct mqdh_dump *b,
                          const struct mqdh_dump *a, int i, int k, struct scratch *s,
                          double *best)
{
    const struct mqdh_thread *ta = &a->stacks[i].threads[k];
    int kb = -1;
    const struct mqdh_thread *tb = thread_by_tid(&b->stacks[i], ta->tid, &kb);
    path_of(ta, k == 0, &s->after);
    if (!tb) {
        wp->threads_started++;
        s->before.n = 0;
    } else {
        path_of(tb, kb == 0, &s->before);
    }
    int diff = tb ? first_difference(&s->before, &s->after) : 0;
    if (tb && diff >= 0 && !wp->stack_changed) {
        wp->stack_changed = 1;
        wp->stack_tid = ta->tid;
        wp->stack_frame = diff;
        wp->frame_before = frame_at(&s->before, diff);
        wp->frame_after = frame_at(&s->after, diff);
        if (wp->frame_before && wp->frame_after && strcmp(wp->frame_before, wp->frame_after) == 0)
            name_by_pc(wp, &s->before.f[diff], &s->after.f[diff]);
    }
    uint64_t nb = 0, na;
    if (thread_ns(a, i, ta->tid, &na) != 0 || (tb && thread_ns(b, i, ta->tid, &nb) != 0))
        return 0; /* not known: the process's own time is used */
    double used = na >= nb ? (double)(na - nb) / 1e9 : (double)na / 1e9;
    if (tb && diff < 0 && thread_in_mpi(ta) && thread_in_mpi(tb)) {
        wp->cpu_mpi += used;
        return 1;
    }
    wp->cpu_other += used;
    if (used > *best) {
        *best = used;
        wp->cpu_tid = ta->tid;
        free(wp->cpu_before);
        free(wp->cpu_after);
        wp->cpu_before = tb ? where_words(&s->before) : strdup("(not started)");
        wp->cpu_after = where_words(&s->after);
    }
    return 1;
}

/* Process i's stacks and CPU time at both looks. */
static void compare_stacks(struct mqdh_moves *wp, const struct mqdh_dump *b,
                           const struct mqdh_dump *a, int i, struct scratch *s)
{
    const struct mqdh_stack *sb = &b->stacks[i], *sa = &a->stacks[i];
    int all_timed = 1, all_in_mpi = 1, unused;
    double best = 0;
    for (int k = 0; k < sa->nthreads; k++) {
        int timed = compare_thread(wp, b, a, i, k, s, &best);
        all_timed &= timed;
        const struct mqdh_thread *tb = thread_by_tid(sb, sa->threads[k].tid, &unused);
        all_in_mpi &= tb && thread_in_mpi(tb) && thread_in_mpi(&sa->threads[k]);
    }
    for (int k = 0; k < sb->nthreads; k++)
        if (!thread_by_tid(sa, sb->threads[k].tid, &unused))
            wp->threads_ended++;
    const struct mqdh_cpu *cb = b->cpu ? &b->cpu[i] : NULL, *ca = a->cpu ? &a->cpu[i] : NULL;
    wp->cpu_known = cb && ca && cb->known && ca->known;
    if (wp->cpu_known && !all_timed) { /* the process's own time, by where it was */
        double used = ca->ns >= cb->ns ? (double)(ca->ns - cb->ns) / 1e9 : 0;
        wp->cpu_mpi = wp->cpu_other = 0;
        *(all_in_mpi && !wp->stack_changed ? &wp->cpu_mpi : &wp->cpu_other) = used;
    }
}

/* ---------------------------------------------------------------- queues */

/* The same entry at both looks: what it asks for, its buffer and request. */
static int same_entry(const struct mqdh_op *x, const struct mqdh_op *y)
{
    return x->request == y->request && x->desired_local_rank == y->desired_local_rank &&
           x->desired_global_rank == y->desired_global_rank && x->tag_wild == y->tag_wild &&
           x->desired_tag == y->desired_tag && x->desired_length == y->desired_length &&
           x->buffer == y->buffer && x->system_buffer == y->system_buffer &&
           x->collective == y->collective;
}

static int add_change(struct mqdh_moves *wp, const struct mqdh_change *c)
{
    struct mqdh_change *m = realloc(wp->changes, (size_t)(wp->nchanges + 1) * sizeof *m);
    if (!m)
        return -1;
    wp->changes = m;
    wp->changes[wp->nchanges++] = *c;
    return 0;
}

static struct mqdh_change change_of(enum mqdh_change_what what, int q, const char *comm,
                               const struct mqdh_op *op)
{
    struct mqdh_change c;
    memset(&c, 0, sizeof c);
    c.what = what;
    c.queue = q;
    snprintf(c.comm, sizeof c.comm, "%s", comm);
    if (op)
        c.op = *op;
    return c;
}

/* Queue q of communicator cb (first look) against ca's (second). */
static int compare_queue(struct mqdh_moves *wp, const struct mqdh_comm *cb,
                         const struct mqdh_comm *ca, int q)
{
    const struct mqdh_queue *qb = &cb->queues[q], *qa = &ca->queues[q];
    if (qb->state != MQDH_QUEUE_OK || qa->state != MQDH_QUEUE_OK)
        return 0;
    unsigned char *taken = calloc((size_t)(qb->nops ? qb->nops : 1), 1);
    if (!taken)
        return -1;
    int rc = 0;
    for (int k = 0; k < qa->nops && rc == 0; k++) {
        const struct mqdh_op *oa = &qa->ops[k];
        int j = 0;
        while (j < qb->nops && (taken[j] || !same_entry(&qb->ops[j], oa)))
            j++;
        struct mqdh_change c = change_of(MQDH_CHANGE_APPEARED, q, ca->name, oa);
        if (j < qb->nops) {
            taken[j] = 1;
            const struct mqdh_op *ob = &qb->ops[j];
            if (ob->status == oa->status && ob->actual_length == oa->actual_length)
                continue;
            c.what = ob->status != oa->status ? MQDH_CHANGE_STATUS : MQDH_CHANGE_LENGTH;
            c.status_before = ob->status;
            c.length_before = ob->actual_length;
        }
        c.count_before = qb->nops;
        c.count_after = qa->nops;
        rc = add_change(wp, &c);
    }
    for (int j = 0; j < qb->nops && rc == 0; j++) {
        if (taken[j])
            continue;
        struct mqdh_change c = change_of(MQDH_CHANGE_GONE, q, cb->name, &qb->ops[j]);
        c.count_before = qb->nops;
        c.count_after = qa->nops;
        rc = add_change(wp, &c);
    }
    free(taken);
    return rc;
}

static const struct mqdh_comm *comm_by_id(const struct mqdh_process *p, uint64_t id)
{
    for (int c = 0; c < p->ncomms; c++)
        if (p->comms[c].unique_id == id)
            return &p->comms[c];
    return NULL;
}

/* Process pb's communicators and queues (first look) against pa's. */
static int compare_queues(struct mqdh_moves *wp, const struct mqdh_process *pb,
                          const struct mqdh_process *pa)
{
    for (int c = 0; c < pa->ncomms; c++) {
        const struct mqdh_comm *ca = &pa->comms[c], *cb = comm_by_id(pb, ca->unique_id);
        if (!cb) {
            struct mqdh_change ch = change_of(MQDH_CHANGE_COMM_NEW, -1, ca->name, NULL);
            if (add_change(wp, &ch) != 0)
                return -1;
            continue;
        }
        for (int q = 0; q < MQDH_NQUEUES; q++)
            if (compare_queue(wp, cb, ca, q) != 0)
                return -1;
    }
    for (int c = 0; c < pb->ncomms; c++)
        if (!comm_by_id(pa, pb->comms[c].unique_id)) {
            struct mqdh_change ch = change_of(MQDH_CHANGE_COMM_GONE, -1, pb->comms[c].name, NULL);
            if (add_change(wp, &ch) != 0)
                return -1;
        }
    return 0;
}

/* ---------------------------------------------------------------- comparing */

/* Why process i cannot be compared, or NULL if it can. */
static const char *not_comparable(const struct mqdh_dump *b, const struct mqdh_dump *a, int i)
{
    const struct mqdh_process *pb = &b->procs[i], *pa = &a->procs[i];
    if (pb->pid != pa->pid || !same_string(pb->host, pa->host))
        return "another process at the second look";
    if (!b->stacks || !a->stacks || !b->stacks[i].nthreads || !a->stacks[i].nthreads)
        return "not unwound at both looks";
    return NULL;
}

static int compare_process(struct mqdh_moves *wp, const struct mqdh_dump *b,
                           const struct mqdh_dump *a, const struct mqdh_analysis *ab,
                           const struct mqdh_analysis *aa, int i, struct scratch *s)
{
    if ((wp->why = not_comparable(b, a, i)) != NULL)
        return 0;
    wp->seen = 1;
    compare_stacks(wp, b, a, i, s);
    if (!wp->cpu_known) { /* what moved may still be seen, but not that nothing did */
        wp->seen = 0;
        wp->why = "its CPU time was not read at both looks";
    }
    const struct mqdh_process *pb = &b->procs[i], *pa = &a->procs[i];
    wp->queues = !pb->error && !pa->error;
    if (wp->queues && compare_queues(wp, pb, pa) != 0)
        return -1;
    wp->moved = wp->stack_changed || wp->threads_started || wp->threads_ended ||
                wp->nchanges > 0 || wp->cpu_other >= MQDH_WATCH_NOISE_SECONDS;
    /* In MPI_Test at both looks, with time spent: it may have returned
     * and been called again in between. */
    if (!wp->moved && wp->cpu_mpi >= MQDH_WATCH_NOISE_SECONDS && ab && aa &&
        ab->activity[i] == MQDH_ACT_IN_MPI && aa->activity[i] == MQDH_ACT_IN_MPI) {
        wp->maybe = 1;
        wp->poll_call = pa->where_call ? strdup(pa->where_call) : NULL;
    }
    return 0;
}

int mqdh_watch_compare(const struct mqdh_dump *before, const struct mqdh_dump *after,
                       double seconds, double elapsed, struct mqdh_watch **out)
{
    if (!out)
        return MQDH_E_USAGE;
    *out = NULL;
    if (!before || !after || before->nprocs != after->nprocs)
        return MQDH_E_USAGE;
    struct mqdh_watch *w = calloc(1, sizeof *w);
    struct scratch *s = malloc(sizeof *s);
    struct mqdh_analysis *ab = NULL, *aa = NULL;
    /* The analyses tell which calls return by themselves (the polling
     * caveat). */
    int ok = w && s && before->nprocs == after->nprocs &&
             (w->procs = calloc((size_t)(after->nprocs ? after->nprocs : 1), sizeof *w->procs)) &&
             mqdh_analyze(before, &ab) == MQDH_OK && mqdh_analyze(after, &aa) == MQDH_OK;
    if (ok) {
        w->seconds = seconds;
        w->elapsed = elapsed;
        w->nprocs = after->nprocs;
    }
    for (int i = 0; ok && i < w->nprocs; i++)
        ok = compare_process(&w->procs[i], before, after, ab, aa, i, s) == 0;
    mqdh_analysis_free(ab);
    mqdh_analysis_free(aa);
    free(s);
    if (!ok) {
        mqdh_watch_free(w);
        return MQDH_E_NOMEM;
    }
    *out = w;
    return MQDH_OK;
}

void mqdh_watch_free(struct mqdh_watch *w)
{
    if (!w)
        return;
    for (int i = 0; w->procs && i < w->nprocs; i++) {
        struct mqdh_moves *wp = &w->procs[i];
        free(wp->poll_call);
        free(wp->cpu_before);
        free(wp->cpu_after);
        free(wp->frame_before);
        free(wp->frame_after);
        free(wp->changes);
    }
    free(w->procs);
    free(w);
}

int mqdh_watch_nothing_moved(const struct mqdh_watch *w)
{
    if (!w)
        return 0;
    for (int i = 0; i < w->nprocs; i++)
        if (!w->procs[i].seen || w->procs[i].moved || w->procs[i].maybe)
            return 0;
    return w->nprocs > 0;
}
