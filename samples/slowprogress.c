/*
 * slowprogress: slow, but never hung.  Rank 0 works in phases, and the
 * others wait for it in MPI_Bcast (spinning in MPI's progress loop:
 * nothing of theirs moves).  A phase: rank 0 computes outside MPI for
 * 2 s (1 ms of arithmetic in every 4: CPU time outside MPI at every
 * look), broadcasts, waits on "the outside world" for QUIET_SECONDS[k]
 * (asleep: the same stack, no CPU time, so for that long nothing moves
 * anywhere), and broadcasts again.  The waits grow, 1, 2, 4 and 7 s,
 * each longer than a sentinel that had learned nothing would allow
 * (mqdump --sentinel --interval 0.5: 3 s), each at most a few times the
 * one before.  Then every rank leaves MPI and the job ends by itself,
 * after about 22 s.  Any number of ranks >= 2; no .expect.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep, clock_gettime */
#include "sample.h"

#include <time.h>

/* Seconds on the monotonic clock (not MPI_Wtime: a rank computing is
 * then outside MPI, whenever it is looked at). */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const double QUIET_SECONDS[] = {1, 2, 4, 7};

/* Rank 0's computation: seconds of it, a quarter of the time busy. */
static void compute(double seconds)
{
    static volatile double x = 1.0;
    for (double end = now() + seconds; now() < end;) {
        double until = now() + 0.001;
        while (now() < until)
            x = x * 1.000001 + 1e-9;
        sample_pause(3);
    }
}

/* Waiting on something outside MPI (a file system, a service): asleep. */
static void outside_world(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int main(int argc, char **argv)
{
    int phase = 0;
    sample_init(&argc, &argv, 0);
    sample_ready();
    for (int k = 0; k < (int)(sizeof QUIET_SECONDS / sizeof QUIET_SECONDS[0]); k++) {
        if (sample_rank() == 0)
            compute(2.0);
        MPI_Bcast(&phase, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (sample_rank() == 0)
            outside_world(QUIET_SECONDS[k]);
        MPI_Bcast(&phase, 1, MPI_INT, 0, MPI_COMM_WORLD);
        phase++;
    }
    MPI_Finalize();
    return 0;
}
