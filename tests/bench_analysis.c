/*
 * bench_analysis.c - how the analysis and the folded views scale: synthetic
 * dumps of N processes (default 100,000; argv[1]), analysed and written
 * folded as mqdump writes them (its own views, mqdump/text.c, linked in),
 * the output thrown away, and the folded --graph of each (DOT, then SVG
 * rendered by Graphviz dot, in a directory of its own made and removed).
 * Run by `make bench`; prints one line per case: the case, what the
 * analysis found, the seconds each step took and the graph's nodes.
 *
 * Cases: a ring (one cycle of N: recursion N deep would overflow), pairs
 * (N/2 deadlocks), and a chain whose last process computes (each process
 * freed only after the next: a pass over all until nothing changes is
 * N passes).
 */
#define _GNU_SOURCE
#include "mqdump/common.h"
#include "mqdump/mqdump.h"
#include "tests/handdump.h"

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
    struct mqdh_dump *d = handdump_job(n);
    for (int r = 0; r < n; r++) {
        long from = peer(s, r, n);
        if (from < -1)
            handdump_computing(d, r);
        else
            handdump_recv(d, r, from, 7);
    }
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

/* How many nodes the DOT file at path has ("  pN [label=" lines); -1 if
 * it cannot be read. */
static int dot_nodes(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        int id, at = 0;
        n += sscanf(line, "  p%d [label=%n", &id, &at) == 1 && at > 0;
    }
    fclose(f);
    return n;
}

/*
 * The folded --graph of d and a, timed from the fold: to DOT (*dot_s), and
 * to SVG rendered from its DOT by Graphviz dot (*svg_s).  Its nodes, or -1
 * if a graph could not be written (said).
 */
static int folded_graph(const struct mqdh_dump *d, const struct mqdh_analysis *a,
                        double *dot_s, double *svg_s)
{
    char dir[] = "/tmp/mqd-bench-graph-XXXXXX", dot[64], svg[64], svgdot[72], err[512];
    if (!mkdtemp(dir))
        must(NULL);
    snprintf(dot, sizeof dot, "%s/g.dot", dir);
    snprintf(svg, sizeof svg, "%s/g.svg", dir);
    snprintf(svgdot, sizeof svgdot, "%s.dot", svg);
    struct fold fold = {0};
    int nodes = -1;
    double t0 = now();
    if (text_fold(d, &fold) != 0)
        must(NULL);
    double t1 = now();
    if (graph_write(dot, d, a, &fold, err, sizeof err) != 0)
        goto out;
    double t2 = now();
    if (graph_write(svg, d, a, &fold, err, sizeof err) != 0)
        goto out;
    *dot_s = t2 - t0;
    *svg_s = now() - t2 + (t1 - t0);
    nodes = dot_nodes(dot);
out:
    if (nodes < 0)
        fprintf(stderr, "bench_analysis: --graph: %s\n", err);
    fold_free(&fold);
    unlink(dot);
    unlink(svg);
    unlink(svgdot);
    rmdir(dir);
    return nodes;
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
        double t2 = now(), dot_s = 0, svg_s = 0;
        int nodes = folded_graph(d, a, &dot_s, &svg_s);
        /* What each case must find: the ring one deadlock of n, the pairs
         * n/2, the chain none (every process is freed by the next); its
         * folded graph a handful of nodes (ring 1, pairs 2, chain 2). */
        int want = s == RING ? 1 : s == PAIRS ? n / 2 : 0;
        int ok = rc == 0 && a->ndeadlocks == want &&
                 (s != RING || a->deadlocks[0].nmembers == n) && nodes > 0 && nodes <= 10;
        failed |= !ok;
        printf("%-6s %7d processes: %6d deadlock(s)%s; analysis %.3f s, folded views %.3f s, "
               "total %.3f s; folded graph: %d node(s), DOT %.3f s, SVG (dot) %.3f s\n",
               names[s], n, a->ndeadlocks, ok ? "" : " (WRONG)", t1 - t0, t2 - t1, t2 - t0,
               nodes, dot_s, svg_s);
        mqdh_analysis_free(a);
        mqdh_dump_free(d);
    }
    return failed;
}
