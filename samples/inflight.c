/*
 * inflight: stopped, but not deadlocked.  Rank 1 is computing, outside MPI;
 * rank 0 waits for its message, and rank 2 waits for rank 0's, which rank 0
 * sends once it has rank 1's.  A chain, not a cycle: when rank 1 is done,
 * everything completes.  (Rank 1's "computation" never ends, so the job
 * stays in this state for as long as it is inspected.)
 *
 * Rank 0: a posted receive from rank 1, tag 1.  Rank 2: a posted receive
 * from rank 0, tag 2.  Rank 1: nothing.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    int buf = 0;
    MPI_Request req;

    sample_init(&argc, &argv, 3);
    switch (sample_rank()) {
    case 0:
        MPI_Irecv(&buf, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &req);
        sample_ready();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Send(&buf, 1, MPI_INT, 2, 2, MPI_COMM_WORLD);
        break;
    case 1:
        sample_ready();
        sample_compute(); /* then it would send to rank 0, tag 1 */
        break;
    default:
        MPI_Irecv(&buf, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &req);
        sample_ready();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        break;
    }
    sample_stop();
}
