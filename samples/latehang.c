/*
 * latehang [SECONDS]: a job that works for a while and then deadlocks, as
 * the hangs of batch jobs do.  For SECONDS (default 5; make bench gives it
 * an hour, a job that works while it is watched) every rank computes a little
 * outside MPI (work: 2 ms of arithmetic, 8 ms asleep) and joins an
 * MPI_Allreduce in which rank 0 says when the time is up; then comes the
 * step with the bug: every rank receives from its left neighbour before
 * sending to its right, so every rank waits in MPI_Recv, a cycle of all.
 * Any number of ranks >= 2; no .expect (its queues change until the end).
 *
 * It announces that it is ready (sample_ready) at the start, so that
 * whoever watches it sees it work first: mqdump --sentinel
 * (tests/test_sentinel.c) must see it move, then declare it hung.
 * At the end, each rank r: a posted receive on MPI_COMM_WORLD from r-1
 * (modulo the size), tag 9, one int.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep, clock_gettime */
#include "sample.h"

#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock (not MPI_Wtime: a rank computing is
 * then outside MPI, whenever it is looked at). */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}


/* A step's work outside MPI: some arithmetic, then a rest. */
static void work(void)
{
    static volatile double x = 1.0;
    double until = now() + 0.002;
    while (now() < until)
        x = x * 1.000001 + 1e-9;
    sample_pause(8);
}

int main(int argc, char **argv)
{
    int size, token = 0;
    sample_init(&argc, &argv, 0);
    double seconds = argc > 1 ? atof(argv[1]) : 5.0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rank = sample_rank(), left = (rank + size - 1) % size, right = (rank + 1) % size;
    sample_ready();
    double start = now();
    for (int done = 0; !done;) {
        work();
        int up = rank == 0 && now() - start >= seconds;
        MPI_Allreduce(&up, &done, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    /* The bug: a receive first, everywhere. */
    MPI_Recv(&token, 1, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&token, 1, MPI_INT, right, 9, MPI_COMM_WORLD);
    sample_returned("MPI_Recv", left);
}
