/*
 * anysource: a knot.  Every rank waits to receive from MPI_ANY_SOURCE, so
 * any other rank could free it, but every one of them is waiting too.
 *
 * Each rank (3): one posted receive on MPI_COMM_WORLD from MPI_ANY_SOURCE,
 * tag 5, one int.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    int buf;
    MPI_Request req;

    sample_init(&argc, &argv, 3);
    MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &req);
    sample_ready();
    sample_block(&req, 1); /* would send to everyone after this */
}
