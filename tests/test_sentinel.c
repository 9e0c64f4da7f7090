/*
 * test_sentinel.c - mqdump --sentinel and the library's sentinel.
 *
 * The deciding (mqdh_sentinel_look) on looks built by hand: a job seen
 * moving at every look is hung after the floor of quiet, and not a look
 * before; one that was quiet for long stretches and moved again is given
 * four times as long; one seen moving rarely is given the quiet time such
 * a job shows less than once in a thousand looks; the user's bound caps
 * all of it; a look at which a process was not compared says nothing,
 * and the quiet time that can be a hang starts after it; MPI_Test's "may
 * have moved" is a move; dumps compared by the library's watch (ranks
 * spinning in MPI_Recv, one computing) decide as their words say.  Bad
 * options and times are refused.
 *
 * On real MPICH jobs (integration): `latehang`, which works for 5 s and
 * then deadlocks, is declared hung by `mqdump --sentinel --interval 0.5`
 * after it stopped moving and within a bound; the saved dump loads and
 * explains the cycle, the explanation file says it too, and every rank is
 * left running and untraced; with --signal TERM the job is ended instead.
 * `slowprogress`, quiet for up to 7 s at a time (longer than the 3 s a
 * sentinel that had learned nothing would allow), is watched to its end
 * and never declared hung, and nothing is saved.  In a PID namespace of
 * its own (the machine's other jobs out of sight), a sentinel started
 * before any job waits for one, finds it without --job, and dumps it once
 * hung.  A job that cannot be watched, and bad command lines, end at
 * once with their exit statuses.  And the cache the looks share
 * (mqdh_options.cache): a look that uses it reads no file again and sees
 * what a look without it sees.  A brief look (mqdh_options.brief_mpi_frames)
 * leaves the MPI library's frames without lines and sees the rest the
 * same; a full look after it, through the same cache, has them.
 *
 * Environment: MQD_BUILD, MQD_MPICH_PREFIX, MQD_MPIEXEC, MQD_SAMPLES_SRC.
 */
#define _GNU_SOURCE
#include "mqdhost.h"
#include "tests/handdump.h"
#include "tests/joblaunch.h"
#include "tests/procstate.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* ---------------------------------------------------------------- by hand */

/* A watch of n processes, each moved, or not, or not seen, as kinds says
 * ('m' moved, 'q' quiet, 'u' not compared, 'p' may have moved: MPI_Test). */
static struct mqdh_watch *hand_watch(const char *kinds)
{
    static struct mqdh_moves procs[16];
    static struct mqdh_watch w;
    int n = (int)strlen(kinds);
    assert_true(n <= 16);
    memset(procs, 0, sizeof procs);
    for (int i = 0; i < n; i++) {
        procs[i].seen = kinds[i] != 'u';
        procs[i].why = kinds[i] == 'u' ? "not unwound at both looks" : NULL;
        procs[i].moved = kinds[i] == 'm';
        procs[i].maybe = kinds[i] == 'p';
    }
    w = (struct mqdh_watch){.seconds = 1, .elapsed = 1, .nprocs = n, .procs = procs};
    return &w;
}

static struct mqdh_sentinel *sentinel(double interval, double bound)
{
    struct mqdh_sentinel_options o = MQDH_SENTINEL_OPTIONS_INIT;
    o.interval = interval;
    o.bound = bound;
    struct mqdh_sentinel *s = NULL;
    assert_int_equal(mqdh_sentinel_new(&o, &s), MQDH_OK);
    assert_non_null(s);
    return s;
}

/* Look at time t with a watch of kinds (NULL: the first look); what the
 * sentinel says. */
static enum mqdh_sentinel_says look_at(struct mqdh_sentinel *s, double t, const char *kinds,
                                       struct mqdh_sentinel_state *st)
{
    assert_int_equal(mqdh_sentinel_look(s, t, kinds ? hand_watch(kinds) : NULL, st), MQDH_OK);
    return st->says;
}

/* Looks at t = from, from + 1, ... to (included), each of kinds, each
 * saying want; the last one's state in *last (if not NULL). */
static void looks_to(struct mqdh_sentinel *s, int from, int to, const char *kinds,
                     enum mqdh_sentinel_says want, struct mqdh_sentinel_state *last)
{
    struct mqdh_sentinel_state st;
    for (int t = from; t <= to; t++)
        if (look_at(s, t, kinds, &st) != want)
            fail_msg("look at %d s (%s): says %d, want %d (quiet %.1f, threshold %.1f)", t,
                     kinds, st.says, want, st.quiet, st.threshold);
    if (last)
        *last = st;
}

static void looks(struct mqdh_sentinel *s, int from, int to, const char *kinds,
                  enum mqdh_sentinel_says want)
{
    looks_to(s, from, to, kinds, want, NULL);
}

static void test_sentinel__hung_after_the_floor(void **state)
{
    (void)state;
    /* Seen moving at every look for 20 s: the floor alone, 6 looks. */
    struct mqdh_sentinel *s = sentinel(1, 0);
    struct mqdh_sentinel_state st;
    assert_int_equal(look_at(s, 0, NULL, &st), MQDH_SENTINEL_FIRST);
    looks(s, 1, 20, "qmq", MQDH_SENTINEL_MOVED);
    looks(s, 21, 25, "qqq", MQDH_SENTINEL_QUIET);
    assert_int_equal(look_at(s, 26, "qqq", &st), MQDH_SENTINEL_HUNG);
    assert_true(st.quiet == 6 && st.threshold == 6);
    assert_int_equal(st.rule, MQDH_SENTINEL_RULE_FLOOR);
    assert_int_equal(st.looks, 27);
    assert_int_equal(st.moves, 20);
    assert_true(st.longest_quiet == 0);
    /* It moves again: the quiet time ends, and is learned. */
    assert_int_equal(look_at(s, 27, "mqq", &st), MQDH_SENTINEL_MOVED);
    assert_true(st.quiet == 0 && st.longest_quiet == 7);
    mqdh_sentinel_free(s);
    mqdh_sentinel_free(NULL);
}

static void test_sentinel__learns_long_quiet_times(void **state)
{
    (void)state;
    /* Quiet for 5 s, then moving: a quiet time is a hang only at four
     * times that (20 s); one of 19 s is not, and is learned in turn: 76 s.
     * (Before it was learned, the floor: 6 s.) */
    struct mqdh_sentinel *s = sentinel(1, 0);
    struct mqdh_sentinel_state st;
    look_at(s, 0, NULL, &st);
    looks(s, 1, 20, "mm", MQDH_SENTINEL_MOVED);
    looks_to(s, 21, 24, "qq", MQDH_SENTINEL_QUIET, &st);
    assert_true(st.threshold == 6);
    assert_int_equal(look_at(s, 25, "qm", &st), MQDH_SENTINEL_MOVED);
    assert_true(st.longest_quiet == 5 && st.threshold == 20);
    looks(s, 26, 43, "qq", MQDH_SENTINEL_QUIET);
    assert_int_equal(look_at(s, 44, "mq", &st), MQDH_SENTINEL_MOVED);
    assert_true(st.longest_quiet == 19);
    looks(s, 45, 119, "qq", MQDH_SENTINEL_QUIET);
    assert_int_equal(look_at(s, 120, "qq", &st), MQDH_SENTINEL_HUNG);
    assert_true(st.threshold == 76 && st.quiet == 76);
    assert_int_equal(st.rule, MQDH_SENTINEL_RULE_LONGEST);
    mqdh_sentinel_free(s);
}

static void test_sentinel__rare_moves_ask_for_long_odds(void **state)
{
    (void)state;
    /* Seen moving at one look in five, for 500 looks: a quiet time of a
     * few looks is what such a job does.  (1 - p)^k < 1/1000 with p near
     * 1/5 takes 31 looks, more than 4 x the longest (5 s). */
    struct mqdh_sentinel *s = sentinel(1, 0);
    struct mqdh_sentinel_state st;
    look_at(s, 0, NULL, &st);
    for (int t = 1; t <= 500; t++)
        look_at(s, t, t % 5 == 0 ? "mq" : "qq", &st);
    assert_int_equal(st.says, MQDH_SENTINEL_MOVED);
    assert_int_equal(st.rule, MQDH_SENTINEL_RULE_ODDS);
    assert_true(st.moving_share > 0.19 && st.moving_share < 0.21);
    assert_true(st.threshold == 31);
    looks(s, 501, 530, "qq", MQDH_SENTINEL_QUIET);
    assert_int_equal(look_at(s, 531, "qq", &st), MQDH_SENTINEL_HUNG);
    mqdh_sentinel_free(s);

    /* Before any move, the odds of a job that moved at half its looks:
     * 10 looks. */
    s = sentinel(2, 0);
    assert_int_equal(look_at(s, 0, NULL, &st), MQDH_SENTINEL_FIRST);
    assert_true(st.threshold == 20);
    assert_int_equal(st.rule, MQDH_SENTINEL_RULE_ODDS);
    looks(s, 2, 18, "q", MQDH_SENTINEL_QUIET);
    assert_int_equal(look_at(s, 20, "q", &st), MQDH_SENTINEL_HUNG);
    mqdh_sentinel_free(s);
}

static void test_sentinel__the_bound_caps_it(void **state)
{
    (void)state;
    /* A quiet time of 5 s learned (4 x 5 = 20 s), capped by the bound. */
    struct mqdh_sentinel *s = sentinel(1, 15);
    struct mqdh_sentinel_state st;
    look_at(s, 0, NULL, &st);
    looks(s, 1, 5, "m", MQDH_SENTINEL_MOVED);
    looks(s, 6, 9, "q", MQDH_SENTINEL_QUIET);
    assert_int_equal(look_at(s, 10, "m", &st), MQDH_SENTINEL_MOVED);
    assert_true(st.threshold == 15);
    assert_int_equal(st.rule, MQDH_SENTINEL_RULE_BOUND);
    looks(s, 11, 24, "q", MQDH_SENTINEL_QUIET);
    assert_int_equal(look_at(s, 25, "q", &st), MQDH_SENTINEL_HUNG);
    assert_true(st.threshold == 15 && st.quiet == 15);
    mqdh_sentinel_free(s);
}

static void test_sentinel__unsure_and_maybe(void **state)
{
    (void)state;
    struct mqdh_sentinel *s = sentinel(1, 0);
    struct mqdh_sentinel_state st;
    look_at(s, 0, NULL, &st);
    looks(s, 1, 10, "mm", MQDH_SENTINEL_MOVED);
    /* A process not compared: no claim, for as long as it lasts. */
    looks_to(s, 11, 40, "qu", MQDH_SENTINEL_UNSURE, &st);
    assert_true(st.quiet == 0);
    /* Seen again: the quiet time that can be a hang starts after it. */
    looks(s, 41, 45, "qq", MQDH_SENTINEL_QUIET);
    assert_int_equal(look_at(s, 46, "qq", &st), MQDH_SENTINEL_HUNG);
    assert_true(st.quiet == 6);
    /* In MPI_Test at both looks, CPU time spent: it may have moved. */
    assert_int_equal(look_at(s, 47, "qp", &st), MQDH_SENTINEL_MOVED);
    /* No watch after the first look: the list changed, a move. */
    assert_int_equal(look_at(s, 48, NULL, &st), MQDH_SENTINEL_MOVED);
    /* No process at all: nothing seen. */
    assert_int_equal(look_at(s, 49, "", &st), MQDH_SENTINEL_UNSURE);
    mqdh_sentinel_free(s);
}

static void test_sentinel__bad_arguments(void **state)
{
    (void)state;
    struct mqdh_sentinel *s = NULL;
    struct mqdh_sentinel_options o = MQDH_SENTINEL_OPTIONS_INIT;
    assert_int_equal(mqdh_sentinel_new(&o, NULL), MQDH_E_USAGE);
    o.interval = -1;
    assert_int_equal(mqdh_sentinel_new(&o, &s), MQDH_E_USAGE);
    assert_null(s);
    o = (struct mqdh_sentinel_options)MQDH_SENTINEL_OPTIONS_INIT;
    o.factor = 0.5;
    assert_int_equal(mqdh_sentinel_new(&o, &s), MQDH_E_USAGE);
    o = (struct mqdh_sentinel_options){.size = 2};
    assert_int_equal(mqdh_sentinel_new(&o, &s), MQDH_E_USAGE);
    /* A caller that knows only the interval: the rest defaults. */
    o = (struct mqdh_sentinel_options){.size = offsetof(struct mqdh_sentinel_options, floor),
                                       .interval = 2, .floor = 1};
    assert_int_equal(mqdh_sentinel_new(&o, &s), MQDH_OK);
    struct mqdh_sentinel_state st;
    assert_int_equal(mqdh_sentinel_look(s, 5, NULL, &st), MQDH_OK);
    looks(s, 6, 6, "m", MQDH_SENTINEL_MOVED);
    assert_int_equal(mqdh_sentinel_look(s, 4, NULL, &st), MQDH_E_USAGE); /* back in time */
    assert_int_equal(mqdh_sentinel_look(s, 7, NULL, NULL), MQDH_E_USAGE);
    assert_int_equal(mqdh_sentinel_look(NULL, 7, NULL, &st), MQDH_E_USAGE);
    for (int t = 7; t < 30; t++)
        look_at(s, t, "m", &st);
    assert_true(st.threshold == 12); /* the floor: 6 looks of 2 s, not .floor's 1 */
    mqdh_sentinel_free(s);
}

/* Dumps compared by the library's watch, then told to the sentinel:
 * ranks spinning in MPI_Recv (CPU time inside MPI, the progress loop's
 * frame moving) are hung after the floor; a rank computing outside MPI
 * keeps the job moving however long. */
static void test_sentinel__looks_compared_by_the_watch(void **state)
{
    (void)state;
    for (int computing = 0; computing < 2; computing++) {
        struct mqdh_sentinel *s = sentinel(1, 0);
        struct mqdh_sentinel_state st;
        struct mqdh_dump *before = handdump_stacked(3, 0x7000, 0);
        if (computing)
            handdump_stacked_computing(before, 2, 0x1234);
        look_at(s, 0, NULL, &st);
        for (int t = 1; t <= 20; t++) {
            struct mqdh_dump *after = handdump_stacked(3, t % 2 ? 0x7100 : 0x7000, 0);
            for (int r = 0; r < 3; r++)
                handdump_add_cpu(after, r, before->cpu[r].ns + 900000000);
            if (computing)
                handdump_stacked_computing(after, 2, 0x1234);
            struct mqdh_watch *w = NULL;
            assert_int_equal(mqdh_watch_compare(before, after, 1, 1, &w), MQDH_OK);
            assert_int_equal(mqdh_sentinel_look(s, t, w, &st), MQDH_OK);
            mqdh_watch_free(w);
            mqdh_dump_free(before);
            before = after;
            enum mqdh_sentinel_says want = computing ? MQDH_SENTINEL_MOVED
                                           : t < 10  ? MQDH_SENTINEL_QUIET
                                                     : MQDH_SENTINEL_HUNG;
            if (st.says != want)
                fail_msg("computing %d, look %d: says %d, want %d", computing, t, st.says, want);
        }
        mqdh_dump_free(before);
        mqdh_sentinel_free(s);
    }
}

/* ---------------------------------------------------------------- real jobs: helpers */

static void start(struct job *job, const char *name, int np)
{
    char err[512];
    if (job_start(job, name, np, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
}

/* mqdump with args, bounded (90 s: then it dies of SIGALRM); its exit
 * status, stdout and stderr (malloc'd), and how long it ran in *took. */
static int sentinel_run(const char *const *args, char **out, char **err, double *took)
{
    static const char *const env[] = {"MQD_TEST_ALARM=90", NULL};
    double t0 = job_now();
    int rc = job_run_mqdump(args, env, out, err);
    *took = job_now() - t0;
    assert_true(rc >= 0 && *out && *err);
    return rc;
}

static void must_say(const char *what, const char *text, const char *says)
{
    if (!strstr(text, says))
        fail_msg("no '%s' in %s:\n%s", says, what, text);
}

/* ---------------------------------------------------------------- real jobs */

/* What the late hang's dump must explain, wherever it is shown. */
static void explains_latehang(const char *what, const char *text)
{
    char want[256];
    snprintf(want, sizeof want,
             "[0-3] waits in MPI_Recv(source=rank-1, tag=9, comm=MPI_COMM_WORLD) at "
             "latehang.c:%d",
             job_source_line("latehang.c", "MPI_Recv(&token, 1, MPI_INT, left, 9"));
    must_say(what, text, "DEADLOCK: a cycle of 4 processes, ranks [0-3]");
    must_say(what, text, want);
}

static void test_sentinel__late_hang_is_caught(void **state)
{
    (void)state;
    struct job job;
    start(&job, "latehang", 4);
    char pid[16], save[PATH_MAX], explain[PATH_MAX];
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    job_scratch(save, sizeof save, "late.mqd");
    job_scratch(explain, sizeof explain, "late.txt");
    const char *args[] = {"--sentinel", "--job", pid, "--interval", "0.5", "--save", save,
                          "--explain", explain, NULL};
    char *out, *err;
    double took;
    int rc = sentinel_run(args, &out, &err, &took);
    if (rc != 3)
        fail_msg("mqdump --sentinel exited %d after %.1f s:\n%s%s", rc, took, out, err);
    /* It worked for 5 s: not hung before that and a floor of 3 s after;
     * found within 20 s of it (looks of tens of ms, on a busy machine). */
    if (took < 7.5 || took > 25)
        fail_msg("hung declared after %.1f s (the job works for 5 s, the floor is 3 s)", took);
    assert_string_equal(out, ""); /* the explanation is in its file */
    must_say("stderr", err, "mqdump: watching 4 processes of job ");
    must_say("stderr", err, " looks in ");
    must_say("stderr", err, "each holding the processes stopped ");
    must_say("stderr", err, "the hung job's dump saved in ");
    char *text = job_slurp(explain);
    assert_non_null(text);
    must_say("the explanation", text, "Hung: nothing moved for ");
    must_say("the explanation", text, "Observation over 0.5 s: no progress anywhere");
    explains_latehang("the explanation", text);
    free(text);
    /* The saved dump, shown again, explains it the same. */
    const char *load[] = {"--load", save, NULL};
    char *lout, *lerr;
    assert_int_equal(job_run_mqdump(load, NULL, &lout, &lerr), 0);
    explains_latehang("mqdump --load", lout);
    must_say("mqdump --load's stderr", lerr, "--sentinel --job");
    free(lout);
    free(lerr);
    /* Left running, untraced, every rank still there. */
    char why[256];
    if (job_released(&job, why, sizeof why) != 0)
        fail_msg("after mqdump --sentinel: %s", why);
    assert_false(job_rank_ends(&job, 0.5));
    assert_int_equal(job_stop(&job), 0);
    free(out);
    free(err);
}

static void test_sentinel__late_hang_signalled(void **state)
{
    (void)state;
    struct job job;
    start(&job, "latehang", 4);
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    const char *args[] = {"--sentinel", "--job", pid, "--interval", "0.5", "--signal", "TERM",
                          "-q", NULL};
    char *out, *err;
    double took;
    int rc = sentinel_run(args, &out, &err, &took);
    if (rc != 3)
        fail_msg("mqdump --sentinel --signal TERM exited %d:\n%s%s", rc, out, err);
    explains_latehang("stdout", out); /* no --explain: on stdout */
    must_say("stdout", out, "Hung: nothing moved for ");
    char said[64];
    snprintf(said, sizeof said, "mqdump: sent SIGTERM to the launcher, pid %d\n", (int)job.mpiexec);
    must_say("stderr", err, said);
    if (strstr(err, "mqdump: watching"))
        fail_msg("-q, and it said what it watches:\n%s", err);
    /* Hydra ends the ranks. */
    if (!job_rank_ends(&job, 15))
        fail_msg("a rank is still there 15 s after SIGTERM to mpiexec");
    int st = job_stop(&job);
    assert_true(st == 2 || st == 0); /* the job exited while held, or just after */
    free(out);
    free(err);
}

static void test_sentinel__slow_progress_is_never_hung(void **state)
{
    (void)state;
    struct job job;
    start(&job, "slowprogress", 3);
    char pid[16], save[PATH_MAX];
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    job_scratch(save, sizeof save, "slow.mqd");
    const char *args[] = {"--sentinel", "--job", pid, "--interval", "0.5", "--save", save, NULL};
    char *out, *err;
    double took;
    int rc = sentinel_run(args, &out, &err, &took);
    if (rc != 0)
        fail_msg("mqdump --sentinel exited %d after %.1f s:\n%s%s", rc, took, out, err);
    /* Watched to the end: its phases take 22 s. */
    if (took < 18)
        fail_msg("the sentinel ended after %.1f s:\n%s", took, err);
    must_say("stderr", err, "mqdump: the job ended by itself after ");
    must_say("stderr", err, "never hung (the longest quiet time ");
    /* It was quiet for longer than the floor (3 s) and was not hung: the
     * threshold had been learned from the job. */
    const char *l = strstr(err, "the longest quiet time ");
    double longest = l ? strtod(l + strlen("the longest quiet time "), NULL) : 0;
    if (longest <= 3.0)
        fail_msg("the longest quiet time seen was %.1f s, not over the floor:\n%s", longest, err);
    assert_string_equal(out, "");
    struct stat sb;
    assert_int_equal(stat(save, &sb), -1); /* nothing saved */
    int st = job_stop(&job);
    assert_true(st == 2); /* mqd-launch: the job exited while held */
    free(out);
    free(err);
}

/*
 * In a PID namespace of its own (the machine's other MPI jobs out of
 * sight): a sentinel started first, without --job, waits for a job, finds
 * the ring when it starts, and dumps it once hung.
 */
static void test_sentinel__waits_for_and_finds_the_job(void **state)
{
    (void)state;
    if (system("unshare --pid --fork --kill-child --mount-proc true >/dev/null 2>&1") != 0) {
        print_message("skipped: no PID namespace here (unshare --pid --mount-proc fails)\n");
        skip();
    }
    char mqdump[PATH_MAX], launch[PATH_MAX], ring[PATH_MAX], outp[PATH_MAX], errp[PATH_MAX],
        script[8 * PATH_MAX];
    job_build_path(mqdump, sizeof mqdump, "bin/mqdump");
    job_build_path(launch, sizeof launch, "bin/mqd-launch");
    job_build_path(ring, sizeof ring, "samples/ring");
    job_scratch(outp, sizeof outp, "ns.out");
    job_scratch(errp, sizeof errp, "ns.err");
    const char *mpiexec = getenv("MQD_MPIEXEC");
    assert_non_null(mpiexec);
    snprintf(script, sizeof script,
             "%s --sentinel --interval 0.3 >%s 2>%s & s=$!; sleep 1; "
             "%s -n 2 -m %s %s -- sh -c \"while kill -0 $s 2>/dev/null; do sleep 0.1; done\" "
             ">/dev/null; wait $s; echo \"sentinel $?\" >>%s",
             mqdump, outp, errp, launch, mpiexec, ring, outp);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(90); /* unshare, killed, kills the namespace's init and all in it */
        execlp("unshare", "unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "sh",
               "-c", script, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    char *out = job_slurp(outp), *err = job_slurp(errp);
    assert_non_null(out);
    assert_non_null(err);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !strstr(out, "sentinel 3\n"))
        fail_msg("in a PID namespace (status %d):\n%s%s", st, out, err);
    must_say("stderr", err, "mqdump: --sentinel: no MPI job on this node yet; waiting for one");
    must_say("stderr", err, "mqdump: watching 2 processes of job ");
    must_say("stdout", out, "DEADLOCK: a cycle of 2 processes, ranks [0-1]");
    free(out);
    free(err);
}

static void test_sentinel__cannot_watch(void **state)
{
    (void)state;
    /* No such launcher: at once, exit 2. */
    const char *args[] = {"--sentinel", "--job", "999999999", "--interval", "0.2", NULL};
    char *out, *err;
    double took;
    assert_int_equal(sentinel_run(args, &out, &err, &took), 2);
    assert_true(took < 10);
    assert_string_equal(out, "");
    free(out);
    free(err);
}

static void test_sentinel__bad_command_lines(void **state)
{
    (void)state;
    static const struct {
        const char *args[8];
        const char *says;
    } cases[] = {
        {{"--sentinel", "--interval", "0", NULL}, "--interval takes seconds, 0.1 to 3600"},
        {{"--sentinel", "--interval", "x", NULL}, "--interval takes seconds"},
        {{"--sentinel", "--interval", "nan", NULL}, "--interval takes seconds"},
        {{"--sentinel", "--hung-after", "-1", NULL}, "--hung-after takes seconds"},
        {{"--sentinel", "--signal", "FOO", NULL}, "--signal takes a signal"},
        {{"--sentinel", "--explain", "hang.svg", NULL}, "--explain takes a file for text"},
        {{"--sentinel", "--watch", "2", NULL}, "--sentinel watches a running job"},
        {{"--sentinel", "--load", "x.mqd", NULL}, "--sentinel watches a running job"},
        {{"--sentinel", "--job", "1", "--pid", "2", NULL}, "--job or --pid, not both"},
        {{"--job", "1", "--interval", "1", NULL}, "are --sentinel's"},
        {{"--pid", "1", "--signal", "TERM", NULL}, "are --sentinel's"},
    };
    char why[1024];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        if (job_usage_error(cases[k].args, cases[k].says, why, sizeof why) != 0)
            fail_msg("case %zu: %s", k, why);}

/* ---------------------------------------------------------------- the cache */

/* Where process i is, and what it holds, the same in a and b (what a
 * cache could change: symbols, lines, the DLL's types). */
static void same_look(const struct mqdh_dump *a, const struct mqdh_dump *b)
{
    assert_int_equal(a->nprocs, b->nprocs);
    for (int i = 0; i < a->nprocs; i++) {
        const struct mqdh_process *p = &a->procs[i], *q = &b->procs[i];
        assert_null(p->error);
        assert_null(q->error);
        assert_string_equal(p->where_call, q->where_call);
        assert_string_equal(p->where_function, q->where_function);
        assert_int_equal(p->where_line, q->where_line);
        assert_true(p->where_args == q->where_args && p->where_source == q->where_source &&
                    p->where_tag == q->where_tag);
        assert_int_equal(p->ncomms, q->ncomms);
        for (int c = 0; c < p->ncomms; c++) {
            assert_string_equal(p->comms[c].name, q->comms[c].name);
            for (int k = 0; k < MQDH_NQUEUES; k++)
                assert_int_equal(p->comms[c].queues[k].nops, q->comms[c].queues[k].nops);
        }
        /* The stack as the views show it: the MPI library's frames, which
         * its progress loop changes from moment to moment, folded. */
        static struct mqdh_path_frame x[MQDH_PATH_MAX_FRAMES], y[MQDH_PATH_MAX_FRAMES];
        int nx = mqdh_thread_path(&a->stacks[i].threads[0], 1, 0, x, MQDH_PATH_MAX_FRAMES),
            ny = mqdh_thread_path(&b->stacks[i].threads[0], 1, 0, y, MQDH_PATH_MAX_FRAMES);
        assert_true(nx > 2 && nx == ny);
        for (int f = 0; f < nx; f++) {
            assert_string_equal(x[f].function, y[f].function);
            assert_true((!x[f].file && !y[f].file) || strcmp(x[f].file, y[f].file) == 0);
            assert_int_equal(x[f].line, y[f].line);
        }
    }
}

static void test_sentinel__cached_looks_see_the_same(void **state)
{
    (void)state;
    struct job job;
    start(&job, "ring", 3);
    struct mqdh_options plain = MQDH_OPTIONS_INIT, cached = MQDH_OPTIONS_INIT;
    assert_int_equal(mqdh_cache_new(&cached.cache), MQDH_OK);
    struct mqdh_dump *d0 = NULL, *d1 = NULL, *d2 = NULL;
    assert_int_equal(mqdh_dump_processes(job.ranks, NULL, NULL, 3, &plain, &d0), MQDH_OK);
    assert_int_equal(mqdh_dump_processes(job.ranks, NULL, NULL, 3, &cached, &d1), MQDH_OK);
    assert_int_equal(mqdh_dump_processes(job.ranks, NULL, NULL, 3, &cached, &d2), MQDH_OK);
    /* The first cached look reads the files, the second none again.  A
     * file is opened only when needed (the program's, the MPI library's,
     * and the C library's when a rank happens to be stopped in it, which
     * the ranks' spinning decides from look to look): each look reads at
     * least the program and libmpi, and the second cached look at most
     * the C library, if the first did not need it. */
    assert_true(d0->files >= 2);
    assert_true(d1->files >= 2);
    if (d2->files > 1)
        fail_msg("the second cached look read %u files again (the first %u)", d2->files,
                 d1->files);
    same_look(d0, d1);
    same_look(d0, d2);
    mqdh_dump_free(d0);
    mqdh_dump_free(d1);
    mqdh_dump_free(d2);
    mqdh_cache_free(cached.cache);
    assert_int_equal(mqdh_cache_new(NULL), MQDH_E_USAGE);
    mqdh_cache_free(NULL);
    char why[256];
    if (job_released(&job, why, sizeof why) != 0)
        fail_msg("after the cached looks: %s", why);
    assert_int_equal(job_stop(&job), 0);
}

/* How many of the MPI library's frames in d have a source line or are
 * inlined (*with), and how many do not (*without). */
static void mpi_lines(const struct mqdh_dump *d, int *with, int *without)
{
    *with = *without = 0;
    for (int i = 0; i < d->nprocs; i++)
        for (int t = 0; t < d->stacks[i].nthreads; t++)
            for (int f = 0; f < d->stacks[i].threads[t].nframes; f++) {
                const struct mqdh_frame *fr = &d->stacks[i].threads[t].frames[f];
                if (fr->kind == MQDH_FRAME_MPI)
                    (fr->file || fr->line || fr->inlined ? (*with)++ : (*without)++);
            }
}

/* The MPI library's physical frames of b's main threads at an address a
 * has one at too (same process) have the same file and line as a's: how
 * many there were. */
static int same_pc_lines(const struct mqdh_dump *a, const struct mqdh_dump *b)
{
    int n = 0;
    for (int i = 0; i < b->nprocs; i++) {
        const struct mqdh_thread *x = &a->stacks[i].threads[0], *y = &b->stacks[i].threads[0];
        for (int f = 0; f < y->nframes; f++) {
            const struct mqdh_frame *fy = &y->frames[f];
            for (int g = 0; fy->kind == MQDH_FRAME_MPI && !fy->inlined && g < x->nframes; g++) {
                const struct mqdh_frame *fx = &x->frames[g];
                if (fx->pc != fy->pc || fx->inlined)
                    continue;
                if (!fx->file != !fy->file || fx->line != fy->line)
                    fail_msg("process %d, %s at %#llx: line %d there, %d here", i,
                             fy->function ? fy->function : "??", (unsigned long long)fy->pc,
                             fx->line, fy->line);
                n++;
                break;
            }
        }
    }
    return n;
}

/* mqdh_options.brief_mpi_frames: the MPI library's frames without their
 * lines, everything else as in a full dump; and a file a brief dump
 * expanded (kept in a cache) looked up again for a full one. */
static void test_sentinel__brief_mpi_frames(void **state)
{
    (void)state;
    struct job job;
    start(&job, "ring", 3);
    struct mqdh_options full = MQDH_OPTIONS_INIT, brief = MQDH_OPTIONS_INIT;
    brief.brief_mpi_frames = 1;
    struct mqdh_dump *d[4] = {NULL};
    assert_int_equal(mqdh_dump_processes(job.ranks, NULL, NULL, 3, &full, &d[0]), MQDH_OK);
    assert_int_equal(mqdh_dump_processes(job.ranks, NULL, NULL, 3, &brief, &d[1]), MQDH_OK);
    assert_int_equal(mqdh_cache_new(&brief.cache), MQDH_OK);
    full.cache = brief.cache;
    assert_int_equal(mqdh_dump_processes(job.ranks, NULL, NULL, 3, &brief, &d[2]), MQDH_OK);
    assert_int_equal(mqdh_dump_processes(job.ranks, NULL, NULL, 3, &full, &d[3]), MQDH_OK);
    for (int k = 0; k < 4; k++) {
        int with, without;
        mpi_lines(d[k], &with, &without);
        /* The cached MPICH's libmpi has its lines: some frame shows one
         * when full, none when brief. */
        int full_dump = k == 0 || k == 3;
        if (full_dump ? with == 0 : with > 0 || without == 0)
            fail_msg("dump %d (%s): %d of the MPI library's frames with lines, %d without", k,
                     full_dump ? "full" : "brief", with, without);
        same_look(d[0], d[k]);
        for (int i = 0; i < 3; i++) {
            const struct mqdh_frame *u = mqdh_user_frame(d[k], i), *v = mqdh_user_frame(d[0], i);
            assert_true(u && v && u->file && v->file && u->line > 0);
            assert_string_equal(u->file, v->file);
            assert_int_equal(u->line, v->line);
        }
    }
    /* The ranks spin: a frame at an address both full looks stopped at
     * (the outer ones, PMPI_Waitall's) has the same line in both, though
     * the brief look between them expanded it without. */
    if (same_pc_lines(d[0], d[3]) == 0)
        fail_msg("the full looks share no frame of the MPI library");
    for (int k = 0; k < 4; k++)
        mqdh_dump_free(d[k]);
    mqdh_cache_free(brief.cache);
    char why[256];
    if (job_released(&job, why, sizeof why) != 0)
        fail_msg("after the brief looks: %s", why);
    assert_int_equal(job_stop(&job), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sentinel__hung_after_the_floor),
        cmocka_unit_test(test_sentinel__learns_long_quiet_times),
        cmocka_unit_test(test_sentinel__rare_moves_ask_for_long_odds),
        cmocka_unit_test(test_sentinel__the_bound_caps_it),
        cmocka_unit_test(test_sentinel__unsure_and_maybe),
        cmocka_unit_test(test_sentinel__bad_arguments),
        cmocka_unit_test(test_sentinel__looks_compared_by_the_watch),
        cmocka_unit_test(test_sentinel__bad_command_lines),
        cmocka_unit_test(test_sentinel__cannot_watch),
        cmocka_unit_test(test_sentinel__cached_looks_see_the_same),
        cmocka_unit_test(test_sentinel__brief_mpi_frames),
        cmocka_unit_test(test_sentinel__late_hang_is_caught),
        cmocka_unit_test(test_sentinel__late_hang_signalled),
        cmocka_unit_test(test_sentinel__slow_progress_is_never_hung),
        cmocka_unit_test(test_sentinel__waits_for_and_finds_the_job),
    };
    return cmocka_run_group_tests(tests, job_scratch_make, job_scratch_remove);
}
