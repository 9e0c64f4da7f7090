/* test_expect.c - the .expect parser accepts every sample's file and
 * rejects malformed ones with the file and line. */
#define _GNU_SOURCE
#include "expect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static const char *write_tmp(const char *text, char *path, size_t len)
{
    snprintf(path, len, "/tmp/mqd-test-expect.XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_expect__parses_fields(void **state)
{
    (void)state;
    char path[64], err[256];
    struct expect e;
    write_tmp("np 3  # three\n"
              "comm * MPI_COMM_SELF 1 0\n"
              "comm 2 - 4 2\n"
              "op 0 MPI_COMM_WORLD recv pending ANY ANY 5 8\n"
              "op 2 - unexpected complete 1 7 ANY 1048576\n"
              "op 1 MPI_COMM_WORLD recv pending 0 0 287 4 coll\n",
              path, sizeof path);
    assert_int_equal(expect_load(path, &e, err, sizeof err), 0);
    unlink(path);
    assert_int_equal(e.np, 3);
    assert_int_equal(e.ncomms, 2);
    assert_int_equal(e.comms[0].rank, EXPECT_ALL_RANKS);
    assert_string_equal(e.comms[1].name, "");
    assert_int_equal(e.comms[1].size, 4);
    assert_int_equal(e.nops, 3);
    assert_int_equal(e.ops[0].queue, EXPECT_RECV);
    assert_int_equal(e.ops[0].peer, EXPECT_ANY);
    assert_int_equal(e.ops[0].tag, 5);
    assert_int_equal(e.ops[1].queue, EXPECT_UNEXPECTED);
    assert_int_equal(e.ops[1].status, 2);
    assert_int_equal(e.ops[1].gpeer, 7);
    assert_int_equal(e.ops[1].tag, EXPECT_ANY);
    assert_int_equal(e.ops[1].bytes, 1048576);
    assert_false(e.ops[1].coll);
    assert_true(e.ops[2].coll);
    assert_int_equal(e.ops[2].tag, 287);
    expect_free(&e);
}

static void test_expect__spawned_worlds(void **state)
{
    (void)state;
    char path[64], err[256], who[32];
    struct expect e;
    write_tmp("np 2\nworld 1 3\n"
              "comm 1:2 MPI_COMM_WORLD 3 2\n"
              "op 1:2 x recv pending 1 1 5 8\n"
              "op 0 x send pending 0 1:0 5 8\n"
              "where 1:0 MPI_Recv\n"
              "deadlock cycle 1,1:0,1:2\n"
              "wait 1:2 1 recv\n",
              path, sizeof path);
    assert_int_equal(expect_load(path, &e, err, sizeof err), 0);
    unlink(path);
    assert_int_equal(e.nworlds, 2);
    assert_int_equal(expect_nprocs(&e), 5);
    assert_int_equal(expect_process(&e, 1), 1);
    assert_int_equal(expect_process(&e, 2), EXPECT_WORLD);
    assert_int_equal(expect_process(&e, 4), EXPECT_WORLD + 2);
    assert_int_equal(expect_process(&e, 5), -1);
    assert_int_equal(e.comms[0].rank, EXPECT_WORLD + 2);
    assert_int_equal(e.ops[0].rank, EXPECT_WORLD + 2);
    assert_int_equal(e.ops[1].gpeer, EXPECT_WORLD);
    assert_int_equal(e.wheres[0].rank, EXPECT_WORLD);
    assert_string_equal(e.deadlocks[0].ranks, "1,1:0,1:2");
    assert_int_equal(e.waits[0].from, EXPECT_WORLD + 2);
    assert_string_equal(expect_process_text(EXPECT_WORLD + 2, who, sizeof who), "1:2");
    assert_string_equal(expect_process_text(3, who, sizeof who), "3");
    expect_free(&e);
}

static void test_expect__rejects_malformed(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "np 2\nop 0 W recv pending 1 1 1\n",        /* a field short */
        "np 2\nop 0 W sideways pending 1 1 1 4\n",  /* unknown queue */
        "np 2\nop 0 W recv waiting 1 1 1 4\n",      /* unknown status */
        "np 2\nop 5 W recv pending 1 1 1 4\n",      /* rank beyond np */
        "np 2\nop 0 W recv pending 1 1 1 ANY\n",    /* bytes are never ANY */
        "np 2\nop 0 W recv pending 1 1 1 4 col\n",  /* a marker that is not coll */
        "comm * W 1 0\n",                           /* no np */
        "np 2\nnp\n",                               /* np without value */
        "np 2\nbogus 1\n",                          /* unknown keyword */
        "np 2\ncomm 0 W 4x 0\n",                    /* not a number */
        "np 2\nop 1:0 W recv pending 1 1 1 4\n",    /* a world with no world line */
        "np 2\nworld 1 2\nop 1:2 W recv pending 1 1 1 4\n", /* beyond that world */
        "np 2\nworld 0 2\n",                       /* world 0 is np's */
        "np 2\nwhere 0 MPI_Probe source\n",        /* an argument without value */
        "np 2\nwhere 0 MPI_Probe size=1\n",        /* not an argument mqd reads */
        "np 2\nwhere 0 MPI_Probe tag=x\n",         /* not a number */
        "np 2\nwhere 0 MPI_Probe =1\n",            /* no name */
        "np 2\nworld 2 2\n",                       /* world 1 missing */
        "np 2\ncomm 0:1 W 2 0\n",                  /* world 0 is written "R" */
        "np 2\ndeadlock cycle 1:0,1\n",            /* not ascending */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[64], err[256] = "";
        struct expect e;
        write_tmp(bad[i], path, sizeof path);
        if (expect_load(path, &e, err, sizeof err) != -1)
            fail_msg("case %zu was accepted", i);
        unlink(path);
        assert_non_null(strstr(err, path));
        assert_null(e.ops);
    }
}

static void test_expect__every_sample_file(void **state)
{
    (void)state;
    static const char *const names[] = {"ring", "unexpected", "wildcards", "comms", "intercomm"};
    const char *dir = getenv("MQD_SAMPLES_SRC");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[512], err[256];
        struct expect e;
        snprintf(path, sizeof path, "%s/%s.expect", dir && *dir ? dir : "samples", names[i]);
        if (expect_load(path, &e, err, sizeof err) != 0)
            fail_msg("%s", err);
        assert_true(e.np >= 2);
        assert_true(e.nops >= e.np); /* every sample leaves something in every rank */
        expect_free(&e);
    }
}

/* mixed.expect's rank in MPI_Finalize, on an MPICH whose MPI_Finalize
 * returns: past it, waiting for nobody, the deadlock an end of it and the
 * rank that waits on it, the others behind. */
static void test_expect__finalize_returns(void **state)
{
    (void)state;
    char path[64], err[256];
    struct expect e;
    write_tmp("np 4\n"
              "op 2 MPI_COMM_WORLD unexpected complete 1 1 4 4\n"
              "op 3 MPI_COMM_WORLD recv pending 0 0 5 4\n"
              "where 1 MPI_Ssend dest=2 tag=4\n"
              "where 2 MPI_Finalize\n"
              "deadlock cycle 0,1,2,3\n"
              "wait 0 1 recv\nwait 1 2 send\nwait 2 0 collective\nwait 2 3 collective\n"
              "wait 3 0 recv\n",
              path, sizeof path);
    assert_int_equal(expect_load(path, &e, err, sizeof err), 0);
    unlink(path);
    expect_finalize_returns(&e);
    assert_string_equal(e.wheres[0].call, "MPI_Ssend");
    assert_int_equal(e.wheres[0].finalized, 0);
    assert_string_equal(e.wheres[1].call, "");
    assert_int_equal(e.wheres[1].finalized, 1);
    assert_int_equal(e.ndeadlocks, 1);
    assert_int_equal(e.deadlocks[0].knot, EXPECT_END);
    assert_string_equal(e.deadlocks[0].ranks, "1,2");
    assert_string_equal(e.behind, "0,3");
    assert_int_equal(e.nwaits, 1);
    assert_int_equal(e.waits[0].from, 1);
    assert_int_equal(e.waits[0].to, 2);
    assert_int_equal(e.ops[0].status, EXPECT_NOT_RECORDED);
    assert_int_equal(e.ops[1].status, 0);
    expect_free(&e);
    /* Without a rank in MPI_Finalize nothing changes. */
    write_tmp("np 2\nwhere * MPI_Recv\ndeadlock cycle 0,1\nwait 0 1 recv\nwait 1 0 recv\n", path,
              sizeof path);
    assert_int_equal(expect_load(path, &e, err, sizeof err), 0);
    unlink(path);
    expect_finalize_returns(&e);
    assert_int_equal(e.deadlocks[0].knot, 0);
    assert_int_equal(e.nwaits, 2);
    assert_string_equal(e.behind, "");
    expect_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expect__parses_fields),
        cmocka_unit_test(test_expect__spawned_worlds),
        cmocka_unit_test(test_expect__rejects_malformed),
        cmocka_unit_test(test_expect__every_sample_file),
        cmocka_unit_test(test_expect__finalize_returns),
    };
    return cmocka_run_group_tests_name("expect", tests, NULL, NULL);
}
