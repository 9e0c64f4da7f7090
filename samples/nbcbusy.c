/*
 * nbcbusy: a correct program that is always inside two concurrent
 * nonblocking collectives, never deadlocked.  After announcing itself,
 * each of the 2 ranks loops forever: it starts two nonblocking
 * collectives on MPI_COMM_WORLD, in the same order on both ranks, and
 * completes them - rank 0 with one MPI_Wait each, in the order it started
 * them or the other, rank 1 with MPI_Waitall.  The pairs alternate:
 * MPI_Iallreduce and MPI_Ibcast of 4 ints (eager), MPI_Iscan and
 * MPI_Iallreduce of 32 Ki ints (rendezvous: receives whose data is
 * arriving), and MPI_Ibarrier with MPI_Ireduce.
 *
 * It has no .expect: its queues change all the time.  A dump of it at any
 * moment must never say deadlock (tests/test_nbc.c).
 */
#include "sample.h"

#include <stdlib.h>

enum { BIG = 32 * 1024 };

int main(int argc, char **argv)
{
    int *in = calloc(BIG, sizeof *in), *out = calloc(BIG, sizeof *out),
        *out2 = calloc(BIG, sizeof *out2);
    MPI_Request req[2];

    sample_init(&argc, &argv, 2);
    if (!in || !out || !out2)
        MPI_Abort(MPI_COMM_WORLD, 70);
    sample_ready();
    for (unsigned long k = 0;; k++) {
        switch (k % 3) {
        case 0:
            MPI_Iallreduce(in, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[0]);
            MPI_Ibcast(out2, 4, MPI_INT, 0, MPI_COMM_WORLD, &req[1]);
            break;
        case 1:
            MPI_Iscan(in, out, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[0]);
            MPI_Iallreduce(in, out2, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[1]);
            break;
        default:
            MPI_Ibarrier(MPI_COMM_WORLD, &req[0]);
            MPI_Ireduce(in, out, 4, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD, &req[1]);
            break;
        }
        if (sample_rank() == 0) {
            int first = (int)(k / 3 % 2);
            MPI_Wait(&req[first], MPI_STATUS_IGNORE);
            MPI_Wait(&req[1 - first], MPI_STATUS_IGNORE);
        } else {
            MPI_Status st[2];
            MPI_Waitall(2, req, st);
        }
    }
}
