/*
 * unexpected: messages that arrive before anyone asks for them.
 *
 * Rank 1 sends rank 0 a short message (tag 11, 4 ints: sent eagerly, so the
 * send completes) and a long one (tag 12, 1 MiB: rendezvous, so the send
 * stays pending).  Rank 0 waits until both are in its unexpected queue, then
 * posts a receive for tag 99 that rank 1 never sends.
 */
#include "sample.h"

#define LONG_COUNT (1 << 17) /* doubles: 1 MiB, far above the eager limit */

static double long_buf[LONG_COUNT];

int main(int argc, char **argv)
{
    int small[4] = {1, 2, 3, 4};
    int reply[4];
    MPI_Request req;

    sample_init(&argc, &argv, 2);
    if (sample_rank() == 1) {
        MPI_Send(small, 4, MPI_INT, 0, 11, MPI_COMM_WORLD);
        MPI_Isend(long_buf, LONG_COUNT, MPI_DOUBLE, 0, 12, MPI_COMM_WORLD, &req);
    } else {
        MPI_Probe(1, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Probe(1, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Irecv(reply, 4, MPI_INT, 1, 99, MPI_COMM_WORLD, &req);
    }
    sample_ready();
    sample_block(&req, 1);
}
