/*
 * handdump.h - dumps of a job built by hand, in memory, for the tests and
 * the bench that feed mqdump's views and the analysis (test_graph.c,
 * bench_analysis.c): no process, no DLL.  Out of memory exits (status 1),
 * saying so.
 */
#ifndef MQD_TESTS_HANDDUMP_H
#define MQD_TESTS_HANDDUMP_H

#include "mqdhost.h"

#include <stdint.h>

/*
 * n processes of one world, ranks 0..n-1 (pids 1000 + rank), all running
 * /bench/app, each in MPI_Recv called from solve at app.c:42, with
 * MPI_COMM_WORLD (size n) and no operation yet; indexed by global rank
 * (mqdh_dump_index).  Free with mqdh_dump_free.
 */
struct mqdh_dump *handdump_job(int n);

/* A pending receive of rank's on MPI_COMM_WORLD from peer (its rank) with
 * tag, 32 bytes, added to its queue; borrowed from d. */
struct mqdh_op *handdump_recv(struct mqdh_dump *d, int rank, long peer, long tag);

/* Rank is outside MPI (computing): not in a call, nothing queued. */
void handdump_computing(struct mqdh_dump *d, int rank);

/*
 * A job of n ranks as two looks at it see it (mqdh_watch_compare;
 * test_watch.c, test_sentinel.c): each in MPI_Recv (a pending receive
 * from its left neighbour, tag 7), each thread's stack main > solve >
 * MPI_Recv, the library's innermost frame at progress_pc, and cpu_ns of
 * CPU time, the process's and its one thread's.
 */
struct mqdh_dump *handdump_stacked(int n, uint64_t progress_pc, uint64_t cpu_ns);

/* Rank r of a handdump_stacked job outside MPI, at work in solve (its
 * innermost frame, at pc). */
void handdump_stacked_computing(struct mqdh_dump *d, int r, uint64_t pc);

/* ns more CPU time for rank r of a handdump_stacked job (its thread's). */
void handdump_add_cpu(struct mqdh_dump *d, int r, uint64_t ns);

#endif
