/*
 * spawn: MPI-2 dynamic processes, one job of two worlds.
 *
 * The two launched ranks (world 0) spawn two more processes of this program
 * (world 1) with MPI_Comm_spawn; parents and children share the
 * intercommunicator "mqd-spawn".  Peers on it are ranks in the other world:
 *   parent 0 posts a receive of 1 int from child 1, tag 3;
 *   child 1  posts a receive of 1 int from parent 0, tag 5;
 *   child 0  sends 1 MiB to parent 1, tag 4, synchronous: pending;
 *   parent 1 waits until that message is unexpected in its queue, then
 *            posts a receive of 1 int from child 1, tag 6.
 * Parent 0 and child 1 wait for each other; parent 1 and child 0 are
 * stuck behind them.
 *
 * The send is an MPI_Issend, pending until a receive matches it (never),
 * on every device: ch3 holds a plain 1 MiB MPI_Isend back until the
 * receiver matches it (rendezvous), but ch4 (ch4:ofi) completes it as soon
 * as the data has left between the worlds, which would end child 0's wait
 * ("requests completed that never should") and the job with it.
 *
 * Readiness: every child posts its operations before it enters an
 * MPI_Barrier on the intercommunicator, so when a parent leaves that
 * barrier its children's entries exist; the parents then post theirs and
 * announce.  Only the parents announce (the launcher waits for 2 lines).
 */
#define _GNU_SOURCE
#include "sample.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LONG_COUNT (1 << 17)

static double long_buf[LONG_COUNT];

static void child(MPI_Comm parent)
{
    MPI_Request req;
    int one;

    MPI_Comm_set_errhandler(parent, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_name(parent, "mqd-spawn");
    if (sample_rank() == 0)
        MPI_Issend(long_buf, LONG_COUNT, MPI_DOUBLE, 1, 4, parent, &req);
    else
        MPI_Irecv(&one, 1, MPI_INT, 0, 5, parent, &req);
    MPI_Barrier(parent);
    sample_block(&req, 1);
}

int main(int argc, char **argv)
{
    MPI_Comm parent, children;
    MPI_Request req;
    int one;

    sample_init(&argc, &argv, 0);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        child(parent);

    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (sample_rank() == 0)
            fprintf(stderr, "%s: needs exactly 2 ranks, got %d\n", argv[0], size);
        MPI_Abort(MPI_COMM_WORLD, 64);
    }
    /* The children run this very program, wherever the job was started. */
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        MPI_Abort(MPI_COMM_WORLD, 70);
    self[len] = '\0';
    MPI_Comm_spawn(self, MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &children,
                   MPI_ERRCODES_IGNORE);
    MPI_Comm_set_errhandler(children, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_name(children, "mqd-spawn");
    MPI_Barrier(children);

    if (sample_rank() == 0) {
        MPI_Irecv(&one, 1, MPI_INT, 1, 3, children, &req);
    } else {
        MPI_Probe(0, 4, children, MPI_STATUS_IGNORE);
        MPI_Irecv(&one, 1, MPI_INT, 1, 6, children, &req);
    }
    sample_ready();
    sample_block(&req, 1);
}
