/*
 * test_graph.c - mqdump's --graph (mqdump/graph.c, its own source linked
 * in) on dumps built by hand, folded as the text view folds them
 * (text_fold): a ring of 1,024 is one node with its cycle, a ring with a
 * rank behind it keeps the ranks that differ apart, processes in the same
 * state but with another part in a deadlock are apart, pairs are two
 * nodes, and --full (no fold) is one node per process.  The real jobs are
 * in test_mqdump.c and make demo.
 */
#define _GNU_SOURCE
#include "mqdump/common.h"
#include "mqdump/mqdump.h"
#include "tests/handdump.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* A job of n ranks, the first size of them in a ring, each receiving from
 * its left neighbour with tag 7; the rest with nothing queued yet. */
static struct mqdh_dump *ring(int n, int size)
{
    struct mqdh_dump *d = handdump_job(n);
    for (int r = 0; r < size; r++)
        handdump_recv(d, r, (r + size - 1) % size, 7);
    return d;
}

/* The DOT of d's graph, folded as the text view folds (or, full, one node
 * per process); malloc'd.  Rendered by Graphviz dot too when render. */
static char *graph_of(const struct mqdh_dump *d, int full, int render)
{
    struct mqdh_analysis *a = NULL;
    assert_int_equal(mqdh_analyze(d, &a), MQDH_OK);
    struct fold fold = {0};
    if (!full)
        assert_int_equal(text_fold(d, &fold), 0);
    char dir[] = "/tmp/mqd-test-graph-XXXXXX", path[64], dotpath[80], err[512];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/g.%s", dir, render ? "svg" : "dot");
    snprintf(dotpath, sizeof dotpath, "%s%s", path, render ? ".dot" : "");
    if (graph_write(path, d, a, full ? NULL : &fold, err, sizeof err) != 0)
        fail_msg("graph_write: %s", err);
    fold_free(&fold);
    mqdh_analysis_free(a);
    FILE *f = fopen(dotpath, "r");
    assert_non_null(f);
    char *dot = NULL;
    size_t len = 0;
    assert_true(getdelim(&dot, &len, '\0', f) > 0);
    fclose(f);
    if (render) {
        FILE *svg = fopen(path, "r");
        char head[256] = "";
        assert_non_null(svg);
        size_t got = fread(head, 1, sizeof head - 1, svg);
        fclose(svg);
        head[got] = '\0';
        if (!strstr(head, "<svg") && !strstr(head, "<?xml"))
            fail_msg("dot rendered no SVG: %s", head);
        unlink(path);
    }
    unlink(dotpath);
    rmdir(dir);
    return dot;
}

/* How many lines of dot start with prefix and contain what (NULL: any). */
static int lines(const char *dot, const char *prefix, const char *what)
{
    int n = 0;
    for (const char *l = dot; l && *l;) {
        const char *end = strchr(l, '\n');
        size_t len = end ? (size_t)(end - l) : strlen(l);
        char *line = strndup(l, len);
        assert_non_null(line);
        n += strncmp(line, prefix, strlen(prefix)) == 0 && (!what || strstr(line, what));
        free(line);
        l = end ? end + 1 : NULL;
    }
    return n;
}

/* The nodes: "  pN [label=" lines. */
static int nodes(const char *dot)
{
    int n = 0;
    for (const char *l = strstr(dot, "\n  p"); l; l = strstr(l + 1, "\n  p")) {
        const char *c = l + 4;
        while (*c >= '0' && *c <= '9')
            c++;
        n += strncmp(c, " [label=", 8) == 0;
    }
    return n;
}

/*
 * A ring of 1,024, each rank receiving from its left neighbour: one node,
 * "ranks [0-1023]", and one red loop on it that names the cycle and its
 * 1,024 members, each waiting for its left neighbour; dot renders it.
 */
static void test_graph__ring_of_1024_is_one_node(void **state)
{
    (void)state;
    enum { N = 1024 };
    struct mqdh_dump *d = ring(N, N);
    char *dot = graph_of(d, 0, 1);
    if (nodes(dot) > 10 || nodes(dot) != 1)
        fail_msg("%d nodes, not one:\n%.4000s", nodes(dot), dot);
    assert_int_equal(lines(dot, "  p0 [label=\"ranks [0-1023]\\n1024 processes\\nMPI_Recv", NULL),
                     1);
    assert_int_equal(lines(dot, "  p0 -> p0 [color=red", "cycle of 1024 processes"), 1);
    assert_int_equal(lines(dot, "  p0 -> p0 [color=red", "waits: recv tag 7 from rank-1\\nx1024"),
                     1);
    assert_int_equal(lines(dot, "  p0 -> p0 [style=dashed", "recv tag 7 from rank-1"), 1);
    assert_int_equal(lines(dot, "  p", "->"), 2);
    assert_non_null(strstr(dot, "message queues of 1024 processes (those in the same state "
                                "folded: 1 node): 1 deadlock"));
    free(dot);
    mqdh_dump_free(d);
}

/*
 * A ring of 16 in a job of 17, rank 16 receiving from rank 0, behind the
 * cycle.  Relative to each rank, rank 0 waits for rank-2 (rank 15, modulo
 * 17), not rank-1: ranks [1-15] are one node, rank 0 and rank 16 one each.
 * The red edges keep their meaning: [1-15] waits on itself (ranks 2-15) and
 * on rank 0 (rank 1), rank 0 on [1-15]; rank 16's wait is orange.
 */
static void test_graph__ring_with_one_behind(void **state)
{
    (void)state;
    struct mqdh_dump *d = ring(17, 16);
    handdump_recv(d, 16, 0, 9);
    char *dot = graph_of(d, 0, 1);
    if (nodes(dot) != 3)
        fail_msg("%d nodes, not three:\n%s", nodes(dot), dot);
    assert_int_equal(lines(dot, "  p1 [label=\"ranks [1-15]\\n15 processes", NULL), 1);
    assert_int_equal(lines(dot, "  p0 [label=\"rank 0\\npid 1000\\n", NULL), 1);
    assert_int_equal(lines(dot, "  p16 [label=\"rank 16\\npid 1016\\n", "#f8d49a"), 1);
    assert_int_equal(lines(dot, "  p1 -> p1 [color=red", "cycle of 16 processes"), 1);
    assert_int_equal(lines(dot, "  p1 -> p1 [color=red", "from rank-1\\nx14: ranks [2-15]\""),
                     1);
    assert_int_equal(lines(dot, "  p1 -> p0 [color=red", "from rank-1\\n(rank 1)\""), 1);
    assert_int_equal(lines(dot, "  p0 -> p1 [color=red", "waits: recv tag 7 from 15\""), 1);
    assert_int_equal(lines(dot, "  p", "[color=red"), 3);
    assert_int_equal(lines(dot, "  p16 -> p0 [color=darkorange", "waits: recv tag 9\""), 1);
    free(dot);
    mqdh_dump_free(d);
}

/*
 * Ranks 0 and 2 in MPI_Barrier, their states the same (the text view folds
 * them), rank 1 in MPI_Recv from rank 0: rank 0 is in the cycle and rank 2
 * behind it, so the graph keeps them apart.
 */
static void test_graph__same_state_other_part_apart(void **state)
{
    (void)state;
    struct mqdh_dump *d = handdump_job(3);
    handdump_recv(d, 1, 0, 5);
    for (int r = 0; r < 3; r += 2) {
        free(d->procs[r].where_call);
        d->procs[r].where_call = strdup("MPI_Barrier");
        struct mqdh_op *o = handdump_recv(d, r, 1, 1);
        strcpy(o->extra_text[0], "part of a collective operation");
        o->collective = 1;
    }
    struct fold fold = {0};
    assert_int_equal(text_fold(d, &fold), 0);
    assert_int_equal(fold.group[2], 0); /* the text view: one group */
    fold_free(&fold);
    char *dot = graph_of(d, 0, 0);
    if (nodes(dot) != 3)
        fail_msg("%d nodes, not three:\n%s", nodes(dot), dot);
    assert_int_equal(lines(dot, "  p0 -> p1 [color=red", "waits: MPI_Barrier not entered"), 1);
    assert_int_equal(lines(dot, "  p1 -> p0 [color=red", "waits: recv tag 5"), 1);
    assert_int_equal(lines(dot, "  p2 -> p1 [color=darkorange", "MPI_Barrier not entered"), 1);
    free(dot);
    mqdh_dump_free(d);
}

/*
 * 512 pairs, each rank receiving from the other of its pair: the even
 * ranks one node, the odd ones another, and between them the 512 cycles
 * of 2 as one red edge each way.
 */
static void test_graph__pairs_are_two_nodes(void **state)
{
    (void)state;
    enum { N = 1024 };
    struct mqdh_dump *d = handdump_job(N);
    for (int r = 0; r < N; r++)
        handdump_recv(d, r, r ^ 1, 3);
    char *dot = graph_of(d, 0, 0);
    if (nodes(dot) != 2)
        fail_msg("%d nodes, not two:\n%.4000s", nodes(dot), dot);
    assert_int_equal(lines(dot, "  p0 [label=\"ranks [0,2,4,", "512 processes"), 1);
    assert_int_equal(lines(dot, "  p0 -> p1 [color=red", "512 deadlocks, each a cycle of 2 "
                                                         "processes\\nwaits: recv tag 3 from "
                                                         "rank+1\\nx512\""),
                     1);
    assert_int_equal(lines(dot, "  p1 -> p0 [color=red", "from rank-1\\nx512\""), 1);
    assert_int_equal(lines(dot, "  p", "[color=red"), 2);
    free(dot);
    mqdh_dump_free(d);
}

/* --full: the ring of 1,024 as one node per process, each wait its own. */
static void test_graph__full_is_one_node_per_process(void **state)
{
    (void)state;
    enum { N = 1024 };
    struct mqdh_dump *d = ring(N, N);
    char *dot = graph_of(d, 1, 0);
    assert_int_equal(nodes(dot), N);
    assert_int_equal(lines(dot, "  p", "[color=red"), N);
    assert_int_equal(lines(dot, "  p5 -> p4 [color=red", "\"waits: recv tag 7\""), 1);
    assert_int_equal(lines(dot, "  p", "processes\\n"), 0);
    free(dot);
    mqdh_dump_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph__ring_of_1024_is_one_node),
        cmocka_unit_test(test_graph__ring_with_one_behind),
        cmocka_unit_test(test_graph__same_state_other_part_apart),
        cmocka_unit_test(test_graph__pairs_are_two_nodes),
        cmocka_unit_test(test_graph__full_is_one_node_per_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
