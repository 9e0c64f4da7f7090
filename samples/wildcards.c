/*
 * wildcards: receives with MPI_ANY_SOURCE and MPI_ANY_TAG.
 *
 * Rank 0 posts, in this order: 2 ints from any source with tag 5; 3 ints
 * from rank 2 with any tag; 10 chars from any source with any tag.
 * Ranks 1 and 2 each post a receive of 1 int from rank 0, tag 1, so rank 0
 * waits for any of them while both wait for rank 0.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    int a[2], b[3], one;
    char c[10];
    MPI_Request req[3];
    int n = 0;

    sample_init(&argc, &argv, 3);
    if (sample_rank() == 0) {
        MPI_Irecv(a, 2, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &req[n++]);
        MPI_Irecv(b, 3, MPI_INT, 2, MPI_ANY_TAG, MPI_COMM_WORLD, &req[n++]);
        MPI_Irecv(c, 10, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req[n++]);
    } else {
        MPI_Irecv(&one, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &req[n++]);
    }
    sample_ready();
    sample_block(req, n);
}
