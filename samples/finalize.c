/*
 * finalize: a rank that reached MPI_Finalize while another waits for it.
 * Rank 0 is in MPI_Recv from rank 1 (tag 5); rank 1 skipped the send and
 * is in MPI_Finalize, which it never leaves on ch3 (it is collective over
 * MPI_COMM_WORLD) and after which it sends nothing (sample_finalized).
 */
#include "sample.h"

int main(int argc, char **argv)
{
    int buf = 0;

    sample_init(&argc, &argv, 2);
    sample_ready();
    if (sample_rank() == 0)
        MPI_Recv(&buf, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
        MPI_Finalize();
    if (sample_rank() == 1)
        sample_finalized();
    sample_stop();
}
