/*
 * splitcoll: the mismatch of a collective one rank never joins, twice, on
 * the two unnamed halves of an MPI_Comm_split of MPI_COMM_WORLD (ranks
 * 0,2 and 1,3).  In each half the lower rank is in MPI_Barrier on the
 * half and the other in MPI_Recv from it on the half (tag 6), which it
 * would send only after the barrier.  The halves share their context id
 * and their name (none), and each process has its own handle for its
 * half: only the group tells which processes are one communicator.  Two
 * separate deadlocks, {0,2} and {1,3}.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    int buf = 0, r;
    MPI_Comm half;

    sample_init(&argc, &argv, 4);
    MPI_Comm_split(MPI_COMM_WORLD, sample_rank() % 2, sample_rank(), &half);
    MPI_Comm_rank(half, &r);
    sample_ready();
    if (r == 1) {
        MPI_Recv(&buf, 1, MPI_INT, 0, 6, half, MPI_STATUS_IGNORE);
    } else {
        MPI_Barrier(half);
        MPI_Send(&buf, 1, MPI_INT, 1, 6, half);
    }
    sample_stop();
}
