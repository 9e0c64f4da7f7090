/*
 * test_dbgstub.c - libmqd_mpich.so under a debugger nobody on this project
 * wrote: MPICH's own stub debugger (src/mpi/debugger/dbgstub.c and
 * tvtest.c from the MPICH source package, kept by scripts/build-mpich.sh),
 * linked against libmqd_mpich.so instead of libtvmpich.so.
 *
 * That host is an MPI-1 debugger with short callback tables; it leaves
 * mqs_sizeof_fp and mqs_dprints_fp NULL, knows only the types, fields and
 * symbols libtvmpich asks for (find_type answers every name, field_offset
 * -1 for unknown fields, no MPII_Version_string), and reads memory in
 * process.  The DLL must fall back to its known layout of MPICH 4.0.2 and
 * report exactly what tvtest.c leaves: on rank r of 3, receives of tag 17
 * (1 int) and tag 19 (10 ints) from rank r+1 on "Dup of comm world" and a
 * send of tag 18 (1 int) to rank r-1 on MPI_COMM_WORLD; after a round of
 * matching, the tag 19 receive alone.
 */
#define _GNU_SOURCE
#include "joblaunch.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

enum { NP = 3, TIMEOUT_S = 60 };

/*
 * Run `mpiexec -prepend-rank -n NP tvtest` with stdout and stderr into one
 * malloc'd string; its exit status in *status (-1 killed at the timeout).
 */
static char *run_tvtest(int *status)
{
    char tv[PATH_MAX], mpiexec[PATH_MAX];
    const char *prefix = getenv("MQD_MPICH_PREFIX");
    job_build_path(tv, sizeof tv, "tests/tvtest");
    snprintf(mpiexec, sizeof mpiexec, "%s/bin/mpiexec", prefix ? prefix : "");
    int fd[2];
    if (pipe(fd) != 0)
        fail_msg("pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        setpgid(0, 0);
        execl(mpiexec, mpiexec, "-prepend-rank", "-n", "3", tv, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char *out = NULL;
    size_t len = 0, cap = 0;
    time_t end = time(NULL) + TIMEOUT_S;
    *status = -1;
    for (;;) {
        if (cap - len < 4096) {
            char *n = realloc(out, cap + 65536);
            assert_non_null(n);
            out = n;
            cap += 65536;
        }
        fd_set rd;
        FD_ZERO(&rd);
        FD_SET(fd[0], &rd);
        struct timeval tmo = {1, 0};
        int r = select(fd[0] + 1, &rd, NULL, NULL, &tmo);
        if (r > 0) {
            ssize_t got = read(fd[0], out + len, cap - len - 1);
            if (got <= 0)
                break;
            len += (size_t)got;
        }
        if (time(NULL) > end) {
            kill(-pid, SIGKILL); /* the whole job, on every path */
            break;
        }
    }
    close(fd[0]);
    out[len] = '\0';
    int ws;
    if (waitpid(pid, &ws, 0) == pid && WIFEXITED(ws) && time(NULL) <= end)
        *status = WEXITSTATUS(ws);
    kill(-pid, SIGKILL); /* anything left of the job */
    return out;
}

/*
 * Rank r's lines (without the "[r] " hydra prepends) from the first
 * "Should see" on, into a malloc'd string.
 */
static char *rank_lines(const char *out, int r)
{
    char tag[16];
    snprintf(tag, sizeof tag, "[%d] ", r);
    size_t cap = strlen(out) + 1, len = 0;
    char *res = malloc(cap);
    assert_non_null(res);
    res[0] = '\0';
    int started = 0;
    for (const char *l = out; *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        if (strncmp(l, tag, strlen(tag)) == 0) {
            const char *t = l + strlen(tag);
            size_t tn = n - strlen(tag);
            if (!started && strncmp(t, "Should see", 10) == 0)
                started = 1;
            if (started) {
                memcpy(res + len, t, tn);
                len += tn;
                res[len++] = '\n';
                res[len] = '\0';
            }
        }
        l = e ? e + 1 : l + n;
    }
    return res;
}

static void test_dbgstub__mpich_stub_debugger_runs_the_dll(void **state)
{
    (void)state;
    int status;
    char *out = run_tvtest(&status);
    if (status != 0)
        fail_msg("tvtest exited %d (-1: killed after %d s); its output:\n%s", status, TIMEOUT_S,
                 out);
    if (strstr(out, "Error:") || strstr(out, "Failed to get queues") ||
        strstr(out, "Unknown return"))
        fail_msg("the stub debugger reported a failure:\n%s", out);
    for (int r = 0; r < NP; r++) {
        char *mine = rank_lines(out, r), want[2048];
        int next = (r + 1) % NP, prev = (r + NP - 1) % NP;
        /* The first dump, exactly, then the second's one receive. */
        snprintf(want, sizeof want,
                 "Should see pending recv with tag 17, 19 on dupworld and send with tag 18 on "
                 "world\n"
                 "Communicator MPI_COMM_WORLD\n"
                 "No pending receives for communicator MPI_COMM_WORLD\n"
                 "No unexpected receives for communicator MPI_COMM_WORLD\n"
                 "Pending sends for communicator MPI_COMM_WORLD\n"
                 "tag = 18, rank = %d, length = 4\n"
                 "Communicator MPI_COMM_SELF\n"
                 "No pending receives for communicator MPI_COMM_SELF\n"
                 "No unexpected receives for communicator MPI_COMM_SELF\n"
                 "No pending sends for communicator MPI_COMM_SELF\n"
                 "Communicator Dup of comm world\n"
                 "Pending receives for communicator Dup of comm world\n"
                 "tag = 17, rank = %d, length = 4\n"
                 "tag = 19, rank = %d, length = 40\n"
                 "No unexpected receives for communicator Dup of comm world\n"
                 "No pending sends for communicator Dup of comm world\n",
                 prev, next, next);
        if (strncmp(mine, want, strlen(want)) != 0)
            fail_msg("rank %d's first dump differs.\nwanted:\n%s\ngot:\n%s", r, want, mine);
        char second[256];
        snprintf(second, sizeof second,
                 "Pending receives for communicator Dup of comm world\n"
                 "tag = 19, rank = %d, length = 40\n",
                 next);
        const char *after = strstr(mine, "Should see recv with tag 19 on dupworld");
        if (!after || !strstr(after, second))
            fail_msg("rank %d's second dump lacks the tag 19 receive:\n%s", r, mine);
        /* In the second dump the tag 17 receive and the send are gone. */
        if (strstr(after, "tag = 17") || strstr(after, "tag = 18"))
            fail_msg("rank %d's second dump still shows a matched operation:\n%s", r, mine);
        free(mine);
    }
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dbgstub__mpich_stub_debugger_runs_the_dll),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
