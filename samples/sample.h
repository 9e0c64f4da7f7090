/*
 * sample.h - what every mqd sample program shares.
 *
 * A sample puts each rank's message queues into a known state, announces
 * that it is ready, and then blocks forever in MPI.  The announcement is made
 * only after every queue entry the sample promises exists in this rank's
 * queues (operations are posted with nonblocking calls, incoming messages are
 * waited for with MPI_Probe), so whoever hears "ready" from every rank may
 * inspect the job at once.  The promised entries are listed in SAMPLE.expect
 * beside each sample (format in samples/README.md).
 */
#ifndef MQD_SAMPLE_H
#define MQD_SAMPLE_H

#include <mpi.h>

/*
 * MPI_Init, make MPI errors fatal, and abort unless the job has exactly
 * expected_size ranks (any number if expected_size <= 0).
 */
void sample_init(int *argc, char ***argv, int expected_size);

/*
 * Tell the launcher this rank is ready: one line "ready RANK PID" written
 * atomically to the FIFO named by $MQD_READY_FIFO (or, when the sample runs
 * by hand, a line on stderr).  Exits the rank if the FIFO cannot be written.
 */
void sample_ready(void);

/* Block this rank forever inside MPI, as a hung job does (n <= 8). */
_Noreturn void sample_block(MPI_Request *reqs, int n);

/* Compute forever outside MPI, as a rank busy with its own work is (never
 * returns; sleeps most of the time so as not to take a core). */
_Noreturn void sample_compute(void);

/* After MPI_Finalize, which a sample's rank is never to leave: ch3 waits
 * in it for every peer to close its connections, but ch4 (but for a few
 * OFI providers) leaves it at once.  Then the rank stays here for ever,
 * outside MPI, sending nothing (it can no longer abort the job). */
_Noreturn void sample_finalized(void);

/* Sleep ms milliseconds (outside MPI). */
void sample_pause(int ms);

/* A blocking call a sample expected never to return did: say so, abort. */
_Noreturn void sample_stop(void);
/* The same, for a call with the peer rank peer: say which. */
_Noreturn void sample_returned(const char *call, int peer);

/* This rank in MPI_COMM_WORLD (valid after sample_init). */
int sample_rank(void);

#endif
