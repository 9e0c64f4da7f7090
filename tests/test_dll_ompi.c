/*
 * test_dll_ompi.c - libmqd_ompi.so against synthetic Open MPI targets
 * (tests/synth_ompi.c: pml ob1's structures with their fields in another
 * order than Open MPI's), both byte orders and pointer widths: the
 * communicators (MPI_COMM_NULL and an intercommunicator's local
 * communicator hidden, names, handles, groups of procs and of
 * sentinels), posted receives specific and wild in ob1's matching order,
 * probes left out, unexpected fragments of each kind with their lengths
 * and statuses, sends from the request free list with their status,
 * collective traffic marked and each nonblocking collective's instance,
 * global ranks and MPI-2 identities, another PML refused once with why,
 * corrupt memory (cycles, wild pointers, huge counts), no DWARF and no
 * known build, and mqs_malloc failing at each call in turn with nothing
 * leaked.
 */
#define _GNU_SOURCE
#include "tests/dlldump.h"
#include "tests/synth_ompi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static int setup(void **state)
{
    (void)state;
    return dlldump_load("libmqd_ompi.so");
}

/* Every (byte order, pointer width) a test runs on. */
static const int targets[][2] = {{0, 8}, {1, 8}, {0, 4}, {1, 4}};
#define EACH_TARGET(be, ps)                                                                   \
    for (int t_ = 0, be = 0, ps = 0;                                                          \
         t_ < 4 && (be = targets[t_][0], ps = targets[t_][1],                                 \
                    print_message("%d-byte pointers, %s-endian\n", ps, be ? "big" : "little"), \
                    1);                                                                       \
         t_++)

/* ---------------------------------------------------------------- a job */

/* Rank 1 of 4 with every kind of communicator and queue entry. */
static struct synth *build_rank(int be, int ps)
{
    static const int world[] = {0, 1, 2, 3}, odd[] = {1, 3}, mine[] = {0, 1},
                     others[] = {2, 3};
    struct synth *s = synth_ompi_new(be, ps, "ob1", 1, 4);
    uint64_t dint = synth_ompi_datatype(s, "MPI_INT", 4);
    uint64_t ddouble = synth_ompi_datatype(s, "MPI_DOUBLE", 8);
    uint64_t dvec = synth_ompi_datatype(s, "", 24);
    uint64_t w = synth_ompi_comm_of(s, 0);
    uint64_t dup = synth_ompi_comm(s, 3, "mqd-dup", 1, 4, world);
    uint64_t half = synth_ompi_comm(s, 4, NULL, 0, 2, odd);
    uint64_t inter = synth_ompi_intercomm(s, 6, 5, "mqd-inter", 1, 2, mine, 2, others);
    /* MPI_COMM_WORLD: a wild receive posted between two specific ones. */
    synth_ompi_recv(s, w, 2, 5, 2, dint, 7, 0);
    synth_ompi_recv(s, w, -1, 5, 1, dint, 8, 0);
    synth_ompi_recv(s, w, 3, -1, 3, ddouble, 9, 0);
    synth_ompi_recv(s, w, 0, 7, 1, dint, 10, 1); /* an MPI_Probe's */
    synth_ompi_recv(s, w, 0, -16, 0, dint, 11, 0);  /* a barrier's */
    synth_ompi_recv(s, w, 3, -28, 1, dint, 12, 0);  /* libnbc's 2nd */
    synth_ompi_recv(s, dup, 2, 4, 2, dvec, 1, 0);
    synth_ompi_recv(s, half, 1, 3, 2, ddouble, 1, 0);
    synth_ompi_recv(s, inter, 1, 8, 2, dint, 1, 0); /* remote 1: world 3 */
    synth_ompi_recv(s, synth_ompi_comm_of(s, 5), 0, -16, 0, dint, 1, 0); /* inter's local */
    synth_ompi_frag(s, w, 2, 11, 0x41, 16, 0, 1);       /* eager: data here */
    synth_ompi_frag(s, w, 3, 12, 0x42, 4000, 1048576, 1); /* rendezvous */
    synth_ompi_frag(s, w, 0, 3, 0x42, 4, 4, 1);         /* a synchronous send's */
    synth_ompi_frag(s, w, 0, 13, 0x43, 0, 65536, 2);    /* RGET: envelope only */
    synth_ompi_frag(s, w, 2, -27, 0x41, 4, 0, 2);       /* libnbc's 1st */
    const struct synth_ompi_send sends[] = {
        {.comm = w, .peer = 0, .tag = 12, .count = 131072, .datatype = ddouble,
         .bytes = 1048576, .mode = 4, .state = 2, .complete = 0x7ff0, .seq = 3},
        {.comm = w, .peer = 0, .tag = 9, .count = 1, .datatype = dint, .bytes = 4, .mode = 4,
         .state = 2, .complete = 1, .seq = 4}, /* complete: not pending */
        {.comm = inter, .peer = 0, .tag = 9, .count = 1, .datatype = dint, .bytes = 4,
         .mode = 0, .state = 2, .seq = 1},
        {.comm = w, .peer = 2, .tag = 2, .count = 1, .datatype = dint, .bytes = 4, .mode = 4,
         .state = 1, .seq = 5}, /* inactive persistent */
        {.comm = w, .peer = 3, .tag = 6, .count = 4, .datatype = dint, .bytes = 16, .mode = 4,
         .state = 2, .persistent = 1, .seq = 2, .element = 9}, /* in the second chunk */
        {.comm = w, .peer = 2, .tag = -10, .count = 1, .datatype = dint, .bytes = 4,
         .mode = 4, .state = 2, .seq = 6}, /* an allgather's */
    };
    for (size_t i = 0; i < sizeof sends / sizeof sends[0]; i++)
        synth_ompi_send(s, &sends[i]);
    return s;
}

/* op's envelope: peer, tag (-1 with tag_wild for any), length, status. */
static void assert_op(const mqs_pending_operation *op, long peer, long gpeer, long tag,
                      long length, int status)
{
    assert_int_equal(op->desired_local_rank, peer);
    assert_int_equal(op->desired_global_rank, gpeer);
    if (tag == -1)
        assert_true(op->tag_wild);
    else
        assert_int_equal(op->desired_tag, tag);
    assert_int_equal(op->desired_length, length);
    assert_int_equal(op->status, status);
}

static void test_dll_ompi__every_queue_of_a_rank(void **state)
{
    (void)state;
    EACH_TARGET(be, ps) {
        struct synth *s = build_rank(be, ps);
        struct result r;
        dlldump_process(s, &r, 0);
        if (r.rc != mqs_ok)
            fail_msg("%d-byte %s-endian: rc %d (%s)", ps, be ? "big" : "little", r.rc,
                     r.why ? r.why : dlldump_dll->dll_error_string(r.rc));
        /* The user's five, oldest first: no MPI_COMM_NULL, no local comm. */
        assert_int_equal(r.ncomms, 5);
        assert_string_equal(r.comms[0].c.name, "MPI_COMM_WORLD");
        assert_string_equal(r.comms[1].c.name, "MPI_COMM_SELF");
        assert_string_equal(r.comms[2].c.name, "mqd-dup");
        assert_string_equal(r.comms[3].c.name, "unnamed communicator, context 0x4");
        assert_string_equal(r.comms[4].c.name, "mqd-inter");
        const struct rcomm *w = &r.comms[0];
        assert_int_equal(w->c.size, 4);
        assert_int_equal(w->c.local_rank, 1);
        /* Receives in ob1's order (req_sequence), the probe left out. */
        if (w->qrc[1] != mqs_ok)
            fail_msg("receives: %s", dlldump_dll->dll_error_string(w->qrc[1]));
        assert_int_equal(w->nops[mqs_pending_receives], 5);
        assert_op(&w->ops[1][0], 2, 2, 5, 8, mqs_st_pending);
        assert_op(&w->ops[1][1], -1, -1, 5, 4, mqs_st_pending);
        assert_op(&w->ops[1][2], 3, 3, -1, 24, mqs_st_pending);
        assert_string_equal(w->ops[1][2].extra_text[0], "receive: 3 x MPI_DOUBLE");
        assert_int_equal(w->flags[1][2] & MQD_OP_COLLECTIVE, 0);
        /* A barrier's (its fixed tag -16 as 16), then libnbc's 2nd
         * nonblocking collective's (-28 as MQD_NBC_FIRST_TAG + 1). */
        assert_op(&w->ops[1][3], 0, 0, 16, 0, mqs_st_pending);
        assert_true(w->flags[1][3] & MQD_OP_COLLECTIVE);
        assert_op(&w->ops[1][4], 3, 3, MQD_NBC_FIRST_TAG + 1, 4, mqs_st_pending);
        assert_true(w->flags[1][4] & MQD_OP_COLLECTIVE);
        assert_non_null(strstr(w->ops[1][4].extra_text[2], "-28"));
        dlldump_release(s);
        synth_free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dll_ompi__every_queue_of_a_rank),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
