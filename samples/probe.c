/*
 * probe: both ranks in MPI_Probe for a message from the other (tag 7,
 * MPI_COMM_WORLD), nobody sending.  A probe posts nothing, so no queue
 * shows what it waits for: its source, tag and communicator are the
 * call's arguments, read from its stopped frame (or, in a program built
 * with -O1 -g or more, from its call site: the source is a variable that
 * outlives the call, as in ssend).
 */
#include "sample.h"

int main(int argc, char **argv)
{
    MPI_Status st;

    sample_init(&argc, &argv, 2);
    sample_ready();
    int peer = 1 - sample_rank();
    MPI_Probe(peer, 7, MPI_COMM_WORLD, &st);
    sample_returned("MPI_Probe", peer);
}
