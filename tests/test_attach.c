/*
 * test_attach.c - host/target/attach.c against real children: every thread is
 * stopped while attached, and each process is left exactly as it was.
 */
#define _GNU_SOURCE
#include "host/target/attach.h"
#include "host/job/owner.h"
#include "host/include/mqdhost.h"
#include "tests/procstate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sys/prctl.h>
#include <sys/stat.h>
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
    struct mqdh__attach a;
    char err[256];
    assert_int_equal(mqdh__attach(&a, pid, err, sizeof err), 0);
    assert_int_equal(a.nthreads, 7);
    assert_true(a.nthreads > MQDH__FEW_THREADS);
    int rounds = a.rounds;
    for (int i = 0; i < a.nthreads; i++) {
        long tracer;
        assert_int_equal(thread_state(pid, a.threads[i].tid, &tracer), 't');
        assert_int_equal(tracer, getpid());
    }
    pid_t tids[7];
    for (int i = 0; i < 7; i++)
        tids[i] = a.threads[i].tid;
    mqdh__detach(&a);
    mqdh__detach(&a); /* idempotent */
    for (int i = 0; i < 7; i++) {
        long tracer;
        assert_int_equal(settled_state(pid, tids[i], 'R', &tracer), 'R');
        assert_int_equal(tracer, 0);
    }
    reap(pid);
    assert_int_equal(rounds, 1); /* listed once: the kernel's count then says no other */
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
    struct mqdh__attach a;
    char err[256];
    assert_int_equal(mqdh__attach(&a, pid, err, sizeof err), 0);
    mqdh__detach(&a);
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
    struct mqdh__attach a, b;
    char err[256];

    /* No such process. */
    pid_t gone = start_spinner(0);
    reap(gone);
    assert_int_equal(mqdh__attach(&a, gone, err, sizeof err), -ESRCH);
    assert_non_null(strstr(err, "does not exist"));

    /* Already traced (by us, through the first attachment). */
    pid_t pid = start_spinner(0);
    assert_int_equal(mqdh__attach(&a, pid, err, sizeof err), 0);
    assert_int_equal(mqdh__attach(&b, pid, err, sizeof err), -EPERM);
    assert_non_null(strstr(err, "already traced"));
    mqdh__detach(&a);
    long tracer;
    assert_int_equal(settled_state(pid, pid, 'R', &tracer), 'R');
    reap(pid);
}

/* The emergency path (for signal handlers) lets every process go. */
static void test_attach__emergency_detach(void **state)
{
    (void)state;
    pid_t p1 = start_spinner(1), p2 = start_spinner(0);
    struct mqdh__attach a1, a2;
    char err[256];
    assert_int_equal(mqdh__attach(&a1, p1, err, sizeof err), 0);
    assert_int_equal(mqdh__attach(&a2, p2, err, sizeof err), 0);
    mqdh__detach_all_emergency();
    long tracer;
    assert_int_equal(settled_state(p1, p1, 'R', &tracer), 'R');
    assert_int_equal(settled_state(p2, p2, 'R', &tracer), 'R');
    reap(p1);
    reap(p2);
}

/* ------------------------------------------------ refusals and owners */

#define NOBODY ((uid_t)65534)

/* The children a test started (and their stdin), for kill_started: each
 * is killed and reaped however the test ends. */
static pid_t started[16];
static int holds[16], nstarted;

static void track(pid_t pid, int hold)
{
    assert_true(nstarted < 16);
    started[nstarted] = pid;
    holds[nstarted++] = hold;
}

static int kill_started(void **state)
{
    (void)state;
    for (int i = 0; i < nstarted; i++) {
        kill(started[i], SIGKILL);
        waitpid(started[i], NULL, 0);
        if (holds[i] >= 0)
            close(holds[i]);
    }
    nstarted = 0;
    return 0;
}

static const char *build_path(char *buf, size_t len, const char *rel)
{
    const char *b = getenv("MQD_BUILD");
    snprintf(buf, len, "%s/%s", b && *b ? b : "build", rel);
    return buf;
}

enum start_as { RANK_EXEC, NO_EXEC, SETUID_LIKE };

/*
 * A child running as user uid (uid 0: root, as this test): tests/fake_rank
 * exec'd (RANK_EXEC: dumpable, as any process its user starts), or this
 * test forked and left to wait (NO_EXEC: a change of user makes it not
 * dumpable), or root's child with its real user id only set to uid
 * (SETUID_LIKE: what a setuid-root program run by uid looks like).
 * Tracked for kill_started; returns its pid.
 */
static pid_t start_as(uid_t uid, enum start_as how)
{
    char rank[PATH_MAX];
    build_path(rank, sizeof rank, "tests/fake_rank");
    int in[2], out[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(pipe(out), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (how == SETUID_LIKE ? setresuid(uid, 0, 0) != 0
                               : uid != 0 && (setgroups(0, NULL) != 0 || setgid(uid) != 0 ||
                                              setuid(uid) != 0))
            _exit(126);
        /* After the change of user, which clears it; an exec keeps it. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
            _exit(126);
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        if (how == RANK_EXEC) {
            execl(rank, "fake_rank", (char *)NULL);
            _exit(127);
        }
        printf("ready %d\n", (int)getpid());
        fflush(stdout);
        char c;
        while (read(0, &c, 1) > 0)
            ;
        _exit(0);
    }
    close(in[0]);
    close(out[1]);
    track(pid, in[1]);
    FILE *f = fdopen(out[0], "r");
    assert_non_null(f);
    int ready = -1;
    int got = fscanf(f, "ready %d", &ready);
    fclose(f);
    if (got != 1 || ready != pid)
        fail_msg("child %d (user %lu) did not start (is %s built?)", (int)pid,
                 (unsigned long)uid, rank);
    return pid;
}

static int is_root(void)
{
    if (geteuid() == 0)
        return 1;
    print_message("SKIPPED: this test runs processes as other users (root, nobody): run it as "
                  "root\n");
    return 0;
}

/* pid 1 is refused before any attach, in its own words: never stopped. */
static void test_attach__init_is_never_attached(void **state)
{
    (void)state;
    struct mqdh__attach a;
    char err[320] = "";
    assert_int_equal(mqdh__attach(&a, 1, err, sizeof err), -EPERM);
    assert_string_equal(err, "process 1 is the system's init process, never an MPI rank: not "
                             "attached");
    assert_int_equal(a.attached, 0);
    long tracer;
    thread_state(1, 1, &tracer);
    assert_int_equal(tracer, 0);
}

/* A kernel thread (kthreadd, pid 2, where it is one) says so. */
static void test_attach__kernel_thread_says_so(void **state)
{
    (void)state;
    char line[512] = "";
    FILE *f = fopen("/proc/2/stat", "r");
    if (f) {
        line[fread(line, 1, sizeof line - 1, f)] = '\0';
        fclose(f);
    }
    const char *close_paren = strrchr(line, ')');
    unsigned long flags = 0;
    if (!close_paren || sscanf(close_paren + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1 ||
        !(flags & 0x00200000UL)) {
        print_message("SKIPPED: pid 2 is not a kernel thread here (a pid namespace?): no "
                      "kernel thread to try\n");
        skip();
    }
    struct mqdh__attach a;
    char err[320] = "";
    assert_int_equal(mqdh__attach(&a, 2, err, sizeof err), -EPERM);
    assert_string_equal(err, "process 2 is a kernel thread, not a program");
}

/* A zombie is one, not "permission denied". */
static void test_attach__zombie_says_so(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    track(pid, -1);
    char st = '?';
    long tracer;
    for (int i = 0; i < 2000 && (st = thread_state(pid, pid, &tracer)) != 'Z'; i++)
        usleep(1000);
    assert_int_equal(st, 'Z');
    struct mqdh__attach a;
    char err[320] = "", want[320];
    assert_int_equal(mqdh__attach(&a, pid, err, sizeof err), -EPERM);
    snprintf(want, sizeof want, "process %d is a zombie (it has exited; its parent has not "
             "reaped it): nothing to dump", (int)pid);
    assert_string_equal(err, want);
}

/* Each Yama scope in its own words (the system's scope cannot be changed
 * here: the words are what can be checked). */
static void test_attach__yama_words_per_scope(void **state)
{
    (void)state;
    static const struct {
        int scope;
        const char *says[3]; /* all in the words; none: no words */
    } cases[] = {
        {-1, {NULL}},
        {0, {NULL}},
        {1, {"ptrace_scope is 1 (restricted)", "only a process's ancestors may trace it",
             "set /proc/sys/kernel/yama/ptrace_scope to 0"}},
        {2, {"ptrace_scope is 2 (admin-only)", "only a tracer with CAP_SYS_PTRACE",
             "run as root"}},
        {3, {"ptrace_scope is 3 (no attach)", "disabled until the next reboot",
             "nothing can attach"}},
        {4, {NULL}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *w = mqdh__yama_words(cases[i].scope);
        if (!cases[i].says[0]) {
            if (w)
                fail_msg("scope %d refuses nothing, yet reads \"%s\"", cases[i].scope, w);
            continue;
        }
        assert_non_null(w);
        for (int k = 0; k < 3 && cases[i].says[k]; k++)
            if (!strstr(w, cases[i].says[k]))
                fail_msg("scope %d: no \"%s\" in \"%s\"", cases[i].scope, cases[i].says[k], w);
        /* "only descendants" was scope 1's rule, said of every scope */
        if (cases[i].scope != 1 && strstr(w, "ancestors"))
            fail_msg("scope %d speaks of scope 1's rule: \"%s\"", cases[i].scope, w);
        if (cases[i].scope == 3 && strstr(w, "run as root"))
            fail_msg("scope 3 refuses root too: \"%s\"", w);
    }
}

/* A dump reads the CPU times, the process's and each thread's, unless
 * told not to (mqdh_options.no_cpu): then every one is unknown. */
static void test_attach__cpu_only_when_wanted(void **state)
{
    (void)state;
    pid_t pid = start_as(0, RANK_EXEC);
    char dll[PATH_MAX];
    for (int skip = 0; skip < 2; skip++) {
        struct mqdh_options o = {.size = sizeof o,
                                 .dll = build_path(dll, sizeof dll, "tests/fake/fake_ok.so"),
                                 .no_cpu = skip};
        struct mqdh_dump *d = NULL;
        assert_int_equal(mqdh_dump_processes(&pid, NULL, NULL, 1, &o, &d), MQDH_OK);
        assert_non_null(d->cpu);
        assert_null(d->procs[0].error);
        if (skip) {
            assert_int_equal(d->cpu[0].known, 0);
            assert_int_equal(d->cpu[0].nthreads, 0);
            assert_null(d->cpu[0].threads);
        } else {
            assert_int_equal(d->cpu[0].known, 1);
            assert_int_equal(d->cpu[0].nthreads, 1);
            assert_int_equal(d->cpu[0].threads[0].tid, pid);
        }
        mqdh_dump_free(d);
    }
}

/*
 * Three runs of one program are one image to the DLL (set up once), each
 * answered for itself: under ASLR its variable is somewhere else, and the
 * DLL's mqs_find_symbol on the shared image finds it where that process
 * has it (the fake DLL reads it from there, and says where it was).
 */
static void test_attach__one_image_per_program(void **state)
{
    (void)state;
    pid_t pids[3];
    int ranks[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++)
        pids[i] = start_as(0, RANK_EXEC);
    char dll[PATH_MAX];
    struct mqdh_options o = {.size = sizeof o,
                             .dll = build_path(dll, sizeof dll, "tests/fake/fake_ok.so")};
    struct mqdh_dump *d = NULL;
    assert_int_equal(mqdh_dump_processes(pids, ranks, NULL, 3, &o, &d), MQDH_OK);
    int image[3];
    unsigned long long at[3];
    for (int i = 0; i < 3; i++) {
        const struct mqdh_process *p = &d->procs[i];
        if (p->error)
            fail_msg("rank %d: %s", i, p->error);
        assert_int_equal(p->ncomms, 1);
        assert_int_equal(p->comms[0].queues[MQDH_RECEIVES].nops, 1);
        const struct mqdh_op *op = &p->comms[0].queues[MQDH_RECEIVES].ops[0];
        assert_int_equal(op->desired_tag, 7); /* read where its own symbol is */
        assert_int_equal(op->desired_length, 4096);
        assert_int_equal(sscanf(op->extra_text[4], "image %d, fixture at %llx", &image[i], &at[i]),
                         2);
        assert_int_equal(image[i], image[0]);
    }
    FILE *f = fopen("/proc/sys/kernel/randomize_va_space", "r");
    int aslr = 0;
    if (f && fscanf(f, "%d", &aslr) != 1)
        aslr = 0;
    if (f)
        fclose(f);
    if (aslr) /* PIE: each run is somewhere else */
        for (int i = 1; i < 3; i++)
            assert_true(at[i] != at[0]);
    mqdh_dump_free(d);
}

/* Asked for its owners (a dump that reports no CPU time), an attachment
 * reads them once every thread is stopped, instead of the stat file; and
 * the owner's second check judges by that reading, not by /proc later. */
static void test_attach__owners_read_once_stopped(void **state)
{
    (void)state;
    if (!is_root())
        skip();
    pid_t pid = start_as(NOBODY, RANK_EXEC);
    struct mqdh__attach a = {.pid = pid, .want_owners = 1}, *as[1] = {&a};
    assert_int_equal(mqdh__attach_all(as, 1), 0);
    assert_int_equal(a.owners_known, 1);
    for (int k = 0; k < 4; k++)
        assert_int_equal(a.ids[k], NOBODY);
    assert_int_equal(a.dump_owner, NOBODY);
    assert_string_equal(a.stat, "");
    struct mqdh_options o = {.size = sizeof o, .owner_set = 1, .owner = NOBODY, .owner_pid = 4242};
    mqdh__readmit(as, 1, &o);
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.attached, 1);
    /* As if it had run a setuid program before it stopped: let go. */
    a.ids[1] = 0;
    mqdh__readmit(as, 1, &o);
    assert_int_equal(a.rc, -EPERM);
    assert_int_equal(a.attached, 0);
    assert_non_null(strstr(a.why, "runs with the privileges of user 0"));
    long tracer;
    thread_state(pid, pid, &tracer);
    assert_int_equal(tracer, 0);
}

/*
 * The owners' check before the attach keeps the process's status open,
 * and the check once it is stopped reads that again (one opening): of
 * the process admitted, never of another that took its pid.  A status
 * kept of a process gone (as if its pid had been taken meanwhile) fails
 * the attachment, and the process attached is let go unread.
 */
static void test_attach__status_kept_from_the_check(void **state)
{
    (void)state;
    if (!is_root())
        skip();
    pid_t pid = start_as(NOBODY, RANK_EXEC);
    struct mqdh_options o = {.size = sizeof o, .owner_set = 1, .owner = NOBODY, .owner_pid = 4242};
    struct mqdh__attach a = {.pid = pid, .want_owners = 1}, *as[1] = {&a};
    assert_int_equal(mqdh__admit(&a, &o), 1);
    assert_true(a.kept_status > 0);
    int fd = a.kept_status - 1;
    assert_int_equal(mqdh__attach_all(as, 1), 0);
    assert_int_equal(a.owners_known, 1);
    assert_int_equal(a.kept_status, 0);
    assert_int_equal(fcntl(fd, F_GETFD), -1); /* closed */
    for (int k = 0; k < 4; k++)
        assert_int_equal(a.ids[k], NOBODY);
    assert_int_equal(a.dump_owner, NOBODY);
    mqdh__detach(&a);
    /* A status kept of a process now gone, the attach of another. */
    pid_t gone = fork();
    assert_true(gone >= 0);
    if (gone == 0)
        _exit(0);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)gone);
    int stale = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(stale >= 0);
    assert_int_equal(waitpid(gone, NULL, 0), gone);
    struct mqdh__attach b = {.pid = pid, .want_owners = 1, .kept_status = stale + 1};
    as[0] = &b;
    assert_int_equal(mqdh__attach_all(as, 1), 1);
    assert_int_equal(b.rc, -ESRCH);
    assert_int_equal(b.attached, 0);
    assert_non_null(strstr(b.why, "exited while being attached"));
    assert_int_equal(fcntl(stale, F_GETFD), -1);
    long tracer;
    thread_state(pid, pid, &tracer);
    assert_int_equal(tracer, 0);
}

/* The same process listed three times (two spellings of this host) is
 * attached once: the later entries say so, not "already traced". */
static void test_attach__repeated_pid_attached_once(void **state)
{
    (void)state;
    pid_t pid = start_as(0, RANK_EXEC);
    char dll[PATH_MAX], want[160];
    pid_t pids[3] = {pid, pid, pid};
    int ranks[3] = {0, 1, 2};
    const char *hosts[3] = {NULL, "localhost", NULL};
    struct mqdh_options o = {.size = sizeof o,
                             .dll = build_path(dll, sizeof dll, "tests/fake/fake_ok.so")};
    struct mqdh_dump *d = NULL;
    assert_int_equal(mqdh_dump_processes(pids, ranks, hosts, 3, &o, &d), MQDH_E_ATTACH);
    assert_non_null(d);
    assert_int_equal(d->nprocs, 3);
    if (d->procs[0].error)
        fail_msg("its first entry: %s", d->procs[0].error);
    assert_int_equal(d->procs[0].rank, 0);
    assert_int_equal(d->procs[0].ncomms, 1);
    snprintf(want, sizeof want, "process %d is listed twice: dumped once, as entry 0", (int)pid);
    for (int i = 1; i < 3; i++) {
        assert_int_equal(d->procs[i].pid, pid);
        assert_non_null(d->procs[i].error);
        assert_string_equal(d->procs[i].error, want);
        assert_int_equal(d->procs[i].rank, -1);
        assert_int_equal(d->procs[i].ncomms, 0);
    }
    assert_string_equal(d->procs[1].host, "localhost");
    assert_int_equal(mqdh_process_by_global(d, 0), 0);
    mqdh_dump_free(d);
    char why[256];
    if (proc_released(pid, why, sizeof why) != 0)
        fail_msg("after the dump: %s", why);

    /* Another host's: one agent entry, the repeat told apart here. */
    const char *far[2] = {"node-b", "NODE-B"};
    o.local_only = 1;
    assert_int_equal(mqdh_dump_processes(pids, NULL, far, 2, &o, &d), MQDH_E_ATTACH);
    assert_non_null(strstr(d->procs[0].error, "runs on host node-b"));
    assert_string_equal(d->procs[1].error, want);
    assert_string_equal(d->procs[1].host, "NODE-B");
    mqdh_dump_free(d);
}

/*
 * A launcher's table names only its own user's processes: given that
 * user (mqdh_options.owner), a dump run as root attaches none of another
 * user's, nor a setuid one, nor one its user could not trace, and says
 * why of each; the user's own is dumped in full.
 */
static void test_attach__owner_is_the_launchers_user(void **state)
{
    (void)state;
    if (!is_root())
        skip();
    pid_t roots = start_as(0, RANK_EXEC), mine = start_as(NOBODY, RANK_EXEC),
          setuid_like = start_as(NOBODY, SETUID_LIKE), undumpable = start_as(NOBODY, NO_EXEC);
    pid_t pids[5] = {roots, 1, mine, setuid_like, undumpable};
    char dll[PATH_MAX], want[5][320];
    struct mqdh_options o = {.size = sizeof o,
                             .dll = build_path(dll, sizeof dll, "tests/fake/fake_ok.so"),
                             .owner_set = 1, .owner = NOBODY, .owner_pid = 4242};
    struct mqdh_dump *d = NULL;
    assert_int_equal(mqdh_dump_processes(pids, NULL, NULL, 5, &o, &d), MQDH_E_ATTACH);
    for (int i = 0; i < 2; i++)
        snprintf(want[i], sizeof want[i], "process %d belongs to user 0 (root), but the "
                 "launcher 4242 runs as user 65534: a launcher's table names only its own "
                 "user's processes; not attached", (int)pids[i]);
    snprintf(want[3], sizeof want[3], "process %d belongs to user 65534, but runs with the "
             "privileges of user 0 (root) (a setuid program?), and the launcher 4242 runs as "
             "user 65534: a launcher's table names only its own user's processes; not "
             "attached", (int)setuid_like);
    snprintf(want[4], sizeof want[4], "process %d is not dumpable (it runs a setuid or setgid "
             "program, or made itself so): user 65534, as whom the launcher 4242 runs, could "
             "not trace it; not attached", (int)undumpable);
    for (int i = 0; i < 5; i++) {
        const char *e = d->procs[i].error;
        if (i == 2 ? e != NULL : !e || strcmp(e, want[i]) != 0)
            fail_msg("process %d: \"%s\", not \"%s\"", (int)pids[i], e ? e : "(dumped)",
                     i == 2 ? "(dumped)" : want[i]);
    }
    assert_int_equal(d->procs[2].ncomms, 1);
    mqdh_dump_free(d);
    for (int i = 0; i < 5; i++) {
        long tracer;
        thread_state(pids[i], pids[i], &tracer);
        assert_int_equal(tracer, 0);
    }

    /* The same processes, owned by root's launcher: root's are dumped. */
    o.owner = 0;
    assert_int_equal(mqdh_dump_processes(&roots, NULL, NULL, 1, &o, &d), MQDH_OK);
    assert_null(d->procs[0].error);
    mqdh_dump_free(d);
}

/*
 * A process killed while attached (its job ended during a look) is left
 * for its parent to reap once the attachment ends, though the tracer
 * lives on: a sentinel or a debugger must not hold a job's ranks as
 * zombies its launcher waits for forever.
 */
static void test_attach__killed_while_attached_is_reaped_by_its_parent(void **state)
{
    (void)state;
    int ready[2], told[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(told), 0);
    pid_t parent = fork();
    assert_true(parent >= 0);
    if (parent == 0) { /* the launcher: starts a rank and waits for it */
        close(ready[0]);
        close(told[1]);
        pid_t rank = fork();
        if (rank == 0)
            for (;;)
                pause();
        if (write(ready[1], &rank, sizeof rank) != (ssize_t)sizeof rank)
            _exit(2);
        alarm(10);
        int st;
        _exit(waitpid(rank, &st, 0) == rank && WIFSIGNALED(st) ? 0 : 3);
    }
    close(ready[1]);
    close(told[0]);
    pid_t rank;
    assert_int_equal(read(ready[0], &rank, sizeof rank), (ssize_t)sizeof rank);
    close(ready[0]);
    struct mqdh__attach a;
    char err[256];
    assert_int_equal(mqdh__attach(&a, rank, err, sizeof err), 0);
    kill(rank, SIGKILL);
    mqdh__detach(&a);
    /* The tracer (this process) lives on: the launcher still reaps its rank. */
    int st;
    assert_int_equal(waitpid(parent, &st, 0), parent);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    close(told[1]);
}

/* A thread that spins a moment, starts its successor, and ends. */
static void *brief(void *arg)
{
    for (volatile int i = 0; i < 20000; i++)
        ;
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_create(&t, &at, brief, arg);
    pthread_attr_destroy(&at);
    return NULL;
}

/* Is tid one of a's threads? */
static int attached_tid(const struct mqdh__attach *a, pid_t tid)
{
    for (int i = 0; i < a->nthreads; i++)
        if (a->threads[i].tid == tid)
            return 1;
    return 0;
}

/*
 * Threads born and ending all the while the attach goes on: once it
 * returns, every thread /proc lists is one it stopped.  Each look is
 * decided by the kernel's count of the threads (after the listing as
 * before it): one it missed would run on, untraced.
 */
static void test_attach__threads_born_while_attaching(void **state)
{
    (void)state;
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
            _exit(126);
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        for (int i = 0; i < 4; i++) {
            pthread_t t;
            pthread_create(&t, &at, brief, NULL);
        }
        if (write(ready[1], "r", 1) != 1)
            _exit(1);
        static volatile unsigned long n;
        spin((void *)&n);
    }
    track(pid, -1);
    char c;
    close(ready[1]);
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    for (int round = 0; round < 20; round++) {
        struct mqdh__attach a;
        char err[256], path[64];
        assert_int_equal(mqdh__attach(&a, pid, err, sizeof err), 0);
        snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
        DIR *d = opendir(path);
        assert_non_null(d);
        int listed = 0;
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            if (e->d_name[0] == '.')
                continue;
            pid_t tid = (pid_t)atoi(e->d_name);
            long tracer;
            assert_true(attached_tid(&a, tid));
            assert_int_equal(thread_state(pid, tid, &tracer), 't');
            assert_int_equal(tracer, getpid());
            listed++;
        }
        closedir(d);
        assert_true(listed >= 2); /* the main thread and some of the brief ones */
        mqdh__detach(&a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attach__stops_every_thread_and_resumes),
        cmocka_unit_test_teardown(test_attach__threads_born_while_attaching, kill_started),
        cmocka_unit_test(test_attach__stopped_stays_stopped),
        cmocka_unit_test(test_attach__refusals_say_why),
        cmocka_unit_test(test_attach__emergency_detach),
        cmocka_unit_test(test_attach__killed_while_attached_is_reaped_by_its_parent),
        cmocka_unit_test(test_attach__init_is_never_attached),
        cmocka_unit_test(test_attach__kernel_thread_says_so),
        cmocka_unit_test_teardown(test_attach__zombie_says_so, kill_started),
        cmocka_unit_test(test_attach__yama_words_per_scope),
        cmocka_unit_test_teardown(test_attach__cpu_only_when_wanted, kill_started),
        cmocka_unit_test_teardown(test_attach__one_image_per_program, kill_started),
        cmocka_unit_test_teardown(test_attach__repeated_pid_attached_once, kill_started),
        cmocka_unit_test_teardown(test_attach__owner_is_the_launchers_user, kill_started),
        cmocka_unit_test_teardown(test_attach__owners_read_once_stopped, kill_started),
        cmocka_unit_test_teardown(test_attach__status_kept_from_the_check, kill_started),
    };
    return cmocka_run_group_tests_name("attach", tests, NULL, NULL);
}
