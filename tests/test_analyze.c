/*
 * test_analyze.c - the wait-for analysis (host/analysis/analyze.c) on dumps built
 * by hand: which calls need all their operations and which one of them,
 * in-flight operations, MPI_ANY_SOURCE knots, collectives, ranks behind a
 * deadlock, and everything the analysis cannot see making it assume the
 * process is free.  The real MPICH jobs are in test_mqdump.c.
 */
#define _GNU_SOURCE
#include "mqdhost.h"
#include "host/base/dump.h" /* mqdh__peer_label: internal */
#include "host/base/mpicalls.h" /* the call table: internal */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* n processes, ranks 0..n-1, each with MPI_COMM_WORLD and empty queues,
 * not in MPI. */
static struct mqdh_dump *job(int n)
{
    struct mqdh_dump *d = calloc(1, sizeof *d);
    assert_non_null(d);
    d->nprocs = n;
    d->procs = calloc((size_t)n, sizeof *d->procs);
    assert_non_null(d->procs);
    for (int i = 0; i < n; i++) {
        struct mqdh_process *p = &d->procs[i];
        p->pid = 1000 + i;
        p->rank = p->identity = i;
        p->ncomms = 1;
        p->comms = calloc(1, sizeof *p->comms);
        assert_non_null(p->comms);
        strcpy(p->comms[0].name, "MPI_COMM_WORLD");
        p->comms[0].size = n;
        p->comms[0].local_rank = i;
    }
    return d;
}

/* The rank is in an MPI call, made from where nobody knows (no caller, no
 * line: explanations name no call site; test_analyze__call_sites does). */
static void in_call(struct mqdh_dump *d, int rank, const char *call)
{
    free(d->procs[rank].where_call);
    d->procs[rank].where_call = strdup(call);
}

/* The rank is outside MPI (computing). */
static void not_in_mpi(struct mqdh_dump *d, int rank)
{
    free(d->procs[rank].where_call);
    d->procs[rank].where_call = NULL;
}

/* An operation of rank on MPI_COMM_WORLD: peer and tag -1 for ANY. */
static struct mqdh_op *op(struct mqdh_dump *d, int rank, int q, long peer, long tag)
{
    struct mqdh_queue *qu = &d->procs[rank].comms[0].queues[q];
    struct mqdh_op *m = realloc(qu->ops, (size_t)(qu->nops + 1) * sizeof *m);
    assert_non_null(m);
    qu->ops = m;
    struct mqdh_op *o = &m[qu->nops++];
    memset(o, 0, sizeof *o);
    o->desired_local_rank = o->desired_global_rank = peer;
    o->tag_wild = tag < 0;
    o->desired_tag = tag;
    o->desired_length = 4;
    o->actual_local_rank = o->actual_global_rank = o->actual_tag = o->actual_length = -1;
    return o;
}

/* Wait w in words, as every view writes it. */
static const char *why_of(const struct mqdh_dump *d, const struct mqdh_wait *w)
{
    static char buf[1024];
    mqdh_explain_wait(d, w, 0, buf, sizeof buf);
    return buf;
}

static struct mqdh_analysis *analyze(const struct mqdh_dump *d)
{
    struct mqdh_analysis *a = NULL;
    assert_int_equal(mqdh_analyze(d, &a), MQDH_OK);
    assert_non_null(a);
    return a;
}

/* "0,1,2" of a deadlock's members or the ranks behind. */
static const char *ranks(const struct mqdh_dump *d, const int *v, int n)
{
    static char buf[256];
    int at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        at += snprintf(buf + at, sizeof buf - (size_t)at, "%s%d", i ? "," : "",
                       d->procs[v[i]].rank);
    return buf;
}

/* Is there an unseen line containing what? */
static int unseen_says(const struct mqdh_analysis *a, const char *what)
{
    for (int i = 0; i < a->nunseen; i++)
        if (strstr(a->unseen[i], what))
            return 1;
    return 0;
}

/* a has exactly one deadlock, of these members ("0,1"); its first wait
 * explained as why. */
static void one_deadlock(const struct mqdh_dump *d, const struct mqdh_analysis *a,
                         const char *members, const char *why)
{
    assert_int_equal(a->ndeadlocks, 1);
    assert_string_equal(ranks(d, a->deadlocks[0].members, a->deadlocks[0].nmembers), members);
    assert_string_equal(why_of(d, &a->waits[a->deadlocks[0].waits[0]]), why);
}

/* d analysed: no deadlock, and what was unseen says what. */
static void no_deadlock_unseen(const struct mqdh_dump *d, const char *what)
{
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    if (!unseen_says(a, what))
        fail_msg("unseen does not say \"%s\"", what);
    mqdh_analysis_free(a);
}

/* A ring of three in MPI_Waitall: one cycle, each rank one wait. */
static void test_analyze__ring_is_a_cycle(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(3);
    for (int r = 0; r < 3; r++) {
        in_call(d, r, "MPI_Waitall");
        op(d, r, MQDH_RECEIVES, (r + 2) % 3, 7);
    }
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->ndeadlocks, 1);
    assert_false(a->deadlocks[0].knot);
    assert_string_equal(ranks(d, a->deadlocks[0].members, a->deadlocks[0].nmembers), "0,1,2");
    assert_int_equal(a->deadlocks[0].nwaits, 3);
    assert_int_equal(a->nbehind, 0);
    assert_int_equal(a->nunseen, 0);
    const struct mqdh_wait *w = &a->waits[a->deadlocks[0].waits[0]];
    assert_int_equal(w->from, 0);
    assert_int_equal(w->to, 2);
    assert_int_equal(w->kind, MQDH_WAIT_RECV);
    assert_string_equal(why_of(d, w), "rank 0 waits in MPI_Waitall: receive(source=2, tag=7, "
                                "comm=MPI_COMM_WORLD) - rank 2 has no matching send pending "
                                "(it is in MPI_Waitall)");
    char rel[320];
    mqdh_explain_wait(d, w, 1, rel, sizeof rel);
    assert_string_equal(rel, "waits in MPI_Waitall: receive(source=rank-1, tag=7, "
                             "comm=MPI_COMM_WORLD) - rank-1 has no matching send pending "
                             "(it is in MPI_Waitall)");
    mqdh_analysis_free(a);
    /* Rank 1 computing instead: nothing is stuck. */
    not_in_mpi(d, 1);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->activity[1], MQDH_ACT_RUNNING);
    for (int r = 0; r < 3; r++)
        assert_false(a->stuck[r]);
    assert_int_equal(a->nwaits, 2); /* the waits are there, just not stuck */
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/*
 * Another vendor's DLL that reads an intercommunicator's remote rank in the
 * local group (Open MPI's) makes a rank wait for itself: that names no
 * peer, so no deadlock is built on it; mqd's own DLL is believed.
 */
static void test_analyze__waiting_for_itself(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(2);
    for (int r = 0; r < 2; r++) {
        in_call(d, r, "MPI_Waitall");
        d->procs[r].dll_source = MQDH_DLL_TARGET;
        op(d, r, MQDH_RECEIVES, r, 3);
    }
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_true(unseen_says(a, "the DLL names the process itself"));
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    mqdh_analysis_free(a);
    for (int r = 0; r < 2; r++)
        d->procs[r].dll_source = MQDH_DLL_OWN;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 2);
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/*
 * Rank 0 has receives pending from rank 1 (blocked, waiting for rank 0)
 * and from rank 2 (computing).  In MPI_Waitall it needs both: a cycle with
 * rank 1.  In MPI_Recv or MPI_Wait it needs one of them, which rank 2 may
 * yet send: nothing is provably stuck.
 */
static void test_analyze__waitall_needs_all_recv_needs_one(void **state)
{
    (void)state;
    static const struct {
        const char *call;
        int deadlock;
    } cases[] = {
        {"MPI_Waitall", 1}, {"MPI_Sendrecv", 1}, {"MPI_Recv", 0},
        {"MPI_Wait", 0},    {"MPI_Waitany", 0},  {"MPI_Test", 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct mqdh_dump *d = job(3);
        in_call(d, 0, cases[c].call);
        op(d, 0, MQDH_RECEIVES, 1, 1);
        op(d, 0, MQDH_RECEIVES, 2, 2);
        in_call(d, 1, "MPI_Recv");
        op(d, 1, MQDH_RECEIVES, 0, 3);
        struct mqdh_analysis *a = analyze(d);
        if (a->ndeadlocks != cases[c].deadlock)
            fail_msg("%s: %d deadlocks", cases[c].call, a->ndeadlocks);
        if (cases[c].deadlock) {
            assert_string_equal(ranks(d, a->deadlocks[0].members, a->deadlocks[0].nmembers),
                                "0,1");
            assert_int_equal(a->deadlocks[0].nwaits, 2); /* not the wait for rank 2 */
            for (int e = 0; e < a->deadlocks[0].nwaits; e++)
                assert_int_not_equal(a->waits[a->deadlocks[0].waits[e]].to, 2);
        }
        mqdh_analysis_free(a);
        mqdh_dump_free(d);
    }
}

/* A receive whose sender already has the matching send pending is in
 * flight (and so is that send): two blocked ranks, no deadlock.  With the
 * tags crossed, both wait for each other twice. */
static void test_analyze__in_flight_is_not_a_wait(void **state)
{
    (void)state;
    for (int crossed = 0; crossed < 2; crossed++) {
        struct mqdh_dump *d = job(2);
        for (int r = 0; r < 2; r++) {
            in_call(d, r, "MPI_Waitall");
            op(d, r, MQDH_RECEIVES, 1 - r, crossed ? 2 : 1);
            op(d, r, MQDH_SENDS, 1 - r, 1);
        }
        struct mqdh_analysis *a = analyze(d);
        if (!crossed) {
            assert_int_equal(a->ndeadlocks, 0);
            assert_int_equal(a->nwaits, 0);
        } else {
            assert_int_equal(a->ndeadlocks, 1);
            assert_int_equal(a->deadlocks[0].nwaits, 4);
            assert_non_null(strstr(why_of(d, &a->waits[a->deadlocks[0].waits[0]]),
                                   "has posted no matching receive"));
        }
        mqdh_analysis_free(a);
        mqdh_dump_free(d);
    }
}

/* Everyone receives from MPI_ANY_SOURCE: a knot of all.  One rank
 * computing can send to any of them: no deadlock at all. */
static void test_analyze__any_source_knot(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(4);
    for (int r = 0; r < 4; r++) {
        in_call(d, r, "MPI_Wait");
        op(d, r, MQDH_RECEIVES, -1, 5);
    }
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->ndeadlocks, 1);
    assert_true(a->deadlocks[0].knot);
    assert_string_equal(ranks(d, a->deadlocks[0].members, a->deadlocks[0].nmembers), "0,1,2,3");
    assert_int_equal(a->deadlocks[0].nwaits, 12);
    assert_true(a->waits[0].any_source);
    assert_non_null(strstr(why_of(d, &a->waits[0]), "receive(source=ANY, tag=5"));
    mqdh_analysis_free(a);
    not_in_mpi(d, 3);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->nbehind, 0);
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/*
 * The same where no process's sends are recorded but every receive list
 * is seen (MPICH without --enable-debuginfo, wildcards): an unmatched
 * receive from MPI_ANY_SOURCE has no matching send pending anywhere, as
 * one from a named source (a send would have reached it by the time the
 * job stopped moving): the knot.  A member whose receives are not seen
 * either: unseen.
 */
static void test_analyze__any_source_knot_sends_unrecorded(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(3);
    for (int r = 0; r < 3; r++) {
        in_call(d, r, "MPI_Waitall");
        op(d, r, MQDH_RECEIVES, r ? 0 : -1, r ? 1 : 5);
        d->procs[r].comms[0].queues[MQDH_SENDS].state = MQDH_QUEUE_NO_INFO;
    }
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->ndeadlocks, 1);
    assert_true(a->deadlocks[0].knot);
    assert_string_equal(ranks(d, a->deadlocks[0].members, a->deadlocks[0].nmembers), "0,1,2");
    assert_true(unseen_says(a, "rank 1's pending sends (its MPI records none)"));
    mqdh_analysis_free(a);
    d->procs[1].comms[0].queues[MQDH_RECEIVES].state = MQDH_QUEUE_NO_INFO;
    no_deadlock_unseen(d, "rank 1's queues on \"MPI_COMM_WORLD\" (a member rank 0's receive "
                          "from MPI_ANY_SOURCE might match)");
    mqdh_dump_free(d);
}

/*
 * Ranks 0 and 2 in MPI_Barrier, rank 1 in MPI_Recv from rank 0: the
 * barrier (its communicator known from MPI's own traffic) waits for rank
 * 1 only.  A cycle 0-1, rank 2 behind it.  Without that traffic the
 * barrier's communicator is unseen, and nothing is claimed.
 */
static void test_analyze__collective_not_entered(void **state)
{
    (void)state;
    for (int traffic = 1; traffic >= 0; traffic--) {
        struct mqdh_dump *d = job(3);
        in_call(d, 0, "MPI_Barrier");
        in_call(d, 2, "MPI_Barrier");
        in_call(d, 1, "MPI_Recv");
        op(d, 1, MQDH_RECEIVES, 0, 5);
        /* Without the flag, the same words in the text are just words (a
         * vendor DLL's): the receives are the program's. */
        for (int r = 0; r < 3; r += 2) {
            struct mqdh_op *o = op(d, r, MQDH_RECEIVES, 1, 1);
            strcpy(o->extra_text[0], "part of a collective operation");
            o->collective = traffic;
        }
        struct mqdh_analysis *a = analyze(d);
        if (traffic) {
            assert_int_equal(a->ndeadlocks, 1);
            assert_string_equal(ranks(d, a->deadlocks[0].members, a->deadlocks[0].nmembers),
                                "0,1");
            assert_string_equal(ranks(d, a->behind, a->nbehind), "2");
            const struct mqdh_wait *w = &a->waits[a->deadlocks[0].waits[0]];
            assert_int_equal(w->kind, MQDH_WAIT_COLLECTIVE);
            assert_string_equal(why_of(d, w), "rank 0 waits in MPI_Barrier(comm=MPI_COMM_WORLD) - "
                                        "rank 1 has not entered it (it is in MPI_Recv)");
        } else {
            assert_int_equal(a->ndeadlocks, 0);
            assert_true(unseen_says(a, "the communicator of rank 0's MPI_Barrier"));
        }
        mqdh_analysis_free(a);
        mqdh_dump_free(d);
    }
}

/* Processes not dumped for the same reason (an MPI that keeps nothing for
 * debuggers) are one line of what could not be seen, under their ranks;
 * another reason is a line of its own. */
static void test_analyze__same_reason_one_line(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(6);
    for (int i = 0; i < 6; i++) {
        struct mqdh_process *p = &d->procs[i];
        p->error = strdup(i == 3 ? "cannot attach" : "no queues here"); /* nor unwound */
        free(p->comms);
        p->comms = NULL;
        p->ncomms = 0;
    }
    struct mqdh_analysis *a = NULL;
    assert_int_equal(mqdh_analyze(d, &a), MQDH_OK);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_int_equal(a->nunseen, 2);
    assert_string_equal(a->unseen[0], "ranks [0-2,4-5]: not dumped (no queues here)");
    assert_string_equal(a->unseen[1], "rank 3: not dumped (cannot attach)");
    for (int i = 0; i < 6; i++)
        assert_int_equal(a->activity[i], MQDH_ACT_UNKNOWN);
    assert_int_equal(a->nblind, 6);
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/*
 * What cannot be seen makes the rank concerned free: a peer not dumped, a
 * peer not unwound, a queue without information in a call that needs only
 * one operation, a probe.  Each is said in `unseen`.
 */
static void test_analyze__unseen_is_never_a_deadlock(void **state)
{
    (void)state;
    static const char *const says[] = {
        "rank 1: not dumped (cannot attach)",
        "where rank 1 is (no stack)",
        "rank 0's pending sends on \"MPI_COMM_WORLD\" (the DLL has no information)",
        "what rank 0 waits for in MPI_Probe (a probe posts nothing, and its arguments were "
        "not read)",
        "global rank 7, which rank 0 receives from on \"MPI_COMM_WORLD\" (not in the dump)",
        /* A call found, its name not kept (out of memory): never "not in
         * MPI", which would let rank 1 send (issue 45, finding 9). */
        "which MPI call rank 1 is in (not recorded: out of memory)",
    };
    for (size_t c = 0; c < sizeof says / sizeof says[0]; c++) {
        struct mqdh_dump *d = job(2);
        in_call(d, 0, c == 2 ? "MPI_Wait" : "MPI_Waitall");
        op(d, 0, MQDH_RECEIVES, c == 4 ? 7 : 1, 1);
        in_call(d, 1, "MPI_Waitall");
        op(d, 1, MQDH_RECEIVES, 0, 2);
        struct mqdh_process *p1 = &d->procs[1];
        switch (c) {
        case 0:
            not_in_mpi(d, 1); /* not attached: not unwound either */
            p1->error = strdup("cannot attach");
            for (int q = 0; q < MQDH_NQUEUES; q++)
                free(p1->comms[0].queues[q].ops);
            free(p1->comms);
            p1->comms = NULL;
            p1->ncomms = 0;
            break;
        case 1:
            free(p1->where_call);
            p1->where_call = NULL;
            p1->where_error = strdup("no stack");
            break;
        case 2:
            d->procs[0].comms[0].queues[MQDH_SENDS].state = MQDH_QUEUE_NO_INFO;
            break;
        case 3:
            in_call(d, 0, "MPI_Probe");
            break;
        case 5:
            not_in_mpi(d, 1);
            p1->where_tid = 1234;
            break;
        default:
            break;
        }
        struct mqdh_analysis *a = analyze(d);
        if (a->ndeadlocks != 0 || !unseen_says(a, says[c])) {
            for (int i = 0; i < a->nunseen; i++)
                fprintf(stderr, "unseen: %s\n", a->unseen[i]);
            fail_msg("case %zu: %d deadlocks, want none and \"%s\"", c, a->ndeadlocks, says[c]);
        }
        mqdh_analysis_free(a);
        /* In MPI_Waitall rank 0 needs its receive whatever its unseen
         * sends are.  Rank 1's receive from it is unmatched, though its
         * receives are seen: a send of rank 0 that matches it would have
         * reached rank 1 once the job has stopped moving (said), so it has
         * none; both wait.  Rank 0's receives not seen either: rank 1's
         * receive may be met. */
        if (c == 2) {
            in_call(d, 0, "MPI_Waitall");
            a = analyze(d);
            assert_int_equal(a->ndeadlocks, 1);
            assert_true(unseen_says(a, "rank 0's pending sends (its MPI records none): a send "
                                       "matching a receive posted for it would have reached its "
                                       "receiver once the job has stopped moving"));
            mqdh_analysis_free(a);
            d->procs[0].comms[0].queues[MQDH_RECEIVES].state = MQDH_QUEUE_NO_INFO;
            a = analyze(d);
            assert_int_equal(a->ndeadlocks, 0);
            assert_true(unseen_says(a, "rank 0's queues on \"MPI_COMM_WORLD\" (rank 1 waits "
                                       "for it there)"));
            mqdh_analysis_free(a);
        }
        mqdh_dump_free(d);
    }
}

static void test_analyze__peer_labels_and_bad_arguments(void **state)
{
    (void)state;
    char buf[32];
    mqdh__peer_label(63, 0, 64, 1, buf, sizeof buf);
    assert_string_equal(buf, "rank-1");
    mqdh__peer_label(2, 0, 64, 1, buf, sizeof buf);
    assert_string_equal(buf, "rank+2");
    mqdh__peer_label(5, 5, 64, 1, buf, sizeof buf);
    assert_string_equal(buf, "rank");
    mqdh__peer_label(5, 1, 64, 0, buf, sizeof buf);
    assert_string_equal(buf, "rank 5");
    /* Peers are named by MPI-2 identity, else (MPI-1 DLL) by rank. */
    struct mqdh_dump *d = job(3);
    d->procs[2].identity = 7;
    assert_int_equal(mqdh_process_by_global(d, 7), 2);
    assert_int_equal(mqdh_process_by_global(d, 2), -1);
    d->procs[1].identity = -1;
    assert_int_equal(mqdh_process_by_global(d, 1), 1);
    assert_int_equal(mqdh_process_by_global(d, -1), -1);
    assert_int_equal(mqdh_process_by_global(NULL, 0), -1);
    mqdh_dump_free(d);
    struct mqdh_analysis *a = (void *)1;
    assert_int_equal(mqdh_analyze(NULL, &a), MQDH_E_USAGE);
    assert_null(a);
    assert_int_equal(mqdh_analyze(NULL, NULL), MQDH_E_USAGE);
    mqdh_analysis_free(NULL);
    struct mqdh_dump empty = {0};
    a = analyze(&empty);
    assert_int_equal(a->ndeadlocks, 0);
    mqdh_analysis_free(a);
}

/* MPI-2: world 0 ranks 0-1 and the two processes they spawned (world 1),
 * named apart; a cycle across the worlds. */
static void test_analyze__spawned_worlds(void **state)
{
    (void)state;
    char buf[64];
    struct mqdh_dump *d = job(4);
    for (int i = 2; i < 4; i++) {
        d->procs[i].world = 1;
        d->procs[i].rank = i - 2;
        d->procs[i].comms[0].size = 2;
        d->procs[i].comms[0].local_rank = i - 2;
    }
    d->procs[0].comms[0].size = d->procs[1].comms[0].size = 2;
    mqdh_process_label(&d->procs[3], buf, sizeof buf);
    assert_string_equal(buf, "world 1 rank 1");
    mqdh_process_label(&d->procs[1], buf, sizeof buf);
    assert_string_equal(buf, "rank 1");
    assert_int_equal(mqdh_world_size(d, 0), 2);
    assert_int_equal(mqdh_world_size(d, 1), 2);
    assert_int_equal(mqdh_world_size(d, 2), 0);
    /* Remote rank 1 of an intercommunicator, identity 3: world 1's rank 1. */
    mqdh_peer_text(d, 0, 1, 3, 0, buf, sizeof buf);
    assert_string_equal(buf, "1 (world 1 rank 1)");
    mqdh_peer_text(d, 0, 1, 3, 1, buf, sizeof buf);
    assert_string_equal(buf, "1 (world 1 rank 1)"); /* not relative across worlds */
    mqdh_peer_text(d, 3, 1, 1, 0, buf, sizeof buf);
    assert_string_equal(buf, "1 (rank 1)");
    mqdh_peer_text(d, 2, 1, 3, 1, buf, sizeof buf);
    assert_string_equal(buf, "rank+1"); /* modulo world 1's 2 */
    mqdh_peer_text(d, 0, 1, 1, 0, buf, sizeof buf);
    assert_string_equal(buf, "1");
    mqdh_peer_text(d, 0, 1, 9, 0, buf, sizeof buf);
    assert_string_equal(buf, "1 (global 9)");
    mqdh_peer_text(d, 0, -1, -1, 0, buf, sizeof buf);
    assert_string_equal(buf, "ANY");

    in_call(d, 0, "MPI_Recv");
    op(d, 0, MQDH_RECEIVES, 1, 3)->desired_global_rank = 3;
    in_call(d, 3, "MPI_Recv");
    op(d, 3, MQDH_RECEIVES, 0, 5)->desired_global_rank = 0;
    in_call(d, 1, "MPI_Recv");
    op(d, 1, MQDH_RECEIVES, 1, 6)->desired_global_rank = 3;
    in_call(d, 2, "MPI_Barrier");
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->ndeadlocks, 1);
    assert_false(a->deadlocks[0].knot);
    assert_int_equal(a->deadlocks[0].nmembers, 2);
    assert_int_equal(a->deadlocks[0].members[0], 0);
    assert_int_equal(a->deadlocks[0].members[1], 3);
    assert_int_equal(a->nbehind, 1);
    assert_int_equal(a->behind[0], 1);
    const struct mqdh_wait *w = &a->waits[a->deadlocks[0].waits[0]];
    assert_non_null(strstr(why_of(d, w), "rank 0 waits in MPI_Recv(source=1 (world 1 rank 1), tag=3"));
    assert_non_null(strstr(why_of(d, w), "- world 1 rank 1 has no matching send pending"));
    mqdh_explain_wait(d, w, 1, buf, sizeof buf);
    assert_non_null(strstr(buf, "world 1 rank 1")); /* never "rank+1" across worlds */
    mqdh_analysis_free(a);

    /* An MPI-1 DLL names peers by rank, which two worlds share: unknown. */
    for (int i = 0; i < 4; i++)
        d->procs[i].identity = -1;
    assert_int_equal(mqdh_process_by_global(d, 1), -1);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_true(unseen_says(a, "global rank 0, which world 1 rank 1 receives from on "
                               "\"MPI_COMM_WORLD\" (a rank of more than one world"));
    assert_true(unseen_says(a, "global rank 3, which rank 0 receives from on "
                               "\"MPI_COMM_WORLD\" (not in the dump)"));
    mqdh_analysis_free(a);
    d->procs[3].rank = 7;
    assert_int_equal(mqdh_process_by_global(d, 1), 1);
    mqdh_dump_free(d);

    /* An intercommunicator between the worlds whose peers the DLL names by
     * local rank alone, each side giving its own group (MPICH 4.1+ ch4):
     * the group names no peer, or rank 1 would wait for itself and world
     * 1 for its own ranks. */
    d = job(4);
    for (int i = 0; i < 4; i++) {
        struct mqdh_comm *c = &d->procs[i].comms[0];
        d->procs[i].world = i / 2;
        d->procs[i].rank = i % 2;
        strcpy(c->name, "mqd-spawn");
        c->size = 2;
        c->local_rank = i % 2;
        c->group = calloc(2, sizeof *c->group);
        assert_non_null(c->group);
        c->group[0] = i / 2 * 2;
        c->group[1] = i / 2 * 2 + 1;
        in_call(d, i, "MPI_Waitall");
    }
    op(d, 1, MQDH_RECEIVES, 1, 6)->desired_global_rank = -1;
    op(d, 2, MQDH_SENDS, 1, 4)->desired_global_rank = -1;
    op(d, 3, MQDH_RECEIVES, 0, 5)->desired_global_rank = -1;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "no group that can be trusted"));
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/*
 * The terminal states and the waits that have no queue entry of their
 * own, each against the case that must stay free: MPI_Finalize (waits on
 * it are never met; it waits for the world), a nonblocking collective in
 * MPI_Wait, a blocked MPI_Ssend/MPI_Send found through the destination's
 * unexpected queue.
 */
static void test_analyze__finalize_is_terminal(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(3);
    in_call(d, 0, "MPI_Recv");
    op(d, 0, MQDH_RECEIVES, 1, 5);
    in_call(d, 1, "MPI_Finalize");
    free(d->procs[1].comms); /* MPICH frees them in MPI_Finalize */
    d->procs[1].comms = NULL;
    d->procs[1].ncomms = 0;
    /* Rank 2 computes: rank 1 waits for it too, rank 0 still stuck. */
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_DEADLOCK);
    one_deadlock(d, a, "0,1",
                 "rank 0 waits in MPI_Recv(source=1, tag=5, comm=MPI_COMM_WORLD) - rank 1 has "
                 "no matching send pending (it is in MPI_Finalize: it will never send or "
                 "receive again)");
    const struct mqdh_wait *w = &a->waits[a->deadlocks[0].waits[1]];
    assert_int_equal(w->from, 1);
    assert_int_equal(w->comm, -1);
    assert_string_equal(why_of(d, w), "rank 1 waits in MPI_Finalize(comm=MPI_COMM_WORLD) - rank 0 "
                                "has not entered it (it is in MPI_Recv)");
    mqdh_analysis_free(a);
    /* Rank 0 computing instead: a rank finalizing early waits, nothing more. */
    not_in_mpi(d, 0);
    a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_NONE);
    assert_int_equal(a->ndeadlocks, 0);
    mqdh_analysis_free(a);
    /* Every rank in MPI_Finalize: all of them will leave it. */
    in_call(d, 0, "MPI_Finalize");
    in_call(d, 2, "MPI_Finalize");
    a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_NONE);
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/* The DLL's mark of MPI's own traffic for a collective. */
static void collective(struct mqdh_op *o)
{
    o->collective = 1;
}

/*
 * A rank past MPI_Finalize (MPICH 4.1+ returns from it at once): not in
 * MPI, its DLL says its MPI has finalized.  It waits for nobody and will
 * never act again: a receive from it and a collective it never joins are
 * both never met, and the deadlock is an end, the ranks behind it apart.
 */
static void test_analyze__past_finalize_is_an_end(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(4);
    in_call(d, 0, "MPI_Recv");
    op(d, 0, MQDH_RECEIVES, 1, 5);
    not_in_mpi(d, 1);
    d->procs[1].mpi_finalized = 1;
    in_call(d, 2, "MPI_Recv");
    op(d, 2, MQDH_RECEIVES, 0, 6);
    in_call(d, 3, "MPI_Barrier");
    collective(op(d, 3, MQDH_RECEIVES, 1, 1));
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_DEADLOCK);
    assert_int_equal(a->ndeadlocks, 1);
    assert_int_equal(a->deadlocks[0].knot, MQDH_DEADLOCK_END);
    assert_string_equal(ranks(d, a->deadlocks[0].members, a->deadlocks[0].nmembers), "0,1,3");
    assert_int_equal(a->deadlocks[0].nwaits, 2);
    assert_string_equal(why_of(d, &a->waits[a->deadlocks[0].waits[0]]),
                        "rank 0 waits in MPI_Recv(source=1, tag=5, comm=MPI_COMM_WORLD) - rank 1 "
                        "has no matching send pending (it is past MPI_Finalize: it will never "
                        "send, receive or join anything again)");
    assert_string_equal(ranks(d, a->behind, a->nbehind), "2");
    assert_false(unseen_says(a, "will still send"));
    mqdh_analysis_free(a);
    /* Not finalized, the same rank outside MPI may still send: no deadlock. */
    d->procs[1].mpi_finalized = 0;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_true(unseen_says(a, "will still send"));
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

static void test_analyze__nonblocking_collective_in_wait(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(2);
    in_call(d, 0, "MPI_Wait");
    collective(op(d, 0, MQDH_RECEIVES, 1, 287));
    in_call(d, 1, "MPI_Barrier");
    collective(op(d, 1, MQDH_RECEIVES, 0, 1));
    struct mqdh_analysis *a = analyze(d);
    one_deadlock(d, a, "0,1",
                 "rank 0 waits in MPI_Wait: nonblocking collective(comm=MPI_COMM_WORLD) - "
                 "rank 1 has not entered it or a matching one (it is in MPI_Barrier)");
    mqdh_analysis_free(a);
    /* Both in MPI_Wait on collective traffic: the same collective may be
     * under way; never a deadlock. */
    in_call(d, 1, "MPI_Wait");
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    mqdh_analysis_free(a);
    /* The other computing: free. */
    not_in_mpi(d, 1);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_NONE);
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/* A collective's message at rank `at` from rank `from` with tag, unexpected. */
static void collective_message(struct mqdh_dump *d, int at, int from, long tag)
{
    struct mqdh_op *o = op(d, at, MQDH_UNEXPECTED, -1, -1);
    o->collective = 1;
    o->status = MQDH_OP_COMPLETE;
    o->actual_local_rank = o->actual_global_rank = from;
    o->actual_tag = tag;
    o->actual_length = 16;
}

/* Rank r in call with a receive from the other rank of a 2-rank job, of
 * its nonblocking collective with schedule tag `tag`. */
static struct mqdh_op *in_nbc(struct mqdh_dump *d, int r, const char *call, long tag)
{
    in_call(d, r, call);
    struct mqdh_op *o = op(d, r, MQDH_RECEIVES, 1 - r, tag);
    o->collective = 1;
    return o;
}

/*
 * MPICH 4.1+ ch4 keeps no mark of a collective's sends: mqd's DLL flags a
 * send with a nonblocking collective's tag maybe_collective.  Such a send
 * is no wait when its peer holds the collective receive it would be the
 * partner of, or is in that nonblocking collective or a later one: what
 * cannot be told is said.  Unflagged, the same queues are a deadlock.
 */
static void test_analyze__maybe_collective_sends(void **state)
{
    (void)state;
    for (int flagged = 0; flagged < 2; flagged++) {
        /* The twin: rank 1's collective receive from rank 0 with tag 300. */
        struct mqdh_dump *d = job(2);
        in_call(d, 0, "MPI_Wait");
        op(d, 0, MQDH_SENDS, 1, 300)->maybe_collective = flagged;
        in_nbc(d, 1, "MPI_Wait", 300);
        struct mqdh_analysis *a = analyze(d);
        assert_int_equal(a->ndeadlocks, !flagged);
        if (flagged) {
            assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
            assert_true(unseen_says(a, "has a collective's receive from it with that tag"));
        }
        mqdh_analysis_free(a);
        mqdh_dump_free(d);
        /* Both sends, each to the other with the same tag, and nothing
         * else: two rendezvous sends of one collective whose data is taken,
         * or the program's own head to head: not told apart. */
        d = job(2);
        for (int r = 0; r < 2; r++) {
            in_call(d, r, "MPI_Wait");
            op(d, r, MQDH_SENDS, 1 - r, 300)->maybe_collective = flagged;
        }
        a = analyze(d);
        assert_int_equal(a->ndeadlocks, !flagged);
        if (flagged)
            assert_true(unseen_says(a, "is in that nonblocking collective or a later one"));
        mqdh_analysis_free(a);
        mqdh_dump_free(d);
    }
}

/*
 * Two ranks in MPI_Wait & co. on nonblocking collectives: a wait is met
 * only by a member provably in the same instance.  Instances with the same
 * schedule tag whose receive and message sit side by side, unmatched, are
 * different collectives: a deadlock, whatever the calls are named.  No such
 * sign: cannot tell, never "none" and never a deadlock.
 */
static void test_analyze__nonblocking_collective_instances(void **state)
{
    (void)state;
    for (int waitall = 0; waitall < 2; waitall++) { /* the calls' names do not matter */
        struct mqdh_dump *d = job(2);
        for (int r = 0; r < 2; r++) {
            in_nbc(d, r, r && waitall ? "MPI_Waitall" : "MPI_Wait", 287);
            collective_message(d, r, 1 - r, 287);
        }
        struct mqdh_analysis *a = analyze(d);
        char why[512];
        snprintf(why, sizeof why,
                 "rank 0 waits in MPI_Wait: nonblocking collective(comm=MPI_COMM_WORLD, schedule "
                 "tag 287) - rank 1 started another collective as that instance: a message of "
                 "it with that tag is beside a receive that does not take it, and neither "
                 "completes (it is in %s)", waitall ? "MPI_Waitall" : "MPI_Wait");
        one_deadlock(d, a, "0,1", why);
        assert_int_equal(a->verdict, MQDH_VERDICT_DEADLOCK);
        mqdh_analysis_free(a);
        mqdh_dump_free(d);
    }
    /* The sign on one side is enough for both: rank 1's queues show that
     * its instance 287 is not rank 0's. */
    struct mqdh_dump *d = job(2);
    in_nbc(d, 0, "MPI_Wait", 287);
    in_nbc(d, 1, "MPI_Wait", 287);
    collective_message(d, 1, 0, 287);
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->ndeadlocks, 1);
    assert_int_equal(a->deadlocks[0].nwaits, 2);
    mqdh_analysis_free(a);
    /* No sign: both started their 287, which may be the same collective. */
    free(d->procs[1].comms[0].queues[MQDH_UNEXPECTED].ops);
    d->procs[1].comms[0].queues[MQDH_UNEXPECTED].ops = NULL;
    d->procs[1].comms[0].queues[MQDH_UNEXPECTED].nops = 0;
    in_call(d, 1, "MPI_Waitall"); /* the old rule called this one a deadlock */
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "whether rank 0's and rank 1's nonblocking collectives on "
                               "\"MPI_COMM_WORLD\" with schedule tag 287 are the same "
                               "collective"));
    mqdh_analysis_free(a);
    in_call(d, 1, "MPI_Wait"); /* nor "none" when both calls are alike */
    a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/* A collective receive of rank r on its second communicator, "dup",
 * from the other rank with tag. */
static void on_dup(struct mqdh_dump *d, int r, long tag)
{
    struct mqdh_process *p = &d->procs[r];
    if (p->ncomms == 1) {
        p->comms = realloc(p->comms, 2 * sizeof *p->comms);
        assert_non_null(p->comms);
        p->ncomms = 2;
        p->comms[1] = p->comms[0];
        memset(p->comms[1].queues, 0, sizeof p->comms[1].queues);
        strcpy(p->comms[1].name, "dup");
    }
    struct mqdh_queue *q = &p->comms[1].queues[MQDH_RECEIVES];
    q->ops = realloc(q->ops, (size_t)(q->nops + 1) * sizeof *q->ops);
    assert_non_null(q->ops);
    q->ops[q->nops] = p->comms[0].queues[MQDH_RECEIVES].ops[0];
    q->ops[q->nops].desired_tag = tag;
    q->ops[q->nops++].collective = 1;
}

/* Rank 0 in MPI_Wait has nonblocking collectives on two communicators:
 * one that rank 1, in MPI_Barrier, has not entered, and one on "dup"
 * that rank 1 started too.  MPI_Wait waits for one of them, which is not
 * known: no deadlock.  With only the first, a deadlock. */
static void test_analyze__nonblocking_collectives_on_two_communicators(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(2);
    in_nbc(d, 0, "MPI_Wait", 287);
    in_nbc(d, 1, "MPI_Barrier", 1);
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->ndeadlocks, 1);
    mqdh_analysis_free(a);
    on_dup(d, 0, 287);
    on_dup(d, 1, 287);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "on \"dup\" with schedule tag 287 are the same collective"));
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/* Two ranks in the same blocking collective are in it together (met),
 * unless a receive of one sits beside the other's message with its tag,
 * unmatched: the calls differ (another count, type or algorithm). */
static void test_analyze__blocking_collective_calls_differ(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(2);
    for (int r = 0; r < 2; r++)
        in_nbc(d, r, "MPI_Allreduce", 14);
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->nwaits, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_NONE);
    mqdh_analysis_free(a);
    collective_message(d, 1, 0, 14);
    a = analyze(d);
    one_deadlock(d, a, "0,1",
                 "rank 0 waits in MPI_Allreduce(comm=MPI_COMM_WORLD) - rank 1 is in it too, but "
                 "its message with tag 14 is beside a receive of it that does not take it: the "
                 "calls differ, and neither completes (it is in MPI_Allreduce)");
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/* What else a nonblocking collective's wait can be: met (its data is
 * arriving), behind (the member is at a later instance), not entered by
 * the member, or nothing of its own pending. */
static void test_analyze__nonblocking_collective_progress(void **state)
{
    (void)state;
    /* Rank 0's only receive has its data arriving: it completes.  Rank 1
     * is at instance 288, which rank 0 shows nothing of: it waits for 0. */
    struct mqdh_dump *d = job(2);
    in_nbc(d, 0, "MPI_Wait", 287)->status = MQDH_OP_MATCHED;
    in_nbc(d, 1, "MPI_Wait", 288);
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->nwaits, 1);
    assert_int_equal(a->waits[0].from, 1);
    assert_int_equal(a->waits[0].to, 0);
    assert_string_equal(why_of(d, &a->waits[0]),
                        "rank 1 waits in MPI_Wait: nonblocking collective(comm=MPI_COMM_WORLD) - "
                        "rank 0 has not entered it or a matching one (it is in MPI_Wait)");
    assert_int_equal(a->verdict, MQDH_VERDICT_NONE); /* rank 0 goes on */
    mqdh_analysis_free(a);
    /* Not arriving: rank 1 is past instance 287 (it started 288), so it
     * started 287 too: whether that is rank 0's collective cannot be told. */
    d->procs[0].comms[0].queues[MQDH_RECEIVES].ops[0].status = MQDH_OP_PENDING;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    mqdh_analysis_free(a);
    mqdh_dump_free(d);

    /* Only other ranks' messages pending, none of its own: what it waits
     * for is not known. */
    d = job(2);
    in_call(d, 0, "MPI_Wait");
    collective_message(d, 0, 1, 287);
    in_nbc(d, 1, "MPI_Wait", 288);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_true(unseen_says(a, "what rank 0 waits for in MPI_Wait (nothing of it is in its "
                               "queues)"));
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    mqdh_analysis_free(a);
    mqdh_dump_free(d);

    /* Instances that differ, the other rank outside MPI: the graph frees
     * rank 0 by it, but its collective never completes: no promise. */
    d = job(2);
    in_nbc(d, 0, "MPI_Wait", 287);
    collective_message(d, 0, 1, 287);
    not_in_mpi(d, 1);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "so it never completes, and rank 1 is not blocked in MPI"));
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/* An unexpected message at rank `at` from rank `from`, tag 3. */
static void unexpected(struct mqdh_dump *d, int at, int from, int complete)
{
    struct mqdh_op *o = op(d, at, MQDH_UNEXPECTED, -1, -1);
    o->status = complete ? MQDH_OP_COMPLETE : MQDH_OP_PENDING;
    o->actual_local_rank = o->actual_global_rank = from;
    o->actual_tag = 3;
    o->actual_length = 4;
}

static void test_analyze__blocked_sends_found_at_their_destination(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(2);
    for (int r = 0; r < 2; r++) {
        in_call(d, r, "MPI_Ssend");
        unexpected(d, 1 - r, r, 1); /* eager, data there: Ssend still waits */
    }
    struct mqdh_analysis *a = analyze(d);
    one_deadlock(d, a, "0,1",
                 "rank 0 waits in MPI_Ssend(dest=1, tag=3, comm=MPI_COMM_WORLD) - rank 1 has "
                 "posted no matching receive (it is in MPI_Ssend)");
    mqdh_analysis_free(a);
    /* MPI_Send: a complete eager message is a send that finished, not the
     * one it is blocked in; that one was not seen. */
    in_call(d, 0, "MPI_Send");
    in_call(d, 1, "MPI_Send");
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "its message is in no queue that could be seen"));
    mqdh_analysis_free(a);
    /* A rendezvous envelope (pending) is the blocked MPI_Send's. */
    d->procs[0].comms[0].queues[MQDH_UNEXPECTED].ops[0].status = 0;
    d->procs[1].comms[0].queues[MQDH_UNEXPECTED].ops[0].status = 0;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 1);
    mqdh_analysis_free(a);
    /* The destination computing: it may yet receive. */
    not_in_mpi(d, 1);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/* The call's arguments, as read from its frame; comm is MPI_COMM_WORLD,
 * handle 0x44000000 in every process. */
static void args(struct mqdh_dump *d, int rank, unsigned which, long peer, long tag, long root)
{
    struct mqdh_process *p = &d->procs[rank];
    p->comms[0].has_handle = 1;
    p->comms[0].handle = 0x44000000;
    p->where_args = which | MQDH_ARG_COMM;
    p->where_comm = 0x44000000;
    p->where_source = p->where_dest = peer;
    p->where_tag = tag;
    p->where_root = root;
}

static void test_analyze__probe_by_its_arguments(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(2);
    for (int r = 0; r < 2; r++) {
        in_call(d, r, "MPI_Probe");
        args(d, r, MQDH_ARG_SOURCE | MQDH_ARG_TAG, 1 - r, 7, 0);
    }
    struct mqdh_analysis *a = analyze(d);
    one_deadlock(d, a, "0,1",
                 "rank 0 waits in MPI_Probe(source=1, tag=7, comm=MPI_COMM_WORLD) - rank 1 has "
                 "no matching send pending (it is in MPI_Probe)");
    mqdh_analysis_free(a);
    /* Its message already in its own unexpected queue: about to return. */
    unexpected(d, 0, 1, 1);
    d->procs[0].comms[0].queues[MQDH_UNEXPECTED].ops[0].actual_tag = 7;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_NONE);
    mqdh_analysis_free(a);
    /* Another tag there does not: MPI_ANY_TAG (negative) does. */
    d->procs[0].comms[0].queues[MQDH_UNEXPECTED].ops[0].actual_tag = 8;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 1);
    mqdh_analysis_free(a);
    d->procs[0].where_tag = -1;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    mqdh_analysis_free(a);
    /* A pending nonblocking send to it from rank 1: in flight. */
    d->procs[0].comms[0].queues[MQDH_UNEXPECTED].nops = 0;
    op(d, 1, MQDH_SENDS, 0, 7);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    mqdh_analysis_free(a);
    d->procs[1].comms[0].queues[MQDH_SENDS].nops = 0;
    /* Arguments not read, or a comm no communicator has: not seen. */
    d->procs[1].where_args = 0;
    d->procs[1].where_args_why = strdup("MPI_Probe's source: optimised out here");
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "a probe posts nothing, and MPI_Probe's source: optimised out"));
    mqdh_analysis_free(a);
    args(d, 1, MQDH_ARG_SOURCE | MQDH_ARG_TAG, 0, 7, 0);
    d->procs[1].where_comm = 0x84000002;
    a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "its comm argument is no communicator the DLL showed"));
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

static void test_analyze__rooted_collective_roots(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(3);
    for (int r = 0; r < 3; r++) {
        in_call(d, r, "MPI_Gather");
        args(d, r, MQDH_ARG_ROOT, 0, 0, 0);
    }
    /* One root: all in it, nothing to wait for. */
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_NONE);
    mqdh_analysis_free(a);
    /* Rank 2 names another root: it and the others wait for each other. */
    d->procs[2].where_root = 2;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 1);
    assert_string_equal(ranks(d, a->deadlocks[0].members, a->deadlocks[0].nmembers), "0,1,2");
    assert_string_equal(why_of(d, &a->waits[a->deadlocks[0].waits[0]]),
                        "rank 0 waits in MPI_Gather(comm=MPI_COMM_WORLD, root=0) - rank 2 calls "
                        "it with root 2: the roots must agree (it is in MPI_Gather)");
    mqdh_analysis_free(a);
    /* A root not read: whether the call can complete is not seen. */
    d->procs[2].where_args = MQDH_ARG_COMM;
    d->procs[2].where_args_why = strdup("the MPI library has no debug information for MPI_Gather");
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "give MPI_Gather on \"MPI_COMM_WORLD\" the same root (the MPI "
                               "library has no debug information"));
    mqdh_analysis_free(a);
    /* A member not in it yet: a wait whatever the roots. */
    in_call(d, 2, "MPI_Recv");
    a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN); /* rank 2's own wait unseen */
    assert_false(unseen_says(a, "the same root"));
    mqdh_analysis_free(a);
    /* MPI_Allreduce has no root: all in it is complete. */
    for (int r = 0; r < 3; r++)
        in_call(d, r, "MPI_Allreduce");
    a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_NONE);
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

static void test_analyze__blocked_send_by_its_arguments(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(3);
    /* Rank 0 in MPI_Send to 1 (rendezvous, nothing at 1 yet), 1 in
     * MPI_Send to 0: exact waits, a cycle. */
    for (int r = 0; r < 2; r++) {
        in_call(d, r, "MPI_Send");
        args(d, r, MQDH_ARG_DEST | MQDH_ARG_TAG, 1 - r, 3, 0);
    }
    struct mqdh_analysis *a = analyze(d);
    one_deadlock(d, a, "0,1",
                 "rank 0 waits in MPI_Send(dest=1, tag=3, comm=MPI_COMM_WORLD) - rank 1 has "
                 "posted no matching receive (it is in MPI_Send)");
    mqdh_analysis_free(a);
    /* Rank 1's matching receive posted: rank 0's send is in flight. */
    op(d, 1, MQDH_RECEIVES, 0, 3);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    mqdh_analysis_free(a);
    d->procs[1].comms[0].queues[MQDH_RECEIVES].nops = 0;
    /* A complete eager message from 0 with its tag at 1: perhaps an earlier
     * send's, perhaps this one's: not seen. */
    unexpected(d, 1, 0, 1);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_true(unseen_says(a, "whether rank 0's blocked MPI_Send is the complete message"));
    mqdh_analysis_free(a);
    /* MPI_Ssend: its message, data there or not, waits to be matched. */
    in_call(d, 0, "MPI_Ssend");
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 1);
    mqdh_analysis_free(a);
    /* A destination in MPI_Finalize never receives, whatever its queues. */
    in_call(d, 1, "MPI_Finalize");
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 1);
    assert_string_equal(why_of(d, &a->waits[0]),
                        "rank 0 waits in MPI_Ssend(dest=1, tag=3, comm=MPI_COMM_WORLD) - rank 1 "
                        "has posted no matching receive (it is in MPI_Finalize: it will never "
                        "send or receive again)");
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/*
 * Peers through groups on a communicator that is not the world (no global
 * ranks from the DLL, as libtvmpich gives none): each group is compared
 * with the others of its name and size once for the whole dump, not once
 * for every operation against every process (issue 45, finding 6: a 48 kB
 * file cost 30-45 s of CPU).  A ring of 3,000 on "ring", each rank its
 * group: the analysis, in a child with 10 s of CPU, ends and finds the
 * cycle (it needs well under a second; make bench measures it).
 */
static void test_analyze__groups_compared_once(void **state)
{
    (void)state;
    enum { N = 3000 };
    struct mqdh_dump *d = job(N);
    for (int r = 0; r < N; r++) {
        struct mqdh_comm *c = &d->procs[r].comms[0];
        strcpy(c->name, "ring");
        c->group = malloc(N * sizeof *c->group);
        assert_non_null(c->group);
        for (int m = 0; m < N; m++)
            c->group[m] = m;
        in_call(d, r, "MPI_Recv");
        op(d, r, MQDH_RECEIVES, (r + 1) % N, 3)->desired_global_rank = -1;
    }
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        struct rlimit cpu = {10, 10};
        setrlimit(RLIMIT_CPU, &cpu);
        struct mqdh_analysis *a = NULL;
        _exit(mqdh_analyze(d, &a) == MQDH_OK && a->ndeadlocks == 1 &&
                      a->deadlocks[0].nmembers == N
                  ? 0
                  : 1);
    }
    int st;
    assert_int_equal(waitpid(child, &st, 0), child);
    if (WIFSIGNALED(st))
        fail_msg("the analysis did not end within 10 s of CPU (signal %d)", WTERMSIG(st));
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    mqdh_dump_free(d);
}

/*
 * A job larger than any recursion or pairwise pass survives: a ring of
 * 50,000 (one cycle of all: Tarjan without recursion) and a chain whose
 * last process computes (freed one by one from the end: the work list).
 * The same answers with and without the dump's index.
 */
static void test_analyze__large_ring_and_chain(void **state)
{
    (void)state;
    enum { N = 50000 };
    for (int chain = 0; chain <= 1; chain++) {
        for (int indexed = 0; indexed <= 1; indexed++) {
            struct mqdh_dump *d = job(N);
            for (int r = 0; r < N; r++) {
                if (chain && r == N - 1)
                    continue; /* computing: not in MPI */
                in_call(d, r, "MPI_Recv");
                op(d, r, MQDH_RECEIVES, (r + 1) % N, 3);
            }
            if (indexed)
                assert_int_equal(mqdh_dump_index(d), MQDH_OK);
            struct mqdh_analysis *a = analyze(d);
            assert_int_equal(a->ndeadlocks, chain ? 0 : 1);
            assert_int_equal(a->nbehind, 0);
            if (!chain)
                assert_int_equal(a->deadlocks[0].nmembers, N);
            mqdh_analysis_free(a);
            mqdh_dump_free(d);
        }
    }
}

/* The index finds what a scan finds: every process by its global rank,
 * and none for a rank two worlds' processes have (an MPI-1 DLL's). */
static void test_analyze__index_finds_as_a_scan_does(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(6);
    for (int i = 3; i < 6; i++) { /* a spawned world: ranks 0..2 again, no identities */
        d->procs[i].world = 1;
        d->procs[i].rank = i - 3;
        d->procs[i].identity = -1;
    }
    d->procs[0].identity = d->procs[1].identity = d->procs[2].identity = -1;
    int scan[8];
    for (long g = -1; g < 7; g++)
        scan[g + 1] = mqdh_process_by_global(d, g);
    assert_int_equal(mqdh_world_size(d, 1), 3);
    assert_int_equal(mqdh_dump_index(d), MQDH_OK);
    for (long g = -1; g < 7; g++)
        assert_int_equal(mqdh_process_by_global(d, g), scan[g + 1]);
    assert_int_equal(mqdh_process_by_global(d, 1), -1); /* two worlds' rank 1 */
    assert_int_equal(mqdh_world_size(d, 0), 3);
    assert_int_equal(mqdh_world_size(d, 1), 3);
    for (int i = 3; i < 6; i++) /* MPI-2 identities: each found */
        d->procs[i].identity = 10 + i;
    d->procs[0].identity = 0, d->procs[1].identity = 1, d->procs[2].identity = 2;
    assert_int_equal(mqdh_dump_index(d), MQDH_OK);
    for (int i = 0; i < 6; i++)
        assert_int_equal(mqdh_process_by_global(d, d->procs[i].identity), i);
    assert_int_equal(mqdh_process_by_global(d, 3), -1);
    mqdh_dump_free(d);
}

/*
 * Explanations carry call sites: where each rank named made its MPI call
 * ("at ring.c:21", its file's last component), "called from" its caller
 * without line information, and, for a rank outside MPI, where its own
 * code is at work (from its stack).
 */
static void test_analyze__call_sites(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(3);
    for (int r = 0; r < 2; r++) {
        in_call(d, r, "MPI_Recv");
        d->procs[r].where_function = strdup("main");
        op(d, r, MQDH_RECEIVES, r + 1, 7);
    }
    d->procs[0].where_file = strdup("/home/u/src/ring.c");
    d->procs[0].where_line = 21;
    /* rank 2 computes: its stack says where */
    d->stacks = calloc(3, sizeof *d->stacks);
    struct mqdh_stack *st = &d->stacks[2];
    st->nthreads = 1;
    st->threads = calloc(1, sizeof *st->threads);
    st->threads[0].tid = d->procs[2].pid;
    st->threads[0].entry = -1;
    st->threads[0].nframes = 2;
    st->threads[0].frames = calloc(2, sizeof *st->threads[0].frames);
    st->threads[0].frames[0] = (struct mqdh_frame){.function = strdup("nanosleep"),
                                                   .kind = MQDH_FRAME_SYSTEM};
    st->threads[0].frames[1] = (struct mqdh_frame){.function = strdup("relax"),
                                                   .file = strdup("src/app.c"), .line = 12};
    struct mqdh_analysis *a = NULL;
    assert_int_equal(mqdh_analyze(d, &a), MQDH_OK);
    assert_int_equal(a->nwaits, 2);
    for (int e = 0; e < 2; e++) {
        const char *why = why_of(d, &a->waits[e]);
        const char *want = a->waits[e].from == 0
                               ? "rank 0 waits in MPI_Recv(source=1, tag=7, comm=MPI_COMM_WORLD) "
                                 "at ring.c:21 - rank 1 has no matching send pending (it is in "
                                 "MPI_Recv called from main)"
                               : "rank 1 waits in MPI_Recv(source=2, tag=7, comm=MPI_COMM_WORLD) "
                                 "called from main - rank 2 has no matching send pending (it is "
                                 "not in MPI: in relax at app.c:12; it may still send)";
        assert_string_equal(why, want);
    }
    /* No promise that it will: said, and nobody made blind by it. */
    assert_int_equal(a->verdict, MQDH_VERDICT_NONE);
    assert_true(unseen_says(a, "whether rank 2 will still send or receive what the processes "
                               "waiting on it need: it is not in MPI (in relax at src/app.c:12), "
                               "so it may, or may never"));
    mqdh_analysis_free(a);
    mqdh_dump_free(d); /* its stacks too */
}

/* ---------------------------------------------------------------- from the calls */

/* n processes of one world whose MPI keeps no queues (nothing dumped, each
 * unwound): the launcher says the world's size, or not (size 0). */
static struct mqdh_dump *queueless_job(int n, int size)
{
    struct mqdh_dump *d = job(n);
    for (int i = 0; i < n; i++) {
        struct mqdh_process *p = &d->procs[i];
        free(p->comms);
        p->comms = NULL;
        p->ncomms = 0;
        p->world_size = size;
        p->other_worlds = MQDH_WORLDS_NONE;
        p->error = strdup("/bin/x has no message queues: this MPICH was configured without "
                          "--enable-debuginfo");
        in_call(d, i, "MPI_Comm_rank"); /* unwound, somewhere in MPI */
    }
    /* Unwound: a thread each (its frames do not matter here). */
    d->stacks = calloc((size_t)n, sizeof *d->stacks);
    assert_non_null(d->stacks);
    for (int i = 0; i < n; i++) {
        d->stacks[i].nthreads = 1;
        d->stacks[i].threads = calloc(1, sizeof *d->stacks[i].threads);
        assert_non_null(d->stacks[i].threads);
    }
    return d;
}

/* Rank is in call, whose arguments (which: MQDH_ARG_* bits besides COMM)
 * were read, on MPI_COMM_WORLD by value; peer is its source or dest. */
static void call(struct mqdh_dump *d, int rank, const char *name, unsigned which, long peer,
                 long tag, long root)
{
    struct mqdh_process *p = &d->procs[rank];
    in_call(d, rank, name);
    p->where_args = which | MQDH_ARG_COMM;
    p->where_comm = 0x44000000;
    free(p->where_comm_name);
    p->where_comm_name = strdup("MPI_COMM_WORLD");
    p->where_source = p->where_dest = peer;
    p->where_tag = tag;
    p->where_root = root;
}

#define RECV (MQDH_ARG_SOURCE | MQDH_ARG_TAG)
#define SEND (MQDH_ARG_DEST | MQDH_ARG_TAG)

/* The samples' hangs, each from its calls alone: deadlocks exact. */
static void test_analyze__calls_alone_find_deadlocks(void **state)
{
    (void)state;
    /* mismatch: ranks 0 and 2 in MPI_Barrier, rank 1 receiving from 0. */
    struct mqdh_dump *d = queueless_job(3, 3);
    call(d, 0, "MPI_Barrier", 0, 0, 0, 0);
    call(d, 1, "MPI_Recv", RECV, 0, 5, 0);
    call(d, 2, "MPI_Barrier", 0, 0, 0, 0);
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_DEADLOCK);
    assert_int_equal(a->ncalls_only, 3);
    one_deadlock(d, a, "0,1",
                 "rank 0 waits in MPI_Barrier(comm=MPI_COMM_WORLD) - rank 1 has not entered it "
                 "(it is in MPI_Recv)");
    assert_int_equal(a->nbehind, 1);
    assert_true(a->waits[a->deadlocks[0].waits[0]].from_call);
    const struct mqdh_wait *w = &a->waits[a->deadlocks[0].waits[1]];
    assert_string_equal(why_of(d, w), "rank 1 waits in MPI_Recv(source=0, tag=5, "
                                      "comm=MPI_COMM_WORLD) - rank 0 is blocked in a call that "
                                      "is no matching send (it is in MPI_Barrier)");
    /* The missing queues are said once for the job, and blind nobody. */
    assert_true(unseen_says(a, "ranks [0-2]'s message queues (the waits are read from the "
                               "calls instead)"));
    assert_int_equal(a->nblind, 0);
    mqdh_analysis_free(a);
    mqdh_dump_free(d);

    /* ssend: each sends to the other, neither receives. */
    d = queueless_job(2, 2);
    call(d, 0, "MPI_Ssend", SEND, 1, 3, 0);
    call(d, 1, "MPI_Ssend", SEND, 0, 3, 0);
    a = analyze(d);
    one_deadlock(d, a, "0,1",
                 "rank 0 waits in MPI_Ssend(dest=1, tag=3, comm=MPI_COMM_WORLD) - rank 1 is "
                 "blocked in a call that is no matching receive (it is in MPI_Ssend)");
    mqdh_analysis_free(a);
    /* probe: each probes for the other's message. */
    call(d, 0, "MPI_Probe", RECV, 1, 7, 0);
    call(d, 1, "MPI_Probe", RECV, 0, 7, 0);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 1);
    mqdh_analysis_free(a);
    /* roots: one MPI_Gather, two roots. */
    call(d, 0, "MPI_Gather", MQDH_ARG_ROOT, 0, 0, 0);
    call(d, 1, "MPI_Gather", MQDH_ARG_ROOT, 0, 0, 1);
    a = analyze(d);
    one_deadlock(d, a, "0,1",
                 "rank 0 waits in MPI_Gather(comm=MPI_COMM_WORLD, root=0) - rank 1 calls it "
                 "with root 1: the roots must agree (it is in MPI_Gather)");
    mqdh_analysis_free(a);
    /* finalize: rank 0 receives from rank 1, which is finalizing. */
    call(d, 0, "MPI_Recv", RECV, 1, 5, 0);
    in_call(d, 1, "MPI_Finalize");
    a = analyze(d);
    one_deadlock(d, a, "0,1",
                 "rank 0 waits in MPI_Recv(source=1, tag=5, comm=MPI_COMM_WORLD) - rank 1 is "
                 "blocked in a call that is no matching send (it is in MPI_Finalize: it will "
                 "never send or receive again)");
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/* Where the calls are each other's partners, or may be, or say nothing,
 * no deadlock is claimed; "none" only when every wait was seen. */
static void test_analyze__calls_alone_claim_nothing_unsure(void **state)
{
    (void)state;
    struct mqdh_dump *d = queueless_job(2, 2);
    /* A send and the receive it matches: in flight. */
    call(d, 0, "MPI_Send", SEND, 1, 3, 0);
    call(d, 1, "MPI_Recv", RECV, -2, -1, 0); /* MPI_ANY_SOURCE, MPI_ANY_TAG */
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_NONE);
    mqdh_analysis_free(a);
    /* Another tag: each waits for the other. */
    call(d, 1, "MPI_Recv", RECV, 0, 4, 0);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 1);
    mqdh_analysis_free(a);
    /* The receive's arguments not read: it may be the partner. */
    in_call(d, 1, "MPI_Recv");
    d->procs[1].where_args = 0;
    d->procs[1].where_args_why = strdup("MPI_Recv's source: the call site in main describes "
                                        "no arguments");
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "whether rank 1's MPI_Recv is the partner of rank 0's (MPI_Recv's "
                               "source: the call site in main describes no arguments)"));
    assert_true(unseen_says(a, "whether rank 0's MPI_Send is the partner of rank 1's (the "
                               "latter's communicator is not known)"));
    mqdh_analysis_free(a);
    /* MPI_Wait: its request's operation is in the queues, not the call. */
    in_call(d, 1, "MPI_Wait");
    call(d, 0, "MPI_Recv", RECV, 1, 3, 0);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "what rank 1 waits for in MPI_Wait (the operations of its "
                               "requests are in the MPI library's queues, which cannot be read)"));
    mqdh_analysis_free(a);
    /* A peer computing: rank 0 waits on it, nothing is stuck. */
    not_in_mpi(d, 1);
    a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_NONE);
    mqdh_analysis_free(a);
    /* A communicator that is not predefined: the rank names some process
     * of the job.  Rank 1 sending to rank 0 with its tag may be it. */
    free(d->procs[0].where_comm_name);
    d->procs[0].where_comm_name = NULL;
    call(d, 1, "MPI_Send", SEND, 0, 3, 0);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "whether rank 1's MPI_Send is the partner of rank 0's (the "
                               "latter's communicator is not known)"));
    mqdh_analysis_free(a);
    /* With another tag it is not, on any communicator; nor is a rank in
     * MPI_Finalize: no other process can send to rank 0. */
    for (int c = 0; c < 2; c++) {
        if (c == 0)
            d->procs[1].where_tag = 4;
        else
            in_call(d, 1, "MPI_Finalize");
        a = analyze(d);
        assert_int_equal(a->ndeadlocks, 1);
        const struct mqdh_wait *w = &a->waits[a->deadlocks[0].waits[0]];
        assert_int_equal(w->comm, -2);
        assert_string_equal(
            why_of(d, w), c == 0 ? "rank 0 waits in MPI_Recv(source=1, tag=3, comm=?) - rank 1 is "
                                   "blocked in a call that is no matching send (it is in MPI_Send)"
                                 : "rank 0 waits in MPI_Recv(source=1, tag=3, comm=?) - rank 1 is "
                                   "blocked in a call that is no matching send (it is in "
                                   "MPI_Finalize: it will never send or receive again)");
        mqdh_analysis_free(a);
    }
    /* Unless a program may reach processes of other worlds (a spawned
     * child may be the sender)... */
    d->procs[1].other_worlds = MQDH_WORLDS_MAYBE;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_true(unseen_says(a, "rank 1 calls MPI_Comm_spawn, _connect, _accept, _join or "
                               "_get_parent: it may reach processes outside its world"));
    mqdh_analysis_free(a);
    d->procs[1].other_worlds = MQDH_WORLDS_NONE;
    /* ... or the dump may not hold every process of the job. */
    for (int i = 0; i < 2; i++)
        d->procs[i].world_size = 3;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_true(unseen_says(a, "which process rank 0's MPI_Recv names (its communicator is none "
                               "MPI predefines, and of its MPI_COMM_WORLD 2 of its 3 processes "
                               "are in the dump)"));
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/* A send to MPI_PROC_NULL returns at once; a process with another thread
 * in its own code may still send: neither waits. */
static void test_analyze__calls_alone_proc_null_and_threads(void **state)
{
    (void)state;
    struct mqdh_dump *d = queueless_job(2, 2);
    call(d, 0, "MPI_Send", SEND, -1, 3, 0);
    call(d, 1, "MPI_Recv", RECV, 0, 4, 0);
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    mqdh_analysis_free(a);
    /* Each receives from the other (a deadlock), but rank 0 has a thread
     * computing in the program. */
    call(d, 0, "MPI_Recv", RECV, 1, 4, 0);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 1);
    mqdh_analysis_free(a);
    struct mqdh_process *p = &d->procs[0];
    p->image = strdup("/bin/app");
    p->where_tid = p->pid;
    struct mqdh_stack *st = &d->stacks[0];
    st->threads[0].tid = p->pid;
    struct mqdh_thread *t = realloc(st->threads, 2 * sizeof *t);
    assert_non_null(t);
    st->threads = t;
    memset(&t[1], 0, sizeof t[1]);
    t[1].tid = p->pid + 1;
    t[1].nframes = 1;
    t[1].entry = -1;
    t[1].frames = calloc(1, sizeof *t[1].frames);
    assert_non_null(t[1].frames);
    t[1].frames[0].function = strdup("solve");
    t[1].frames[0].module = strdup("/bin/app");
    st->nthreads = 2;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "whether rank 0 waits in MPI_Recv: its thread 1001 is in solve, "
                               "not in MPI, and may still send or receive"));
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/* MPI_ANY_SOURCE and collectives need every member: the launcher's world
 * size says whether the dump holds them all. */
/*
 * An argument that was not read blocks a verdict only where it could
 * matter: a receive from rank 1 whose tag was not kept waits for rank 1
 * all the same when rank 1 can send nothing that matches (it is in
 * MPI_Finalize, in a collective, or receiving itself), and is unseen when
 * rank 1 sends to it with a tag it may take.  A receive whose source was
 * not read waits for every other member, as MPI_ANY_SOURCE does.
 */
static void test_analyze__calls_alone_unknown_arguments_only_where_they_matter(void **state)
{
    (void)state;
    struct mqdh_dump *d = queueless_job(2, 2);
    call(d, 0, "MPI_Recv", MQDH_ARG_SOURCE, 1, 0, 0); /* the tag not read */
    d->procs[0].where_args_why = strdup("MPI_Recv's tag: the call site does not describe it");
    static const char *const no_partner[] = {"MPI_Finalize", "MPI_Barrier", "MPI_Recv"};
    for (int c = 0; c < 3; c++) {
        call(d, 1, no_partner[c], c == 2 ? RECV : 0, 0, 4, 0);
        struct mqdh_analysis *a = analyze(d);
        assert_int_equal(a->verdict, MQDH_VERDICT_DEADLOCK);
        assert_int_equal(a->ndeadlocks, 1);
        char want[300];
        snprintf(want, sizeof want, "rank 0 waits in MPI_Recv(source=1, tag=?, "
                 "comm=MPI_COMM_WORLD) - rank 1 is blocked in a call that is no matching send "
                 "(it is in %s%s)", no_partner[c],
                 c == 0 ? ": it will never send or receive again" : "");
        const struct mqdh_wait *w = &a->waits[a->deadlocks[0].waits[0]];
        assert_true(w->tag_unknown);
        assert_string_equal(why_of(d, w), want);
        mqdh_analysis_free(a);
    }
    /* Rank 1 sends to rank 0: whether with a tag rank 0 takes is not known. */
    call(d, 1, "MPI_Send", SEND, 0, 9, 0);
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "whether rank 1's MPI_Send is the partner of rank 0's (MPI_Recv's "
                               "tag: the call site does not describe it)"));
    mqdh_analysis_free(a);
    /* A receive of any tag takes a send whose tag was not read: in flight. */
    call(d, 0, "MPI_Send", MQDH_ARG_DEST, 1, 0, 0);
    call(d, 1, "MPI_Recv", RECV, 0, -1, 0);        /* MPI_ANY_TAG */
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_NONE);
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
    /* The source not read: any other member may be it. */
    d = queueless_job(3, 3);
    call(d, 0, "MPI_Recv", MQDH_ARG_TAG, 0, 5, 0);
    in_call(d, 1, "MPI_Finalize");
    in_call(d, 2, "MPI_Finalize");
    a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_DEADLOCK);
    const struct mqdh_wait *w = &a->waits[a->deadlocks[0].waits[0]];
    assert_true(w->peer_unknown);
    if (!strstr(why_of(d, w), "rank 0 waits in MPI_Recv(source=?, tag=5, comm=MPI_COMM_WORLD)"))
        fail_msg("%s", why_of(d, w));
    mqdh_analysis_free(a);
    /* Rank 2 sends it: rank 0 may be receiving from rank 2, or from rank 1,
     * which would leave rank 2 stuck too; which is not known. */
    call(d, 2, "MPI_Send", SEND, 0, 5, 0);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "whether rank 0's MPI_Recv is the partner of rank 2's"));
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/* Process rank's MPI_Wait* call was given one more request: kind, done,
 * on MPI_COMM_WORLD with peer (-2: not known) and tag (-2: not known), the
 * request object at address. */
static struct mqdh_request *wait_request(struct mqdh_dump *d, int rank, enum mqdh_request_kind kind,
                                         int done, long peer, long tag, uint64_t address)
{
    if (!d->requests)
        d->requests = calloc((size_t)d->nprocs, sizeof *d->requests);
    assert_non_null(d->requests);
    struct mqdh_requests *rq = &d->requests[rank];
    struct mqdh_request *v = realloc(rq->v, (size_t)(rq->n + 1) * sizeof *v);
    assert_non_null(v);
    rq->v = v;
    struct mqdh_request *r = &v[rq->n++];
    memset(r, 0, sizeof *r);
    *r = (struct mqdh_request){.handle = 0xac000000u + (unsigned)rq->n, .decoded = 1,
                               .kind = kind, .done = done, .comm = 0, .peer_known = peer != -2,
                               .tag_known = tag != -2, .peer_local = peer, .peer_global = peer,
                               .tag = tag, .sched_tag = -1, .address = address};
    return r;
}

/*
 * MPI_Wait* by the requests it was given (an MPI that records no sends:
 * the send queue has no information).  The receive behind the request
 * waits, and the queue that cannot be read does not matter; a request
 * done lets MPI_Wait return; a send no queue holds waits for its
 * destination, unless that one may receive it.
 */
static void test_analyze__waits_by_their_requests(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(2);
    for (int r = 0; r < 2; r++) {
        in_call(d, r, "MPI_Wait");
        d->procs[r].comms[0].queues[MQDH_SENDS].state = MQDH_QUEUE_NO_INFO;
        op(d, r, MQDH_RECEIVES, 1 - r, 5)->request = 0x1000 + (uint64_t)r;
        op(d, r, MQDH_RECEIVES, 1 - r, 6)->request = 0x2000; /* another request's */
    }
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0); /* without the requests: the sends unseen */
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    mqdh_analysis_free(a);
    for (int r = 0; r < 2; r++)
        wait_request(d, r, MQDH_REQ_RECV, 0, 1 - r, 5, 0x1000 + (uint64_t)r);
    a = analyze(d);
    one_deadlock(d, a, "0,1",
                 "rank 0 waits in MPI_Wait: receive(source=1, tag=5, comm=MPI_COMM_WORLD) - "
                 "rank 1 has no matching send pending (it is in MPI_Wait)");
    assert_int_equal(a->nwaits, 2); /* the tag-6 receives are no request of the calls */
    mqdh_analysis_free(a);
    /* Rank 1's request is done: its MPI_Wait returns; rank 0 waits on a
     * process that can act. */
    d->requests[1].v[0].done = 1;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_NONE);
    mqdh_analysis_free(a);
    /* Rank 1 waits on a send to rank 0 that no queue holds, its tag not
     * recorded: rank 0's receive from it may take it. */
    d->requests[1].n = 0;
    wait_request(d, 1, MQDH_REQ_SEND, 0, 0, -2, 0x3000);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_true(unseen_says(a, "whether rank 0's receive on \"MPI_COMM_WORLD\" takes rank 1's "
                               "send (the send's tag is not recorded)"));
    mqdh_analysis_free(a);
    /* Rank 0 holds a message from rank 1 unexpected, envelope only, tag 12,
     * and one eager (complete: its send done): rank 1's one pending send to
     * it is the first, which rank 0's receives (tags 5 and 6) do not take. */
    struct mqdh_op *eager = op(d, 0, MQDH_UNEXPECTED, -1, -1);
    eager->status = MQDH_OP_COMPLETE;
    eager->actual_local_rank = eager->actual_global_rank = 1;
    eager->actual_tag = 11;
    struct mqdh_op *env = op(d, 0, MQDH_UNEXPECTED, -1, -1);
    env->actual_local_rank = env->actual_global_rank = 1;
    env->actual_tag = 12;
    a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_DEADLOCK);
    assert_true(unseen_says(a, "the tags of sends their MPI does not record: each is the message "
                               "its destination holds unexpected, envelope only"));
    const struct mqdh_wait *sw = NULL;
    for (int k = 0; k < a->deadlocks[0].nwaits; k++)
        if (a->waits[a->deadlocks[0].waits[k]].from == 1)
            sw = &a->waits[a->deadlocks[0].waits[k]];
    assert_non_null(sw);
    if (!strstr(why_of(d, sw), "rank 1 waits in MPI_Wait: send(dest=0, tag=12, "
                               "comm=MPI_COMM_WORLD) - rank 0 has posted no matching receive"))
        fail_msg("%s", why_of(d, sw));
    mqdh_analysis_free(a);
    /* A receive of rank 0 that may take it: not a wait (it is matched). */
    op(d, 0, MQDH_RECEIVES, 1, 12)->request = 0x1000;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    mqdh_analysis_free(a);
    d->procs[0].comms[0].queues[MQDH_RECEIVES].nops--;
    /* Two sends to rank 0, one such message: which is which is not known. */
    wait_request(d, 1, MQDH_REQ_SEND, 0, 0, -2, 0x3100);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_true(unseen_says(a, "the send's tag is not recorded"));
    mqdh_analysis_free(a);
    d->requests[1].n = 1;
    d->procs[0].comms[0].queues[MQDH_UNEXPECTED].nops = 0;
    /* Rank 0 in MPI_Finalize: it never receives; rank 1's send waits on it. */
    in_call(d, 0, "MPI_Finalize");
    a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_DEADLOCK);
    const struct mqdh_wait *w = &a->waits[a->deadlocks[0].waits[a->deadlocks[0].nwaits - 1]];
    if (!strstr(why_of(d, w), "rank 1 waits in MPI_Wait: send(dest=0, tag=?, "
                              "comm=MPI_COMM_WORLD)"))
        fail_msg("%s", why_of(d, w));
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/*
 * An MPI that matches messages in its network library (Debian's MPICH,
 * ch4:ucx): no queue can be read, and the requests say a receive on
 * MPI_COMM_WORLD, pending, but neither its source nor its tag.  Every rank
 * in MPI_Waitall on such a receive, none of them sending: each waits for
 * any other, all stuck.  A rank computing, or in a call that may send,
 * undoes it.
 */
static void test_analyze__waits_by_requests_no_queue_read(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(3);
    for (int r = 0; r < 3; r++) {
        in_call(d, r, "MPI_Waitall");
        for (int q = 0; q < MQDH_NQUEUES; q++)
            d->procs[r].comms[0].queues[q].state = MQDH_QUEUE_NO_INFO;
        wait_request(d, r, MQDH_REQ_RECV, 0, -2, -2, 0x1000 + (uint64_t)r);
    }
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_DEADLOCK);
    assert_int_equal(a->ndeadlocks, 1);
    assert_int_equal(a->deadlocks[0].nmembers, 3);
    const struct mqdh_wait *w = &a->waits[a->deadlocks[0].waits[0]];
    assert_true(w->peer_unknown && w->tag_unknown && w->from_call);
    if (!strstr(why_of(d, w), "receive(source=?, tag=?, comm=MPI_COMM_WORLD)"))
        fail_msg("%s", why_of(d, w));
    assert_true(unseen_says(a, "the receive side of processes whose MPI keeps it in its network "
                               "library: their waits are read from their calls and requests "
                               "instead, which holds once the job has stopped moving"));
    mqdh_analysis_free(a);
    not_in_mpi(d, 2);
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    mqdh_analysis_free(a);
    in_call(d, 2, "MPI_Send"); /* its destination not read: it may send to any */
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "whether rank 2's MPI_Send is the partner of rank 0's receive "
                               "request"));
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/* Every process of d dumped, none of its queues read (Debian's MPICH), the
 * launcher's size its whole job. */
static void no_queue_read(struct mqdh_dump *d)
{
    for (int r = 0; r < d->nprocs; r++) {
        d->procs[r].world_size = d->nprocs;
        d->procs[r].other_worlds = MQDH_WORLDS_NONE;
        for (int c = 0; c < d->procs[r].ncomms; c++)
            for (int q = 0; q < MQDH_NQUEUES; q++)
                d->procs[r].comms[c].queues[q].state = MQDH_QUEUE_NO_INFO;
    }
}

/*
 * A receive request whose communicator is not recorded (UCX matches
 * receives itself: MPICH's request keeps neither communicator, source nor
 * tag): it waits for any other process of the job, when the dump holds
 * the whole job; else what it names is unseen.
 */
static void test_analyze__waits_by_requests_without_communicator(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(2);
    no_queue_read(d);
    for (int r = 0; r < 2; r++) {
        in_call(d, r, "MPI_Wait");
        wait_request(d, r, MQDH_REQ_RECV, 0, -2, -2, 0x1000 + (uint64_t)r)->comm = -1;
    }
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_DEADLOCK);
    assert_int_equal(a->ndeadlocks, 1);
    assert_int_equal(a->deadlocks[0].nmembers, 2);
    const struct mqdh_wait *w = &a->waits[a->deadlocks[0].waits[0]];
    assert_true(w->peer_unknown && w->tag_unknown && w->from_call && w->any_source);
    assert_int_equal(w->comm, -2);
    assert_true(unseen_says(a, "the receive side of processes whose MPI keeps it in its network "
                               "library"));
    mqdh_analysis_free(a);
    d->procs[1].other_worlds = MQDH_WORLDS_MAYBE; /* another job may be its partner */
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "which process rank 0's receive request 0xac000001 names (its "
                               "communicator is not recorded, and "));
    mqdh_analysis_free(a);
    d->procs[1].other_worlds = MQDH_WORLDS_NONE;
    not_in_mpi(d, 1); /* it may yet send */
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}


/*
 * nbcwait's state, rank 0 already in MPI_Wait: its request an
 * MPI_Ireduce's (schedule tag 287, receiving from rank 1 next), rank 1 in
 * MPI_Barrier having started no nonblocking collective (its next tag
 * 287): the cycle of the two, checked.  Rank 0's request.
 */
static struct mqdh_request *nbcwait_state(struct mqdh_dump *d)
{
    struct mqdh_request *nbc = wait_request(d, 0, MQDH_REQ_COLLECTIVE, 0, 1, -2, 0x5000);
    nbc->sched_tag = 287;
    nbc->sched_receives = 1;
    call(d, 1, "MPI_Barrier", 0, 0, 0, 0);
    struct mqdh_requests *r1 = &d->requests[1];
    r1->nbc_ncomms = 1;
    r1->nbc_next_tag = calloc(1, sizeof *r1->nbc_next_tag);
    assert_non_null(r1->nbc_next_tag);
    r1->nbc_next_tag[0] = 287;
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_DEADLOCK);
    one_deadlock(d, a, "0,1",
                 "rank 0 waits in MPI_Wait: nonblocking collective(comm=MPI_COMM_WORLD) - rank 1 "
                 "has not entered it or a matching one (it is in MPI_Barrier)");
    mqdh_analysis_free(a);
    return nbc;
}

/*
 * nbcwait on an MPI that keeps no queue: rank 0 in MPI_Wait on its
 * MPI_Ireduce (schedule tag 287, its schedule receiving from rank 1 next),
 * rank 1 in MPI_Barrier, having started no nonblocking collective on
 * MPI_COMM_WORLD (its next tag 287): each waits for the other.  Rank 1
 * having started one (next tag 288: it may be in the same instance), or
 * its count not known, or its peer only a send's destination: unseen.
 */
static void test_analyze__nonblocking_collective_by_its_request(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(2);
    no_queue_read(d);
    for (int r = 0; r < 2; r++) {
        d->procs[r].comms[0].has_handle = 1;
        d->procs[r].comms[0].handle = 0x44000000;
    }
    in_call(d, 0, "MPI_Wait");
    struct mqdh_request *nbc = nbcwait_state(d);
    struct mqdh_requests *r1 = &d->requests[1];
    struct mqdh_analysis *a;
    r1->nbc_next_tag[0] = 288; /* rank 1 started one: the same instance, maybe */
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "whether rank 1 is in rank 0's nonblocking collective on "
                               "\"MPI_COMM_WORLD\" (schedule tag 287): it has started that one "
                               "or a later one"));
    mqdh_analysis_free(a);
    r1->nbc_next_tag[0] = -1;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_true(unseen_says(a, "how many it has started is not known"));
    mqdh_analysis_free(a);
    r1->nbc_next_tag[0] = 287;
    nbc->sched_receives = 0; /* it sends to rank 1 next: not told */
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_true(unseen_says(a, "the member its schedule receives from next is not known"));
    mqdh_analysis_free(a);
    nbc->sched_receives = 1;
    not_in_mpi(d, 1); /* rank 1 may yet start it */
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/*
 * nbcwait on an MPICH that records no sends but keeps its receive lists
 * (ch4 without --enable-debuginfo): rank 0's pending collective receive
 * from rank 1 (tag 287) is in its queue, rank 1 is in MPI_Barrier and its
 * sends cannot be seen; its next nonblocking collective's tag says whether
 * it started rank 0's instance: 287 not (each waits for the other), 288
 * maybe (unseen), not known (its queues unseen).
 */
static void test_analyze__nonblocking_collective_sends_unseen(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(2);
    in_nbc(d, 0, "MPI_Wait", 287);
    for (int r = 0; r < 2; r++)
        d->procs[r].comms[0].queues[MQDH_SENDS].state = MQDH_QUEUE_NO_INFO;
    nbcwait_state(d);
    struct mqdh_requests *r1 = &d->requests[1];
    r1->nbc_next_tag[0] = 288;
    no_deadlock_unseen(d, "whether rank 0's and rank 1's nonblocking collectives on "
                          "\"MPI_COMM_WORLD\" with schedule tag 287 are the same");
    r1->nbc_next_tag[0] = -1;
    no_deadlock_unseen(d, "rank 1's queues on \"MPI_COMM_WORLD\" (whether it is in rank 0's "
                          "nonblocking collective)");
    mqdh_dump_free(d);
}

/*
 * Processes dumped, whose queues all have no information (Debian's MPICH:
 * no sends recorded, receives in UCX): their waits come from their calls,
 * as for processes not dumped.  finalize's hang: rank 0 in MPI_Recv from
 * rank 1, which is in MPI_Finalize.  One readable queue, and the queues
 * decide again.  probe's at -O0, and a sender's: the peers' calls decide.
 */
static void test_analyze__dumped_without_a_queue_read(void **state)
{
    (void)state;
    struct mqdh_dump *d = job(2);
    no_queue_read(d);
    call(d, 0, "MPI_Recv", RECV, 1, 5, 0);
    call(d, 1, "MPI_Finalize", 0, 0, 0, 0);
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_DEADLOCK);
    assert_int_equal(a->ncalls_only, 2);
    one_deadlock(d, a, "0,1",
                 "rank 0 waits in MPI_Recv(source=1, tag=5, comm=MPI_COMM_WORLD) - rank 1 is "
                 "blocked in a call that is no matching send (it is in MPI_Finalize: it will "
                 "never send or receive again)");
    mqdh_analysis_free(a);
    d->procs[0].comms[0].queues[MQDH_RECEIVES].state = MQDH_QUEUE_OK; /* empty: read */
    a = analyze(d);
    assert_int_equal(a->ncalls_only, 1);
    assert_true(unseen_says(a, "what rank 0 waits for in MPI_Recv (nothing of it is in its "
                               "queues)"));
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
    /* probe at -O0: no argument read, and neither queue: each probes, and
     * the other's call sends nothing whatever its arguments. */
    d = job(2);
    no_queue_read(d);
    in_call(d, 0, "MPI_Probe");
    in_call(d, 1, "MPI_Probe");
    a = analyze(d);
    one_deadlock(d, a, "0,1",
                 "rank 0 waits in MPI_Probe(source=?, tag=?, comm=?) - rank 1 is blocked in a "
                 "call that is no matching send (it is in MPI_Probe)");
    mqdh_analysis_free(a);
    in_call(d, 1, "MPI_Send"); /* it may send what rank 0 probes for */
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_true(unseen_says(a, "whether rank 1's MPI_Send is the partner of rank 0's (its "
                               "arguments were not read)"));
    assert_false(unseen_says(a, "communicator is not known"));
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

static void test_analyze__calls_alone_need_the_whole_world(void **state)
{
    (void)state;
    struct mqdh_dump *d = queueless_job(3, 0); /* size not known */
    call(d, 0, "MPI_Recv", RECV, -2, 1, 0);
    call(d, 1, "MPI_Recv", RECV, -2, 1, 0);
    call(d, 2, "MPI_Recv", RECV, -2, 1, 0);
    struct mqdh_analysis *a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "which processes can send to rank 0, which receives from "
                               "MPI_ANY_SOURCE in MPI_Recv (of its MPI_COMM_WORLD the launcher "
                               "did not say its size)"));
    mqdh_analysis_free(a);
    /* Three of four: still not. */
    for (int i = 0; i < 3; i++)
        d->procs[i].world_size = 4;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 0);
    assert_true(unseen_says(a, "3 of its 4 processes are in the dump"));
    mqdh_analysis_free(a);
    /* The whole world: a knot of receives from anyone. */
    for (int i = 0; i < 3; i++)
        d->procs[i].world_size = 3;
    a = analyze(d);
    assert_int_equal(a->ndeadlocks, 1);
    assert_true(a->deadlocks[0].knot);
    assert_string_equal(ranks(d, a->deadlocks[0].members, a->deadlocks[0].nmembers), "0,1,2");
    mqdh_analysis_free(a);
    /* All in one barrier: met only if the world is whole. */
    for (int i = 0; i < 3; i++)
        call(d, i, "MPI_Barrier", 0, 0, 0, 0);
    a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_NONE);
    mqdh_analysis_free(a);
    for (int i = 0; i < 3; i++)
        d->procs[i].world_size = 4;
    a = analyze(d);
    assert_int_equal(a->verdict, MQDH_VERDICT_UNKNOWN);
    assert_true(unseen_says(a, "whether every member of MPI_COMM_WORLD is in rank 0's "
                               "MPI_Barrier (of its world 3 of its 4 processes are in the dump)"));
    mqdh_analysis_free(a);
    mqdh_dump_free(d);
}

/*
 * The one table of MPI calls: every call that names a peer names its
 * communicator and tag where the binding has one, every rooted collective
 * its root, every MPI_Wait* its requests; flags and kinds agree; a
 * neighbourhood collective not listed is still a collective; a call not
 * in MPI or unknown says so.
 */
static void test_analyze__call_table(void **state)
{
    (void)state;
    static const char *const all[] = {
        "MPI_Send", "MPI_Ssend", "MPI_Rsend", "MPI_Bsend", "MPI_Recv", "MPI_Mrecv",
        "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Probe", "MPI_Mprobe", "MPI_Wait",
        "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Barrier", "MPI_Bcast", "MPI_Reduce",
        "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv", "MPI_Allreduce",
        "MPI_Finalize", "MPI_Abort"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        const struct mqdh__mpi_call *c = mqdh__mpi_call(all[i]);
        assert_non_null(c);
        assert_string_equal(c->name, all[i]);
        int p2p = c->kind == MQDH__CALL_ONE_SEND || c->kind == MQDH__CALL_ONE_RECV ||
                  c->kind == MQDH__CALL_PROBE;
        if (p2p && !(c->flags & MQDH__MPI_MATCHED)) {
            assert_true(c->at[MQDH__AT_COMM] > 0);
            assert_true(c->at[MQDH__AT_TAG] > 0);
            assert_true(c->at[c->kind == MQDH__CALL_ONE_SEND ? MQDH__AT_DEST : MQDH__AT_SOURCE] >= 0);
        }
        assert_int_equal(!!(c->flags & MQDH__MPI_ROOTED), c->at[MQDH__AT_ROOT] >= 0);
        assert_int_equal(!!(c->flags & MQDH__MPI_REQUESTS), c->at[MQDH__AT_REQUEST] >= 0);
        assert_int_equal(mqdh__call_kind(all[i]), c->kind);
    }
    assert_true(mqdh__call_is("MPI_Ssend", MQDH__MPI_SYNC));
    assert_false(mqdh__call_is("MPI_Send", MQDH__MPI_SYNC));
    assert_true(mqdh__call_is("MPI_Bsend", MQDH__MPI_BUFFERED));
    assert_true(mqdh__call_is("MPI_Sendrecv_replace", MQDH__MPI_BOTH));
    assert_true(mqdh__call_is("MPI_Gatherv", MQDH__MPI_ROOTED));
    assert_false(mqdh__call_is("MPI_Allgather", MQDH__MPI_ROOTED));
    assert_false(mqdh__call_is(NULL, MQDH__MPI_SYNC));
    assert_int_equal(mqdh__mpi_call("MPI_Wait")->at[MQDH__AT_COUNT], -1);
    assert_int_equal(mqdh__mpi_call("MPI_Waitall")->at[MQDH__AT_COUNT], 0);
    assert_int_equal(mqdh__call_kind("MPI_Neighbor_allreduce_init"), MQDH__CALL_COLLECTIVE);
    assert_int_equal(mqdh__call_kind("MPI_Comm_rank"), MQDH__CALL_RETURNS);
    assert_int_equal(mqdh__call_kind(NULL), MQDH__CALL_NOT_MPI);
    assert_null(mqdh__mpi_call("MPI_Comm_rank"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_analyze__call_table),
        cmocka_unit_test(test_analyze__call_sites),
        cmocka_unit_test(test_analyze__calls_alone_find_deadlocks),
        cmocka_unit_test(test_analyze__calls_alone_claim_nothing_unsure),
        cmocka_unit_test(test_analyze__calls_alone_need_the_whole_world),
        cmocka_unit_test(test_analyze__waits_by_their_requests),
        cmocka_unit_test(test_analyze__waits_by_requests_no_queue_read),
        cmocka_unit_test(test_analyze__waits_by_requests_without_communicator),
        cmocka_unit_test(test_analyze__nonblocking_collective_by_its_request),
        cmocka_unit_test(test_analyze__nonblocking_collective_sends_unseen),
        cmocka_unit_test(test_analyze__dumped_without_a_queue_read),
        cmocka_unit_test(test_analyze__calls_alone_unknown_arguments_only_where_they_matter),
        cmocka_unit_test(test_analyze__calls_alone_proc_null_and_threads),
        cmocka_unit_test(test_analyze__ring_is_a_cycle),
        cmocka_unit_test(test_analyze__waiting_for_itself),
        cmocka_unit_test(test_analyze__waitall_needs_all_recv_needs_one),
        cmocka_unit_test(test_analyze__in_flight_is_not_a_wait),
        cmocka_unit_test(test_analyze__any_source_knot),
        cmocka_unit_test(test_analyze__any_source_knot_sends_unrecorded),
        cmocka_unit_test(test_analyze__collective_not_entered),
        cmocka_unit_test(test_analyze__unseen_is_never_a_deadlock),
        cmocka_unit_test(test_analyze__same_reason_one_line),
        cmocka_unit_test(test_analyze__peer_labels_and_bad_arguments),
        cmocka_unit_test(test_analyze__spawned_worlds),
        cmocka_unit_test(test_analyze__finalize_is_terminal),
        cmocka_unit_test(test_analyze__past_finalize_is_an_end),
        cmocka_unit_test(test_analyze__nonblocking_collective_in_wait),
        cmocka_unit_test(test_analyze__blocked_sends_found_at_their_destination),
        cmocka_unit_test(test_analyze__probe_by_its_arguments),
        cmocka_unit_test(test_analyze__rooted_collective_roots),
        cmocka_unit_test(test_analyze__blocked_send_by_its_arguments),
        cmocka_unit_test(test_analyze__large_ring_and_chain),
        cmocka_unit_test(test_analyze__groups_compared_once),
        cmocka_unit_test(test_analyze__index_finds_as_a_scan_does),
        cmocka_unit_test(test_analyze__nonblocking_collective_instances),
        cmocka_unit_test(test_analyze__nonblocking_collective_progress),
        cmocka_unit_test(test_analyze__maybe_collective_sends),
        cmocka_unit_test(test_analyze__blocking_collective_calls_differ),
        cmocka_unit_test(test_analyze__nonblocking_collectives_on_two_communicators),
    };
    return cmocka_run_group_tests_name("analyze", tests, NULL, NULL);
}
