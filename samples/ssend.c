/*
 * ssend: both ranks in MPI_Ssend to each other (tag 3, one int), neither
 * receiving.  A blocking send is in no queue of its sender (MPICH records
 * only nonblocking sends there); each message sits at its destination as
 * an unexpected one, which says whom each sender waits for.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    int buf = 7;

    sample_init(&argc, &argv, 2);
    sample_ready();
    MPI_Ssend(&buf, 1, MPI_INT, 1 - sample_rank(), 3, MPI_COMM_WORLD);
    sample_stop();
}
