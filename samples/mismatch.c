/*
 * mismatch: a collective one rank never joins.  Ranks 0 and 2 are in
 * MPI_Barrier on MPI_COMM_WORLD; rank 1 is in MPI_Recv from rank 0, which
 * rank 0 would send only after the barrier.  Ranks 0 and 1 wait for each
 * other; rank 2 waits for rank 1, behind them.
 *
 * A rank cannot announce that it is ready from inside MPI_Barrier: each
 * announces just before its blocking call, and mismatch.expect says which
 * call each rank must be seen in (`where` lines) before its queues are final.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    int buf = 0;

    sample_init(&argc, &argv, 3);
    sample_ready();
    if (sample_rank() == 1) {
        MPI_Recv(&buf, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (sample_rank() == 0)
            MPI_Send(&buf, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
    }
    sample_stop();
}
