/*
 * hidden: the rank everyone waits for is not in MPI.  The middle rank is
 * busy in a computation of its own (relax, which never ends) before it
 * would send to both neighbours; every other rank waits for the neighbour
 * nearer the middle, which waits in turn.  Two chains, no cycle: not a
 * deadlock, and nothing in any queue says why the job does not move.
 * Only the busy rank's stack does.  Any number of ranks >= 2;
 * hidden.expect is for 4 (rank 2 busy).
 *
 * The work is in small static functions that the compiler inlines into
 * main: their frames are the DWARF's inlined subroutines.
 *
 * Each rank r below the middle m: a posted receive on MPI_COMM_WORLD from
 * r+1, tag 3, one int; each rank above it: from r-1.  Rank m: nothing.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "sample.h"

#include <time.h>

/* A relaxation sweep that never converges (it sleeps most of the time,
 * so as not to take a core). */
static void relax(double *x, int n)
{
    for (;;) {
        for (int i = 1; i < n - 1; i++)
            x[i] = 0.5 * (x[i - 1] + x[i + 1]);
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Wait for the neighbour nearer the middle (it would send on after). */
static void exchange(int from)
{
    static int buf;
    MPI_Request req;
    MPI_Irecv(&buf, 1, MPI_INT, from, 3, MPI_COMM_WORLD, &req);
    sample_ready();
    sample_block(&req, 1);
}

static void step(int rank, int middle)
{
    static volatile double x[64];
    if (rank == middle) {
        sample_ready();
        relax((double *)x, 64);
    }
    exchange(rank < middle ? rank + 1 : rank - 1);
}

int main(int argc, char **argv)
{
    int size;
    sample_init(&argc, &argv, 0);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    step(sample_rank(), size / 2);
    sample_stop();
}
