/*
 * persist: a started persistent send.  Rank 0 starts an MPI_Send_init of
 * 1 MiB (rendezvous) to rank 1, tag 8, and waits for it in MPI_Wait; rank 1
 * sees its envelope arrive (MPI_Probe) and then receives tag 9 from rank 0,
 * which rank 0 would send only afterwards.  MPID_Startall makes the
 * persistent request count on its real request's counter: its own says
 * complete while the send is pending.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    static double big[131072];
    int small = 0;
    MPI_Request req;

    sample_init(&argc, &argv, 2);
    if (sample_rank() == 0) {
        MPI_Send_init(big, 131072, MPI_DOUBLE, 1, 8, MPI_COMM_WORLD, &req);
        MPI_Start(&req);
        sample_ready();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Send(&small, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
    } else {
        MPI_Probe(0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sample_ready();
        MPI_Recv(&small, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    sample_stop();
}
