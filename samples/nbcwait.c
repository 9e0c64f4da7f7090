/*
 * nbcwait: a nonblocking collective completed by MPI_Wait against a
 * different blocking collective.  Rank 0 starts MPI_Ireduce (root 0) on
 * MPI_COMM_WORLD and waits for it in MPI_Wait; rank 1 is in MPI_Barrier
 * on MPI_COMM_WORLD.  Collectives must be called in the same order on
 * every rank: the reduction never gets rank 1's part, the barrier never
 * gets rank 0.  Each waits for the other.
 *
 * Each rank announces just before its blocking call; nbcwait.expect says
 * where each must be seen (`where` lines) before its queues are final.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    int in = 1, out = 0;
    MPI_Request req;

    sample_init(&argc, &argv, 2);
    if (sample_rank() == 0) {
        MPI_Ireduce(&in, &out, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &req);
        sample_ready();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        sample_ready();
        MPI_Barrier(MPI_COMM_WORLD);
    }
    sample_stop();
}
