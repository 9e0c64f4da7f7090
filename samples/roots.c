/*
 * roots: both ranks in MPI_Gather on MPI_COMM_WORLD, each naming itself
 * as the root.  MPI requires every member to give the same root; here
 * each waits as a root for the other's contribution, which the other,
 * a root itself, never sends.  The queues show two collective receives;
 * the disagreement is in the calls' root arguments.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    int mine = 1, all[2];

    sample_init(&argc, &argv, 2);
    sample_ready();
    MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, sample_rank(), MPI_COMM_WORLD);
    sample_stop();
}
