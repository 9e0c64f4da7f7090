/*
 * match.h - MPI's rules, as the analysis reads a dump by them: how each
 * MPI call waits, which communicator and which peer an operation names,
 * and whether the partner of an operation is pending.
 *
 * match.c only answers questions about a dump; waits.c builds the
 * wait-for graph with its answers, explain.c words it, analyze.c runs
 * the whole.
 */
#ifndef MQDH__MATCH_H
#define MQDH__MATCH_H

#include "base/mpicalls.h"
#include "mqdhost.h"

/* The calls themselves, their kinds and flags: base/mpicalls.h. */

/* A process that will never send, receive or join anything again (in
 * MPI_Finalize or MPI_Abort, or past MPI_Finalize). */
int mqdh__process_terminal(const struct mqdh_process *p);

/* A process past MPI_Finalize: its DLL says its MPI has finalized, and it
 * is not in MPI_Finalize (MPICH 4.1 and later return from it at once).
 * It waits for nobody, and nothing waits on it to any end: a wait on it,
 * a collective's included, is never met. */
int mqdh__process_finished(const struct mqdh_process *p);

/* The communicator p's call names by its comm argument (read from its
 * frame, matched by handle: mqdh_process.where_comm; with a DLL that
 * gives no handles, a predefined communicator by name), or -1. */
int mqdh__comm_of_args(const struct mqdh_process *p);

/* The communicator p's collective runs on: the one whose queues hold
 * MPI's traffic for a collective, or -1. */
int mqdh__comm_of_traffic(const struct mqdh_process *p);

/* p's communicator that is c of another process: the same name and size
 * (the interface gives no job-wide identity) and, where the DLL gave both
 * groups, the same group; or -1. */
int mqdh__comm_same(const struct mqdh_process *p, const struct mqdh_comm *c);

/* What matching needs of the dump, once per analysis. */
struct mqdh__match {
    const struct mqdh_dump *d; /* indexed: every peer is looked up by global rank */
    const long *ids;           /* per process: the global rank its peers name it by */
    int one_world;             /* every process is in the job's own MPI_COMM_WORLD */
    /* Each name and size of communicator the DLLs gave groups for, once,
     * with whether those groups differ (mqdh__match_groups): a table of
     * cap slots, a power of two; NULL when none. */
    struct mqdh__group_key *groups;
    size_t groups_cap;
};

/* Fill mc->groups from mc->d, comparing each group with the first of its
 * name and size once: the whole dump costs one pass over its groups.
 * MQDH_OK or MQDH_E_NOMEM. */
int mqdh__match_groups(struct mqdh__match *mc);

/* Free what mqdh__match_groups made. */
void mqdh__match_fini(struct mqdh__match *mc);

/*
 * The global rank of the peer that process i's operation on communicator
 * ci names by its rank `local` there: `global` if the DLL gave one (>= 0)
 * or local is a wildcard; else what is certain instead (MPICH's
 * libtvmpich.so gives none), or -1 when nothing is.
 */
long mqdh__op_global(const struct mqdh__match *mc, int i, int ci, long local, long global);

/*
 * Process i's operation o (queue q of communicator c) may be a
 * collective's (maybe_collective: MPICH 4.1+ ch4 enters a collective's
 * traffic under the plain context, keeps no mark of its sends, and loses
 * that of some receives; mqd's DLL marks what it can tell).  Does process
 * t hold, with o's tag, a collective receive from i (o a send) or a
 * collective's send to i (o a receive, the send maybe one too), which
 * would then be o's partner, or (complete) has taken o's data?  1 yes, 0
 * no (or o is not maybe_collective).
 */
int mqdh__collective_twin(const struct mqdh__match *mc, int i, int t, const struct mqdh_comm *c,
                          int q, const struct mqdh_op *o);

/*
 * Does queue q of communicator c hold a pending entry of a collective, or
 * one that may be a collective's, with a tag (an unexpected message's
 * actual one) of from_tag or higher: a nonblocking collective that far or
 * later?  0 also when the queue could not be seen.
 */
int mqdh__queue_has_instance(const struct mqdh_comm *c, int q, long from_tag);

/*
 * Does process t show, on communicator c, a nonblocking collective whose
 * tag is from_tag or later: a pending entry of a collective, or one that
 * may be a collective's, with such a tag?  MPICH numbers them in order, so
 * if i's operation o (maybe_collective) is a collective's, t has entered
 * its instance (from_tag o's tag) or a later one: t shows no partner of
 * o, so either t has taken o's data already, or o is the program's own
 * and t must match it.  1 yes, 0 no.
 */
int mqdh__peer_later_instance(const struct mqdh__match *mc, int t, const struct mqdh_comm *c,
                              const struct mqdh_op *o, long from_tag);

/* Does process t hold the partner of process i's operation o (queue q of
 * communicator c: a pending receive for a send, a send for a receive)?
 * 1 yes, 0 no, -1 cannot be seen. */
int mqdh__partner_pending(const struct mqdh__match *mc, int i, int t, const struct mqdh_comm *c,
                          int q, const struct mqdh_op *o);

/* Does process i's unexpected queue on ci hold a message o (a receive or a
 * probe) takes?  1 yes, 0 no, -1 cannot be seen. */
int mqdh__own_unexpected(const struct mqdh__match *mc, int i, int ci, const struct mqdh_op *o);

#endif
