/*
 * intercomm: queues on an intercommunicator.
 *
 * World ranks {0,1} form group A and {2,3} group B; "mqd-inter" joins them.
 * Peers on an intercommunicator are ranks in the *remote* group:
 *   rank 0 (A0) posts a receive of 2 ints from remote 1 (world 3), tag 8;
 *   rank 2 (B0) sends 1 MiB to remote 1 (world 1), tag 9: rendezvous, pending;
 *   rank 1 (A1) waits until that message is unexpected in its queue, then
 *               posts a receive of 1 int from remote 1 (world 3), tag 8;
 *   rank 3 (B1) posts a receive of 1 int from remote 0 (world 0), tag 6.
 */
#include "sample.h"

#define LONG_COUNT (1 << 17)

static double long_buf[LONG_COUNT];

int main(int argc, char **argv)
{
    MPI_Comm local, inter;
    MPI_Request req;
    int two[2], one;

    sample_init(&argc, &argv, 4);
    int r = sample_rank();
    MPI_Comm_split(MPI_COMM_WORLD, r < 2 ? 0 : 1, r, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, r < 2 ? 2 : 0, 100, &inter);
    MPI_Comm_set_name(inter, "mqd-inter");

    switch (r) {
    case 0:
        MPI_Irecv(two, 2, MPI_INT, 1, 8, inter, &req);
        break;
    case 1:
        MPI_Probe(0, 9, inter, MPI_STATUS_IGNORE);
        MPI_Irecv(&one, 1, MPI_INT, 1, 8, inter, &req);
        break;
    case 2:
        MPI_Isend(long_buf, LONG_COUNT, MPI_DOUBLE, 1, 9, inter, &req);
        break;
    default:
        MPI_Irecv(&one, 1, MPI_INT, 0, 6, inter, &req);
        break;
    }
    sample_ready();
    sample_block(&req, 1);
}
