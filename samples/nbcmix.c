/*
 * nbcmix: two ranks start different nonblocking collectives on one
 * communicator and wait for them.  Rank 0 starts MPI_Iscan, rank 1
 * MPI_Iallreduce, both on MPI_COMM_WORLD, each its first nonblocking
 * collective there (MPICH gives both the same schedule tag); then both
 * block in MPI_Wait.  Collectives must be the same on every rank: neither
 * completes.  Each rank's queues hold a receive of its collective from the
 * other and the other's message with the same tag, which it does not take.
 *
 * Readiness: after starting its collective each rank exchanges a message
 * with the other (MPI_Sendrecv); the other's collective message went out
 * before it on the same channel, so it is in the unexpected queue by then.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    int in = 1, out = 0, token = 0, got;
    MPI_Request req;

    sample_init(&argc, &argv, 2);
    int other = 1 - sample_rank();
    if (sample_rank() == 0)
        MPI_Iscan(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    else
        MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Sendrecv(&token, 1, MPI_INT, other, 9, &got, 1, MPI_INT, other, 9, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    sample_ready();
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    sample_stop();
}
