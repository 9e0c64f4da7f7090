/*
 * dump.h - the dump model: what the library's files share of dump.c
 * beyond the public API.
 *
 * dump.c is the home of struct mqdh_dump and its parts (mqdhost.h): it
 * frees, clears, merges and indexes them, and names their processes and
 * peers.  The files that make or change a dump - session.c, protocol.c,
 * where.c, result_read.c, remote.c, the analysis - call down into it; it
 * calls nothing of theirs.
 */
#ifndef MQDH__DUMP_H
#define MQDH__DUMP_H

#include "mqdhost.h"

#include <stddef.h>

/* ---------------------------------------------------------------- freeing */

/* Free what one process of a dump owns, and zero it (mqdh_dump_free's
 * work for one process; a merge replaces processes with it). */
void mqdh__process_clear(struct mqdh_process *p);

/* Free what a thread holds, and zero it. */
void mqdh__thread_clear(struct mqdh_thread *t);

/* Free what a stack holds, and zero it (NULL is nothing). */
void mqdh__stack_clear(struct mqdh_stack *st);

/* Free what a process's CPU record holds, and zero it (NULL is nothing). */
void mqdh__cpu_clear(struct mqdh_cpu *c);
/* Free what r holds and empty it (r may be NULL). */
void mqdh__requests_clear(struct mqdh_requests *r);

/* ---------------------------------------------------------------- errors */

/*
 * Give process p the error fmt says, unless it has one already: the first
 * error of a process is the one that matters, later ones are dropped.
 * Without memory, p keeps no error.
 */
void mqdh__process_error(struct mqdh_process *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---------------------------------------------------------------- merging */

/*
 * mqdh_dump_merge, also marking placed[i] for each process i of into that
 * a result's process replaced (placed, of into->nprocs, may be NULL).
 * The same return: how many were placed, or -MQDH_E_USAGE, -MQDH_E_NOMEM.
 */
/*
 * The same, into only the processes only[0..nonly-1] of into (indices; an
 * agent's results go only where that agent was sent, never to another
 * host's processes or this host's): a result's process that is none of
 * them is dropped.
 */
int mqdh__dump_merge_only(struct mqdh_dump *into, struct mqdh_dump *const *from, int nfrom,
                          const int *only, int nonly, unsigned char *placed);
int mqdh__dump_merge_marked(struct mqdh_dump *into, struct mqdh_dump *const *from, int nfrom,
                            unsigned char *placed);

/* ---------------------------------------------------------------- index */

/* The global rank a DLL names process p by: its MPI-2 identity, else its
 * rank (-1: neither is known). */
long mqdh__process_global(const struct mqdh_process *p);

/*
 * An index of d's processes by global rank, as mqdh_dump_index makes, not
 * attached to d (the analysis indexes a dump it may not change through a
 * copy); NULL without memory.  Free it with mqdh__index_free.
 */
struct mqdh_index *mqdh__index_build(const struct mqdh_dump *d);

/* Free a dump's index; NULL is fine. */
void mqdh__index_free(struct mqdh_index *x);

/* ---------------------------------------------------------------- naming */

/* A peer, as the global rank g, seen from rank `self` of a job of n ranks:
 * "rank+1", "rank-2", "rank" (relative), or "rank 5" (relative 0). */
void mqdh__peer_label(long g, int self, int n, int relative, char *buf, size_t len);

#endif
