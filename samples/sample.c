/* sample.c - readiness announcement and helpers shared by the samples. */
#define _POSIX_C_SOURCE 200809L
#include "sample.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int world_rank = -1;

int sample_rank(void)
{
    return world_rank;
}

void sample_init(int *argc, char ***argv, int expected_size)
{
    int size;

    MPI_Init(argc, argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (expected_size > 0 && size != expected_size) {
        if (world_rank == 0)
            fprintf(stderr, "%s: needs exactly %d ranks, got %d\n", (*argv)[0],
                    expected_size, size);
        MPI_Abort(MPI_COMM_WORLD, 64);
    }
}

void sample_ready(void)
{
    const char *fifo = getenv("MQD_READY_FIFO");
    char line[64];
    int len = snprintf(line, sizeof line, "ready %d %ld\n", world_rank, (long)getpid());

    if (!fifo || !*fifo) {
        fprintf(stderr, "rank %d (pid %ld) is ready\n", world_rank, (long)getpid());
        return;
    }
    /* One write of less than PIPE_BUF bytes is atomic: lines never mix. */
    int fd = open(fifo, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, line, (size_t)len) != len) {
        fprintf(stderr, "rank %d: cannot announce readiness on %s: %s\n", world_rank, fifo,
                strerror(errno));
        exit(70);
    }
    close(fd);
}

_Noreturn void sample_block(MPI_Request *reqs, int n)
{
    /* Nothing the sample set up can complete these requests.  (A real
     * status array: GCC's access checks misread MPI_STATUSES_IGNORE.) */
    MPI_Status st[8];
    if (n > 8)
        MPI_Abort(MPI_COMM_WORLD, 70);
    MPI_Waitall(n, reqs, st);
    fprintf(stderr, "rank %d: requests completed that never should\n", world_rank);
    MPI_Abort(MPI_COMM_WORLD, 70);
    abort();
}

void sample_pause(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000 * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

_Noreturn void sample_compute(void)
{
    volatile double x = 1.0;
    for (;;) {
        for (int i = 0; i < 1000; i++)
            x = x * 1.000001 + 1e-9;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

_Noreturn void sample_returned(const char *call, int peer)
{
    fprintf(stderr, "rank %d: %s with rank %d returned, which it never should\n", world_rank,
            call, peer);
    MPI_Abort(MPI_COMM_WORLD, 70);
    abort();
}

_Noreturn void sample_finalized(void)
{
    for (;;)
        pause();
}

_Noreturn void sample_stop(void)
{
    fprintf(stderr, "rank %d: a call returned that never should\n", world_rank);
    MPI_Abort(MPI_COMM_WORLD, 70);
    abort();
}
