/*
 * waits.h - the wait-for graph of a dump, as it is built: what each
 * blocked process waits for, by the MPI call it is in and what its queues
 * and its peers' hold (waits.c), for analyze.c.
 */
#ifndef MQDH_WAITS_H
#define MQDH_WAITS_H

#include "match.h"
#include "mqdhost.h"

struct mqdh__candidate; /* waits.c */

/* The analysis being built. */
struct mqdh__waits {
    struct mqdh__match m;    /* the dump, as matching reads it */
    struct mqdh_analysis *a; /* the waits go into a->waits, what is not seen into a->unseen */
    long *ids;               /* per process: the global rank its peers name it by (m.ids) */
    int *blind;              /* per process: what it waits for was not (all) seen */
    int *coll_comm;          /* per process: the communicator of its collective, -1 */
    struct mqdh__candidate *cand; /* room for one operation's candidates: one per process */
    int cap_waits, cap_unseen;
    /*
     * calls.c's checks of a world (is it whole, can its ranks be told
     * apart, is it the whole job), which hold for every process of it:
     * made once for the world last asked about (memo_world, -2: none),
     * not once per process.  memo[c] -1 not made, else the answer, with
     * its reason in memo_why[c].
     */
    int memo_world;
    signed char memo[3];
    char memo_why[3][200];
    int nomem; /* memory ran out: the analysis is not whole */
};

/*
 * Start building a's waits over d (indexed, a->activity not yet set;
 * nothing of a is written here).  MQDH_OK, or MQDH_E_NOMEM with nothing
 * to free.
 */
int mqdh__waits_init(struct mqdh__waits *b, const struct mqdh_dump *d, struct mqdh_analysis *a);

/* Free what mqdh__waits_init made (the analysis stays). */
void mqdh__waits_fini(struct mqdh__waits *b);

/*
 * Something the analysis could not see, which leaves what process `who`
 * waits for (or whether it waits) unknown: a line of a->unseen (each said
 * once), and who is blind.
 */
void mqdh__unseen(struct mqdh__waits *b, int who, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A line of a->unseen (each said once) that leaves no process blind:
 * what was not seen, where the analysis did without it. */
void mqdh__unseen_note(struct mqdh__waits *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A new wait of the graph, zeroed, at the end of a->waits; NULL (and
 * b->nomem) out of memory. */
struct mqdh_wait *mqdh__add_wait(struct mqdh__waits *b);

/*
 * A new wait of process i for m to enter its collective (alone in its
 * group g); comm is i's communicator index (-1: see mqdh_wait), local m's
 * rank there.  NULL (and b->nomem) out of memory.
 */
struct mqdh_wait *mqdh__add_collective_wait(struct mqdh__waits *b, int i, int m, int g, int comm,
                                           long local);

/*
 * waitreq.c: the requests of process i's MPI_Wait* call, when every one is
 * known (read and decoded), else NULL; whether the call returns (one: it
 * needs one of them); whether one pending lives in queue q; whether queue
 * entry o is behind one pending; whether every pending one is a
 * nonblocking collective's.
 */
const struct mqdh_requests *mqdh__call_requests(const struct mqdh__waits *b, int i);
int mqdh__requests_return(const struct mqdh_requests *rq, int one);
int mqdh__requests_in_queue(const struct mqdh_requests *rq, int q);
int mqdh__requests_hold(const struct mqdh_requests *rq, const struct mqdh_op *o);
int mqdh__requests_all_collective(const struct mqdh_requests *rq);
/*
 * Process i in MPI_Wait* on nonblocking collectives only, which its queues
 * show nothing of (an MPI that keeps no queue: waitreq.c): each waits for
 * the member its schedule receives from next where that member has not
 * started its instance; else unseen.
 */
void mqdh__nbc_request_waits(struct mqdh__waits *b, int i, const struct mqdh_requests *rq,
                             int one);
/*
 * The waits of process i's pending requests that no queue entry stands
 * for: a send (an MPI that records none) waits for its destination's
 * receive (group: the next group number, for a call that needs all); any
 * other is unseen.  *free_any set where one may be met.
 */
void mqdh__request_waits(struct mqdh__waits *b, int i, const struct mqdh_requests *rq, int one,
                         int *group, int *free_any);

/*
 * Does the dump hold every process of i's job, its world the only one, and
 * no program able to reach another (calls.c)?  1, or 0 with why.
 */
int mqdh__whole_job(struct mqdh__waits *b, int i, char *why, size_t len);

/*
 * The waits of process i, blocked but without queues (its MPI keeps none
 * for debuggers, or its DLL could not read them), from the arguments of
 * the call it is in alone (calls.c).
 */
void mqdh__call_waits(struct mqdh__waits *b, int i);

/* The waits of process i, blocked (a->activity[i], as every process's,
 * set), from its queues and its call, into a->waits, one after another;
 * b->nomem if memory ran out. */
void mqdh__waits_of(struct mqdh__waits *b, int i);

#endif
