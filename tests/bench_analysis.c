/*
 * bench_analysis.c - how the analysis and the folded views scale: synthetic
 * dumps of N processes (default 100,000; argv[1]), analysed and written
 * folded as mqdump writes them (its own views, mqdump/text.c, linked in),
 * the output thrown away.  Run by `make bench`; prints one line per case:
 * the case, what the analysis found, and the seconds each step took.
 *
 * Cases: a ring (one cycle of N: recursion N deep would overflow), pairs
 * (N/2 deadlocks), and a chain whose last process computes (each process
 * freed only after the next: a pass over all until nothing changes is
 * N passes).
 */
#define _GNU_SOURCE
#include "mqdump/mqdump.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *must(void *p)
{
    if (!p) {
        fprintf(stderr, "bench_analysis: out of memory\n");
        exit(1);
    }
    return p;
}

enum shape { RING, PAIRS, CHAIN };

/* Process r of n waits for one receive from peer(r) on MPI_COMM_WORLD. */
static long peer(enum shape s, int r, int n)
{
    switch (s) {
    case RING: return (r + 1) % n;
    case PAIRS: return r ^ 1;
    case CHAIN: return r + 1 < n ? r + 1 : -2;
    }
    return -2;
}

static struct mqdh_dump *make_dump(enum shape s, int n)
{
    struct mqdh_dump *d = must(calloc(1, sizeof *d));
    d->nprocs = n;
    d->procs = must(calloc((size_t)n, sizeof *d->procs));
    for (int r = 0; r < n; r++) {
        struct mqdh_process *p = &d->procs[r];
        long from = peer(s, r, n);
        p->pid = 1000 + r;
        p->rank = p->identity = r;
        p->image = must(strdup("/bench/app"));
        p->dll = must(strdup("/bench/libmqd_mpich.so"));
        if (from < -1) /* computing: not in MPI */
            continue;
        p->where_call = must(strdup("MPI_Recv"));
        p->where_function = must(strdup("solve"));
        p->where_file = must(strdup("app.c"));
        p->where_line = 42;
        p->ncomms = 1;
        p->comms = must(calloc(1, sizeof *p->comms));
        struct mqdh_comm *c = &p->comms[0];
        snprintf(c->name, sizeof c->name, "MPI_COMM_WORLD");
        c->size = n;
        c->local_rank = r;
        c->unique_id = 0x1000;
        struct mqdh_queue *q = &c->queues[MQDH_RECEIVES];
        q->nops = 1;
        q->ops = must(calloc(1, sizeof *q->ops));
        struct mqdh_op *o = &q->ops[0];
        o->status = MQDH_OP_PENDING;
        o->desired_local_rank = o->desired_global_rank = from;
        o->desired_tag = 7;
        o->desired_length = 4;
        o->actual_local_rank = o->actual_global_rank = o->actual_tag = o->actual_length = -1;
    }
    if (mqdh_dump_index(d) != MQDH_OK)
        must(NULL);
    return d;
}

/* The folded views and the deadlock report, written where nobody reads
 * them: text_folded's result. */
static int quiet_views(const struct mqdh_dump *d, const struct mqdh_analysis *a)
{
    fflush(stdout);
    int saved = dup(1), null = open("/dev/null", O_WRONLY);
    if (saved < 0 || null < 0 || dup2(null, 1) < 0)
        must(NULL);
    int rc = text_folded(d, 0);
    text_analysis(d, a, 1);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    close(null);
    return rc;
}

/*
 * A job across hosts as the front end sees it: nprocs ranks of a ring, per
 * hosts of them on each of nhosts hosts, each host's share written as its
 * agent's result beforehand (every rank with its MPI_COMM_WORLD group, as
 * mqd's DLL gives it).  Timed: reading every result, merging them into the
 * dump of the job, and the analysis and folded views over it.  0 if the
 * whole takes under 2 s and finds the one cycle.
 */
static int bench_merge(int n, int nhosts)
{
    struct mqdh_dump *full = make_dump(RING, n);
    char **results = must(calloc((size_t)nhosts, sizeof *results));
    size_t *lens = must(calloc((size_t)nhosts, sizeof *lens));
    size_t bytes = 0;
    int per = (n + nhosts - 1) / nhosts;
    for (int r = 0; r < n; r++) {
        struct mqdh_process *p = &full->procs[r];
        char h[32];
        snprintf(h, sizeof h, "node%04d", r / per);
        p->host = must(strdup(h));
        struct mqdh_comm *c = &p->comms[0];
        c->group = must(malloc((size_t)n * sizeof *c->group));
        for (int k = 0; k < n; k++)
            c->group[k] = k;
        snprintf(c->queues[MQDH_RECEIVES].ops[0].extra_text[0], 64, "receive: 1 x MPI_INT");
    }
    for (int h = 0; h < nhosts; h++) {
        struct mqdh_dump share = {.version = MQDH_VERSION, .workers = 1, .files = 5};
        share.procs = full->procs + (size_t)h * (size_t)per;
        share.nprocs = h * per >= n ? 0 : (n - h * per < per ? n - h * per : per);
        FILE *f = open_memstream(&results[h], &lens[h]);
        if (!f || mqdh_result_write(f, &share) != MQDH_OK)
            must(NULL);
        fclose(f);
        bytes += lens[h];
    }
    /* The front end's dump before the agents answer: hosts and pids. */
    struct mqdh_dump *d = must(calloc(1, sizeof *d));
    d->nprocs = n;
    d->procs = must(calloc((size_t)n, sizeof *d->procs));
    for (int r = 0; r < n; r++) {
        d->procs[r].pid = full->procs[r].pid;
        d->procs[r].rank = d->procs[r].identity = r;
        d->procs[r].host = must(strdup(full->procs[r].host));
    }
    mqdh_dump_free(full);
    double t0 = now();
    struct mqdh_dump **got = must(calloc((size_t)nhosts, sizeof *got));
    for (int h = 0; h < nhosts; h++) {
        char err[256];
        if (mqdh_result_read(results[h], lens[h], &got[h], err, sizeof err) != MQDH_OK) {
            fprintf(stderr, "bench_analysis: host %d: %s\n", h, err);
            return 1;
        }
    }
    double t1 = now();
    int placed = mqdh_dump_merge(d, got, nhosts);
    double t2 = now();
    struct mqdh_analysis *a = NULL;
    if (mqdh_analyze(d, &a) != MQDH_OK)
        must(NULL);
    int rc = quiet_views(d, a);
    double t3 = now();
    int ok = placed == n && rc == 0 && a->ndeadlocks == 1 && a->deadlocks[0].nmembers == n &&
             t3 - t0 < 2.0;
    printf("merge  %7d ranks from %d hosts' agents (%.1f MB of results): read %.3f s, merge "
           "%.3f s, analysis and views %.3f s, total %.3f s (goal: under 2 s)%s\n",
           n, nhosts, (double)bytes / 1e6, t1 - t0, t2 - t1, t3 - t2, t3 - t0,
           ok ? "" : " (MISSED)");
    mqdh_analysis_free(a);
    for (int h = 0; h < nhosts; h++) {
        mqdh_dump_free(got[h]);
        free(results[h]);
    }
    free(got);
    free(results);
    free(lens);
    mqdh_dump_free(d);
    return !ok;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--merge") == 0)
        return bench_merge(argc > 2 ? atoi(argv[2]) : 10000, argc > 3 ? atoi(argv[3]) : 1000);
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    static const char *const names[] = {"ring", "pairs", "chain"};
    int failed = 0;
    if (n < 4) {
        fprintf(stderr, "usage: bench_analysis [PROCESSES >= 4]\n");
        return 64;
    }
    for (int s = RING; s <= CHAIN; s++) {
        struct mqdh_dump *d = make_dump((enum shape)s, n);
        struct mqdh_analysis *a = NULL;
        double t0 = now();
        if (mqdh_analyze(d, &a) != MQDH_OK)
            must(NULL);
        double t1 = now();
        int rc = quiet_views(d, a);
        double t2 = now();
        /* What each case must find: the ring one deadlock of n, the pairs
         * n/2, the chain none (every process is freed by the next). */
        int want = s == RING ? 1 : s == PAIRS ? n / 2 : 0;
        int ok = rc == 0 && a->ndeadlocks == want &&
                 (s != RING || a->deadlocks[0].nmembers == n);
        failed |= !ok;
        printf("%-6s %7d processes: %6d deadlock(s)%s; analysis %.3f s, folded views %.3f s, "
               "total %.3f s\n",
               names[s], n, a->ndeadlocks, ok ? "" : " (WRONG)", t1 - t0, t2 - t1, t2 - t0);
        mqdh_analysis_free(a);
        mqdh_dump_free(d);
    }
    return failed;
}
