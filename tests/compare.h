/*
 * compare.h - check mqdump's --json output for a sample's job against the
 * queue state the sample promises (SAMPLE.expect), field by field.
 *
 * A DLL that is known to get some fields wrong declares it in a
 * struct dll_limits, and the comparison allows exactly that and nothing
 * else.  With every limit off the dump must be exact: every expected
 * communicator and operation present, and no other operation anywhere.
 */
#ifndef MQD_TESTS_COMPARE_H
#define MQD_TESTS_COMPARE_H

#include "expect.h"
#include "joblaunch.h"
#include "json.h"

struct dll_limits {
    /* Lengths of sends and receives are element counts, not bytes: the
     * expected byte count must be 1, 2, 4, 8 or 16 times the length. */
    int lengths_in_elements;
    /* Unexpected messages have no length (actual_length is -1). */
    int unexpected_length_unknown;
    /* Global ranks are never given (-1). */
    int no_global_ranks;
    /* The name an unnamed user communicator is shown with; NULL: any name
     * that no named communicator of the sample has. */
    const char *unnamed_name;
    /* Communicators other than the sample's (MPI-internal ones) appear. */
    int shows_internal_comms;
    /* Unexpected queues give no information (null): the sample's
     * unexpected messages are not looked for. */
    int unexpected_no_information;
    /* A pending send or receive may show as complete (its completion read
     * from a byte of something else). */
    int completion_unreliable;
    /* On an intercommunicator a peer's global rank is that of the local
     * group's member at the peer's index (the communicator's "group"). */
    int intercomm_peers_in_local_group;
    /* Ranks and tags are read as unsigned 32-bit numbers: MPI_ANY_SOURCE
     * and MPI_ANY_TAG (-1) show as 4294967295. */
    int ints_unsigned;
    /* A blocking send (MPI_Send, MPI_Ssend) is a request in the send queue:
     * a pending send the rank's own call made (its dest, tag and
     * communicator, read from its frame) may show. */
    int blocking_send_queued;
    /* MPI's own collective traffic is hidden: what the .expect lists at a
     * rank in a collective (its where call, or a collective wait from it)
     * is not looked for. */
    int collective_traffic_hidden;
    /* A receive's source is read as an unsigned 16-bit number:
     * MPI_ANY_SOURCE (MPICH's -2) shows as 65534. */
    int any_source_16bit;
    /* An unexpected message whose data is all there may show as pending
     * (its request's completion counter, which the library keeps until a
     * receive matches it). */
    int unexpected_complete_as_pending;
    /* A blocking collective's traffic is the MPI's own algorithm's, not
     * MPICH's the .expect lists: the sample's (marked coll, tag below
     * MQD_NBC_FIRST_TAG) is not looked for, and what is shown marked
     * collective with such a tag is not counted.  A nonblocking
     * collective's (its instance's tag) is compared as any entry. */
    int own_blocking_collectives;
    /* Every entry's collective flag must be what the .expect says (coll). */
    int collective_flag_exact;
    /* A rank in MPI_Finalize still has every communicator (MPICH has freed
     * them): those the .expect lists for other ranks may show too. */
    int finalize_keeps_communicators;
};

/* What Open MPI 4.1.4's own DLL (libompi_dbg_msgq.so) gets wrong; each
 * limit with its reason in Open MPI's source, in compare.c. */
extern const struct dll_limits compare_ompi_limits;
/* What mqd's libmqd_ompi.so is allowed on Open MPI 4.1.4 (pml ob1): only
 * what Open MPI itself does otherwise than MPICH, each with its source. */
extern const struct dll_limits compare_mqd_ompi_limits;

/* The MPICH build under test ($MQD_MPICH_PREFIX), as its own
 * bin/mpichversion describes it. */
struct mpich_build {
    char version[32]; /* "4.0.2" */
    int generation;   /* major * 100 + minor: 400 for 4.0.x, 402 for 4.2.x */
    char device[32];  /* "ch3:nemesis", "ch4:ofi" */
};

/* Read the build under test into *b: 0, or -1 with why in err. */
int compare_mpich_build(struct mpich_build *b, char *err, int errlen);

/* What the tests allow on one MPICH build: what it cannot show. */
struct mpich_allowances {
    /* mqd's DLL, with libmpi's DWARF: what compare_dump allows. */
    struct dll_limits limits;
    /* libmpi.so without its DWARF: mqd's DLL knows no layout of this
     * build (it says so) and the stub debugger cannot use it. */
    int no_known_layout;
    /* MPICH's own libtvmpich.so shows none of the sample's queues. */
    int tvmpich_blind;
    /* What else MPICH's own libtvmpich.so gets wrong on this build, beyond
     * what it gets wrong everywhere (test_mqdump.c's TVMPICH_LIMITS). */
    struct dll_limits tvmpich;
    /* Samples (names, each followed by a space) some of whose queue
     * entries this build keeps where mqd's DLL does not read them: their
     * dumps are not compared, but every rank's call must be exact and the
     * verdict either "cannot tell" or the sample's very deadlocks. */
    const char *samples_unseen;
    /* Every process runs threads of the MPI library's own besides main's
     * (--stacks shows them under "other threads"). */
    int library_threads;
    /* MPI_Finalize returns at once: a rank a sample holds there is past it
     * (expect_finalize_returns). */
    int finalize_returns;
    /* A message between ranks on different nodes is never an unexpected
     * message of the debug queues: it may be missing. */
    int internode_unexpected_unseen;
    /* A send to a rank on another node has no length (-1). */
    int internode_send_length_unknown;
    /* Samples (names, each followed by a space) that this build does not
     * hold: the call each means to hang in returns, for the reason
     * returns_why gives.  A test checks that they end instead. */
    const char *samples_return;
    const char *returns_why;
};

/* What build b cannot show: the allowances compare.c writes for its
 * generation and device, with their reasons; none (every dump exact) for
 * a build none of them names. */
struct mpich_allowances compare_mpich_allowances(const struct mpich_build *b);

/* compare_mpich_under_test's, or the test program ends (exit 2) saying
 * why: the build under test is a set-up fault, not a test's failure. */
const struct mpich_allowances *compare_mpich_allowed(void);

/* Why sample name does not hold on the build allowed for (a's
 * samples_return); NULL if it holds. */
const char *compare_sample_returns(const struct mpich_allowances *a, const char *name);

/* The allowances of the build under test, read once; NULL with why in err
 * if it cannot be read. */
const struct mpich_allowances *compare_mpich_under_test(char *err, int errlen);

/*
 * 0 if dump (the parsed JSON of `mqdump --job` on job) shows what e
 * promises within lim; else -1 with the first difference in err.
 */
int compare_dump(const struct json *dump, const struct expect *e, const struct job *job,
                 const struct dll_limits *lim, char *err, int errlen);

/* 0 if every rank is in the MPI call e's `where` lines name; else -1 and
 * the first that is not, in err. */
int compare_where(const struct json *dump, const struct expect *e, char *err, int errlen);

/*
 * 0 if the dump's "deadlock" object reports exactly e's deadlocks (kind
 * and ranks, in order), the ranks behind them and the edges explaining
 * them (as a multiset of from, to, kind); else -1 with the difference.
 */
int compare_deadlock(const struct json *dump, const struct expect *e, char *err, int errlen);

/*
 * For a DLL that hides part of what a deadlock rests on: 0 if every
 * deadlock the dump reports is within one of e's (its ranks among that
 * one's) and each edge explaining it is one of e's wait lines (each used
 * once), so nothing wrong is claimed; else -1 with the first difference.
 */
int compare_deadlock_within(const struct json *dump, const struct expect *e, char *err,
                            int errlen);

#endif
