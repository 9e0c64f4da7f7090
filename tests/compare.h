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
};

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

#endif
