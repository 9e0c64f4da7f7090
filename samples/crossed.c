/*
 * crossed: a pair whose tags cross.  Each rank receives tag 2 from the other
 * but sends it tag 1, synchronously: no send meets a receive, and neither
 * rank ever gets past its MPI_Waitall.
 *
 * Each rank (2): a posted receive from the other, tag 2; a pending
 * MPI_Issend to the other, tag 1; the other's tag-1 message, unexpected.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    int in[4], out[4] = {0};
    MPI_Request req[2];

    sample_init(&argc, &argv, 2);
    int other = 1 - sample_rank();
    MPI_Irecv(in, 4, MPI_INT, other, 2, MPI_COMM_WORLD, &req[0]);
    MPI_Issend(out, 4, MPI_INT, other, 1, MPI_COMM_WORLD, &req[1]);
    MPI_Probe(other, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* it is unexpected here */
    sample_ready();
    sample_block(req, 2);
}
