/*
 * ssend: both ranks in MPI_Ssend to each other (tag 3, one int), neither
 * receiving.  A blocking send is in no queue of its sender (MPICH records
 * only nonblocking sends there); each message sits at its destination as
 * an unexpected one, which says whom each sender waits for.
 *
 * The peer is a variable that outlives the call, as a program's neighbours
 * do: from -O1 on, GCC then describes it at the call site (DWARF call-site
 * parameters), and mqdump reads it there when the MPI library has no debug
 * information (Debian's MPICH).  A value computed only for the call, as
 * roots' root, is not described.
 */
#include "sample.h"

int main(int argc, char **argv)
{
    int buf = 7;

    sample_init(&argc, &argv, 2);
    sample_ready();
    int peer = 1 - sample_rank();
    MPI_Ssend(&buf, 1, MPI_INT, peer, 3, MPI_COMM_WORLD);
    sample_returned("MPI_Ssend", peer);
}
