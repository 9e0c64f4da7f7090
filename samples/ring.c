/*
 * ring: the classic deadlock.  Every rank must receive from its left
 * neighbour before it sends to its right one, so nobody ever sends.
 *
 * Each rank: one posted receive on MPI_COMM_WORLD from rank-1 (mod size),
 * tag 7, 8 ints.  Any number of ranks >= 2; ring.expect is for 4.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    int buf[8];
    int size;
    MPI_Request req;

    sample_init(&argc, &argv, 0);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (sample_rank() + size - 1) % size;
    MPI_Irecv(buf, 8, MPI_INT, left, 7, MPI_COMM_WORLD, &req);
    sample_ready();
    sample_block(&req, 1); /* would send to the right after this */
}
