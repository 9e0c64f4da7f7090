/*
 * nbcorder: two ranks start the same two nonblocking collectives on one
 * communicator in different orders.  Rank 0 starts MPI_Iallreduce (4 ints)
 * then MPI_Ibcast (1 int, root 0); rank 1 MPI_Ibcast then MPI_Iallreduce,
 * all on MPI_COMM_WORLD; both wait for their MPI_Iallreduce in MPI_Wait.
 * MPI matches nonblocking collectives by the order they are started in:
 * each rank's first is the other's MPI_Ibcast, and nothing completes.
 *
 * Readiness: as nbcmix, a message exchanged after both collectives have
 * started comes after their messages on the same channel.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    int in[4] = {1, 2, 3, 4}, out[4] = {0}, b = 0, token = 0, got;
    MPI_Request req[2];

    sample_init(&argc, &argv, 2);
    int other = 1 - sample_rank();
    if (sample_rank() == 0) {
        MPI_Iallreduce(in, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[0]);
        MPI_Ibcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD, &req[1]);
    } else {
        MPI_Ibcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD, &req[1]);
        MPI_Iallreduce(in, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[0]);
    }
    MPI_Sendrecv(&token, 1, MPI_INT, other, 9, &got, 1, MPI_INT, other, 9, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    sample_ready();
    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    sample_stop();
}
