/*
 * waitany: each rank posts a receive from the other (tag 4) and waits in
 * MPI_Waitany; nobody sends.  MPICH's PMPI_Waitany tail-calls a static
 * internal_Waitany, so no MPI_ frame is on the stack: the call must be
 * recognised by that name.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    int buf = 0, idx;
    MPI_Request req;

    sample_init(&argc, &argv, 2);
    MPI_Irecv(&buf, 1, MPI_INT, 1 - sample_rank(), 4, MPI_COMM_WORLD, &req);
    sample_ready();
    MPI_Waitany(1, &req, &idx, MPI_STATUS_IGNORE);
    sample_stop();
}
