/*
 * mixed: the hangs of the other samples in one job of 4 ranks.
 *
 *   rank 0  MPI_Probe for rank 1's message (tag 9): nobody sends it
 *   rank 1  MPI_Ssend to rank 2 (tag 4): rank 2 never receives it
 *   rank 2  MPI_Finalize: it skipped its receive (then sample_finalized)
 *   rank 3  MPI_Waitany on a receive from rank 0 (tag 5)
 *
 * Every rank waits on another: a probe read from its arguments, a blocked
 * send to a finalizing rank, MPI_Finalize's collective wait, and a
 * receive behind MPICH's internal_Waitany frame.
 *
 * Rank 1 sends half a second after announcing itself, so that its message
 * comes to a rank already in MPI_Finalize: MPICH 4.1 and later return from
 * it at once and take nothing in after it, and 5.0 fails MPI_Finalize on
 * a message it had taken in but not matched ("being freed has 1 unmatched
 * message(s)").  ch3 still takes it in, waiting in MPI_Finalize.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    int buf = 0, idx;
    MPI_Request req;
    MPI_Status st;

    sample_init(&argc, &argv, 4);
    switch (sample_rank()) {
    case 0:
        sample_ready();
        MPI_Probe(1, 9, MPI_COMM_WORLD, &st);
        break;
    case 1:
        sample_ready();
        sample_pause(500);
        MPI_Ssend(&buf, 1, MPI_INT, 2, 4, MPI_COMM_WORLD);
        break;
    case 2:
        sample_ready();
        MPI_Finalize();
        sample_finalized();
    default:
        MPI_Irecv(&buf, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &req);
        sample_ready();
        MPI_Waitany(1, &req, &idx, MPI_STATUS_IGNORE);
        break;
    }
    sample_stop();
}
