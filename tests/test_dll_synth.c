/*
 * test_dll_synth.c - libmqd_mpich.so against synthetic MPICH targets
 * (tests/synth.c) of both generations (4.0.2 ch3 lists, 4.0.3+ debug
 * queues), both byte orders and both pointer widths: every
 * queue, every status, wildcards, global ranks, intercommunicators,
 * internal communicators hidden, communicators appearing and vanishing,
 * corrupt memory (cycles, wild pointers, huge counts, unterminated names),
 * missing debug information, and mqs_malloc failing at each call in turn
 * with nothing leaked.
 */
#define _GNU_SOURCE
#include "host/protocol/loader.h"
#include "tests/expect.h"
#include "tests/dlldump.h"
#include "tests/synth.h"

#include <dirent.h>
#include <limits.h>
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
    return dlldump_load("libmqd_mpich.so");
}

/* ---------------------------------------------------------------- a job */

enum { DT_INT = 0x4c000405, DT_DOUBLE = 0x4c00080b };

/* Rank 1 of 4, with every kind of communicator and queue entry. */
static void build_rank(struct synth *s, uint64_t *comms, int *n)
{
    static const int world[] = {0, 1, 2, 3}, odd[] = {1, 3}, other_half[] = {2, 3};
    comms[0] = synth_comm(s, 0x44000000u, 0, 4, 1, "MPI_COMM_WORLD", world);
    comms[1] = synth_comm(s, 0x44000001u, 16, 1, 0, "MPI_COMM_SELF", odd);
    comms[2] = synth_comm(s, 0x44000002u, 32, 4, 1, "MPI_ICOMM_WORLD", world); /* internal */
    comms[3] = synth_comm(s, 0x84000000u, 2, 4, 1, "", world); /* node sub-communicator */
    comms[4] = synth_comm(s, 0x84000001u, 48, 4, 1, "mqd-dup", world);
    comms[5] = synth_comm(s, 0x84000003u, 64, 2, 0, "", odd);
    comms[6] = synth_intercomm(s, 0x84000004u, 80, 2, 0, 2, "mqd-inter", other_half);
    *n = 7;
    synth_comm_list(s, comms, *n, 7);
    uint64_t posted[] = {
        synth_recv(s, 0, -2, 5, 2, DT_INT, 1, 0),      /* ANY_SOURCE, world */
        synth_recv(s, 64, 1, -1, 3, DT_INT, 1, 0),     /* ANY_TAG, unnamed: world 3 */
        synth_recv(s, 1, 0, 7, 1, DT_INT, 1, 0),       /* world's collective traffic */
        synth_recv(s, 1, 3, 0x80001, 1, DT_INT, 1, 0), /* a tagged collective's */
        synth_recv(s, 48, 2, 4, 4, DT_DOUBLE, 0, 32),  /* complete, not yet waited */
        synth_recv(s, 80, 1, 8, 2, DT_INT, 1, 0),      /* intercomm: remote 1 = world 3 */
    };
    synth_recv_list(s, 0, posted, 6);
    uint64_t unexp[] = {
        synth_recv(s, 0, 2, 11, 0, 0, 0, 16),       /* eager: data here */
        synth_recv(s, 0, 3, 12, 0, 0, 1, 1048576),  /* rendezvous: envelope only */
    };
    synth_recv_list(s, 1, unexp, 2);
    uint64_t sreq[] = {synth_send_req(s, 131072, DT_DOUBLE, 1), synth_send_req(s, 1, DT_INT, 0)};
    int ranks[] = {0, 0}, tags[] = {12, 9};
    unsigned ctxs[] = {0, SYNTH_INTER_SEND(80)};
    synth_sendq(s, sreq, ranks, tags, ctxs, 2);
}

/* ch4's debug queues record element counts but no datatypes: lengths of
 * sends and receives are unknown (-1), the counts told in extra_text; a
 * collective's traffic shows only on unexpected messages (wire context)
 * and by tags beyond MPI_TAG_UB; unexpected messages are pending until
 * matched, their sizes in the status.  ch3 of every generation reads its
 * requests. */
static void check_rank(const struct result *r, enum synth_gen gen)
{
    int dq = gen == SYNTH_DEBUGQ || gen == SYNTH_DEBUGQ_5;
    int stock = gen == SYNTH_CH4_STOCK || gen == SYNTH_CH4_STOCK_5;
    if (r->rc != mqs_ok)
        fail_msg("dump failed: %d %s (%s)", r->rc, dlldump_dll->dll_error_string(r->rc),
                 r->why ? r->why : "");
    /* User communicators only, oldest first; the unnamed one described. */
    assert_int_equal(r->ncomms, 5);
    assert_string_equal(r->comms[0].c.name, "MPI_COMM_WORLD");
    assert_string_equal(r->comms[1].c.name, "MPI_COMM_SELF");
    assert_string_equal(r->comms[2].c.name, "mqd-dup");
    assert_string_equal(r->comms[3].c.name, "unnamed communicator, context 0x40");
    assert_string_equal(r->comms[4].c.name, "mqd-inter");
    assert_int_equal(r->comms[0].c.size, 4);
    assert_int_equal(r->comms[0].c.local_rank, 1);

    const struct rcomm *w = dlldump_comm_named(r, "MPI_COMM_WORLD");
    assert_int_equal(w->nops[mqs_pending_receives], 3);
    const mqs_pending_operation *o = &w->ops[mqs_pending_receives][0];
    assert_int_equal(o->status, mqs_st_pending);
    assert_int_equal(o->desired_local_rank, -1); /* not 65534 */
    assert_int_equal(o->desired_global_rank, -1);
    assert_int_equal(o->tag_wild, 0);
    assert_int_equal(o->desired_tag, 5);
    assert_int_equal(o->desired_length, dq ? -1 : 8); /* 2 x MPI_INT, in bytes */
    assert_string_equal(o->extra_text[0], dq ? "receive: 2 elements" : "receive: 2 x MPI_INT");
    /* The typed answers (mqd_get_operation_info): the request, its line
     * an address line, and the collective mark where the text has it. */
    assert_int_equal(w->flags[mqs_pending_receives][0], MQD_OP_TEXT_ADDRESS(1));
    assert_true(w->request[mqs_pending_receives][0] != 0);
    char line[64];
    snprintf(line, sizeof line, "request 0x%llx",
             (unsigned long long)w->request[mqs_pending_receives][0]);
    assert_true(strncmp(o->extra_text[1], line, strlen(line)) == 0);
    o = &w->ops[mqs_pending_receives][1];
    assert_int_equal(o->desired_tag, 7);
    assert_string_equal(o->extra_text[2], dq ? "" : "part of a collective operation");
    assert_int_equal(w->flags[mqs_pending_receives][1],
                     MQD_OP_TEXT_ADDRESS(1) | (dq ? 0u : MQD_OP_COLLECTIVE));
    o = &w->ops[mqs_pending_receives][2];
    assert_int_equal(o->desired_tag, 0x80001);
    assert_int_equal(o->desired_global_rank, 3);
    assert_string_equal(o->extra_text[2], "part of a collective operation");
    assert_int_equal(w->flags[mqs_pending_receives][2],
                     MQD_OP_TEXT_ADDRESS(1) | MQD_OP_COLLECTIVE);
    assert_int_equal(w->nops[mqs_unexpected_messages], 2);
    o = &w->ops[mqs_unexpected_messages][0];
    assert_int_equal(o->status, dq ? mqs_st_pending : mqs_st_complete);
    assert_int_equal(o->actual_local_rank, 2);
    assert_int_equal(o->actual_global_rank, 2);
    assert_int_equal(o->actual_tag, 11);
    assert_int_equal(o->actual_length, 16);
    o = &w->ops[mqs_unexpected_messages][1];
    assert_int_equal(o->status, mqs_st_pending);
    assert_int_equal(o->actual_length, 1048576);
    assert_int_equal(o->actual_local_rank, 3);
    assert_int_equal(o->actual_tag, 12);
    /* A build without debugger support records no send anywhere: no
     * information, on every communicator. */
    for (int c = 0; stock && c < r->ncomms; c++)
        assert_int_equal(r->comms[c].qrc[mqs_pending_sends], mqs_no_information);
    assert_int_equal(w->nops[mqs_pending_sends], !stock);
    o = &w->ops[mqs_pending_sends][0];
    assert_int_equal(o->status, mqs_st_pending * !stock);
    assert_int_equal(o->desired_local_rank, 0);
    assert_int_equal(o->desired_tag, 12 * !stock);
    assert_int_equal(o->desired_length, dq ? -1 : 1048576 * !stock);
    assert_string_equal(o->extra_text[0], dq      ? "send: 131072 elements"
                                          : stock ? ""
                                                  : "send: 131072 x MPI_DOUBLE");

    const struct rcomm *u = dlldump_comm_named(r, "unnamed communicator, context 0x40");
    assert_int_equal(u->nops[mqs_pending_receives], 1);
    o = &u->ops[mqs_pending_receives][0];
    assert_int_equal(o->tag_wild, 1);
    assert_int_equal(o->desired_local_rank, 1);
    assert_int_equal(o->desired_global_rank, 3);
    assert_int_equal(o->desired_length, dq ? -1 : 12);

    const struct rcomm *d = dlldump_comm_named(r, "mqd-dup");
    o = &d->ops[mqs_pending_receives][0];
    assert_int_equal(d->nops[mqs_pending_receives], 1);
    assert_int_equal(o->status, mqs_st_complete);
    assert_int_equal(o->desired_length, dq ? -1 : 32);
    assert_int_equal(o->actual_local_rank, 2); /* from its status */
    assert_int_equal(o->actual_global_rank, 2);
    assert_int_equal(o->actual_tag, 4);
    assert_int_equal(o->actual_length, 32);

    const struct rcomm *x = dlldump_comm_named(r, "mqd-inter");
    assert_int_equal(x->c.size, 2);
    assert_int_equal(x->nops[mqs_pending_receives], 1);
    assert_int_equal(x->ops[mqs_pending_receives][0].desired_global_rank, 3);
    assert_int_equal(x->nops[mqs_pending_sends], !stock);
    o = &x->ops[mqs_pending_sends][0];
    assert_int_equal(o->status, stock ? 0 : mqs_st_complete);
    assert_int_equal(o->desired_local_rank, 0);
    assert_int_equal(o->desired_global_rank, stock ? 0 : 2); /* the remote group's rank 0 */
    assert_int_equal(o->desired_length, dq ? -1 : 4 * !stock);
    /* The self communicator: known to be empty, not "no information". */
    const struct rcomm *self = dlldump_comm_named(r, "MPI_COMM_SELF");
    for (int q = stock; q < 3; q++)
        assert_int_equal(self->qrc[q], mqs_end_of_list);
}

/* A target holding build_rank's state; finish() releases the DLL's data. */
static struct synth *start_gen(int big_endian, int ptr, enum synth_gen gen, uint64_t *comms)
{
    struct synth *s = synth_new_gen(big_endian, ptr, gen);
    int n;
    build_rank(s, comms, &n);
    return s;
}

static struct synth *start(int big_endian, int ptr, uint64_t *comms)
{
    return start_gen(big_endian, ptr, SYNTH_CH3_402, comms);
}

static void finish(struct synth *s)
{
    dlldump_release(s);
    synth_free(s);
}

static const struct {
    int big_endian, ptr;
} targets[] = {{0, 8}, {1, 8}, {0, 4}, {1, 4}};

/* Every generation synth.h models, and its name in messages. */
static const enum synth_gen every_gen[] = {SYNTH_CH3_402, SYNTH_CH3_DQ, SYNTH_DEBUGQ,
                                           SYNTH_CH3_DQ_5, SYNTH_DEBUGQ_5};
#define NGENS (sizeof every_gen / sizeof every_gen[0])
static const char *const gen_names[] = {
    [SYNTH_CH3_402] = "4.0.2 ch3", [SYNTH_CH3_DQ] = "4.x ch3", [SYNTH_DEBUGQ] = "4.x ch4",
    [SYNTH_CH3_DQ_5] = "5.0 ch3",  [SYNTH_DEBUGQ_5] = "5.0 ch4"};

static void every_queue(enum synth_gen gen)
{
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        uint64_t comms[16];
        long before = synth_live_blocks();
        struct synth *s = start_gen(targets[t].big_endian, targets[t].ptr, gen, comms);
        struct result r;
        dlldump_process(s, &r, 0);
        check_rank(&r, gen);
        finish(s);
        assert_int_equal(synth_live_blocks(), before);
    }
}

static void test_synth__every_queue_both_orders_both_widths(void **state)
{
    (void)state;
    every_queue(SYNTH_CH3_402);
}

/* MPICH 4.0.3 and later: no real build here, so this layout is the test. */
static void test_synth__debugq_generation_every_queue(void **state)
{
    (void)state;
    for (size_t g = 1; g < NGENS; g++) /* all but 4.0.2, the test before */
        every_queue(every_gen[g]);
}

/*
 * MPICH 4.0.2 and 5.0 ch4 without debugger support, its globals named (its
 * debug symbols found): the communicators from their pool, MPIDIG's posted
 * and unexpected lists (5.0: matched on the requests' status), no sends; a
 * second VCI's lists read too (5.0: a reserved one, past n_vcis).
 */
static void stock_generation_every_queue(enum synth_gen gen)
{
    every_queue(gen);
    uint64_t comms[16];
    struct synth *s = start_gen(0, 8, gen, comms);
    synth_vcis(s, 2);
    struct result r;
    dlldump_process(s, &r, 0);
    check_rank(&r, gen);
    /* No sequence number: every stop reads them again.  A communicator
     * freed (its reference gone) is not shown; one of an indirect block is. */
    synth_comm_free(s, comms[4]);
    static const int world[] = {0, 1, 2, 3};
    synth_comm(s, 0xc4000002u, 96, 4, 1, "mqd-block", world);
    dlldump_process(s, &r, 1);
    assert_int_equal(r.rc, mqs_ok);
    assert_int_equal(r.ncomms, 5);
    assert_string_equal(r.comms[2].c.name, "unnamed communicator, context 0x40");
    assert_string_equal(r.comms[4].c.name, "mqd-block");
    /* ch4's VCIs: at least one, MPIDI_CH4_MAX_VCIS at most. */
    synth_vcis(s, 65);
    dlldump_process(s, &r, 1);
    assert_int_equal(r.rc, dlldump_code("a count, size or rank"));
    finish(s);
}

static void test_synth__stock_generation_every_queue(void **state)
{
    (void)state;
    stock_generation_every_queue(SYNTH_CH4_STOCK);
    stock_generation_every_queue(SYNTH_CH4_STOCK_5);
}

/* A build whose ch4 sends everything through its netmod (no shared-memory
 * module: MPIDI_Devreq_t has no is_local, as Debian's ch4:ucx): the
 * netmod matches messages itself, so MPIDIG's lists say nothing of the
 * receive side either: no information, never empty. */
static void test_synth__stock_direct_netmod_says_nothing(void **state)
{
    (void)state;
    uint64_t comms[16];
    struct synth *s = start_gen(0, 8, SYNTH_CH4_STOCK, comms);
    synth_drop_field(s, "MPIDI_Devreq_t", "is_local");
    struct result r;
    dlldump_process(s, &r, 0);
    assert_int_equal(r.rc, mqs_ok);
    assert_int_equal(r.ncomms, 5);
    for (int c = 0; c < r.ncomms; c++)
        for (int q = 0; q < 3; q++)
            assert_int_equal(r.comms[c].qrc[q], mqs_no_information);
    finish(s);
}

/* In MPI_Finalize (4.0.2: the world's reference gone) or past it (5.0:
 * the builtins forgotten, the world model finalized, no VCI left): the
 * world MPIR_Process still names, and the process said finalized. */
static void test_synth__stock_finalized(void **state)
{
    (void)state;
    static const enum synth_gen gens[] = {SYNTH_CH4_STOCK, SYNTH_CH4_STOCK_5};
    for (size_t g = 0; g < sizeof gens / sizeof gens[0]; g++) {
        uint64_t comms[16];
        struct synth *s = start_gen(0, 8, gens[g], comms);
        synth_stock_finalized(s, comms[0]);
        struct result r;
        dlldump_process(s, &r, 0);
        assert_int_equal(r.rc, mqs_ok);
        assert_int_equal(r.ncomms, 1);
        assert_string_equal(r.comms[0].c.name, "MPI_COMM_WORLD");
        assert_int_equal(r.comms[0].c.size, 4);
        assert_int_equal(r.comms[0].c.local_rank, 1);
        /* 5.0: its lists gone with its VCIs: none (4.0.2 keeps them) */
        for (int q = mqs_pending_receives; gens[g] == SYNTH_CH4_STOCK_5 &&
                                           q <= mqs_unexpected_messages; q++)
            assert_int_equal(r.comms[0].qrc[q], mqs_end_of_list);
        unsigned flags = 0;
        assert_int_equal(dlldump_dll->get_process_state(synth_process(s), &flags), mqs_ok);
        assert_int_equal(flags, MQD_PROC_FINALIZED);
        finish(s);
    }
}

/* s's process dumped: no message queues, said with both of what and also,
 * and without absent (NULL: anything); s finished. */
static void no_queues_said(struct synth *s, const char *what, const char *also,
                           const char *absent)
{
    struct result r;
    dlldump_process(s, &r, 0);
    assert_int_equal(r.rc, dlldump_code("this MPI keeps no message queues"));
    assert_non_null(r.why);
    if (!strstr(r.why, what) || !strstr(r.why, also) || (absent && strstr(r.why, absent)))
        fail_msg("unexpected: %s", r.why);
    finish(s);
}

/* Without its globals' names and with no known build of it: said, with
 * what to do. */
static void test_synth__stock_unknown_build_is_named(void **state)
{
    (void)state;
    uint64_t comms[16];
    struct synth *s = start_gen(0, 8, SYNTH_CH4_STOCK, comms);
    synth_drop_symbol(s, "MPIDI_global");
    no_queues_said(s, "this MPICH was configured without --enable-debuginfo (4.0.2, ch4:ucx, "
                      "not a build mqd knows)",
                   "libmpich12-dbgsym", NULL);
}

/* Its debug symbols there, but its own lists not as mqd knows them (no
 * u.recv.context_id): said so, and not told to install the debug symbols
 * it has.  Neither u.recv's source (4.0.2 to 4.2) nor the status's (4.3
 * on) to match on: the field named. */
static void test_synth__stock_lists_of_another_layout_are_named(void **state)
{
    (void)state;
    uint64_t comms[16];
    struct synth *s = start_gen(0, 8, SYNTH_CH4_STOCK_5, comms);
    synth_drop_field(s, "MPIDIG_req_t", "u.recv.context_id");
    no_queues_said(s, "this MPICH (5.0.1, ch4:ofi) was configured without --enable-debuginfo, "
                      "and its own receive lists are not laid out as mqd knows them",
                   "(no MPIDIG_req_t:u.recv.context_id)", "dbgsym");
    s = start_gen(0, 8, SYNTH_CH4_STOCK, comms);
    synth_drop_field(s, "MPIDIG_req_t", "u.recv.source");
    synth_drop_field(s, "MPI_Status", "MPI_SOURCE");
    struct result r;
    dlldump_process(s, &r, 0);
    assert_int_equal(r.rc, dlldump_code("a type or field"));
    if (!strstr(r.why, "lacks both MPIR_Request:dev/MPIDI_Devreq_t:ch4.am/MPIDIG_req_t:u.recv."
                       "source and MPIR_Request:status/MPI_Status:MPI_SOURCE"))
        fail_msg("unexpected: %s", r.why);
    finish(s);
}

/* mqd_get_request_info of handle h in s's process (dumped), into *info. */
static int request_info(struct synth *s, unsigned h, mqd_request_info *info)
{
    assert_non_null(dlldump_dll->get_request_info);
    return dlldump_dll->get_request_info(synth_process(s), h, info);
}

/*
 * A derived datatype's size is read from its MPIR_Datatype, whose layout
 * is asked of the debugger only when a request has one: a receive of 3
 * elements of 24 bytes is 72 bytes long; one of predefined MPI_INT asks
 * nothing.
 */
/*
 * A type no file defines costs a debugger that indexes DWARF a walk of
 * every file's: a process with debugger queues (ch3 or ch4) is asked
 * nothing of what only the stock builds' lists need (MPIDI_global's
 * VCIs).
 */
static void test_synth__other_devices_types_not_asked(void **state)
{
    (void)state;
    static const struct {
        enum synth_gen gen;
        const char *part;
    } cases[] = {{SYNTH_CH3_DQ, "MPIDI_CH4_Global"}, {SYNTH_CH3_DQ_5, "MPIDI_CH4_Global"},
                 {SYNTH_DEBUGQ, "MPIDI_CH4_Global"}, {SYNTH_DEBUGQ_5, "MPIDI_CH4_Global"},
                 {SYNTH_DEBUGQ, "MPIDI_per_vci"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint64_t comms[16];
        struct synth *s = synth_new_gen(0, 8, cases[k].gen);
        synth_watch_types(s, cases[k].part);
        int n;
        build_rank(s, comms, &n);
        struct result r;
        dlldump_process(s, &r, 0);
        assert_int_equal(r.rc, mqs_ok);
        if (synth_types_watched(s) != 0)
            fail_msg("case %zu: %d look-ups of %s", k, synth_types_watched(s), cases[k].part);
        synth_watch_types(s, NULL);
        finish(s);
    }
}

static void test_synth__derived_datatype_asked_when_read(void **state)
{
    (void)state;
    struct synth *s = synth_new_gen(0, 8, SYNTH_CH3_402);
    static const int world[] = {0, 1};
    uint64_t comm = synth_comm(s, 0x44000000u, 0, 2, 0, "MPI_COMM_WORLD", world);
    synth_comm_list(s, &comm, 1, 1);
    uint64_t recv[] = {synth_recv(s, 0, 1, 5, 2, DT_INT, 1, 0),
                       synth_recv(s, 0, 1, 6, 3, synth_datatype(s, 2, 24), 1, 0)};
    synth_recv_list(s, 0, recv, 1);
    synth_watch_types(s, "MPIR_Datatype");
    struct result r;
    dlldump_process(s, &r, 0);
    assert_int_equal(r.rc, mqs_ok);
    const struct rcomm *c = dlldump_comm_named(&r, "MPI_COMM_WORLD");
    assert_int_equal(c->nops[mqs_pending_receives], 1);
    assert_int_equal(c->ops[mqs_pending_receives][0].desired_length, 8);
    assert_int_equal(synth_types_watched(s), 0);
    synth_recv_list(s, 0, recv, 2);
    dlldump_process(s, &r, 1);
    assert_int_equal(r.rc, mqs_ok);
    c = dlldump_comm_named(&r, "MPI_COMM_WORLD");
    assert_int_equal(c->nops[mqs_pending_receives], 2);
    assert_int_equal(c->ops[mqs_pending_receives][1].desired_length, 72);
    assert_true(synth_types_watched(s) > 0);
    synth_watch_types(s, NULL);
    finish(s);
}

/*
 * A nonblocking collective's schedule is read through MPIDU_Sched's
 * layout, whose DWARF is deep in libmpi: asked of the debugger only once a
 * process has a schedule pending, not when its image is set up or its
 * other requests read, and then once, not again for the next schedule.
 */
static void test_synth__schedules_asked_when_pending(void **state)
{
    (void)state;
    uint64_t comms[16];
    struct synth *s = start_gen(0, 8, SYNTH_CH4_STOCK, comms);
    uint64_t recv = synth_recv(s, 48, 2, 4, 1, DT_INT, 1, 0);
    synth_watch_types(s, "MPIDU_Sched");
    struct result r;
    dlldump_process(s, &r, 0);
    assert_int_equal(r.rc, mqs_ok);
    mqd_request_info i;
    assert_int_equal(request_info(s, synth_request_handle(s, recv), &i), mqs_ok);
    assert_int_equal(i.peer_local, 2);
    uint64_t done = synth_nbc(s, comms[0], 287, 1, 1);
    assert_int_equal(request_info(s, synth_request_handle(s, done), &i), mqs_ok);
    assert_int_equal(i.state, MQD_REQ_COMPLETE);
    assert_int_equal(synth_types_watched(s), 0);
    uint64_t nbc = synth_nbc(s, comms[0], 288, 2, 0);
    assert_int_equal(request_info(s, synth_request_handle(s, nbc), &i), mqs_ok);
    assert_int_equal(i.known, MQD_REQ_KNOWN_COMM | MQD_REQ_KNOWN_SCHED_TAG | MQD_REQ_KNOWN_PEER |
                                  MQD_REQ_SCHED_RECEIVES);
    assert_int_equal(i.sched_tag, 288);
    assert_int_equal(i.peer_global, 2);
    int asked = synth_types_watched(s);
    assert_true(asked > 0);
    assert_int_equal(request_info(s, synth_request_handle(s, nbc), &i), mqs_ok);
    assert_int_equal(i.sched_tag, 288);
    assert_int_equal(synth_types_watched(s), asked);
    synth_watch_types(s, NULL);
    finish(s);
}

/*
 * The requests behind the program's handles (mqd_get_request_info): a
 * receive, a wildcard one, a send (its destination, no tag), a pending
 * nonblocking collective with its schedule's tag and a finished one, the
 * null request and MPICH's pre-completed ones; handles naming no request
 * in use refused; an envelope that is not its communicator's not said.
 */
static void request_info_of(enum synth_gen gen)
{
    uint64_t comms[16];
    struct synth *s = start_gen(0, 8, gen, comms);
    uint64_t recv = synth_recv(s, 48, 2, 4, 1, DT_INT, 1, 0);
    uint64_t any = synth_recv(s, 0, -2, -1, 1, DT_INT, 1, 0);
    uint64_t send = synth_send_req(s, 4, DT_INT, 1), odd = synth_recv(s, 48, 1, 6, 1, DT_INT, 1, 0);
    int three = 3, nine = 9;
    unsigned world_ctx = 0;
    synth_sendq(s, &send, &three, &nine, &world_ctx, 1);
    uint64_t nbc = synth_nbc(s, comms[0], 288, 2, 0), done = synth_nbc(s, comms[0], 289, 2, 1);
    uint64_t psend = synth_persistent_send(s, comms[0], 0, 3, 8);
    /* A request whose communicator is not the one its context names. */
    synth_put(s, odd + (uint64_t)synth_off(s, "MPIR_Request", "comm"), comms[0], 8);
    struct result r;
    dlldump_process(s, &r, 0);
    assert_int_equal(r.rc, mqs_ok);
    mqs_taddr_t world = dlldump_comm_named(&r, "MPI_COMM_WORLD")->c.unique_id;
    mqs_taddr_t dup = dlldump_comm_named(&r, "mqd-dup")->c.unique_id;
    mqd_request_info i;
    assert_int_equal(request_info(s, synth_request_handle(s, recv), &i), mqs_ok);
    assert_int_equal(i.kind, MQD_REQ_RECV);
    assert_int_equal(i.state, MQD_REQ_PENDING);
    assert_int_equal(i.known, MQD_REQ_KNOWN_COMM | MQD_REQ_KNOWN_PEER | MQD_REQ_KNOWN_TAG);
    assert_int_equal(i.comm, dup);
    assert_int_equal(i.request, recv);
    assert_int_equal(i.peer_local, 2);
    assert_int_equal(i.peer_global, 2);
    assert_int_equal(i.tag, 4);
    assert_int_equal(request_info(s, synth_request_handle(s, any), &i), mqs_ok);
    assert_int_equal(i.comm, world);
    assert_int_equal(i.peer_local, -1);
    assert_int_equal(i.tag, -1);
    assert_int_equal(request_info(s, synth_request_handle(s, send), &i), mqs_ok);
    assert_int_equal(i.kind, MQD_REQ_SEND);
    assert_int_equal(i.known, MQD_REQ_KNOWN_COMM | MQD_REQ_KNOWN_PEER); /* MPIDIG keeps no tag */
    assert_int_equal(i.peer_global, 3);
    assert_int_equal(request_info(s, synth_request_handle(s, odd), &i), mqs_ok);
    assert_int_equal(i.known, MQD_REQ_KNOWN_COMM);
    assert_int_equal(i.peer_local, -1);
    /* A persistent send: 5.0 keeps no context in it, its comm says. */
    assert_int_equal(request_info(s, synth_request_handle(s, psend), &i), mqs_ok);
    assert_int_equal(i.kind, MQD_REQ_PERSISTENT_SEND);
    assert_int_equal(i.known, MQD_REQ_KNOWN_COMM | MQD_REQ_KNOWN_PEER | MQD_REQ_KNOWN_TAG);
    assert_int_equal(i.comm, world);
    assert_int_equal(i.peer_global, 3);
    assert_int_equal(i.tag, 8);
    assert_int_equal(request_info(s, synth_request_handle(s, nbc), &i), mqs_ok);
    assert_int_equal(i.kind, MQD_REQ_COLLECTIVE);
    assert_int_equal(i.state, MQD_REQ_PENDING);
    /* the member its schedule waits for next: its receive's, not the send done */
    assert_int_equal(i.known, MQD_REQ_KNOWN_COMM | MQD_REQ_KNOWN_SCHED_TAG | MQD_REQ_KNOWN_PEER |
                                  MQD_REQ_SCHED_RECEIVES);
    assert_int_equal(i.comm, world);
    assert_int_equal(i.sched_tag, 288);
    assert_int_equal(i.peer_local, 2);
    assert_int_equal(i.peer_global, 2);
    assert_int_equal(request_info(s, synth_request_handle(s, done), &i), mqs_ok);
    assert_int_equal(i.state, MQD_REQ_COMPLETE);
    assert_int_equal(i.known, MQD_REQ_KNOWN_COMM);
    assert_int_equal(request_info(s, 0x2c000000u, &i), mqs_ok); /* MPI_REQUEST_NULL */
    assert_int_equal(i.kind, MQD_REQ_NULL);
    assert_int_equal(i.state, MQD_REQ_COMPLETE);
    assert_int_equal(request_info(s, 0x6c000001u, &i), mqs_ok); /* MPIR_REQUEST_COMPLETE_SEND */
    assert_int_equal(i.kind, MQD_REQ_SEND);
    assert_int_equal(i.state, MQD_REQ_COMPLETE);
    /* A builtin's index is its kind: 4.1 on inserts ENQUEUE at 9. */
    int v5 = gen == SYNTH_CH4_STOCK_5;
    assert_int_equal(request_info(s, 0x6c00000au, &i), mqs_ok);
    assert_int_equal(i.kind, v5 ? MQD_REQ_GENERALIZED : MQD_REQ_COLLECTIVE);
    assert_int_equal(request_info(s, 0x6c000009u, &i), mqs_ok);
    assert_int_equal(i.kind, v5 ? MQD_REQ_OTHER : MQD_REQ_GENERALIZED);
    assert_int_equal(request_info(s, 0x6c00000du, &i), mqs_ok);
    assert_int_equal(i.kind, v5 ? MQD_REQ_RMA : MQD_REQ_OTHER);
    int bad = dlldump_code("a count, size or rank");
    assert_int_equal(request_info(s, 0x84000001u, &i), bad);  /* a communicator's handle */
    assert_int_equal(request_info(s, 0xec00f000u, &i), bad);  /* a block never made */
    synth_put(s, recv + (uint64_t)synth_off(s, "MPIR_Request", "ref_count"), 0, 4); /* freed */
    assert_int_equal(request_info(s, synth_request_handle(s, recv), &i), bad);
    finish(s);
}

static void test_synth__request_info(void **state)
{
    (void)state;
    request_info_of(SYNTH_CH4_STOCK);
    request_info_of(SYNTH_CH4_STOCK_5); /* 5.0: the kinds renumbered, the envelope in status */
    /* Generations whose synthetic targets have no pools named: said. */
    static const enum synth_gen no_pools[] = {SYNTH_CH3_402, SYNTH_DEBUGQ, SYNTH_DEBUGQ_5};
    for (size_t g = 0; g < sizeof no_pools / sizeof no_pools[0]; g++) {
        uint64_t comms[16];
        struct synth *s = start_gen(0, 8, no_pools[g], comms);
        struct result r;
        mqd_request_info i;
        dlldump_process(s, &r, 0);
        assert_int_equal(request_info(s, 0xec000001u, &i), mqs_no_information);
        assert_string_equal(i.text, "the request pools (MPIR_Request_mem) are not found");
        finish(s);
    }
}

/*
 * The tag each communicator's next nonblocking collective will take
 * (mqd_get_comm_nbc_tag): MPI_COMM_WORLD started two (287 and 288 here,
 * then 289), mqd-dup none; a value below MPICH's first tag (corrupt) or a
 * communicator the process does not show: no information.
 */
static void test_synth__comm_nbc_tag(void **state)
{
    (void)state;
    uint64_t comms[16];
    struct synth *s = start_gen(0, 8, SYNTH_CH4_STOCK, comms);
    synth_nbc(s, comms[0], 288, 1, 0);
    synth_nbc(s, comms[0], 289, 1, 1);
    struct result r;
    dlldump_process(s, &r, 0);
    assert_int_equal(r.rc, mqs_ok);
    assert_non_null(dlldump_dll->get_comm_nbc_tag);
    mqs_process *p = synth_process(s);
    mqs_taddr_t world = dlldump_comm_named(&r, "MPI_COMM_WORLD")->c.unique_id;
    mqs_taddr_t dup = dlldump_comm_named(&r, "mqd-dup")->c.unique_id;
    mqs_tword_t t = 0;
    assert_int_equal(dlldump_dll->get_comm_nbc_tag(p, world, &t), mqs_ok);
    assert_int_equal(t, 290);
    assert_int_equal(dlldump_dll->get_comm_nbc_tag(p, dup, &t), mqs_ok);
    assert_int_equal(t, 287);
    assert_int_equal(dlldump_dll->get_comm_nbc_tag(p, 0x1234, &t), mqs_no_information);
    synth_put(s, comms[0] + (uint64_t)synth_off(s, "MPIR_Comm", "next_sched_tag"), 12, 4);
    dlldump_process(s, &r, 1);
    assert_int_equal(dlldump_dll->get_comm_nbc_tag(p, world, &t), mqs_no_information);
    finish(s);
    /* The debug builds' communicators say it too. */
    s = start_gen(0, 8, SYNTH_CH3_402, comms);
    dlldump_process(s, &r, 0);
    assert_int_equal(dlldump_dll->get_comm_nbc_tag(synth_process(s),
                                           dlldump_comm_named(&r, "MPI_COMM_WORLD")->c.unique_id, &t),
                     mqs_ok);
    assert_int_equal(t, 287);
    finish(s);
}

static void comms_come_and_go(enum synth_gen gen)
{
    uint64_t comms[16];
    struct synth *s = start_gen(0, 8, gen, comms);
    struct result r;
    dlldump_process(s, &r, 0);
    assert_int_equal(r.ncomms, 5);
    /* mqd-dup is freed: unlinked, its memory scribbled, the sequence moved. */
    uint64_t left[] = {comms[0], comms[1], comms[2], comms[3], comms[5], comms[6]};
    synth_comm_list(s, left, 6, 8);
    char junk[64];
    memset(junk, 0xff, sizeof junk);
    synth_put_bytes(s, comms[4], junk, sizeof junk);
    dlldump_process(s, &r, 1);
    assert_int_equal(r.rc, mqs_ok);
    assert_int_equal(r.ncomms, 4);
    assert_string_equal(r.comms[2].c.name, "unnamed communicator, context 0x40");
    /* A new one appears. */
    static const int world[] = {0, 1, 2, 3};
    uint64_t more[] = {comms[0], comms[1], comms[2], comms[3], comms[5], comms[6],
                       synth_comm(s, 0x84000009u, 96, 4, 1, "late", world)};
    synth_comm_list(s, more, 7, 9);
    dlldump_process(s, &r, 1);
    assert_int_equal(r.ncomms, 5);
    assert_string_equal(r.comms[4].c.name, "late");
    finish(s);
}

static void test_synth__communicators_come_and_go(void **state)
{
    (void)state;
    for (size_t g = 0; g < NGENS; g++)
        comms_come_and_go(every_gen[g]);
}

/*
 * A ch3 process in MPI_Finalize: MPICH has freed its communicators (the
 * list is empty) and set MPIR_debug_state to aborting, but ch3's queues
 * and process group are still there.  The DLL gives MPI_COMM_WORLD from
 * the group with what the queues still hold, each entry saying so; with
 * the group gone, or the state not aborting, no communicator and no error.
 */
static void test_synth__finalizing_process_keeps_its_queues(void **state)
{
    (void)state;
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        long before = synth_live_blocks();
        struct synth *s = synth_new_gen(targets[t].big_endian, targets[t].ptr, SYNTH_CH3_402);
        synth_process_group(s, "kvs_77_0", 2);
        synth_finalizing(s, 2, 4);
        synth_comm_list(s, NULL, 0, 12);
        uint64_t unexp[] = {synth_recv(s, 0, 1, 4, 1, 0x4c000405u, 0, 4),
                            synth_recv(s, 1, 3, 1, 0, 0x4c00010du, 0, 0),
                            synth_recv(s, 16, 0, 9, 1, 0x4c000405u, 0, 4)};
        synth_recv_list(s, 1, unexp, 3);
        struct result r;
        dlldump_process(s, &r, 0);
        assert_int_equal(r.rc, mqs_ok);
        assert_int_equal(r.ncomms, 1);
        const struct rcomm *w = dlldump_comm_named(&r, "MPI_COMM_WORLD");
        assert_int_equal(w->c.size, 4);
        assert_int_equal(w->c.local_rank, 2);
        assert_int_equal(w->nops[mqs_pending_receives], 0);
        assert_int_equal(w->nops[mqs_unexpected_messages], 2); /* context 16: not the world's */
        const mqs_pending_operation *o = &w->ops[mqs_unexpected_messages][0];
        assert_int_equal(o->actual_local_rank, 1);
        assert_int_equal(o->actual_global_rank, 1);
        assert_int_equal(o->actual_tag, 4);
        assert_string_equal(o->extra_text[2], "left behind: MPI_Finalize has freed the "
                                              "communicator");
        o = &w->ops[mqs_unexpected_messages][1]; /* the barrier's, on context 1 */
        assert_int_equal(o->actual_global_rank, 3);
        assert_string_equal(o->extra_text[3], "part of a collective operation");
        /* Not finalizing (an empty list for another reason): nothing. */
        synth_finalizing(s, 0, 4);
        synth_comm_list(s, NULL, 0, 13);
        dlldump_process(s, &r, 1);
        assert_int_equal(r.rc, mqs_ok);
        assert_int_equal(r.ncomms, 0);
        /* MPIDI_PG_Finalize has run: nothing left, and that is no error. */
        synth_finalizing(s, 2, -1);
        synth_comm_list(s, NULL, 0, 14);
        dlldump_process(s, &r, 1);
        assert_int_equal(r.rc, mqs_ok);
        assert_int_equal(r.ncomms, 0);
        finish(s);
        assert_int_equal(synth_live_blocks(), before);
    }
}

/* Corrupt memory: a specific error for the process, never a crash or hang. */
static void test_synth__corrupt_targets(void **state)
{
    (void)state;
    struct synth *s;
    uint64_t comms[16];
    struct result r;

    /* A cycle in the posted receive list. */
    s = start(0, 8, comms);
    uint64_t a = synth_recv(s, 0, 1, 1, 1, DT_INT, 1, 0), b = synth_recv(s, 0, 1, 2, 1, DT_INT, 1, 0);
    uint64_t pair[] = {a, b};
    synth_recv_list(s, 0, pair, 2);
    synth_put(s, b + (uint64_t)synth_off(s, "MPIR_Request", "next"), a, 8);
    dlldump_process(s, &r, 0);
    assert_non_null(strstr(dlldump_dll->dll_error_string(r.rc), "loops back"));
    finish(s);

    /* A cycle in a debugq list (MPICH 4.0.3+), and a wild entry pointer. */
    s = start_gen(1, 4, SYNTH_DEBUGQ, comms);
    a = synth_recv(s, 0, 1, 1, 1, DT_INT, 1, 0);
    b = synth_recv(s, 0, 1, 2, 1, DT_INT, 1, 0);
    uint64_t dpair[] = {a, b};
    synth_recv_list(s, 0, dpair, 2);
    dlldump_process(s, &r, 0);
    assert_int_equal(r.rc, mqs_ok);
    assert_int_equal(r.comms[0].nops[mqs_pending_receives], 2);
    dlldump_release(s);
    uint64_t newest = 0;
    assert_int_equal(synth_read_ptr(s, "MPIR_Recvq_head", &newest), 0);
    synth_put(s, newest + (uint64_t)synth_off(s, "MPIR_Debugq", "next"), newest, 4);
    dlldump_process(s, &r, 0);
    assert_non_null(strstr(dlldump_dll->dll_error_string(r.rc), "loops back"));
    dlldump_release(s);
    synth_put(s, newest + (uint64_t)synth_off(s, "MPIR_Debugq", "req"), 0xdead0000u, 4);
    synth_put(s, newest + (uint64_t)synth_off(s, "MPIR_Debugq", "next"), 0, 4);
    dlldump_process(s, &r, 0);
    assert_non_null(strstr(dlldump_dll->dll_error_string(r.rc), "cannot read"));
    finish(s);

    /* A cycle in the communicator list. */
    s = start(1, 4, comms);
    synth_put(s, comms[0] + (uint64_t)synth_off(s, "MPIR_Comm", "comm_next"), comms[6], 4);
    dlldump_process(s, &r, 0);
    assert_non_null(strstr(dlldump_dll->dll_error_string(r.rc), "loops back"));
    assert_int_equal(r.ncomms, 0);
    finish(s);

    /* A wild pointer. */
    s = start(0, 8, comms);
    synth_put(s, comms[2] + (uint64_t)synth_off(s, "MPIR_Comm", "comm_next"), 0xdead0000u, 8);
    dlldump_process(s, &r, 0);
    assert_non_null(strstr(dlldump_dll->dll_error_string(r.rc), "cannot read"));
    finish(s);

    /* A huge size. */
    s = start(0, 8, comms);
    synth_put(s, comms[4] + (uint64_t)synth_off(s, "MPIR_Comm", "local_size"), 1u << 30, 4);
    dlldump_process(s, &r, 0);
    assert_non_null(strstr(dlldump_dll->dll_error_string(r.rc), "out of range"));
    finish(s);

    /* A rank beyond the size, and a connection table too short. */
    s = start(0, 8, comms);
    synth_put(s, comms[4] + (uint64_t)synth_off(s, "MPIR_Comm", "rank"), 4, 4);
    dlldump_process(s, &r, 0);
    assert_non_null(strstr(dlldump_dll->dll_error_string(r.rc), "out of range"));
    finish(s);

    /* A name of 128 bytes with no terminator: the first 63, terminated. */
    s = start(0, 8, comms);
    char longname[128];
    memset(longname, 'A', sizeof longname);
    synth_put_bytes(s, comms[4] + (uint64_t)synth_off(s, "MPIR_Comm", "name"), longname, 128);
    dlldump_process(s, &r, 0);
    assert_int_equal(r.rc, mqs_ok);
    assert_int_equal(strlen(r.comms[2].c.name), 63);
    finish(s);
}

/*
 * ch3's connection tables are looked up only when a communicator other
 * than the world and self is read (their DWARF is in libmpi's last units).
 * With a process group, the world and self come from it alone, MPIDI_VC
 * and MPIDI_VCRT never asked; a build whose DWARF lacks MPIDI_VCRT reads
 * them as ever, leaves the other communicators' members unknown, and says
 * through mqs_dprints what is missing.
 */
static void test_synth__missing_debug_information_is_named(void **state)
{
    (void)state;
    static const int world[] = {0, 1, 2, 3}, self[] = {2}, pair[] = {2, 3};
    struct synth *s = synth_new_gen(0, 8, SYNTH_CH3_402);
    synth_process_group(s, "kvs_77_0", 2);
    uint64_t comms[] = {synth_comm(s, 0x44000000u, 0, 4, 2, "MPI_COMM_WORLD", world),
                        synth_comm(s, 0x44000001u, 16, 1, 0, "MPI_COMM_SELF", self),
                        synth_comm(s, 0x84000001u, 48, 2, 0, "mqd-pair", pair)};
    synth_comm_list(s, comms, 2, 7);
    synth_watch_types(s, "MPIDI_VC");
    struct result r;
    dlldump_process(s, &r, 0);
    assert_int_equal(r.rc, mqs_ok);
    const struct rcomm *c = dlldump_comm_named(&r, "MPI_COMM_WORLD");
    assert_int_equal(c->group_rc, mqs_ok);
    assert_int_equal(c->group[3], 3);
    c = dlldump_comm_named(&r, "MPI_COMM_SELF");
    assert_int_equal(c->group_rc, mqs_ok);
    assert_int_equal(c->group[0], 2);
    assert_int_equal(synth_types_watched(s), 0);
    /* The pair needs the tables: asked now, and missing. */
    synth_drop_type(s, "MPIDI_VCRT");
    synth_comm_list(s, comms, 3, 8);
    dlldump_process(s, &r, 1);
    assert_int_equal(r.rc, mqs_ok);
    assert_int_equal(r.ncomms, 3);
    assert_true(synth_types_watched(s) > 0);
    c = dlldump_comm_named(&r, "mqd-pair");
    assert_int_equal(c->c.size, 2);
    assert_int_not_equal(c->group_rc, mqs_ok);
    assert_int_equal(dlldump_comm_named(&r, "MPI_COMM_WORLD")->group_rc, mqs_ok);
    if (!strstr(synth_last_dprints(), "MPIDI_VCRT:size"))
        fail_msg("the DLL does not name what is missing: %s", synth_last_dprints());
    synth_watch_types(s, NULL);
    finish(s);
}

/* No DWARF types at all (libmpi.so stripped): the DLL's known layouts are
 * for real builds only, chosen by MPICH's version and device strings, the
 * pointer size and byte order (without the strings: the one layout that
 * fits, if only one does), and checked against the memory; anything else
 * is refused, saying why. */
static void put_string_symbol(struct synth *s, const char *name, const char *value)
{
    uint64_t a = synth_alloc(s, (int)strlen(value) + 1);
    synth_put_bytes(s, a, value, (int)strlen(value) + 1);
    synth_symbol(s, name, a);
}

/* build_rank's state with no types; named: as MPICH 4.0.2 ch3:nemesis. */
static void dump_stripped(int ptr, int named, struct result *r)
{
    uint64_t comms[16];
    struct synth *s = start(0, ptr, comms);
    synth_drop_all_types(s);
    if (named) {
        put_string_symbol(s, "MPII_Version_string", "4.0.2");
        put_string_symbol(s, "MPII_Version_device", "ch3:nemesis");
    }
    dlldump_process(s, r, 0);
    static char why[512]; /* the DLL's message dies with its process info */
    snprintf(why, sizeof why, "%s", r->why ? r->why : "(none)");
    r->why = why;
    finish(s);
}

/* An MPICH without --enable-debuginfo (Debian's, most distributions'):
 * no communicator list, but its version strings; the message says what
 * this MPICH lacks and the fix, never "not an MPICH program".  A process
 * with neither is not MPICH. */
static void test_synth__mpich_without_debuginfo_is_named(void **state)
{
    (void)state;
    for (int device = 0; device < 2; device++) {
        uint64_t comms[16];
        struct synth *s = start(0, 8, comms);
        synth_drop_symbol(s, "MPIR_All_communicators");
        synth_drop_symbol(s, "MPII_Version_device");
        if (device)
            put_string_symbol(s, "MPII_Version_device", "ch4:ucx");
        struct result r;
        dlldump_process(s, &r, 0);
        assert_int_not_equal(r.rc, mqs_ok);
        assert_non_null(r.why);
        const char *want = device ? "this MPICH was configured without --enable-debuginfo"
                                  : "not an MPICH program";
        if (!strstr(r.why, want))
            fail_msg("\"%s\" does not say \"%s\"", r.why, want);
        if (device && strstr(r.why, "not an MPICH program"))
            fail_msg("an MPICH called no MPICH: %s", r.why);
        finish(s);
    }
}

static void test_synth__no_dwarf_known_layouts_only(void **state)
{
    (void)state;
    struct result r;
    /* No version strings and no layout of this width: cannot tell. */
    dump_stripped(4, 0, &r);
    assert_int_equal(r.rc, dlldump_code("a type or field"));
    if (!strstr(r.why, "without the symbols MPII_Version_string and MPII_Version_device the "
                       "DLL cannot tell which known layout applies (0 fit)"))
        fail_msg("no word of the version string: %s", r.why);
    /* No version strings: the one 64-bit layout is tried, and the memory
     * (not MPICH's layout) does not fit it. */
    dump_stripped(8, 0, &r);
    assert_int_equal(r.rc, dlldump_code("with no debug types, the DLL used the known layout"));
    /* A build the DLL does not know. */
    dump_stripped(4, 1, &r);
    if (!strstr(r.why, "knows no layout for MPICH 4.0.2 (ch3:nemesis, 32-bit little-endian)"))
        fail_msg("unexpected message: %s", r.why);
    /* A known build's name on memory laid out otherwise (the synthetic
     * layout is not MPICH's): an error, never a wrong answer. */
    dump_stripped(8, 1, &r);
    assert_int_equal(r.rc, dlldump_code("with no debug types, the DLL used the known layout"));
}

/*
 * MPI-2: a parent job of two (world "kvs_parent") spawned two children
 * ("kvs_child").  The debugger names them 0, 1, 7 and 8; every peer must
 * be reported by that identity, in the parents and in the children, whose
 * world ranks 0 and 1 are identities 7 and 8.  4.x ch4 keeps no name of
 * another world: those peers are -1 there.  Without a job (an MPI-1
 * debugger) a child reports world ranks, and peers outside its world as
 * unknown (-1).  named 0: the library does not say which world is its own
 * (4.x ch4 stripped of its local symbols): a child knows only itself.
 */
enum { CTX_SPAWN = 16 };

static struct synth *spawn_process(enum synth_gen gen, int named, int child, int rank)
{
    static const int world[] = {0, 1}, other[] = {-1, -2};
    struct synth *s = synth_new_gen(0, 8, gen);
    uint64_t comms[2];
    if (named)
        synth_process_group(s, child ? "kvs_child" : "kvs_parent", rank);
    else
        synth_world_rank(s, rank);
    comms[0] = synth_comm(s, 0x44000000u, 0, 2, rank, "MPI_COMM_WORLD", world);
    synth_foreign_group(s, child ? "kvs_parent" : "kvs_child");
    comms[1] = synth_intercomm(s, 0x84000001u, CTX_SPAWN, 2, rank, 2,
                               child ? "to parents" : "to children", other);
    synth_comm_list(s, comms, 2, 2);
    if (child) { /* a receive from parent 1, and one from the other child */
        uint64_t posted[] = {synth_recv(s, CTX_SPAWN, 1, 3, 1, DT_INT, 1, 0),
                             synth_recv(s, 0, !rank, 4, 1, DT_INT, 1, 0)};
        synth_recv_list(s, 0, posted, 2);
    } else if (rank == 0) { /* a send to child 0 */
        uint64_t sreq[] = {synth_send_req(s, 1, DT_INT, 1)};
        int ranks[] = {0}, tags[] = {3};
        unsigned ctxs[] = {SYNTH_INTER_SEND(CTX_SPAWN)};
        synth_sendq(s, sreq, ranks, tags, ctxs, 1);
    }
    return s;
}

/* The peer's global rank of the first operation of queue q in comm c. */
static long peer_global(const struct result *r, int c, int q)
{
    if (r->rc != mqs_ok)
        fail_msg("dump failed: %s (%s)", dlldump_dll->dll_error_string(r->rc), r->why ? r->why : "");
    assert_true(c < r->ncomms && r->comms[c].nops[q] > 0);
    return r->comms[c].ops[q][0].desired_global_rank;
}

static void identities_across_a_spawn(enum synth_gen gen, int named)
{
    struct synth *procs[4] = {spawn_process(gen, named, 0, 0), spawn_process(gen, named, 0, 1),
                              spawn_process(gen, named, 1, 0), spawn_process(gen, named, 1, 1)};
    static const int identity[4] = {0, 1, 7, 8};
    int job, worlds = gen != SYNTH_DEBUGQ; /* another world's processes are known */
    struct result r[4];
    dlldump_begin_job(&job, procs, identity, 4); /* set up and name every process first */
    for (int i = 0; i < 4; i++)
        dlldump_process(procs[i], &r[i], 1);
    /* parent 0 -> child 0; child 0 <- parent 1; each child <- the other */
    assert_int_equal(peer_global(&r[0], 1, mqs_pending_sends), worlds ? 7 : -1);
    assert_int_equal(peer_global(&r[2], 1, mqs_pending_receives), worlds ? 1 : -1);
    assert_int_equal(peer_global(&r[2], 0, mqs_pending_receives), named ? 8 : -1);
    assert_int_equal(peer_global(&r[3], 0, mqs_pending_receives), named ? 7 : -1);
    /* Each names itself in its groups (the debugger checks that). */
    for (int i = 0; i < 4; i++) {
        int g[2];
        assert_int_equal(dlldump_dll->setup_communicator_iterator(synth_process(procs[i])), mqs_ok);
        assert_int_equal(dlldump_dll->get_comm_group(synth_process(procs[i]), g), mqs_ok);
        assert_int_equal(g[i % 2], identity[i]);
        assert_int_equal(g[!(i % 2)], named || i < 2 ? identity[i ^ 1] : -1);
    }
    dlldump_end_job(&job, procs, 4);
    /* No job: world ranks, and -1 outside the world. */
    dlldump_process(procs[2], &r[2], 0);
    assert_int_equal(peer_global(&r[2], 0, mqs_pending_receives), 1);
    assert_int_equal(peer_global(&r[2], 1, mqs_pending_receives), -1);
    for (int i = 0; i < 4; i++)
        finish(procs[i]);
}

static void test_synth__mpi2_identities_across_a_spawn(void **state)
{
    (void)state;
    for (size_t g = 0; g < NGENS; g++)
        identities_across_a_spawn(every_gen[g], 1);
    identities_across_a_spawn(SYNTH_DEBUGQ, 0);
}

/*
 * ch3 names its own process group by its PMI name (mpid_init.c: the
 * group's id is MPIR_pmi_job_id()): a world of two ("kvs_77_0") that the
 * debugger names 5 and 9 is {5, 9} in both, with neither MPIDI_PG_t nor
 * MPIDI_Process_t asked of the debugger (their DWARF is deep in ch3's
 * units).  Without the PMI name's static, or with its string freed (not
 * printable), the group's own id names it, MPIDI_PG_t asked then.
 */
enum pmi_name { PMI_NAMED, PMI_ABSENT, PMI_FREED };

static void own_group_named(enum synth_gen gen, enum pmi_name how)
{
    static const int identity[2] = {5, 9}, world[] = {0, 1};
    struct synth *procs[2];
    struct result r;
    int job;
    for (int i = 0; i < 2; i++) {
        struct synth *s = procs[i] = synth_new_gen(0, 8, gen);
        synth_process_group(s, "kvs_77_0", i);
        uint64_t comms[] = {synth_comm(s, 0x44000000u, 0, 2, i, "MPI_COMM_WORLD", world)};
        synth_comm_list(s, comms, 1, 1);
        uint64_t name;
        if (how == PMI_ABSENT)
            synth_drop_symbol(s, "pmi_kvs_name");
        if (how == PMI_FREED) { /* malloc's own words over the string */
            assert_int_equal(synth_read_ptr(s, "pmi_kvs_name", &name), 0);
            synth_put_bytes(s, name, "\x90\x1f\x7f", 4);
        }
        synth_watch_types(s, "MPIDI_P");
    }
    dlldump_begin_job(&job, procs, identity, 2);
    for (int i = 0; i < 2; i++) {
        int g[2];
        dlldump_process(procs[i], &r, 1);
        assert_int_equal(r.rc, mqs_ok);
        assert_int_equal(dlldump_dll->setup_communicator_iterator(synth_process(procs[i])), mqs_ok);
        assert_int_equal(dlldump_dll->get_comm_group(synth_process(procs[i]), g), mqs_ok);
        assert_int_equal(g[0], identity[0]);
        assert_int_equal(g[1], identity[1]);
        int asked = synth_types_watched(procs[i]);
        if (how == PMI_NAMED ? asked != 0 : asked == 0)
            fail_msg("%s, PMI name %d: %d look-ups of MPIDI_PG_t or MPIDI_Process_t",
                     gen_names[gen], (int)how, asked);
        synth_watch_types(procs[i], NULL);
    }
    dlldump_end_job(&job, procs, 2);
    for (int i = 0; i < 2; i++)
        finish(procs[i]);
}

static void test_synth__ch3_group_named_by_its_pmi_name(void **state)
{
    (void)state;
    static const enum synth_gen ch3[] = {SYNTH_CH3_402, SYNTH_CH3_DQ, SYNTH_CH3_DQ_5};
    for (size_t g = 0; g < sizeof ch3 / sizeof ch3[0]; g++)
        for (int how = PMI_NAMED; how <= PMI_FREED; how++)
            own_group_named(ch3[g], (enum pmi_name)how);
}

/*
 * Two processes of one program (one image, as a debugger gives them): the
 * library's version strings are read once, by the first.  The second's
 * device string is overwritten with another device's: were it read, the
 * second would be read as ch4, and wrongly.
 */
static void test_synth__one_image_named_by_its_first_process(void **state)
{
    (void)state;
    uint64_t comms[16];
    struct synth *first = start_gen(0, 8, SYNTH_CH3_DQ, comms);
    struct synth *second = start_gen(0, 8, SYNTH_CH3_DQ, comms);
    uint64_t dev = synth_symbol_at(second, "MPII_Version_device");
    assert_true(dev != 0);
    assert_int_equal(dev, synth_symbol_at(first, "MPII_Version_device"));
    synth_put_bytes(second, dev, "ch4:ofi", 8);
    synth_share_image(second, first);
    struct result r;
    dlldump_process(first, &r, 0);
    check_rank(&r, SYNTH_CH3_DQ);
    dlldump_process(second, &r, 0);
    check_rank(&r, SYNTH_CH3_DQ);
    finish(second);
    finish(first);
}

/* mqs_malloc fails at the 1st, 2nd, ... call of a whole dump: each time a
 * clean error or a correct dump, and nothing left allocated. */
/*
 * Host personalities: the same target driven by debuggers that behave like
 * the real ones nobody on this project wrote.  Each gets the exact answer
 * of check_rank, or a specific error; never a crash (the sanitizer build
 * also catches a read past a short table).
 */
enum personality { P_GDB_NAMES, P_NULL_DPRINTS, P_NULL_SIZEOF, P_MPI1_SHORT, P_OTHER_SIZES };

static void dump_as(enum personality who, enum synth_gen gen, int big_endian, int ptr)
{
    const struct synth_host *h = synth_callbacks();
    mqs_basic_callbacks basic = h->basic;
    mqs_image_callbacks image = h->image;
    void *short_basic = NULL, *short_process = NULL;
    switch (who) {
    case P_GDB_NAMES:
        synth_host_kind(SYNTH_HOST_GDB);
        break;
    case P_NULL_DPRINTS: /* MPICH's stub debugger leaves both NULL */
        basic.mqs_dprints_fp = NULL;
        basic.mqs_errorstring_fp = NULL;
        dlldump_dll->setup_basic_callbacks(&basic);
        break;
    case P_NULL_SIZEOF: /* ... and mqs_sizeof_fp, as it does */
        basic.mqs_dprints_fp = NULL;
        dlldump_dll->setup_basic_callbacks(&basic);
        image.mqs_sizeof_fp = NULL;
        image.mqs_find_function_fp = NULL;
        dlldump_image_cb = &image;
        break;
    case P_MPI1_SHORT: { /* tables of the MPI-1 header: no job members at all */
        size_t bn = offsetof(mqs_basic_callbacks, mqs_put_job_info_fp);
        size_t pn = offsetof(mqs_process_callbacks, mqs_get_process_job_fp);
        assert_non_null(short_basic = malloc(bn));
        assert_non_null(short_process = malloc(pn));
        memcpy(short_basic, &h->basic, bn);
        memcpy(short_process, &h->process, pn);
        dlldump_dll->setup_basic_callbacks(short_basic);
        dlldump_process_cb = short_process;
        break;
    }
    case P_OTHER_SIZES:
        synth_host_kind(SYNTH_HOST_OTHER_SIZES);
        break;
    }
    uint64_t comms[16];
    long before = synth_live_blocks();
    struct synth *s = start_gen(big_endian, ptr, gen, comms);
    struct result r;
    dlldump_process(s, &r, 0);
    static char why[512];
    snprintf(why, sizeof why, "%s", r.why ? r.why : "");
    switch (who) {
    case P_GDB_NAMES:
    case P_NULL_DPRINTS:
    case P_MPI1_SHORT:
        check_rank(&r, gen);
        break;
    case P_NULL_SIZEOF:
        /* No type sizes: the known layouts are for real builds, and none
         * fits the synthetic one: refused, naming what is missing. */
        assert_int_equal(r.rc, dlldump_code("a type or field"));
        if (!strstr(why, "MPI_Aint") || !strstr(why, "known layout"))
            fail_msg("unexpected message: %s", why);
        break;
    case P_OTHER_SIZES:
        assert_int_equal(r.rc, dlldump_code("the debug information describes structures"));
        if (!strstr(why, "type sizes are another target's"))
            fail_msg("unexpected message: %s", why);
        break;
    }
    finish(s);
    assert_int_equal(synth_live_blocks(), before);
    synth_host_kind(SYNTH_HOST_DWARF);
    dlldump_dll->setup_basic_callbacks(&h->basic);
    dlldump_image_cb = &h->image;
    dlldump_process_cb = &h->process;
    free(short_basic);
    free(short_process);
}

static void test_synth__host_personalities(void **state)
{
    (void)state;
    for (int who = P_GDB_NAMES; who <= P_OTHER_SIZES; who++)
        for (size_t g = 0; g < NGENS; g++)
            for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++)
                dump_as((enum personality)who, every_gen[g], targets[t].big_endian,
                        targets[t].ptr);
}

static void check_gen_rank(const struct result *r, void *gen)
{
    check_rank(r, *(const enum synth_gen *)gen);
}

static void malloc_fails_at_each_call(enum synth_gen gen)
{
    uint64_t comms[16];
    struct synth *s = start_gen(0, 8, gen, comms);
    struct dlldump_check check = {check_gen_rank, &gen};
    assert_true(dlldump_fail_each_malloc(s, &check) > 0);
    synth_free(s);
}

static void test_synth__malloc_fails_at_each_call(void **state)
{
    (void)state;
    for (size_t g = 0; g < NGENS; g++)
        malloc_fails_at_each_call(every_gen[g]);
    malloc_fails_at_each_call(SYNTH_CH4_STOCK);
}

/*
 * 4.x ch4: a communicator without a group names its members in a rank
 * map; one spanning two worlds (a spawn merged with MPI_Intercomm_merge)
 * has a multi-table map of {address table, lpid} pairs.  Members of this
 * process's world (table 0) get their world rank, the others -1 (no MPI-2
 * keys in 4.x ch4); a mode out of range is an error, not a guess.
 */
static void test_synth__ch4_rank_map_across_worlds(void **state)
{
    (void)state;
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        struct synth *s = synth_new_gen(targets[t].big_endian, targets[t].ptr, SYNTH_DEBUGQ);
        static const int world[] = {0, 1}, merged[] = {1, -1, 0, -2}; /* -k: table 1, lpid k-1 */
        uint64_t comms[2] = {synth_comm(s, 0x44000000u, 0, 2, 1, "MPI_COMM_WORLD", world),
                             synth_comm(s, 0x84000000u, 32, 4, 0, "merged", merged)};
        synth_comm_list(s, comms, 2, 2);
        uint64_t posted[] = {synth_recv(s, 32, 1, 3, 1, DT_INT, 1, 0),
                             synth_recv(s, 32, 2, 3, 1, DT_INT, 1, 0)};
        synth_recv_list(s, 0, posted, 2);
        struct result r;
        dlldump_process(s, &r, 0);
        assert_int_equal(r.rc, mqs_ok);
        const struct rcomm *m = dlldump_comm_named(&r, "merged");
        assert_int_equal(m->nops[mqs_pending_receives], 2);
        assert_int_equal(m->ops[mqs_pending_receives][0].desired_global_rank, -1);
        assert_int_equal(m->ops[mqs_pending_receives][1].desired_global_rank, 0);
        /* A corrupt mode: that communicator cannot be read, and says so. */
        synth_put(s, comms[1] + (uint64_t)synth_off(s, "MPIR_Comm", "dev") +
                         (uint64_t)synth_off(s, "MPIDI_Devcomm_t", "ch4.map") +
                         (uint64_t)synth_off(s, "MPIDI_rank_map_t", "mode"),
                  99, 4);
        synth_comm_list(s, comms, 2, 3);
        dlldump_process(s, &r, 1);
        assert_int_not_equal(r.rc, mqs_ok);
        finish(s);
    }
}

/* ---------------------------------------------------------------- the samples' states */

/*
 * Every sample's queue state (SAMPLE.expect) built into a synthetic target
 * of each generation, byte order and pointer width, one process at a
 * time, and the DLL's answer compared with it field by field: the
 * communicators (name, size, rank), and every operation (queue, status,
 * peer, global peer, tag, bytes), no more and no less.  What a generation
 * cannot know is allowed for it and nothing else: ch4's debug queues
 * record no datatypes (send and receive lengths are -1) and leave an
 * unexpected message's request pending until it is matched.  Each
 * communicator's members come from the sample's own lines: the process at
 * its rank, every peer at its global rank, the rest filled with the
 * world's other ranks.
 *
 * A job of several worlds (spawn) is dumped twice: under an MPI-1
 * debugger, peers are world ranks in the process's own world and unknown
 * (-1) in the other; under an MPI-2 one, whose identities number the
 * processes world by world, every peer is its identity, but in 4.x ch4,
 * which keeps no name of another world: -1 there.  4.x ch4 is dumped both
 * before its communicators have groups (rank maps) and after (lupids).
 */
#define EX_MAX_COMMS 12
#define EX_MAX_SIZE 64

#define EX_UNSET INT_MIN

struct ex_comm {
    const struct expect_comm *e;
    /* Local group; an intercomm's remote: members as synth.h takes them. */
    int lt[EX_MAX_SIZE], rt[EX_MAX_SIZE];
    unsigned ctx;
    uint64_t addr;
};

static int ex_applies(const struct expect_comm *c, int proc)
{
    return c->rank == proc || c->rank == EXPECT_ALL_RANKS;
}

static int ex_world(long process)
{
    return (int)(process / EXPECT_WORLD);
}

/* The world other than proc's (samples have at most two). */
static int ex_other_world(const struct expect *e, int proc)
{
    if (e->nworlds > 2)
        fail_msg("a sample of %d worlds: the synthetic targets have two", e->nworlds);
    return e->nworlds < 2 ? -1 : !ex_world(proc);
}

/* Process m as proc's tables name it (synth.h): its world rank in proc's
 * world, -(rank + 1) in the other. */
static int ex_member(int proc, long m)
{
    int r = (int)(m % EXPECT_WORLD);
    return ex_world(m) == ex_world(proc) ? r : -r - 1;
}

/* Fill a table's unset slots with members of world w (as ex_member names
 * them for proc) it does not hold. */
static void ex_fill(const struct expect *e, int proc, int w, int *t, int n)
{
    for (int i = 0; i < n; i++) {
        for (int r = 0; t[i] == EX_UNSET && r < e->world_size[w]; r++) {
            int m = ex_member(proc, (long)w * EXPECT_WORLD + r), used = 0;
            for (int k = 0; k < n; k++)
                used |= t[k] == m;
            if (!used)
                t[i] = m;
        }
    }
}

/* Process proc's communicators; -1 if the sample names one it has not. */
static int ex_comms(const struct expect *e, int proc, struct ex_comm *cs)
{
    int n = 0;
    for (int i = 0; i < e->ncomms; i++) {
        const struct expect_comm *c = &e->comms[i];
        if (!ex_applies(c, proc))
            continue;
        struct ex_comm *x = &cs[n];
        if (n == EX_MAX_COMMS || c->size > EX_MAX_SIZE || c->remote_size > EX_MAX_SIZE)
            fail_msg("sample too big for the synthetic test");
        memset(x, 0, sizeof *x);
        x->e = c;
        for (int k = 0; k < EX_MAX_SIZE; k++)
            x->lt[k] = x->rt[k] = EX_UNSET;
        x->lt[c->local_rank] = ex_member(proc, proc);
        int remote_world = ex_world(proc); /* where the remote group's peers are */
        for (int k = 0; k < e->nops; k++) {
            const struct expect_op *o = &e->ops[k];
            if (o->rank != proc || strcmp(o->comm, c->name) != 0 ||
                o->peer < 0 || o->gpeer < 0)
                continue;
            (c->remote_size >= 0 ? x->rt : x->lt)[o->peer] = ex_member(proc, o->gpeer);
            if (c->remote_size >= 0)
                remote_world = ex_world(o->gpeer);
        }
        ex_fill(e, proc, ex_world(proc), x->lt, (int)c->size);
        if (c->remote_size >= 0)
            ex_fill(e, proc, remote_world, x->rt, (int)c->remote_size);
        x->ctx = !strcmp(c->name, "MPI_COMM_WORLD") ? 0
               : !strcmp(c->name, "MPI_COMM_SELF")  ? 16u
                                                    : 32u + 16u * (unsigned)n;
        n++;
    }
    return n;
}

static struct ex_comm *ex_comm_of(struct ex_comm *cs, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(cs[i].e->name, name) == 0)
            return &cs[i];
    fail_msg("an operation on \"%s\", which the sample does not list", name);
    return NULL;
}

/* Build process proc of e, with its communicators cs[nc], into s: in a
 * job of several worlds with its world's name and the other's. */
static void ex_build(struct synth *s, const struct expect *e, int proc, struct ex_comm *cs,
                     int nc)
{
    uint64_t addrs[EX_MAX_COMMS];
    synth_world_rank(s, proc % EXPECT_WORLD);
    if (e->nworlds > 1) {
        char mine[32], other[32];
        snprintf(mine, sizeof mine, "kvs_world_%d", ex_world(proc));
        snprintf(other, sizeof other, "kvs_world_%d", ex_other_world(e, proc));
        synth_process_group(s, mine, proc % EXPECT_WORLD);
        synth_foreign_group(s, other);
    }
    for (int i = 0; i < nc; i++) {
        const struct expect_comm *c = cs[i].e;
        unsigned handle = !strcmp(c->name, "MPI_COMM_WORLD")  ? 0x44000000u
                        : !strcmp(c->name, "MPI_COMM_SELF") ? 0x44000001u
                                                             : 0x84000000u + (unsigned)i;
        addrs[i] = cs[i].addr =
            c->remote_size >= 0
                ? synth_intercomm(s, handle, cs[i].ctx, (int)c->size, (int)c->local_rank,
                                  (int)c->remote_size, c->name, cs[i].rt)
                : synth_comm(s, handle, cs[i].ctx, (int)c->size, (int)c->local_rank, c->name,
                             cs[i].lt);
    }
    synth_comm_list(s, addrs, nc, 3);
    uint64_t posted[16], unexp[16], sreq[16];
    int npost = 0, nunexp = 0, nsend = 0, ranks[16], tags[16];
    unsigned ctxs[16];
    for (int k = 0; k < e->nops; k++) {
        const struct expect_op *o = &e->ops[k];
        if (o->rank != proc)
            continue;
        const struct ex_comm *x = ex_comm_of(cs, nc, o->comm);
        int cc = o->status == mqs_st_complete ? 0 : 1;
        long count = o->bytes % 4 == 0 ? o->bytes / 4 : o->bytes;
        unsigned dt = o->bytes % 4 == 0 ? DT_INT : 0x4c00010du; /* MPI_BYTE */
        if (npost == 16 || nunexp == 16 || nsend == 16)
            fail_msg("sample too big for the synthetic test");
        if (o->queue == EXPECT_SEND) {
            sreq[nsend] = synth_send_req(s, count, dt, cc);
            ranks[nsend] = (int)o->peer;
            tags[nsend] = (int)o->tag;
            ctxs[nsend++] = x->e->remote_size >= 0 ? SYNTH_INTER_SEND(x->ctx) : x->ctx;
        } else if (o->queue == EXPECT_RECV) {
            posted[npost++] = synth_recv(s, x->ctx, o->peer == EXPECT_ANY ? -2 : (int)o->peer,
                                         o->tag == EXPECT_ANY ? -1 : (int)o->tag, count, dt, cc,
                                         cc ? 0 : o->bytes);
        } else {
            unexp[nunexp++] = synth_recv(s, x->ctx, (int)o->peer, (int)o->tag, 0, 0, cc, o->bytes);
        }
    }
    synth_recv_list(s, 0, posted, npost);
    synth_recv_list(s, 1, unexp, nunexp);
    synth_sendq(s, sreq, ranks, tags, ctxs, nsend);
}

/* How the processes are named: without a job (MPI-1), or by identities
 * numbering the job's processes world by world (expect_process). */
struct ex_naming {
    const struct expect *e;
    int proc, job;
    enum synth_gen gen;
};

/* The global rank the DLL must give for the sample's process gpeer. */
static long ex_global(const struct ex_naming *nm, long gpeer)
{
    if (gpeer < 0)
        return gpeer;
    int same = ex_world(gpeer) == ex_world(nm->proc);
    if (!nm->job)
        return same ? gpeer % EXPECT_WORLD : -1;
    if (!same && nm->gen == SYNTH_DEBUGQ)
        return -1;
    for (int n = 0; n < expect_nprocs(nm->e); n++)
        if (expect_process(nm->e, n) == gpeer)
            return n;
    fail_msg("process %ld is not in the sample's job", gpeer);
    return -1;
}

/* Does the DLL's operation o (queue q) show the sample's x? */
static int ex_op_matches(const mqs_pending_operation *o, int q, const struct expect_op *x,
                         const struct ex_naming *nm)
{
    int ch4 = nm->gen == SYNTH_DEBUGQ || nm->gen == SYNTH_DEBUGQ_5;
    int unexp = q == mqs_unexpected_messages;
    long peer = unexp ? o->actual_local_rank : o->desired_local_rank;
    long gpeer = unexp ? o->actual_global_rank : o->desired_global_rank;
    long tag = unexp ? o->actual_tag : o->desired_tag;
    long len = unexp ? o->actual_length : o->desired_length;
    int status = unexp && ch4 ? mqs_st_pending : x->status;
    long bytes = !unexp && ch4 ? -1 : x->bytes;
    return (int)x->queue == q && (int)o->status == status && peer == x->peer &&
           gpeer == ex_global(nm, x->gpeer) && tag == x->tag && len == bytes;
}

static void ex_check(const struct result *r, const struct expect *e, const struct ex_naming *nm,
                     const struct ex_comm *cs, int nc, const char *what)
{
    int proc = nm->proc;
    char used[256] = {0};
    if (e->nops > (int)sizeof used)
        fail_msg("sample too big for the synthetic test");
    if (r->rc != mqs_ok)
        fail_msg("%s: dump failed: %s (%s)", what, dlldump_dll->dll_error_string(r->rc),
                 r->why ? r->why : "");
    if (r->ncomms != nc)
        fail_msg("%s: %d communicators shown, %d expected", what, r->ncomms, nc);
    for (int i = 0; i < r->ncomms; i++) {
        const struct rcomm *c = &r->comms[i];
        const struct expect_comm *x = NULL;
        for (int k = 0; k < nc && !x; k++)
            if (cs[k].e->name[0] ? !strcmp(c->c.name, cs[k].e->name)
                                 : !strncmp(c->c.name, "unnamed ", 8))
                x = cs[k].e;
        if (!x || c->c.size != x->size || c->c.local_rank != x->local_rank)
            fail_msg("%s: communicator \"%s\" (size %ld, rank %ld) is not the sample's", what,
                     c->c.name, (long)c->c.size, (long)c->c.local_rank);
        for (int q = 0; q < 3; q++) {
            for (int j = 0; j < c->nops[q]; j++) {
                const mqs_pending_operation *o = &c->ops[q][j];
                int found = 0;
                for (int k = 0; k < e->nops && !found; k++) {
                    const struct expect_op *xo = &e->ops[k];
                    if (!used[k] && xo->rank == proc &&
                        !strcmp(xo->comm, x->name) &&
                        ex_op_matches(o, q, xo, nm))
                        found = used[k] = 1;
                }
                if (!found)
                    fail_msg("%s: on %s queue %d: status %d peer %ld/%ld tag %ld length "
                             "%ld/%ld, not in the sample", what, c->c.name, q, (int)o->status,
                             (long)o->desired_local_rank, (long)o->actual_local_rank,
                             (long)o->desired_tag, (long)o->desired_length,
                             (long)o->actual_length);
            }
        }
    }
    for (int k = 0; k < e->nops; k++)
        if (e->ops[k].rank == proc && !used[k])
            fail_msg("%s: the sample's operation on %s (queue %d, tag %ld) is missing", what,
                     e->ops[k].comm, (int)e->ops[k].queue, e->ops[k].tag);
}

#define EX_MAX_PROCS 8 /* synth_join_job's job */

/*
 * Every process of sample e as generation gen (with groups made, for 4.x)
 * in target t, each checked; with job, under an MPI-2 debugger that
 * names them 0, 1, ... world by world.  Returns the number of dumps.
 */
static int ex_dump_job(const struct expect *e, const char *sample, enum synth_gen gen,
                       int groups, size_t t, int job)
{
    int np = expect_nprocs(e), jobv = 0;
    struct synth *s[EX_MAX_PROCS];
    static struct ex_comm cs[EX_MAX_PROCS][EX_MAX_COMMS];
    int nc[EX_MAX_PROCS];
    struct result r;
    static const int by_rank[EX_MAX_PROCS] = {0, 1, 2, 3, 4, 5, 6, 7};
    long before = synth_live_blocks();
    if (np > EX_MAX_PROCS)
        fail_msg("%s: %d processes, too many for the synthetic test", sample, np);
    for (int i = 0; i < np; i++) {
        s[i] = synth_new_gen(targets[t].big_endian, targets[t].ptr, gen);
        if (groups)
            synth_made_groups(s[i]);
        nc[i] = ex_comms(e, expect_process(e, i), cs[i]);
        ex_build(s[i], e, expect_process(e, i), cs[i], nc[i]);
    }
    if (job) /* set up and name every process first */
        dlldump_begin_job(&jobv, s, by_rank, np);
    for (int i = 0; i < np; i++) {
        char what[256], who[16];
        struct ex_naming nm = {e, expect_process(e, i), job, gen};
        dlldump_process(s[i], &r, job);
        snprintf(what, sizeof what, "%s, MPICH %s%s (%s-endian, %d-byte pointers), %s %s",
                 sample, gen_names[gen], groups ? " with groups made" : "",
                 targets[t].big_endian ? "big" : "little", targets[t].ptr,
                 job ? "MPI-2 job, process" : "rank",
                 expect_process_text(nm.proc, who, sizeof who));
        ex_check(&r, e, &nm, cs[i], nc[i], what);
    }
    if (job)
        dlldump_end_job(&jobv, s, np);
    for (int i = 0; i < np; i++)
        finish(s[i]);
    assert_int_equal(synth_live_blocks(), before);
    return np;
}

static void test_synth__every_sample_on_every_generation(void **state)
{
    (void)state;
    const char *dir = getenv("MQD_SAMPLES_SRC");
    char path[4096];
    int samples = 0, dumps = 0, worlds = 0;
    DIR *d = opendir(dir && *dir ? dir : "samples");
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 8 || strcmp(de->d_name + len - 7, ".expect") != 0)
            continue;
        struct expect e;
        char err[512];
        snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "samples", de->d_name);
        if (expect_load(path, &e, err, sizeof err) != 0)
            fail_msg("%s", err);
        samples++;
        worlds += e.nworlds > 1;
        for (size_t g = 0; g <= NGENS; g++) { /* and 4.x ch4 once its groups are made */
            enum synth_gen gen = g < NGENS ? every_gen[g] : SYNTH_DEBUGQ;
            for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++)
                for (int job = 0; job <= (e.nworlds > 1); job++)
                    dumps += ex_dump_job(&e, de->d_name, gen, g == NGENS, t, job);
        }
        expect_free(&e);
    }
    closedir(d);
    printf("[          ] %d samples' states (%d of several worlds), %d dumps, every one "
           "exact\n", samples, worlds, dumps);
    assert_true(samples >= 15);
    assert_true(worlds >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synth__every_queue_both_orders_both_widths),
        cmocka_unit_test(test_synth__debugq_generation_every_queue),
        cmocka_unit_test(test_synth__stock_generation_every_queue),
        cmocka_unit_test(test_synth__stock_finalized),
        cmocka_unit_test(test_synth__stock_direct_netmod_says_nothing),
        cmocka_unit_test(test_synth__stock_unknown_build_is_named),
        cmocka_unit_test(test_synth__stock_lists_of_another_layout_are_named),
        cmocka_unit_test(test_synth__request_info),
        cmocka_unit_test(test_synth__schedules_asked_when_pending),
        cmocka_unit_test(test_synth__other_devices_types_not_asked),
        cmocka_unit_test(test_synth__derived_datatype_asked_when_read),
        cmocka_unit_test(test_synth__comm_nbc_tag),
        cmocka_unit_test(test_synth__communicators_come_and_go),
        cmocka_unit_test(test_synth__finalizing_process_keeps_its_queues),
        cmocka_unit_test(test_synth__corrupt_targets),
        cmocka_unit_test(test_synth__missing_debug_information_is_named),
        cmocka_unit_test(test_synth__mpich_without_debuginfo_is_named),
        cmocka_unit_test(test_synth__no_dwarf_known_layouts_only),
        cmocka_unit_test(test_synth__mpi2_identities_across_a_spawn),
        cmocka_unit_test(test_synth__ch3_group_named_by_its_pmi_name),
        cmocka_unit_test(test_synth__one_image_named_by_its_first_process),
        cmocka_unit_test(test_synth__host_personalities),
        cmocka_unit_test(test_synth__malloc_fails_at_each_call),
        cmocka_unit_test(test_synth__ch4_rank_map_across_worlds),
        cmocka_unit_test(test_synth__every_sample_on_every_generation),
    };
    return cmocka_run_group_tests_name("dll_synth", tests, setup, NULL);
}
