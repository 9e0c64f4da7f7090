/*
 * test_samples.c - every sample reaches its promised state, every time, and
 * leaves nothing behind.
 *
 * Each sample is launched MQD_SAMPLE_RUNS times (default 20) under the cached
 * MPICH with debugger support.  Each time, every rank must report ready,
 * run the cached libmpi.so (not the distribution's), descend from the
 * reported mpiexec, and be gone, with mpiexec, once the launcher has ended.
 */
#define _GNU_SOURCE
#include "expect.h"
#include "joblaunch.h"

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static int runs(void)
{
    const char *s = getenv("MQD_SAMPLE_RUNS");
    int n = s ? atoi(s) : 20;
    return n > 0 ? n : 20;
}

static int sample_np(const char *name)
{
    char err[512];
    struct expect e;
    if (expect_load_sample(name, &e, err, sizeof err) != 0)
        fail_msg("%s", err);
    int np = e.np;
    expect_free(&e);
    return np;
}

static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    int ppid;
    return p && sscanf(p + 1, " %*c %d", &ppid) == 1 ? ppid : -1;
}

static int descends_from(pid_t pid, pid_t ancestor)
{
    for (int i = 0; i < 64 && pid > 1; i++) {
        pid = parent_of(pid);
        if (pid == ancestor)
            return 1;
    }
    return 0;
}

/* Does pid map the cached MPICH's libmpi.so? */
static int maps_cached_libmpi(pid_t pid)
{
    char path[64], line[PATH_MAX + 256], want[PATH_MAX + 32], real[PATH_MAX];
    const char *prefix = getenv("MQD_MPICH_PREFIX");
    if (!prefix || !realpath(prefix, real))
        return 0;
    snprintf(want, sizeof want, "%s/lib/libmpi.so", real);
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, want) != NULL;
    if (f)
        fclose(f);
    return found;
}

/* Is pid this test's descendant?  (It is the job's processes' subreaper:
 * an orphan of a job it ran is its child again.) */
static int descendant(pid_t pid)
{
    for (int depth = 0; pid > 1 && depth < 64; depth++) {
        char path[64], line[256];
        snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
        FILE *f = fopen(path, "r");
        pid_t parent = 0;
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "PPid: %d", &parent) == 1)
                break;
        if (f)
            fclose(f);
        if (parent == getpid())
            return 1;
        pid = parent;
    }
    return 0;
}

/* Processes left from a sample, mpiexec or proxy of the MPICH under test
 * that this test ran: its own descendants only, so that another user's
 * job of the same MPICH, or another run's, is no stray of this one. */
static int count_strays(char *names, size_t len)
{
    char samples[PATH_MAX], rsamples[PATH_MAX] = "", rprefix[PATH_MAX] = "";
    const char *prefix = getenv("MQD_MPICH_PREFIX");
    int n = 0;
    names[0] = '\0';
    job_build_path(samples, sizeof samples, "samples");
    if (!realpath(samples, rsamples) || !prefix || !realpath(prefix, rprefix))
        fail_msg("cannot resolve the samples directory or the MPICH prefix");
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], exe[PATH_MAX];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/exe", e->d_name);
        ssize_t k = readlink(path, exe, sizeof exe - 1);
        if (k <= 0)
            continue;
        exe[k] = '\0';
        if ((strncmp(exe, rsamples, strlen(rsamples)) == 0 ||
             strncmp(exe, rprefix, strlen(rprefix)) == 0) &&
            descendant((pid_t)atoi(e->d_name))) {
            n++;
            size_t used = strlen(names);
            snprintf(names + used, len - used, " %s(%s)", e->d_name, exe);
        }
    }
    if (d)
        closedir(d);
    return n;
}

static void assert_no_strays(void)
{
    char names[4096];
    int n = count_strays(names, sizeof names);
    if (n)
        fail_msg("%d stray process(es):%s", n, names);
}

static void check_one_run(const char *name, int np, int run)
{
    struct job job;
    char err[512];

    if (job_start(&job, name, np, err, sizeof err) != 0)
        fail_msg("run %d: %s", run, err);
    for (int r = 0; r < np; r++) {
        pid_t p = job.ranks[r];
        for (int q = 0; q < r; q++)
            if (job.ranks[q] == p)
                fail_msg("run %d: ranks %d and %d report one pid %d", run, q, r, (int)p);
        if (!job_pid_alive(p))
            fail_msg("run %d: rank %d (pid %d) is not running", run, r, (int)p);
        if (!descends_from(p, job.mpiexec))
            fail_msg("run %d: rank %d (pid %d) is not under mpiexec %d", run, r, (int)p,
                     (int)job.mpiexec);
        if (!maps_cached_libmpi(p))
            fail_msg("run %d: rank %d does not run the cached MPICH's libmpi.so", run, r);
    }
    pid_t mpiexec = job.mpiexec;
    int st = job_stop(&job);
    if (st != 0)
        fail_msg("run %d: the launcher exited with %d", run, st);
    for (int r = 0; r < np; r++)
        if (job_pid_alive(job.ranks[r]))
            fail_msg("run %d: rank %d (pid %d) outlived the launcher", run, r,
                     (int)job.ranks[r]);
    assert_false(job_pid_alive(mpiexec));
}

static void run_sample(const char *name)
{
    int np = sample_np(name);
    int n = runs();
    for (int i = 1; i <= n; i++)
        check_one_run(name, np, i);
    assert_no_strays();
}

#define SAMPLE_TEST(name)                                                                      \
    static void test_samples__##name(void **state)                                            \
    {                                                                                          \
        (void)state;                                                                           \
        run_sample(#name);                                                                     \
    }
SAMPLE_TEST(ring)
SAMPLE_TEST(unexpected)
SAMPLE_TEST(wildcards)
SAMPLE_TEST(comms)
SAMPLE_TEST(intercomm)
SAMPLE_TEST(crossed)
SAMPLE_TEST(anysource)
SAMPLE_TEST(mismatch)
SAMPLE_TEST(inflight)
SAMPLE_TEST(spawn)
SAMPLE_TEST(nbcwait)
SAMPLE_TEST(finalize)
SAMPLE_TEST(ssend)
SAMPLE_TEST(waitany)
SAMPLE_TEST(splitcoll)
SAMPLE_TEST(persist)
SAMPLE_TEST(probe)
SAMPLE_TEST(roots)
SAMPLE_TEST(mixed)
SAMPLE_TEST(hidden)

/* A launcher told to stop by a signal still kills and reaps the whole job. */
static void test_samples__sigterm_cleans_up(void **state)
{
    (void)state;
    struct job job;
    char err[512];
    if (job_start(&job, "ring", 4, err, sizeof err) != 0)
        fail_msg("%s", err);
    pid_t launcher = job.launcher;
    kill(launcher, SIGTERM);
    int st = job_stop(&job);
    assert_int_equal(st, 128 + SIGTERM);
    for (int r = 0; r < 4; r++)
        assert_false(job_pid_alive(job.ranks[r]));
    assert_no_strays();
}

/* A sample that fails before it is ready is reported, and leaves nothing. */
static void test_samples__failure_is_reported(void **state)
{
    (void)state;
    struct job job;
    char err[512] = "";
    /* unexpected needs exactly 2 ranks and aborts with 3. */
    assert_int_equal(job_start(&job, "unexpected", 3, err, sizeof err), -1);
    assert_non_null(strstr(err, "did not become ready"));
    assert_non_null(strstr(err, "launcher exit 2"));
    assert_no_strays();
}

int main(void)
{
    /* Orphans of the jobs this test runs come back to it (descendant). */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samples__ring),
        cmocka_unit_test(test_samples__unexpected),
        cmocka_unit_test(test_samples__wildcards),
        cmocka_unit_test(test_samples__comms),
        cmocka_unit_test(test_samples__intercomm),
        cmocka_unit_test(test_samples__crossed),
        cmocka_unit_test(test_samples__anysource),
        cmocka_unit_test(test_samples__mismatch),
        cmocka_unit_test(test_samples__inflight),
        cmocka_unit_test(test_samples__hidden),
        cmocka_unit_test(test_samples__nbcwait),
        cmocka_unit_test(test_samples__finalize),
        cmocka_unit_test(test_samples__ssend),
        cmocka_unit_test(test_samples__waitany),
        cmocka_unit_test(test_samples__splitcoll),
        cmocka_unit_test(test_samples__persist),
        cmocka_unit_test(test_samples__probe),
        cmocka_unit_test(test_samples__roots),
        cmocka_unit_test(test_samples__mixed),
        cmocka_unit_test(test_samples__spawn),
        cmocka_unit_test(test_samples__sigterm_cleans_up),
        cmocka_unit_test(test_samples__failure_is_reported),
    };
    return cmocka_run_group_tests_name("samples", tests, NULL, NULL);
}
