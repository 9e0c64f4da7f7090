/*
 * test_attach.c - host/attach.c against real children: every thread is
 * stopped while attached, and each process is left exactly as it was.
 */
#define _GNU_SOURCE
#include "host/attach.h"
#include "tests/procstate.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
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

static void *spin(void *arg)
{
    volatile unsigned long *n = arg;
    for (;;)
        (*n)++;
    return NULL;
}

/* A child running 1 + extra threads, all busy. */
static pid_t start_spinner(int extra)
{
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        static volatile unsigned long counters[8];
        pthread_t t;
        for (int i = 0; i < extra; i++)
            pthread_create(&t, NULL, spin, (void *)&counters[i + 1]);
        if (write(ready[1], "r", 1) != 1)
            _exit(1);
        spin((void *)&counters[0]);
    }
    char c;
    close(ready[1]);
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    return pid;
}

static void reap(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void test_attach__stops_every_thread_and_resumes(void **state)
{
    (void)state;
    pid_t pid = start_spinner(6); /* more threads than an attachment holds inline */
    while (count_threads(pid) < 7)
        sched_yield();
    struct mqdh_attach a;
    char err[256];
    assert_int_equal(mqdh_attach(&a, pid, err, sizeof err), 0);
    assert_int_equal(a.nthreads, 7);
    assert_true(a.nthreads > MQDH_FEW_THREADS);
    for (int i = 0; i < a.nthreads; i++) {
        long tracer;
        assert_int_equal(thread_state(pid, a.threads[i].tid, &tracer), 't');
        assert_int_equal(tracer, getpid());
    }
    pid_t tids[7];
    for (int i = 0; i < 7; i++)
        tids[i] = a.threads[i].tid;
    mqdh_detach(&a);
    mqdh_detach(&a); /* idempotent */
    for (int i = 0; i < 7; i++) {
        long tracer;
        assert_int_equal(settled_state(pid, tids[i], 'R', &tracer), 'R');
        assert_int_equal(tracer, 0);
    }
    reap(pid);
}

/* A process stopped before the attach is still stopped after it. */
static void test_attach__stopped_stays_stopped(void **state)
{
    (void)state;
    pid_t pid = start_spinner(0);
    int st;
    kill(pid, SIGSTOP);
    assert_int_equal(waitpid(pid, &st, WUNTRACED), pid);
    assert_true(WIFSTOPPED(st));
    struct mqdh_attach a;
    char err[256];
    assert_int_equal(mqdh_attach(&a, pid, err, sizeof err), 0);
    mqdh_detach(&a);
    long tracer;
    assert_int_equal(settled_state(pid, pid, 'T', &tracer), 'T');
    assert_int_equal(tracer, 0);
    kill(pid, SIGCONT);
    assert_int_equal(settled_state(pid, pid, 'R', &tracer), 'R');
    reap(pid);
}

static void test_attach__refusals_say_why(void **state)
{
    (void)state;
    struct mqdh_attach a, b;
    char err[256];

    /* No such process. */
    pid_t gone = start_spinner(0);
    reap(gone);
    assert_int_equal(mqdh_attach(&a, gone, err, sizeof err), -ESRCH);
    assert_non_null(strstr(err, "does not exist"));

    /* Already traced (by us, through the first attachment). */
    pid_t pid = start_spinner(0);
    assert_int_equal(mqdh_attach(&a, pid, err, sizeof err), 0);
    assert_int_equal(mqdh_attach(&b, pid, err, sizeof err), -EPERM);
    assert_non_null(strstr(err, "already traced"));
    mqdh_detach(&a);
    long tracer;
    assert_int_equal(settled_state(pid, pid, 'R', &tracer), 'R');
    reap(pid);
}

/* The emergency path (for signal handlers) lets every process go. */
static void test_attach__emergency_detach(void **state)
{
    (void)state;
    pid_t p1 = start_spinner(1), p2 = start_spinner(0);
    struct mqdh_attach a1, a2;
    char err[256];
    assert_int_equal(mqdh_attach(&a1, p1, err, sizeof err), 0);
    assert_int_equal(mqdh_attach(&a2, p2, err, sizeof err), 0);
    mqdh_detach_all_emergency();
    long tracer;
    assert_int_equal(settled_state(p1, p1, 'R', &tracer), 'R');
    assert_int_equal(settled_state(p2, p2, 'R', &tracer), 'R');
    reap(p1);
    reap(p2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attach__stops_every_thread_and_resumes),
        cmocka_unit_test(test_attach__stopped_stays_stopped),
        cmocka_unit_test(test_attach__refusals_say_why),
        cmocka_unit_test(test_attach__emergency_detach),
    };
    return cmocka_run_group_tests_name("attach", tests, NULL, NULL);
}
