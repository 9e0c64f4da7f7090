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

int main(int argc, char **argv)
{
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
        /* The folded views, written where nobody reads them. */
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
