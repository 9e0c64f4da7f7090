/*
 * waits.h - the wait-for graph of a dump, as it is built: what each
 * blocked process waits for, by the MPI call it is in and what its queues
 * and its peers' hold (waits.c, the kinds of call in waits_p2p.c and
 * waits_coll.c; a process without queues in calls.c), for analyze.c.
 */
#ifndef MQDH__WAITS_H
#define MQDH__WAITS_H

#include "analysis/match.h"
#include "mqdhost.h"

/* One operation's targets, pending edges before they are committed. */
struct mqdh__candidate {
    int proc;
    int any;
};

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

/* Process i's label ("rank 3", "process 1234") into buf[len]: buf. */
const char *mqdh__waits_label(const struct mqdh__waits *b, int i, char *buf, size_t len);

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
 * The tag process m's communicator k will give its next nonblocking
 * collective (mqdh_requests.nbc_next_tag), -1 if not known.  MPICH numbers
 * a communicator's nonblocking collectives alike on every member (the
 * n-th takes 287 + n - 1): a next tag at most an instance's means m has
 * not started that instance, and sends it nothing until it does.
 */
long mqdh__next_nbc_tag(const struct mqdh_dump *d, int m, int k);

#endif
