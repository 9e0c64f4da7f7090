/*
 * test_faults.c - fault injection on live MPICH jobs, each fault repeated
 * at random moments, with the counts printed: mqdump killed (SIGKILL,
 * SIGINT, SIGTERM) mid-dump; a rank killed mid-dump; a process that exits
 * normally mid-dump; ranks the user stopped before the dump; a rank
 * already traced by strace; a process whose threads come and go; a DLL
 * that crashes or never returns.  After every run: mqdump ended by itself
 * (no hang) and not by a crash of its own, and every live rank is exactly
 * as it was found - running and untraced, or stopped by the user and
 * still stopped.
 *
 * MQD_FAULT_RUNS scales every count (default 1: 210 mqdump kills).
 */
#define _GNU_SOURCE
#include "joblaunch.h"
#include "procstate.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
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

extern char **environ;

static int scale = 1;

static void sleep_s(double s)
{
    if (s <= 0)
        return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* A uniform random number in [0, 1). */
static double uniform(void)
{
    return (double)(random() & 0xffffff) / (double)0x1000000;
}

/* mqdump with argv (argv[0] ignored), its output in a file of its own. */
struct run {
    pid_t pid;
    char out[64];
    int fd;
};

static void start_mqdump(struct run *r, char *const *args)
{
    char mqdump[4096];
    job_build_path(mqdump, sizeof mqdump, "bin/mqdump");
    char *argv[32] = {mqdump};
    int n = 1;
    for (; args[n - 1] && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    snprintf(r->out, sizeof r->out, "/tmp/mqd-faults-XXXXXX");
    r->fd = mkstemp(r->out);
    assert_true(r->fd >= 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, r->fd, 1);
    posix_spawn_file_actions_adddup2(&fa, r->fd, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    int rc = posix_spawn(&r->pid, mqdump, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    assert_int_equal(rc, 0);
}

/* Wait for r (at most limit seconds, then SIGKILL it): its wait status,
 * or -1 if it had to be killed (a hang). */
static int finish(struct run *r, double limit)
{
    double end = job_now() + limit;
    int st;
    for (;;) {
        pid_t w = waitpid(r->pid, &st, WNOHANG);
        if (w == r->pid)
            return st;
        if (job_now() > end) {
            kill(r->pid, SIGKILL);
            waitpid(r->pid, &st, 0);
            return -1;
        }
        sleep_s(0.002);
    }
}

/* r's output (malloc'd), and r's file gone. */
static char *output(struct run *r)
{
    char *text = calloc(1, 65536);
    assert_non_null(text);
    if (pread(r->fd, text, 65535, 0) < 0)
        text[0] = '\0';
    close(r->fd);
    unlink(r->out);
    return text;
}

/* How an mqdump run ended, counted. */
struct tally {
    int runs, hangs, crashes, left_stopped, left_traced, wrong;
    int exit_status[4]; /* 0, 1, 2, other */
    int by_signal;      /* killed by the signal the test sent */
};

/* The wait status st of a run the test may have sent sent (0: none). */
static void count_end(struct tally *t, int st, int sent)
{
    t->runs++;
    if (st == -1) {
        t->hangs++;
    } else if (WIFSIGNALED(st)) {
        if (WTERMSIG(st) == sent)
            t->by_signal++;
        else
            t->crashes++; /* a signal of its own: SIGSEGV, SIGABRT, ... */
    } else {
        int e = WEXITSTATUS(st);
        t->exit_status[e <= 2 ? e : 3]++;
    }
}

/* Every rank of job left running and untraced (stopped[i]: left stopped,
 * untraced, as the user stopped it); ranks that are gone are skipped. */
static void count_ranks(struct tally *t, const struct job *job, const int *stopped)
{
    for (int i = 0; i < job->np; i++) {
        if (!job_pid_alive(job->ranks[i]))
            continue;
        char why[256];
        if (stopped && stopped[i]) {
            long tracer = 0;
            char s = settled_state(job->ranks[i], job->ranks[i], 'T', &tracer);
            if (s != 'T')
                t->left_stopped++; /* here: not left as found */
            if (tracer)
                t->left_traced++;
        } else if (proc_released(job->ranks[i], why, sizeof why) != 0 && !strstr(why, "gone")) {
            fprintf(stderr, "  rank %d: %s\n", i, why);
            if (strstr(why, "trace"))
                t->left_traced++;
            else
                t->left_stopped++;
        }
    }
}

static void report(const char *what, const struct tally *t)
{
    printf("faults: %-36s %4d runs: exit 0/1/2 %d/%d/%d, ended by the signal sent %d, "
           "hangs %d, crashes %d, ranks left stopped %d, left traced %d, wrong answers %d\n",
           what, t->runs, t->exit_status[0], t->exit_status[1], t->exit_status[2],
           t->by_signal, t->hangs, t->crashes, t->left_stopped, t->left_traced, t->wrong);
    fflush(stdout);
    assert_int_equal(t->hangs, 0);
    assert_int_equal(t->crashes, 0);
    assert_int_equal(t->left_stopped, 0);
    assert_int_equal(t->left_traced, 0);
    assert_int_equal(t->wrong, 0);
    assert_int_equal(t->exit_status[3], 0);
}

static void start_job(struct job *job, const char *name, int np)
{
    char err[512];
    if (job_start(job, name, np, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* How long a whole dump of job takes here: the window faults land in. */
static double dump_time(const struct job *job)
{
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)job->mpiexec);
    char *args[] = {"--job", pid, NULL};
    double t0 = job_now();
    struct run r;
    start_mqdump(&r, args);
    int st = finish(&r, 60);
    free(output(&r));
    assert_true(st != -1 && WIFEXITED(st));
    return job_now() - t0;
}

/* ---------------------------------------------------------------- tests */

/* mqdump killed at a random moment of its dump, 70 times per signal:
 * SIGKILL (no handler runs: the kernel lets the ranks go), SIGINT and
 * SIGTERM (mqdump lets them go, then dies of the signal). */
static void test_faults__mqdump_killed_mid_dump(void **state)
{
    (void)state;
    struct job job;
    start_job(&job, "ring", 8);
    double window = dump_time(&job) * 1.2;
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    static const int sigs[] = {SIGKILL, SIGINT, SIGTERM};
    static const char *const names[] = {"mqdump SIGKILLed mid-dump", "mqdump SIGINTed mid-dump",
                                        "mqdump SIGTERMed mid-dump"};
    for (int s = 0; s < 3; s++) {
        struct tally t = {0};
        for (int i = 0; i < 70 * scale; i++) {
            char *args[] = {"--job", pid, NULL};
            struct run r;
            start_mqdump(&r, args);
            sleep_s(uniform() * window);
            kill(r.pid, sigs[s]);
            count_end(&t, finish(&r, 20), sigs[s]);
            free(output(&r));
            count_ranks(&t, &job, NULL);
        }
        report(names[s], &t);
        assert_true(t.by_signal > 0); /* some runs were caught mid-dump */
    }
    printf("faults: (each signal sent within %.0f ms of mqdump's start)\n", window * 1000);
    job_stop(&job);
}

/* Ranks the user stopped (SIGSTOP) before the dump stay stopped after
 * it, untraced; the others run on. */
static void test_faults__stopped_ranks_stay_stopped(void **state)
{
    (void)state;
    struct job job;
    start_job(&job, "ring", 8);
    int stopped[8] = {0, 1, 0, 0, 0, 1, 0, 0};
    for (int i = 0; i < 8; i++)
        if (stopped[i])
            kill(job.ranks[i], SIGSTOP);
    for (int i = 0; i < 8; i++)
        if (stopped[i])
            assert_int_equal(settled_state(job.ranks[i], job.ranks[i], 'T', &(long){0}), 'T');
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    struct tally t = {0};
    for (int i = 0; i < 20 * scale; i++) {
        char *args[] = {"--job", pid, NULL};
        struct run r;
        start_mqdump(&r, args);
        count_end(&t, finish(&r, 30), 0);
        char *text = output(&r);
        /* Every rank dumped, the stopped ones too: one cycle of 8. */
        if (!strstr(text, "DEADLOCK: a cycle of 8 processes"))
            t.wrong++;
        free(text);
        count_ranks(&t, &job, stopped);
    }
    report("ranks stopped by the user (2 of 8)", &t);
    for (int i = 0; i < 8; i++)
        if (stopped[i])
            kill(job.ranks[i], SIGCONT);
    job_stop(&job);
}

/* A rank already traced by strace: refused, by name of its tracer; the
 * others dumped; strace's tracing undisturbed. */
static void test_faults__rank_under_strace(void **state)
{
    (void)state;
    if (access("/usr/bin/strace", X_OK) != 0)
        fail_msg("strace is not installed (scripts/install-deps.sh installs it)");
    struct job job;
    start_job(&job, "ring", 4);
    char target[32], pid[32];
    snprintf(target, sizeof target, "%d", (int)job.ranks[2]);
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    char *sargv[] = {"strace", "-q", "-o", "/dev/null", "-p", target, NULL};
    pid_t strace;
    assert_int_equal(posix_spawn(&strace, "/usr/bin/strace", NULL, NULL, sargv, environ), 0);
    long tracer = 0;
    for (int i = 0; i < 500 && tracer != strace; i++) {
        thread_state(job.ranks[2], job.ranks[2], &tracer);
        sleep_s(0.01);
    }
    assert_int_equal(tracer, strace);
    struct tally t = {0};
    char expect[128];
    snprintf(expect, sizeof expect, "already traced by process %d", (int)strace);
    for (int i = 0; i < 5 * scale; i++) {
        char *args[] = {"--job", pid, NULL};
        struct run r;
        start_mqdump(&r, args);
        int st = finish(&r, 30);
        count_end(&t, st, 0);
        char *text = output(&r);
        if (!strstr(text, expect) || !strstr(text, "rank 2") || st == -1 || WEXITSTATUS(st) != 1)
            t.wrong++, fprintf(stderr, "%s", text);
        free(text);
        thread_state(job.ranks[2], job.ranks[2], &tracer);
        if (tracer != strace)
            t.wrong++; /* strace must keep its rank */
        for (int k = 0; k < 4; k++) {
            char why[256];
            if (k != 2 && proc_released(job.ranks[k], why, sizeof why) != 0)
                t.left_stopped++;
        }
    }
    report("a rank traced by strace", &t);
    kill(strace, SIGINT);
    waitpid(strace, NULL, 0);
    job_stop(&job);
}

/* A rank SIGKILLed at a random moment of the dump (the job then ends:
 * mpiexec takes the others down); a fresh job each time. */
static void test_faults__rank_killed_mid_dump(void **state)
{
    (void)state;
    struct tally t = {0};
    double window = 0;
    for (int i = 0; i < 12 * scale; i++) {
        struct job job;
        start_job(&job, "ring", 4);
        if (!window)
            window = dump_time(&job) * 1.2;
        char pid[32];
        snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
        char *args[] = {"--job", pid, NULL};
        struct run r;
        start_mqdump(&r, args);
        sleep_s(uniform() * window);
        kill(job.ranks[random() % 4], SIGKILL);
        count_end(&t, finish(&r, 30), 0);
        free(output(&r));
        count_ranks(&t, &job, NULL);
        job_stop(&job);
    }
    report("a rank SIGKILLed mid-dump", &t);
}

/* A process that exits normally at a random moment of the dump, dumped
 * with the ranks of a job (--pid each). */
static void test_faults__process_exits_mid_dump(void **state)
{
    (void)state;
    struct job job;
    start_job(&job, "ring", 4);
    double window = dump_time(&job) * 1.2;
    struct tally t = {0};
    for (int i = 0; i < 40 * scale; i++) {
        double when = uniform() * window;
        pid_t child = fork();
        if (child == 0) {
            sleep_s(when);
            _exit(0);
        }
        char p[5][32];
        char *args[12];
        int n = 0;
        for (int k = 0; k < 4; k++) {
            snprintf(p[k], sizeof p[k], "%d", (int)job.ranks[k]);
            args[n++] = "--pid";
            args[n++] = p[k];
        }
        snprintf(p[4], sizeof p[4], "%d", (int)child);
        args[n++] = "--pid";
        args[n++] = p[4];
        args[n] = NULL;
        struct run r;
        start_mqdump(&r, args);
        int st = finish(&r, 30);
        count_end(&t, st, 0);
        char *text = output(&r);
        /* The ranks are read whatever the child did: their cycle shows. */
        if (!strstr(text, "DEADLOCK: a cycle of 4 processes"))
            t.wrong++, fprintf(stderr, "%s", text);
        free(text);
        int cst;
        if (waitpid(child, &cst, 0) != child || !WIFEXITED(cst) || WEXITSTATUS(cst) != 0)
            t.wrong++; /* it must have exited as it meant to, not been killed */
        count_ranks(&t, &job, NULL);
    }
    report("a process exiting (status 0) mid-dump", &t);
    job_stop(&job);
}

/* A process whose threads come and go without pause, attached 40 times:
 * mqdump neither hangs nor leaves a thread stopped or traced. */
static void test_faults__threads_come_and_go(void **state)
{
    (void)state;
    char churn[4096];
    job_build_path(churn, sizeof churn, "tests/churn");
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    pid_t pid;
    char *argv[] = {churn, NULL};
    assert_int_equal(posix_spawn(&pid, churn, &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    char ready[16] = "";
    assert_true(read(fds[0], ready, sizeof ready - 1) > 0);
    close(fds[0]);
    char p[32];
    snprintf(p, sizeof p, "%d", (int)pid);
    struct tally t = {0};
    for (int i = 0; i < 40 * scale; i++) {
        char *args[] = {"--pid", p, NULL};
        struct run r;
        start_mqdump(&r, args);
        count_end(&t, finish(&r, 30), 0);
        free(output(&r));
        char why[256];
        if (proc_released(pid, why, sizeof why) != 0)
            t.left_stopped++, fprintf(stderr, "  %s\n", why);
        if (!job_pid_alive(pid))
            t.wrong++;
    }
    report("threads created and ended throughout", &t);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* A DLL that crashes, or never returns (in its own code, or calling the
 * host back): the ranks are let go, the user told which DLL and why, and
 * --timeout bounds the wait. */
static void test_faults__dll_crashes_or_loops(void **state)
{
    (void)state;
    struct job job;
    start_job(&job, "ring", 4);
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    static const struct {
        const char *dll, *says, *what;
    } cases[] = {
        {"tests/fake/fake_crash.so", "fake_crash.so crashed (SIGSEGV at address 0) in "
                                     "mqs_setup_image", "a DLL that crashes (SIGSEGV)"},
        {"tests/fake/fake_loop.so", "fake_loop.so did not return within 1 s from "
                                    "mqs_setup_image", "a DLL looping in its own code"},
        {"tests/fake/fake_loop_calls.so", "fake_loop_calls.so did not return within 1 s from "
                                          "mqs_setup_image", "a DLL looping on callbacks"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char dll[4096];
        job_build_path(dll, sizeof dll, cases[c].dll);
        struct tally t = {0};
        double longest = 0;
        for (int i = 0; i < 5 * scale; i++) {
            char *args[] = {"--dll", dll, "--timeout", "1", "--job", pid, NULL};
            double t0 = job_now();
            struct run r;
            start_mqdump(&r, args);
            int st = finish(&r, 30);
            double took = job_now() - t0;
            longest = took > longest ? took : longest;
            count_end(&t, st, 0);
            char *text = output(&r);
            /* Nothing dumped, but every rank unwound (exit 1), the DLL
             * named with what it did; a looping DLL costs at most
             * MQDH__DLL_STUCK (2) time limits. */
            if (!strstr(text, cases[c].says) || st == -1 || WEXITSTATUS(st) != 1 || took > 8)
                t.wrong++, fprintf(stderr, "%.1f s:\n%s", took, text);
            free(text);
            count_ranks(&t, &job, NULL);
        }
        report(cases[c].what, &t);
        printf("faults: (the longest of those runs: %.1f s)\n", longest);
    }
    job_stop(&job);
}

int main(void)
{
    const char *s = getenv("MQD_FAULT_RUNS");
    if (s && atoi(s) > 0)
        scale = atoi(s);
    srandom((unsigned)time(NULL) ^ (unsigned)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_faults__mqdump_killed_mid_dump),
        cmocka_unit_test(test_faults__stopped_ranks_stay_stopped),
        cmocka_unit_test(test_faults__rank_under_strace),
        cmocka_unit_test(test_faults__rank_killed_mid_dump),
        cmocka_unit_test(test_faults__process_exits_mid_dump),
        cmocka_unit_test(test_faults__threads_come_and_go),
        cmocka_unit_test(test_faults__dll_crashes_or_loops),
    };
    return cmocka_run_group_tests_name("faults", tests, NULL, NULL);
}
