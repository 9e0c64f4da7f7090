/*
 * comms: named, duplicated and split communicators.
 *
 *   "mqd-dup"    MPI_Comm_dup of MPI_COMM_WORLD, named
 *   "half-even"  MPI_Comm_split by rank parity: world ranks 0, 2
 *   "half-odd"                                  world ranks 1, 3
 *   (unnamed)    a second MPI_Comm_dup of MPI_COMM_WORLD
 *
 * Every rank posts on mqd-dup a receive of 4 ints from rank+1 (mod 4),
 * tag 4, and on its half a receive of 2 doubles from its partner, tag 3.
 * World rank 3 also posts on the unnamed duplicate a receive of 1 int from
 * rank 0, tag 2.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    MPI_Comm dup, half, anon;
    MPI_Request req[3];
    int n = 0;
    int four[4], one;
    double two[2];

    sample_init(&argc, &argv, 4);
    int r = sample_rank();
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_name(dup, "mqd-dup");
    MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &half);
    MPI_Comm_set_name(half, r % 2 ? "half-odd" : "half-even");
    MPI_Comm_dup(MPI_COMM_WORLD, &anon);

    MPI_Irecv(four, 4, MPI_INT, (r + 1) % 4, 4, dup, &req[n++]);
    MPI_Irecv(two, 2, MPI_DOUBLE, 1 - r / 2, 3, half, &req[n++]);
    if (r == 3)
        MPI_Irecv(&one, 1, MPI_INT, 0, 2, anon, &req[n++]);
    sample_ready();
    sample_block(req, n);
}
