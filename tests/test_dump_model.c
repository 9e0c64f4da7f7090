/*
 * test_dump_model.c - the dump model (host/base/dump.c) on dumps built by hand:
 * clearing and freeing, a process's first error, merging agents' results
 * (what is placed, what is marked, what is refused), the index by global
 * rank, and how processes and peers are named.  The analysis that uses it
 * is test_analyze.c's; the result format test_result.c's.
 */
#define _GNU_SOURCE
#include "mqdhost.h"
#include "host/base/dump.h" /* the model's internals */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* A dump of n processes: pids 100 + i on host `host` (NULL: none), ranks
 * and identities i, world 0, no communicators. */
static struct mqdh_dump *dump_of(int n, const char *host)
{
    struct mqdh_dump *d = calloc(1, sizeof *d);
    assert_non_null(d);
    d->version = MQDH_VERSION;
    d->nprocs = n;
    d->procs = calloc((size_t)(n ? n : 1), sizeof *d->procs);
    assert_non_null(d->procs);
    for (int i = 0; i < n; i++) {
        d->procs[i].pid = 100 + i;
        d->procs[i].rank = d->procs[i].identity = i;
        if (host)
            assert_non_null(d->procs[i].host = strdup(host));
    }
    return d;
}

/* A stack of one thread of one frame, named fn. */
static void one_frame(struct mqdh_stack *st, pid_t tid, const char *fn)
{
    st->nthreads = 1;
    st->threads = calloc(1, sizeof *st->threads);
    assert_non_null(st->threads);
    st->threads[0].tid = tid;
    st->threads[0].nframes = 1;
    st->threads[0].frames = calloc(1, sizeof *st->threads[0].frames);
    assert_non_null(st->threads[0].frames);
    assert_non_null(st->threads[0].frames[0].function = strdup(fn));
    assert_non_null(st->threads[0].call = strdup("MPI_Recv"));
}

static int all_zero(const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        if (c[i])
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- freeing */

/* Clearing frees everything a process and a stack own (the sanitizer
 * build checks nothing leaks) and leaves them zero; NULL is nothing. */
static void test_dump_model__clear_frees_and_zeroes(void **state)
{
    (void)state;
    struct mqdh_process p;
    memset(&p, 0, sizeof p);
    p.pid = 7;
    p.host = strdup("node");
    p.error = strdup("e");
    p.where_call = strdup("MPI_Recv");
    p.where_args_why = strdup("why");
    p.ncomms = 1;
    p.comms = calloc(1, sizeof *p.comms);
    assert_non_null(p.comms);
    p.comms[0].size = 2;
    p.comms[0].group = calloc(2, sizeof *p.comms[0].group);
    p.comms[0].group_error = strdup("g");
    p.comms[0].queues[MQDH_RECEIVES].nops = 1;
    p.comms[0].queues[MQDH_RECEIVES].ops = calloc(1, sizeof(struct mqdh_op));
    p.comms[0].queues[MQDH_SENDS].state = MQDH_QUEUE_ERROR;
    p.comms[0].queues[MQDH_SENDS].error = strdup("q");
    mqdh__process_clear(&p);
    assert_true(all_zero(&p, sizeof p));

    struct mqdh_stack st;
    memset(&st, 0, sizeof st);
    one_frame(&st, 7, "main");
    mqdh__stack_clear(&st);
    assert_true(all_zero(&st, sizeof st));
    mqdh__stack_clear(NULL);
    mqdh_dump_free(NULL);

    struct mqdh_dump *d = dump_of(2, "node");
    d->stacks = calloc(2, sizeof *d->stacks);
    assert_non_null(d->stacks);
    one_frame(&d->stacks[1], 101, "solve");
    assert_int_equal(mqdh_dump_index(d), MQDH_OK);
    mqdh_dump_free(d);
}

/* A process keeps its first error: the one that matters. */
static void test_dump_model__first_error_stays(void **state)
{
    (void)state;
    struct mqdh_process p;
    memset(&p, 0, sizeof p);
    mqdh__process_error(&p, "cannot attach to %d: %s", 42, "gone");
    assert_string_equal(p.error, "cannot attach to 42: gone");
    mqdh__process_error(&p, "a later failure");
    assert_string_equal(p.error, "cannot attach to 42: gone");
    mqdh__process_clear(&p);
}

/* ---------------------------------------------------------------- merging */

/* Each result's process goes to the place with its host and pid, marked;
 * the front end's rank, world, identity and host stay; a pid given twice
 * takes one place (the first); a process with no place and a NULL result
 * are dropped; every result is left empty, and into indexed again. */
static void test_dump_model__merge_marks_its_places(void **state)
{
    (void)state;
    struct mqdh_dump *into = dump_of(4, NULL);
    const char *hosts[4] = {"a", "b", "b", "c"};
    for (int i = 0; i < 4; i++) {
        into->procs[i].pid = 100 + i % 2;
        into->procs[i].rank = 10 + i;
        into->procs[i].identity = 20 + i;
        into->procs[i].world = i == 3;
        into->procs[i].host = strdup(hosts[i]);
        into->procs[i].error = strdup("no result");
    }
    /* host b: pids 100 (place 2), 101 (place 1), 100 again, 555 (none) */
    struct mqdh_dump *b = dump_of(4, "b");
    b->procs[1].pid = 101;
    b->procs[2].pid = 100;
    b->procs[3].pid = 555;
    for (int i = 0; i < 4; i++) {
        b->procs[i].rank = b->procs[i].world = b->procs[i].identity = 99;
        char call[32];
        snprintf(call, sizeof call, "call %d", i);
        b->procs[i].where_call = strdup(call);
    }
    b->stacks = calloc(4, sizeof *b->stacks);
    assert_non_null(b->stacks);
    one_frame(&b->stacks[0], 100, "from b");
    struct mqdh_dump *c = dump_of(1, "c");
    c->procs[0].pid = 101;
    struct mqdh_dump *list[3] = {b, NULL, c};
    unsigned char placed[4] = {0};

    assert_int_equal(mqdh__dump_merge_marked(into, list, 3, placed), 3);
    assert_memory_equal(placed, ((unsigned char[]){0, 1, 1, 1}), 4);
    assert_string_equal(into->procs[0].error, "no result");
    assert_null(into->procs[1].error);
    assert_string_equal(into->procs[2].where_call, "call 0"); /* the first pid 100 */
    assert_string_equal(into->procs[1].where_call, "call 1");
    for (int i = 1; i < 4; i++) { /* what the front end knew stays */
        assert_int_equal(into->procs[i].rank, 10 + i);
        assert_int_equal(into->procs[i].identity, 20 + i);
        assert_int_equal(into->procs[i].world, i == 3);
        assert_string_equal(into->procs[i].host, hosts[i]);
    }
    assert_non_null(into->stacks);
    assert_int_equal(into->stacks[2].nthreads, 1);
    assert_string_equal(into->stacks[2].threads[0].frames[0].function, "from b");
    assert_int_equal(into->stacks[1].nthreads, 0);
    for (int k = 0; k < 3; k += 2) {
        assert_int_equal(list[k]->nprocs, 0);
        assert_null(list[k]->procs);
        assert_null(list[k]->stacks);
    }
    assert_non_null(into->index);
    assert_int_equal(mqdh_process_by_global(into, 22), 2);
    mqdh_dump_free(b);
    mqdh_dump_free(c);
    mqdh_dump_free(into);
}

/* A merge with nothing to place is a count of 0; bad arguments are
 * refused as a negated code. */
static void test_dump_model__merge_counts_and_refusals(void **state)
{
    (void)state;
    struct mqdh_dump *into = dump_of(2, "a");
    struct mqdh_dump *other = dump_of(2, "z");
    struct mqdh_dump *list[1] = {other};
    assert_int_equal(mqdh_dump_merge(into, NULL, 0), 0);
    assert_int_equal(mqdh_dump_merge(into, list, 1), 0); /* another host's pids */
    assert_int_equal(other->nprocs, 0);
    assert_int_equal(mqdh_dump_merge(NULL, list, 1), -MQDH_E_USAGE);
    assert_int_equal(mqdh_dump_merge(into, list, -1), -MQDH_E_USAGE);
    assert_int_equal(mqdh_dump_merge(into, NULL, 1), -MQDH_E_USAGE);
    assert_int_equal(mqdh_dump_index(NULL), MQDH_E_USAGE);
    mqdh_dump_free(other);
    mqdh_dump_free(into);
}

/* ---------------------------------------------------------------- index */

/* Look-ups by global rank and world sizes are the same with the index as
 * by a scan: identities first, ranks for an MPI-1 DLL (ambiguous across
 * worlds), unknown worlds counted with world 0. */
static void test_dump_model__index_as_a_scan(void **state)
{
    (void)state;
    struct mqdh_dump *d = dump_of(5, NULL);
    /* world 0: ranks 0, 1; world 2: ranks 0, 1 (no identities); rank 5 of
     * no known world */
    const int world[5] = {0, 0, 2, 2, -1}, rank[5] = {0, 1, 0, 1, 5};
    for (int i = 0; i < 5; i++) {
        d->procs[i].world = world[i];
        d->procs[i].rank = rank[i];
        d->procs[i].identity = -1;
    }
    const struct {
        long g;
        int proc;
    } find[] = {{0, -1}, {1, -1}, {5, 4}, {2, -1}, {-1, -1}, {7, -1}};
    const int sizes[4] = {3, 0, 2, 0}; /* worlds 0 (with the unknown), 1, 2, 3 */
    for (int pass = 0; pass < 2; pass++) { /* a scan, then the index */
        for (size_t k = 0; k < sizeof find / sizeof find[0]; k++)
            assert_int_equal(mqdh_process_by_global(d, find[k].g), find[k].proc);
        for (int w = 0; w < 4; w++)
            assert_int_equal(mqdh_world_size(d, w), sizes[w]);
        assert_int_equal(mqdh_world_size(d, -1), 3);
        assert_int_equal(mqdh_dump_index(d), MQDH_OK);
    }
    /* MPI-2 identities make every process unique. */
    for (int i = 0; i < 5; i++)
        d->procs[i].identity = 50 + i;
    assert_int_equal(mqdh_dump_index(d), MQDH_OK);
    for (int pass = 0; pass < 2; pass++) { /* the index, then a scan */
        for (int i = 0; i < 5; i++)
            assert_int_equal(mqdh_process_by_global(d, 50 + i), i);
        assert_int_equal(mqdh__process_global(&d->procs[4]), 54);
        mqdh__index_free(d->index);
        d->index = NULL; /* then a scan again */
    }
    assert_int_equal(mqdh_process_by_global(NULL, 0), -1);
    assert_int_equal(mqdh_world_size(NULL, 0), 0);
    mqdh_dump_free(d);
}

/* ---------------------------------------------------------------- naming */

/* Processes, relative peers and peers as an operation names them. */
static void test_dump_model__names(void **state)
{
    (void)state;
    char buf[64];
    struct mqdh_dump *d = dump_of(6, NULL);
    /* world 0: ranks 0..3; world 1: rank 0 (identity 4); pid 105: no rank */
    d->procs[4].world = 1;
    d->procs[4].rank = 0;
    d->procs[5].rank = d->procs[5].identity = -1;
    d->procs[5].world = -1;
    assert_int_equal(mqdh_dump_index(d), MQDH_OK);
    const struct {
        int proc;
        const char *label;
    } labels[] = {{0, "rank 0"}, {4, "world 1 rank 0"}, {5, "pid 105"}};
    for (size_t k = 0; k < sizeof labels / sizeof labels[0]; k++) {
        mqdh_process_label(&d->procs[labels[k].proc], buf, sizeof buf);
        assert_string_equal(buf, labels[k].label);
    }
    const struct {
        int self;
        long local, global;
        int relative;
        const char *text;
    } peers[] = {
        {0, -1, -1, 0, "ANY"},
        {0, 3, 3, 0, "3"},
        {0, 3, 3, 1, "rank-2"},       /* world 0 has 5 (the unknown counts) */
        {1, 0, 0, 1, "rank-1"},
        {1, 1, 1, 1, "rank"},
        {0, 0, 4, 0, "0 (world 1 rank 0)"},
        {0, 0, 4, 1, "0 (world 1 rank 0)"}, /* another world: never relative */
        {0, 1, 2, 0, "1 (rank 2)"},   /* a communicator's rank 1 is world rank 2 */
        {0, 1, 9, 0, "1 (global 9)"}, /* not in the dump */
        {0, 2, -1, 0, "2"},           /* no global rank */
    };
    for (size_t k = 0; k < sizeof peers / sizeof peers[0]; k++) {
        mqdh_peer_text(d, peers[k].self, peers[k].local, peers[k].global, peers[k].relative, buf,
                       sizeof buf);
        if (strcmp(buf, peers[k].text) != 0)
            fail_msg("peer %zu: \"%s\", not \"%s\"", k, buf, peers[k].text);
    }
    const struct {
        long g;
        int self, n, relative;
        const char *text;
    } rel[] = {{63, 0, 64, 1, "rank-1"}, {32, 0, 64, 1, "rank+32"}, {33, 0, 64, 1, "rank-31"},
               {5, 5, 64, 1, "rank"},    {5, 1, 64, 0, "rank 5"},   {70, 0, 64, 1, "rank 70"},
               {5, -1, 64, 1, "rank 5"}};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++) {
        mqdh__peer_label(rel[k].g, rel[k].self, rel[k].n, rel[k].relative, buf, sizeof buf);
        if (strcmp(buf, rel[k].text) != 0)
            fail_msg("label %zu: \"%s\", not \"%s\"", k, buf, rel[k].text);
    }
    mqdh_dump_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dump_model__clear_frees_and_zeroes),
        cmocka_unit_test(test_dump_model__first_error_stays),
        cmocka_unit_test(test_dump_model__merge_marks_its_places),
        cmocka_unit_test(test_dump_model__merge_counts_and_refusals),
        cmocka_unit_test(test_dump_model__index_as_a_scan),
        cmocka_unit_test(test_dump_model__names),
    };
    return cmocka_run_group_tests_name("dump_model", tests, NULL, NULL);
}
