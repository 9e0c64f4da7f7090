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

/* How many known layouts the DLL has (ompi_defs/layouts.h), counted. */
#define OMPI_LAYOUT_BEGIN(v, b, ps, be, nf, ns) +1
#define OMPI_LAYOUT_FIELD(id, o)
#define OMPI_LAYOUT_SIZES
#define OMPI_LAYOUT_SIZE(id, sz)
#define OMPI_LAYOUT_END
static const int known_layouts = 0
#include "ompi_defs/layouts.h"
    ;
#undef OMPI_LAYOUT_BEGIN
#undef OMPI_LAYOUT_FIELD
#undef OMPI_LAYOUT_SIZES
#undef OMPI_LAYOUT_SIZE
#undef OMPI_LAYOUT_END

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

/* The unexpected fragment from peer with tag of c (the test fails if none). */
static const mqs_pending_operation *unexpected(const struct rcomm *c, long peer, long tag)
{
    for (int i = 0; i < c->nops[mqs_unexpected_messages]; i++) {
        const mqs_pending_operation *o = &c->ops[mqs_unexpected_messages][i];
        if (o->actual_local_rank == peer && o->actual_tag == tag)
            return o;
    }
    fail_msg("no unexpected message from %ld with tag %ld", peer, tag);
    return NULL;
}

/* MPI_COMM_WORLD of build_rank's rank: receives in ob1's order, the
 * probe left out, collective traffic marked; unexpected fragments by
 * sender; the sends in progress only. */
static void check_world(const struct rcomm *w)
{
    assert_int_equal(w->c.size, 4);
    assert_int_equal(w->c.local_rank, 1);
    if (w->qrc[1] != mqs_ok)
        fail_msg("receives: %s", dlldump_dll->dll_error_string(w->qrc[1]));
    assert_int_equal(w->nops[mqs_pending_receives], 5);
    assert_op(&w->ops[1][0], 2, 2, 5, 8, mqs_st_pending);
    assert_op(&w->ops[1][1], -1, -1, 5, 4, mqs_st_pending);
    assert_op(&w->ops[1][2], 3, 3, -1, 24, mqs_st_pending);
    assert_string_equal(w->ops[1][2].extra_text[0], "receive: 3 x MPI_DOUBLE");
    assert_int_equal(w->flags[1][2] & MQD_OP_COLLECTIVE, 0);
    assert_true(w->flags[1][2] & MQD_OP_TEXT_ADDRESS(1));
    assert_true(w->request[1][2] != 0);
    /* A barrier's (its fixed tag -16 as 16), then libnbc's 2nd
     * nonblocking collective's (-28 as MQD_NBC_FIRST_TAG + 1). */
    assert_op(&w->ops[1][3], 0, 0, 16, 0, mqs_st_pending);
    assert_true(w->flags[1][3] & MQD_OP_COLLECTIVE);
    assert_op(&w->ops[1][4], 3, 3, MQD_NBC_FIRST_TAG + 1, 4, mqs_st_pending);
    assert_true(w->flags[1][4] & MQD_OP_COLLECTIVE);
    assert_non_null(strstr(w->ops[1][4].extra_text[2], "-28"));
    /* Unexpected: eager and synchronous complete, rendezvous and RGET the
     * envelope only, libnbc's 1st as its instance. */
    assert_int_equal(w->nops[mqs_unexpected_messages], 5);
    const mqs_pending_operation *o = unexpected(w, 2, 11);
    assert_int_equal(o->status, mqs_st_complete);
    assert_int_equal(o->actual_length, 16);
    assert_int_equal(o->actual_global_rank, 2);
    o = unexpected(w, 3, 12);
    assert_int_equal(o->status, mqs_st_pending);
    assert_int_equal(o->actual_length, 1048576);
    o = unexpected(w, 0, 3);
    assert_int_equal(o->status, mqs_st_complete);
    assert_int_equal(o->actual_length, 4);
    o = unexpected(w, 0, 13);
    assert_int_equal(o->status, mqs_st_pending);
    assert_int_equal(o->actual_length, 65536);
    o = unexpected(w, 2, MQD_NBC_FIRST_TAG);
    assert_int_equal(o->actual_length, 4);
    assert_true(o->system_buffer);
    /* By sender: 0's two in the order sent, then 2's, then 3's. */
    assert_int_equal(w->ops[mqs_unexpected_messages][0].actual_tag, 3);
    assert_int_equal(w->ops[mqs_unexpected_messages][1].actual_tag, 13);
    /* Sends: active and not complete, a waiter's sync object is not
     * completion; the persistent one in the second chunk; an
     * allgather's marked; the complete and the inactive ones not shown. */
    assert_int_equal(w->nops[mqs_pending_sends], 3);
    assert_op(&w->ops[0][0], 3, 3, 6, 16, mqs_st_pending);
    assert_string_equal(w->ops[0][0].extra_text[0], "persistent send: 4 x MPI_INT");
    assert_op(&w->ops[0][1], 0, 0, 12, 1048576, mqs_st_pending);
    assert_string_equal(w->ops[0][1].extra_text[0], "send: 131072 x MPI_DOUBLE");
    assert_op(&w->ops[0][2], 2, 2, 10, 4, mqs_st_pending);
    assert_true(w->flags[0][2] & MQD_OP_COLLECTIVE);
}

/* The other communicators of build_rank's rank. */
static void check_others(const struct result *r)
{
    const struct rcomm *dup = dlldump_comm_named(r, "mqd-dup");
    assert_op(&dup->ops[1][0], 2, 2, 4, 48, mqs_st_pending);
    assert_true(dup->flags[1][0] & MQD_OP_TEXT_ADDRESS(0)); /* an unnamed datatype */
    const struct rcomm *half = dlldump_comm_named(r, "unnamed communicator, context 0x4");
    assert_int_equal(half->c.size, 2);
    assert_op(&half->ops[1][0], 1, 3, 3, 16, mqs_st_pending);
    /* The intercommunicator: peers in the remote group (world 2 and 3),
     * its local communicator's traffic not shown. */
    const struct rcomm *inter = dlldump_comm_named(r, "mqd-inter");
    assert_int_equal(inter->c.size, 2);
    assert_int_equal(inter->nops[mqs_pending_receives], 1);
    assert_op(&inter->ops[1][0], 1, 3, 8, 8, mqs_st_pending);
    assert_int_equal(inter->nops[mqs_pending_sends], 1);
    assert_op(&inter->ops[0][0], 0, 2, 9, 4, mqs_st_pending);
    assert_string_equal(inter->ops[0][0].extra_text[0], "synchronous send: 1 x MPI_INT");
    /* Groups: the local group's global ranks (on an intercommunicator
     * too); handles: an MPI_Comm is its communicator's address. */
    assert_int_equal(inter->group_rc, mqs_ok);
    assert_int_equal(inter->group[0], 0);
    assert_int_equal(inter->group[1], 1);
    assert_int_equal(half->group_rc, mqs_ok);
    assert_int_equal(half->group[0], 1);
    assert_int_equal(half->group[1], 3);
    for (int i = 0; i < r->ncomms; i++) {
        assert_int_equal(r->comms[i].handle_rc, mqs_ok);
        assert_true(r->comms[i].handle == r->comms[i].c.unique_id);
    }
}

static void test_dll_ompi__every_queue_of_a_rank(void **state)
{
    (void)state;
    EACH_TARGET(be, ps) {
        long before = synth_live_blocks();
        struct synth *s = build_rank(be, ps);
        struct result r;
        dlldump_process(s, &r, 0);
        if (r.rc != mqs_ok)
            fail_msg("rc %d (%s)", r.rc, r.why ? r.why : dlldump_dll->dll_error_string(r.rc));
        /* The user's five, oldest first: no MPI_COMM_NULL, no local comm. */
        assert_int_equal(r.ncomms, 5);
        assert_string_equal(r.comms[0].c.name, "MPI_COMM_WORLD");
        assert_string_equal(r.comms[1].c.name, "MPI_COMM_SELF");
        assert_string_equal(r.comms[2].c.name, "mqd-dup");
        assert_string_equal(r.comms[3].c.name, "unnamed communicator, context 0x4");
        assert_string_equal(r.comms[4].c.name, "mqd-inter");
        check_world(&r.comms[0]);
        check_others(&r);
        assert_true(r.comms[0].handle == synth_ompi_comm_of(s, 0));
        dlldump_release(s);
        synth_free(s);
        assert_int_equal(synth_live_blocks(), before);
    }
}

/* ---------------------------------------------------------------- requests */

/* mqd_get_request_info of handle h in s's process (set up), into *info. */
static int request_info(struct synth *s, uint64_t h, mqd_request_info *info)
{
    assert_non_null(dlldump_dll->get_request_info);
    return dlldump_dll->get_request_info(synth_process(s), h, info);
}

/* A request info's envelope: kind, state, peer (-1: MPI_ANY_SOURCE), tag
 * (-1: MPI_ANY_TAG), on communicator comm. */
static void assert_request(const mqd_request_info *i, int kind, int state, long peer, long tag,
                           uint64_t comm)
{
    assert_int_equal(i->kind, kind);
    assert_int_equal(i->state, state);
    assert_int_equal(i->known & (MQD_REQ_KNOWN_COMM | MQD_REQ_KNOWN_PEER | MQD_REQ_KNOWN_TAG),
                     MQD_REQ_KNOWN_COMM | MQD_REQ_KNOWN_PEER | MQD_REQ_KNOWN_TAG);
    assert_int_equal(i->peer_local, peer);
    assert_int_equal(i->peer_global, peer);
    assert_int_equal(i->tag, tag);
    assert_true(i->comm == comm);
}

/*
 * The requests behind the program's handles (an MPI_Request is the
 * address of its ompi_request_t, ob1's request beginning with it): a
 * receive posted, a wild one, a probe's; a send in progress (a waiter's
 * sync object in req_complete), one complete, a persistent one not
 * started; MPI_REQUEST_NULL (ompi_request_null's address).  What is no
 * live request (a free list element never used, zeroes; NULL; memory
 * that is not there) is an error, never a guess.
 */
static void test_dll_ompi__requests_behind_handles(void **state)
{
    (void)state;
    EACH_TARGET(be, ps) {
        struct synth *s = synth_ompi_new(be, ps, "ob1", 1, 4);
        uint64_t dint = synth_ompi_datatype(s, "MPI_INT", 4);
        uint64_t w = synth_ompi_comm_of(s, 0);
        uint64_t null = synth_alloc(s, 256);
        synth_symbol(s, "ompi_request_null", null);
        uint64_t recv = synth_ompi_recv(s, w, 2, 5, 2, dint, 7, 0);
        uint64_t wild = synth_ompi_recv(s, w, -1, -1, 1, dint, 8, 0);
        uint64_t probe = synth_ompi_recv(s, w, 0, 7, 1, dint, 9, 1);
        struct synth_ompi_send a = {.comm = w, .peer = 3, .tag = 6, .count = 1,
                                    .datatype = dint, .bytes = 4, .mode = 4, .state = 2,
                                    .complete = 0x7ff0, .seq = 1};
        uint64_t send = synth_ompi_send(s, &a);
        a.complete = 1, a.seq = 2;
        uint64_t done = synth_ompi_send(s, &a);
        a.complete = 1, a.state = 1, a.persistent = 1, a.seq = 3;
        uint64_t idle = synth_ompi_send(s, &a);
        struct result r;
        dlldump_process(s, &r, 0);
        assert_int_equal(r.rc, mqs_ok);
        mqd_request_info i;
        assert_int_equal(request_info(s, recv, &i), mqs_ok);
        assert_request(&i, MQD_REQ_RECV, MQD_REQ_PENDING, 2, 5, w);
        assert_true(i.request == recv);
        assert_int_equal(request_info(s, wild, &i), mqs_ok);
        assert_request(&i, MQD_REQ_RECV, MQD_REQ_PENDING, -1, -1, w);
        assert_int_equal(request_info(s, send, &i), mqs_ok);
        assert_request(&i, MQD_REQ_SEND, MQD_REQ_PENDING, 3, 6, w);
        assert_int_equal(request_info(s, done, &i), mqs_ok);
        assert_request(&i, MQD_REQ_SEND, MQD_REQ_COMPLETE, 3, 6, w);
        assert_int_equal(request_info(s, idle, &i), mqs_ok);
        assert_request(&i, MQD_REQ_PERSISTENT_SEND, MQD_REQ_INACTIVE, 3, 6, w);
        assert_int_equal(request_info(s, probe, &i), mqs_ok);
        assert_int_equal(i.kind, MQD_REQ_OTHER);
        assert_int_equal(request_info(s, null, &i), mqs_ok);
        assert_int_equal(i.kind, MQD_REQ_NULL);
        assert_int_equal(i.state, MQD_REQ_COMPLETE);
        assert_int_not_equal(request_info(s, synth_ompi_free_element(s, 7), &i), mqs_ok);
        assert_int_not_equal(request_info(s, 0, &i), mqs_ok);
        assert_int_not_equal(request_info(s, 0x10, &i), mqs_ok);
        dlldump_release(s);
        synth_free(s);
    }
}

/* ---------------------------------------------------------------- the PML */

/* ucx and cm match inside the transport: no queue, said once, the same
 * words for every process of a job (no rank, no address in them): for the
 * image when only the selected PML's plugin is loaded (mca_pml_ucx.so, ob1's
 * closed), else for the process from the selected component's name. */
static void test_dll_ompi__other_pmls_say_why(void **state)
{
    (void)state;
    static const struct {
        const char *pml, *why;
    } cases[] = {
        {"ucx", "this Open MPI matches messages inside UCX (pml ucx): no queue to show (run "
                "with --mca pml ob1 to see them)"},
        {"cm", "this Open MPI matches messages inside its MTL (pml cm: OFI, PSM2): no queue "
               "to show (run with --mca pml ob1 to see them)"},
        {"", "MPI_Init has not chosen a PML yet (ompi_mpi_state 2): no queues until it has"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int rank = 0; rank < 4; rank++) {
            long before = synth_live_blocks();
            struct synth *s = synth_ompi_new(0, 8, cases[i].pml, rank, 2);
            if (rank >= 2)
                synth_ompi_pmls_built_in(s);
            struct result r;
            dlldump_process(s, &r, 0);
            assert_int_equal(r.rc, dlldump_code("this MPI keeps no message queues"));
            assert_non_null(r.why);
            assert_string_equal(r.why, cases[i].why);
            dlldump_release(s);
            synth_free(s);
            assert_int_equal(synth_live_blocks(), before);
        }
    }
}

/* ---------------------------------------------------------------- ranks */

/*
 * Two jobs joined by an intercommunicator (MPI_Comm_spawn): parents 0 and
 * 1 of job SYNTH_OMPI_JOB, children 0 and 1 of SYNTH_OMPI_OTHER_JOB, each
 * side's remote group the other job's.  Without MPI-2 identities a
 * process of the other job is -1 and those of its own job are their world
 * ranks; with them, each names the other job's processes by the identity
 * the debugger gave them (their process names are the keys).  The same
 * with groups of sentinels (members Open MPI has not made yet).
 */
static struct synth *spawned(int child, int rank, int sentinels)
{
    static const int world[] = {0, 1}, other[] = {-1, -2};
    struct synth *s = synth_ompi_new_in(0, 8, "ob1", child ? SYNTH_OMPI_OTHER_JOB : SYNTH_OMPI_JOB,
                                        rank, 2);
    synth_ompi_sentinels(s, sentinels);
    uint64_t dint = synth_ompi_datatype(s, "MPI_INT", 4);
    uint64_t ic = synth_ompi_intercomm(s, 4, 3, "mqd-spawn", rank, 2, world, 2, other);
    synth_ompi_recv(s, ic, 1 - rank, 3, 1, dint, 1, 0);
    return s;
}

static void test_dll_ompi__identities_across_jobs(void **state)
{
    (void)state;
    static const int identity[4] = {0, 1, 7, 8};
    for (int sentinels = 0; sentinels < 2; sentinels++) {
        struct synth *procs[4] = {spawned(0, 0, sentinels), spawned(0, 1, sentinels),
                                  spawned(1, 0, sentinels), spawned(1, 1, sentinels)};
        struct result r[4];
        int job;
        dlldump_process(procs[2], &r[2], 0); /* MPI-1: the other job unknown */
        assert_int_equal(r[2].rc, mqs_ok);
        assert_op(&dlldump_comm_named(&r[2], "mqd-spawn")->ops[1][0], 1, -1, 3, 4,
                  mqs_st_pending);
        /* ... and the intercommunicator's group is not given, lest a
         * debugger name those peers through it. */
        assert_int_equal(dlldump_comm_named(&r[2], "mqd-spawn")->group_rc, mqs_no_information);
        assert_int_equal(dlldump_comm_named(&r[2], "MPI_COMM_WORLD")->group[1], 1);
        dlldump_release(procs[2]);
        dlldump_begin_job(&job, procs, identity, 4); /* set up and name every process first */
        for (int i = 0; i < 4; i++) {
            dlldump_process(procs[i], &r[i], 1);
            const struct rcomm *ic = dlldump_comm_named(&r[i], "mqd-spawn");
            const struct rcomm *w = dlldump_comm_named(&r[i], "MPI_COMM_WORLD");
            /* remote rank 1 - own rank: the other job's process */
            assert_int_equal(ic->ops[1][0].desired_global_rank, identity[(i ^ 2) ^ 1]);
            assert_int_equal(w->group[i % 2], identity[i]);
            assert_int_equal(w->group[!(i % 2)], identity[i ^ 1]);
            assert_int_equal(ic->group_rc, mqs_ok); /* every peer named */
            assert_int_equal(ic->group[i % 2], identity[i]);
        }
        dlldump_end_job(&job, procs, 4);
        for (int i = 0; i < 4; i++)
            synth_free(procs[i]);
    }
}

/* ---------------------------------------------------------------- states */

/* In MPI_Finalize (ompi_mpi_state FINALIZE_STARTED): the communicators
 * stay until after its fence, the queues with them; the process is said
 * to be finalizing. */
static void test_dll_ompi__finalizing_process(void **state)
{
    (void)state;
    struct synth *s = synth_ompi_new(0, 8, "ob1", 0, 2);
    uint64_t dint = synth_ompi_datatype(s, "MPI_INT", 4);
    synth_ompi_recv(s, synth_ompi_comm_of(s, 0), 1, 5, 1, dint, 1, 0);
    struct result r;
    unsigned flags = 0;
    dlldump_process(s, &r, 0);
    assert_int_equal(dlldump_dll->get_process_state(synth_process(s), &flags), mqs_ok);
    assert_int_equal(flags, 0);
    synth_ompi_state(s, 3);
    dlldump_process(s, &r, 1);
    assert_int_equal(dlldump_dll->get_process_state(synth_process(s), &flags), mqs_ok);
    assert_int_equal(flags, MQD_PROC_FINALIZED);
    assert_int_equal(r.comms[0].nops[mqs_pending_receives], 1);
    dlldump_release(s);
    synth_free(s);
}

/* A communicator freed between two stops (its slot emptied, the same
 * count of communicators) and another made: the second stop sees both. */
static void test_dll_ompi__communicators_come_and_go(void **state)
{
    (void)state;
    static const int world[] = {0, 1};
    struct synth *s = synth_ompi_new(1, 4, "ob1", 0, 2);
    synth_ompi_comm(s, 3, "first", 0, 2, world);
    struct result r;
    dlldump_process(s, &r, 0);
    assert_int_equal(r.ncomms, 3);
    assert_string_equal(r.comms[2].c.name, "first");
    synth_ompi_free_slot(s, 3);
    synth_ompi_comm(s, 4, "second", 0, 2, world);
    dlldump_process(s, &r, 1);
    assert_int_equal(r.ncomms, 3);
    assert_string_equal(r.comms[2].c.name, "second");
    dlldump_release(s);
    synth_free(s);
}

/* ---------------------------------------------------------------- faults */

/* The code a dump of build_rank's rank gives once corrupt() has
 * scribbled on it (the queue's, or the dump's). */
typedef void (*corrupt_fn)(struct synth *s);

static int dump_corrupt(corrupt_fn corrupt, int queue)
{
    long before = synth_live_blocks();
    struct synth *s = build_rank(0, 8);
    corrupt(s);
    struct result r;
    dlldump_process(s, &r, 0);
    int rc = r.rc;
    if (rc == mqs_ok && queue >= 0) {
        rc = r.comms[0].qrc[queue];
        for (int i = 0; rc == mqs_end_of_list && i < r.ncomms; i++)
            rc = r.comms[i].qrc[queue];
    }
    dlldump_release(s);
    synth_free(s);
    assert_int_equal(synth_live_blocks(), before);
    return rc;
}

#define W(s, at, type, field, v, n)                                                            \
    synth_put((s), (at) + (uint64_t)synth_off((s), (type), (field)), (uint64_t)(v), (n))

/* The 8-byte pointer the target (little-endian, build_rank(0, 8)) holds at
 * field of type at addr. */
static uint64_t held(struct synth *s, uint64_t addr, const char *type, const char *field)
{
    uint64_t base, len, v;
    unsigned char *mem = synth_memory(s, &base, &len);
    memcpy(&v, mem + (addr + (uint64_t)synth_off(s, type, field) - base), 8);
    return v;
}

/* The first item of the opal_list_t at list. */
static uint64_t first_item(struct synth *s, uint64_t list)
{
    return held(s, list + (uint64_t)synth_off(s, "opal_list_t", "opal_list_sentinel"),
                "opal_list_item_t", "opal_list_next");
}

/* MPI_COMM_WORLD's ob1 record (build_rank's), and in *peer2 its peer 2's. */
static uint64_t world_ob1(struct synth *s, uint64_t *peer2)
{
    uint64_t ob1 = held(s, synth_ompi_comm_of(s, 0), "ompi_communicator_t", "c_pml_comm");
    uint64_t procs = held(s, ob1, "mca_pml_ob1_comm_t", "procs");
    *peer2 = held(s, procs + 16 - (uint64_t)synth_off(s, "mca_pml_ob1_comm_t", "procs"),
                  "mca_pml_ob1_comm_t", "procs");
    return ob1;
}

static uint64_t send_requests(struct synth *s)
{
    mqs_taddr_t fl;
    synth_callbacks()->image.mqs_find_symbol_fp(synth_image(s), "mca_pml_base_send_requests", &fl);
    return fl;
}

/* peer 2's specific receives: its one request points at itself */
static void cycle_in_a_receive_list(struct synth *s)
{
    uint64_t peer2;
    world_ob1(s, &peer2);
    uint64_t first = first_item(
        s, peer2 + (uint64_t)synth_off(s, "mca_pml_ob1_comm_proc_t", "specific_receives"));
    W(s, first, "opal_list_item_t", "opal_list_next", first, 8);
}

static void wild_pointer_in_a_list(struct synth *s)
{
    uint64_t peer2, ob1 = world_ob1(s, &peer2);
    uint64_t sent = ob1 + (uint64_t)synth_off(s, "mca_pml_ob1_comm_t", "wild_receives") +
                    (uint64_t)synth_off(s, "opal_list_t", "opal_list_sentinel");
    W(s, sent, "opal_list_item_t", "opal_list_next", 0xdead0000u, 8);
}

static void huge_group(struct synth *s)
{
    uint64_t g = held(s, synth_ompi_comm_of(s, 3), "ompi_communicator_t", "c_local_group");
    W(s, g, "ompi_group_t", "grp_proc_count", 1u << 30, 4);
}

static void rank_beyond_its_group(struct synth *s)
{
    W(s, synth_ompi_comm_of(s, 3), "ompi_communicator_t", "c_my_rank", 4, 4);
}

static void peer_beyond_its_communicator(struct synth *s)
{
    W(s, synth_ompi_free_element(s, 0) +
             (uint64_t)synth_off(s, "mca_pml_ob1_send_request_t", "req_send") +
             (uint64_t)synth_off(s, "mca_pml_base_send_request_t", "req_base"),
      "mca_pml_base_request_t", "req_peer", 9, 4);
}

static void huge_free_list(struct synth *s)
{
    W(s, send_requests(s), "opal_free_list_t", "fl_num_allocated", 1ull << 40, 8);
}

static void chunk_cycle(struct synth *s)
{
    uint64_t fl = send_requests(s);
    uint64_t first =
        first_item(s, fl + (uint64_t)synth_off(s, "opal_free_list_t", "fl_allocations"));
    W(s, first, "opal_list_item_t", "opal_list_next", first, 8);
    W(s, fl, "opal_free_list_t", "fl_num_allocated", 1000, 8);
}

static void unterminated_name(struct synth *s)
{
    uint64_t c = synth_ompi_comm_of(s, 3);
    char junk[64];
    memset(junk, 'x', sizeof junk);
    junk[5] = '\n';
    synth_put_bytes(s, c + (uint64_t)synth_off(s, "ompi_communicator_t", "c_name"), junk, 64);
}

static void huge_table(struct synth *s)
{
    mqs_taddr_t t;
    synth_callbacks()->image.mqs_find_symbol_fp(synth_image(s), "ompi_mpi_communicators", &t);
    W(s, t, "opal_pointer_array_t", "size", 1u << 30, 4);
}

/* Corrupt memory: a specific error for the process (or the queue), never
 * a crash, a hang or a leak. */
static void test_dll_ompi__corrupt_targets(void **state)
{
    (void)state;
    int cycle = dlldump_code("a list in the process's memory loops"),
        bad = dlldump_code("a count, size or rank"), read = dlldump_code("cannot read");
    assert_int_equal(dump_corrupt(cycle_in_a_receive_list, mqs_pending_receives), cycle);
    assert_int_equal(dump_corrupt(wild_pointer_in_a_list, mqs_pending_receives), read);
    assert_int_equal(dump_corrupt(huge_group, -1), bad);
    assert_int_equal(dump_corrupt(rank_beyond_its_group, -1), bad);
    assert_int_equal(dump_corrupt(peer_beyond_its_communicator, mqs_pending_sends), bad);
    assert_int_equal(dump_corrupt(huge_free_list, mqs_pending_sends), bad);
    assert_int_equal(dump_corrupt(chunk_cycle, mqs_pending_sends), cycle);
    assert_int_equal(dump_corrupt(huge_table, -1), bad);
    /* A name of 64 bytes without its end, with a control byte: cut and
     * escaped, never read past. */
    struct synth *s = build_rank(0, 8);
    unterminated_name(s);
    struct result r;
    dlldump_process(s, &r, 0);
    assert_int_equal(r.rc, mqs_ok);
    assert_int_equal(strlen(r.comms[2].c.name), 63);
    assert_null(strchr(r.comms[2].c.name, '\n'));
    dlldump_release(s);
    synth_free(s);
}

/* mqs_malloc failing at each of a dump's calls in turn: "out of memory"
 * each time it matters, nothing left allocated. */
static void test_dll_ompi__malloc_fails_at_each_call(void **state)
{
    (void)state;
    struct synth *s = build_rank(1, 4);
    assert_true(dlldump_fail_each_malloc(s, NULL) > 0);
    synth_free(s);
}

/* ---------------------------------------------------------------- debug information */

/*
 * No DWARF types (Debian's libmpi without its debug package): a build of
 * a version, pointer size and byte order the DLL knows no layout of is
 * refused with why, never read with a guessed layout; nor is one whose
 * classes' object sizes are not the known build's.
 */
static void test_dll_ompi__no_dwarf_unknown_build_refused(void **state)
{
    (void)state;
    EACH_TARGET(be, ps) {
        struct synth *s = build_rank(be, ps);
        synth_drop_all_types(s);
        struct result r;
        dlldump_process(s, &r, 0);
        char want[128];
        /* The known layout is Debian's amd64 build (ompi_defs/layouts.h):
         * this target has its version, width and byte order, but not its
         * classes' object sizes.  (Without one, the DLL says so at once.) */
        if (!known_layouts)
            snprintf(want, sizeof want, "is libmpi built with -g");
        else if (!be && ps == 8)
            snprintf(want, sizeof want, "this Open MPI 4.1.4 is not the build the DLL knows "
                                        "(Debian ");
        else
            snprintf(want, sizeof want, "the DLL knows no layout of Open MPI 4.1.4 (%d-bit "
                                        "%s-endian)", ps * 8, be ? "big" : "little");
        assert_int_equal(r.rc, dlldump_code("a type or field the DLL needs"));
        assert_non_null(r.why);
        if (!strstr(r.why, "the debug information lacks") || !strstr(r.why, want))
            fail_msg("%s (wanted: %s)", r.why, want);
        dlldump_release(s);
        synth_free(s);
    }
    /* A type missing from otherwise complete DWARF is named. */
    struct synth *s = build_rank(0, 8);
    synth_drop_type(s, "mca_pml_ob1_comm_proc_t");
    struct result r;
    dlldump_process(s, &r, 0);
    assert_int_not_equal(r.rc, mqs_ok);
    assert_non_null(r.why);
    assert_non_null(strstr(r.why, "mca_pml_ob1_comm_proc_t"));
    dlldump_release(s);
    synth_free(s);
}

/* Open MPI 5 (by its version string) is refused, never read with 4.1's
 * meaning of its fields. */
static void test_dll_ompi__open_mpi_5_refused(void **state)
{
    (void)state;
    struct synth *s = build_rank(0, 8);
    mqs_taddr_t v;
    assert_int_equal(synth_callbacks()->image.mqs_find_symbol_fp(synth_image(s),
                                                                 "ompi_version_string", &v),
                     mqs_ok);
    synth_put_bytes(s, v, "5.0.9", 6);
    struct result r;
    dlldump_process(s, &r, 0);
    assert_int_equal(r.rc, dlldump_code("the debug information describes structures"));
    assert_non_null(r.why);
    assert_string_equal(r.why, "Open MPI 5.0.9 is not one this DLL reads (4.0 and 4.1: Open "
                               "MPI 5 keeps its communicators otherwise): use --target-dll");
    dlldump_release(s);
    synth_free(s);
}

/* A host that names types as gdb does (typedefs and "struct TAG"). */
static void test_dll_ompi__gdb_like_host(void **state)
{
    (void)state;
    synth_host_kind(SYNTH_HOST_GDB);
    struct synth *s = build_rank(1, 8);
    struct result r;
    dlldump_process(s, &r, 0);
    synth_host_kind(SYNTH_HOST_DWARF);
    assert_int_equal(r.rc, mqs_ok);
    check_world(&r.comms[0]);
    dlldump_release(s);
    synth_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dll_ompi__every_queue_of_a_rank),
        cmocka_unit_test(test_dll_ompi__requests_behind_handles),
        cmocka_unit_test(test_dll_ompi__other_pmls_say_why),
        cmocka_unit_test(test_dll_ompi__identities_across_jobs),
        cmocka_unit_test(test_dll_ompi__finalizing_process),
        cmocka_unit_test(test_dll_ompi__communicators_come_and_go),
        cmocka_unit_test(test_dll_ompi__corrupt_targets),
        cmocka_unit_test(test_dll_ompi__malloc_fails_at_each_call),
        cmocka_unit_test(test_dll_ompi__no_dwarf_unknown_build_refused),
        cmocka_unit_test(test_dll_ompi__open_mpi_5_refused),
        cmocka_unit_test(test_dll_ompi__gdb_like_host),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
