/*
 * test_save.c - mqdump --save and --load on real MPICH jobs (integration).
 *
 * On several samples, a dump saved as it is made (`--save F --job PID`)
 * and loaded again (`--load F`) must show exactly what the live dump
 * showed, view by view: --json --stacks, the text, the text with
 * --stacks, and --graph's DOT; and exit with the same status.  Nothing
 * must differ: without --stats no view shows a time, and what --stats
 * adds (mqdump's own CPU time and memory) is the loading mqdump's, so it
 * is left out here.  After every dump, every rank and mpiexec must be
 * running and untraced.  A file that is not a saved dump (empty, another
 * text, an agent's result, another format version, cut short, corrupt, a
 * directory, missing) is refused with a clear error, exit 2, nothing on
 * stdout and the file left as it was; --load with --job or --pid is a
 * usage error.
 *
 * Also the progress a dump shows while it runs (mqdump/meter.c): on
 * standard error when that is a terminal (a pty here) and the dump takes
 * over a second (a DLL that never returns, given 1 s per process), as one
 * line refreshed in place and cleared at the end; nothing with -q, nothing
 * when standard error is not a terminal, nothing for a quick dump.  The
 * library's side of it (mqdh_options.progress), called in the test's own
 * dump of a ring: counts that only grow, never two calls at once, a few
 * calls a process, and every rank stopped, unwound, read and let go.
 *
 * Environment: MQD_BUILD, MQD_MPICH_PREFIX.
 */
#define _GNU_SOURCE
#include "mqdhost.h"
#include "tests/joblaunch.h"
#include "tests/json.h"
#include "tests/procstate.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pty.h>
#include <pthread.h>
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

static void spit(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* One run of mqdump: its exit status, standard output and error. */
struct run {
    int rc;
    char *out, *err;
};

static struct run mqdump(const char *const *args)
{
    struct run r = {0};
    r.rc = job_run_mqdump(args, NULL, &r.out, &r.err);
    assert_true(r.rc >= 0 && r.out && r.err);
    return r;
}

static void run_free(struct run *r)
{
    free(r->out);
    free(r->err);
}

/* Every rank and mpiexec running and untraced; then end the job. */
static void released_and_stop(struct job *job)
{
    char why[256];
    int bad = job_released(job, why, sizeof why) != 0;
    int st = job_stop(job);
    if (bad)
        fail_msg("after mqdump: %s", why);
    assert_int_equal(st, 0);
}

/* The same text, or fail showing both. */
static void same(const char *what, const char *sample, const char *live, const char *loaded)
{
    if (strcmp(live, loaded) != 0)
        fail_msg("%s: %s of the loaded dump differs from the live one's:\n--- live\n%s\n"
                 "--- loaded\n%s",
                 sample, what, live, loaded);
}

/*
 * The live dump of job, saved to file (more: the views asked for, then
 * NULL), and the same views of file loaded: the same exit status and
 * output, and the graph (if graph names one: its DOT, loaded into
 * graph".loaded") the same.
 */
static void live_then_loaded(const char *sample, struct job *job, const char *file,
                             const char *const *more, const char *graph)
{
    char pid[16], graph2[PATH_MAX];
    snprintf(pid, sizeof pid, "%d", (int)job->mpiexec);
    snprintf(graph2, sizeof graph2, "%s.loaded", graph ? graph : "");
    const char *live_args[16] = {"--save", file, "--job", pid}, *load_args[16] = {"--load", file};
    int nl = 4, nd = 2;
    for (int i = 0; more[i]; i++) {
        live_args[nl++] = more[i];
        load_args[nd++] = more[i];
    }
    if (graph) {
        live_args[nl++] = "--graph";
        live_args[nl++] = graph;
        load_args[nd++] = "--graph";
        load_args[nd++] = graph2;
    }
    struct run live = mqdump(live_args), loaded = mqdump(load_args);
    if (live.rc > 1)
        fail_msg("%s: mqdump exited %d: %s", sample, live.rc, live.err);
    char what[128] = "the output of";
    for (int i = 0; more[i]; i++)
        snprintf(what + strlen(what), sizeof what - strlen(what), " %s", more[i]);
    if (loaded.rc != live.rc)
        fail_msg("%s: %s: live exit %d, loaded exit %d: %s", sample, what, live.rc, loaded.rc,
                 loaded.err);
    same(what, sample, live.out, loaded.out);
    /* The loaded dump says what it is, on stderr. */
    if (!strstr(loaded.err, "saved ") || !strstr(loaded.err, "mpiexec"))
        fail_msg("%s: --load does not say what the file is: %s", sample, loaded.err);
    if (graph) {
        char *g1 = job_slurp(graph), *g2 = job_slurp(graph2);
        if (!g1 || !g2 || !strstr(g1, "digraph"))
            fail_msg("%s: no graph written (%s, %s)", sample, graph, graph2);
        same("--graph", sample, g1, g2);
        free(g1);
        free(g2);
    }
    run_free(&live);
    run_free(&loaded);
}

/* What a saved file's header line says: the format, this mqdump, the
 * command and the launcher. */
static void check_header(const char *sample, const char *file)
{
    char *text = job_slurp(file);
    assert_non_null(text);
    char *nl = strchr(text, '\n');
    assert_non_null(nl);
    *nl = '\0';
    if (strncmp(text, "mqd-dump 1 ", 11) != 0 || !strstr(text, "=mqdump%20") ||
        !strstr(text, "--save") || !strstr(text, "mpiexec") || strncmp(nl + 1, "mqd-result 1\n", 13) != 0)
        fail_msg("%s: the saved file's header is '%s'", sample, text);
    free(text);
}

/* Sample name on np ranks: every view of its dump, live and loaded. */
static void check_sample(const char *name, int np)
{
    struct job job;
    char err[512], file[PATH_MAX], graph[PATH_MAX];
    if (job_start(&job, name, np, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
    char base[64];
    snprintf(base, sizeof base, "%s.mqd", name);
    job_scratch(file, sizeof file, base);
    snprintf(base, sizeof base, "%s.dot", name);
    job_scratch(graph, sizeof graph, base);

    const char *json[] = {"--json", "--stacks", NULL};
    live_then_loaded(name, &job, file, json, NULL);
    check_header(name, file);
    /* Stacks included: the loaded JSON has the merged tree. */
    const char *load_json[] = {"--load", file, "--json", "--stacks", NULL};
    struct run r = mqdump(load_json);
    struct json *j = json_parse(r.out, err, sizeof err);
    if (!j)
        fail_msg("%s: --load --json: %s", name, err);
    const struct json *procs = json_get(j, "processes");
    assert_non_null(procs);
    assert_int_equal(procs->n, np);
    const struct json *stacks = json_get(j, "stacks");
    if (!stacks || stacks->kind != JSON_OBJECT)
        fail_msg("%s: no stacks in the loaded dump's JSON", name);
    json_free(j);
    run_free(&r);

    const char *text[] = {NULL}, *text_stacks[] = {"--stacks", NULL}, *full[] = {"--full", NULL};
    live_then_loaded(name, &job, file, text, graph);
    live_then_loaded(name, &job, file, text_stacks, NULL);
    live_then_loaded(name, &job, file, full, NULL);
    released_and_stop(&job);
}

static void test_save__ring(void **state)
{
    (void)state;
    check_sample("ring", 4);
}

static void test_save__unexpected(void **state)
{
    (void)state;
    check_sample("unexpected", 2);
}

static void test_save__comms(void **state)
{
    (void)state;
    check_sample("comms", 4);
}

static void test_save__mismatch(void **state)
{
    (void)state;
    check_sample("mismatch", 3);
}

static void test_save__hidden(void **state)
{
    (void)state;
    check_sample("hidden", 4);
}

/* --load path must fail with exit 2, nothing on stdout, an error naming
 * path and saying `says`, and path as it was. */
static void refused(const char *path, const char *says)
{
    char *before = job_slurp(path);
    const char *args[] = {"--load", path, "--json", "--stacks", NULL};
    struct run r = mqdump(args);
    if (r.rc != 2 || r.out[0] || !strstr(r.err, path) || !strstr(r.err, says))
        fail_msg("--load %s: exit %d, stdout '%.200s', stderr '%s' (wanted exit 2 and '%s')",
                 path, r.rc, r.out, r.err, says);
    char *after = job_slurp(path);
    assert_true((before == NULL) == (after == NULL));
    if (before && strcmp(before, after) != 0)
        fail_msg("--load changed %s", path);
    free(before);
    free(after);
    run_free(&r);
}

/* Files that are not saved dumps, each refused for what it is. */
static void test_save__not_a_saved_dump(void **state)
{
    (void)state;
    struct job job;
    char err[512], good[PATH_MAX], pid[16], bad[PATH_MAX];
    if (job_start(&job, "ring", 3, err, sizeof err) != 0)
        fail_msg("ring: %s", err);
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    job_scratch(good, sizeof good, "good.mqd");
    const char *args[] = {"--save", good, "--job", pid, "--stacks", NULL};
    struct run r = mqdump(args);
    released_and_stop(&job);
    assert_int_equal(r.rc, 0);
    run_free(&r);
    char *text = job_slurp(good);
    assert_non_null(text);
    size_t len = strlen(text);
    char *body = strchr(text, '\n') + 1; /* the result after the header */

    spit(job_scratch(bad, sizeof bad, "empty.mqd"), "", 0);
    refused(bad, "not a saved dump");
    const char other[] = "digraph mqd { p0 -> p1 }\n";
    spit(job_scratch(bad, sizeof bad, "other.dot"), other, strlen(other));
    refused(bad, "not a saved dump (it begins 'digraph");
    spit(job_scratch(bad, sizeof bad, "result.txt"), body, strlen(body));
    refused(bad, "an agent's result, not a saved dump");
    char *v2 = strdup(text);
    v2[9] = '2'; /* "mqd-dump 2 ..." */
    spit(job_scratch(bad, sizeof bad, "v2.mqd"), v2, len);
    refused(bad, "saved-dump format 2, and this mqdump reads format 1");
    free(v2);
    /* Cut anywhere in its body: the end record is missing, or a record
     * is cut inside. */
    for (size_t cut = (size_t)(body - text) + 40; cut < len - 1; cut += (len - cut) / 2 + 1) {
        spit(job_scratch(bad, sizeof bad, "cut.mqd"), text, cut);
        refused(bad, "line ");
    }
    /* A record corrupted: its line named. */
    char *corrupt = strdup(text), *p = strstr(corrupt, "\np ");
    assert_non_null(p);
    p[3] = 'x'; /* the first process's pid */
    spit(job_scratch(bad, sizeof bad, "corrupt.mqd"), corrupt, len);
    refused(bad, "line 4: pid 'x");
    free(corrupt);
    job_scratch(bad, sizeof bad, "a-directory");
    assert_int_equal(mkdir(bad, 0700), 0);
    refused(bad, "not a regular file");
    job_scratch(bad, sizeof bad, "missing.mqd");
    refused(bad, "No such file or directory");
    free(text);
}

/* --load goes with the views' options only. */
static void test_save__bad_command_lines(void **state)
{
    (void)state;
    char file[PATH_MAX];
    job_scratch(file, sizeof file, "none.mqd");
    const char *load_job[] = {"--load", file, "--job", "1", NULL};
    const char *load_pid[] = {"--pid", "1", "--load", file, NULL};
    const char *load_save[] = {"--load", file, "--save", file, NULL};
    const char *load_list[] = {"--load", file, "--list", NULL};
    const char *save_svg[] = {"--save", "dump.svg", "--job", "1", NULL};
    const char *agent_save[] = {"--agent", "h", "--save", file, "1:0", NULL};
    const char *const *cases[] = {load_job, load_pid, load_save, load_list, save_svg, agent_save};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct run r = mqdump(cases[i]);
        if (r.rc != 64 || r.out[0])
            fail_msg("mqdump %s %s %s %s: exit %d (wanted 64): %s", cases[i][0], cases[i][1],
                     cases[i][2], cases[i][3], r.rc, r.err);
        run_free(&r);
    }
    assert_int_equal(access(file, F_OK), -1); /* nothing written */
}

/*
 * mqdump with args (NULL-terminated), its standard error a terminal (a
 * pty: what it wrote there into *tty) and its standard output /dev/null.
 * Returns its exit status.
 */
static int mqdump_on_tty(const char *const *args, char **tty)
{
    char mqdump_path[PATH_MAX];
    job_build_path(mqdump_path, sizeof mqdump_path, "bin/mqdump");
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    assert_true(pid >= 0);
    if (pid == 0) {
        const char *argv[32] = {"mqdump"};
        for (int n = 1; n < 31 && args[n - 1]; n++)
            argv[n] = args[n - 1];
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        execv(mqdump_path, (char *const *)argv);
        _exit(127);
    }
    size_t len = 0, cap = 4096;
    char *text = malloc(cap);
    assert_non_null(text);
    double until = job_now() + 60;
    for (;;) {
        if (len + 1024 > cap) {
            char *t = realloc(text, cap *= 2);
            assert_non_null(t);
            text = t;
        }
        ssize_t n = read(master, text + len, cap - len - 1);
        if (n > 0)
            len += (size_t)n;
        else if (n < 0 && errno == EINTR)
            continue;
        else
            break; /* EIO: every writer of the pty is gone */
        if (job_now() > until) {
            kill(pid, SIGKILL);
            break;
        }
    }
    text[len] = '\0';
    close(master);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    *tty = text;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* How many progress lines text holds: each "\rmqdump: N s: ..." ended by
 * erasing the rest of its line. */
static int progress_lines(const char *text)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, "\rmqdump: ")); p++) {
        const char *end = strstr(p, "\033[K");
        const char *next = strchr(p + 1, '\r');
        if (end && (!next || end < next) && strstr(p, " s: ") && strstr(p, " s: ") < end)
            n++;
    }
    return n;
}

static void test_save__progress_on_a_terminal_only(void **state)
{
    (void)state;
    struct job job;
    char err[512], pid[16], slow[PATH_MAX], mqd[PATH_MAX];
    if (job_start(&job, "ring", 4, err, sizeof err) != 0)
        fail_msg("ring: %s", err);
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    job_build_path(slow, sizeof slow, "tests/fake/fake_loop.so");
    job_build_path(mqd, sizeof mqd, "lib/libmqd_mpich.so");
    /* A DLL that never returns, 1 s a process: a dump of some seconds. */
    const char *long_dump[] = {"--dll", slow, "--timeout", "1", "--job", pid, NULL};
    const char *long_quiet[] = {"--dll", slow, "--timeout", "1", "--job", pid, "-q", NULL};
    const char *quick[] = {"--dll", mqd, "--job", pid, NULL};
    char *tty;
    double t0 = job_now();
    int rc = mqdump_on_tty(long_dump, &tty);
    double took = job_now() - t0;
    assert_int_equal(rc, 1); /* nothing read, every rank unwound */
    /* The DLL never returns: every rank stopped, none read; each is set up
     * as soon as it is unwound (one worker), so the second's second is
     * spent with two unwound. */
    if (took < 1.5 || progress_lines(tty) < 2 ||
        !strstr(tty, "ranks here: 4 of 4 stopped, 2 unwound, 0 read"))
        fail_msg("%.1f s on a terminal, and its progress was: '%s'", took, tty);
    /* Cleared at the end: after the last line, the line erased. */
    const char *last = tty, *p;
    while ((p = strstr(last + 1, "\rmqdump: ")))
        last = p;
    if (!strstr(last, "\033[K\r\033[K"))
        fail_msg("the progress line is not cleared: '%s'", tty);
    free(tty);

    assert_int_equal(mqdump_on_tty(long_quiet, &tty), 1);
    if (progress_lines(tty) != 0)
        fail_msg("-q, and progress: '%s'", tty);
    free(tty);
    t0 = job_now();
    assert_int_equal(mqdump_on_tty(quick, &tty), 0);
    took = job_now() - t0;
    if (took < 0.9 && progress_lines(tty) != 0) /* (a loaded machine may take longer) */
        fail_msg("a quick dump (%.1f s), and progress: '%s'", took, tty);
    free(tty);
    /* Not a terminal: none. */
    struct run r = mqdump(long_dump);
    assert_int_equal(r.rc, 1);
    if (strstr(r.err, "\rmqdump: ") || strstr(r.err, "\033[K") || strstr(r.out, "\033[K"))
        fail_msg("progress without a terminal: '%s'", r.err);
    run_free(&r);
    released_and_stop(&job);
}

/* What the progress callback saw. */
struct told {
    pthread_mutex_t lock;
    int inside, overlapped; /* a call while another ran */
    int calls, bad_size, went_back;
    struct mqdh_progress last;
    char why[256];
};

static void told(void *arg, const struct mqdh_progress *p)
{
    struct told *t = arg;
    if (__atomic_exchange_n(&t->inside, 1, __ATOMIC_ACQ_REL))
        __atomic_store_n(&t->overlapped, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&t->lock);
    const struct mqdh_progress *l = &t->last;
    if (p->size != sizeof *p)
        t->bad_size = 1;
    /* Every count but fetching (fetches under way) only grows. */
    int v[] = {p->to_stop, p->stopped, p->unwound, p->read, p->let_go, p->agents,
               p->agents_started, p->agents_answered, p->fetched};
    int w[] = {l->to_stop, l->stopped, l->unwound, l->read, l->let_go, l->agents,
               l->agents_started, l->agents_answered, l->fetched};
    for (size_t i = 0; i < sizeof v / sizeof v[0] && !t->went_back; i++)
        if (v[i] < w[i]) {
            t->went_back = 1;
            snprintf(t->why, sizeof t->why, "count %zu went from %d to %d at call %d", i, w[i],
                     v[i], t->calls + 1);
        }
    /* Nothing done before its step's start. */
    if (!t->went_back && (p->stopped > p->to_stop || p->unwound > p->stopped ||
                          p->read > p->unwound || p->let_go > p->stopped ||
                          p->agents_answered > p->agents || p->fetching < 0)) {
        t->went_back = 1;
        snprintf(t->why, sizeof t->why,
                 "call %d: %d to stop, %d stopped, %d unwound, %d read, %d let go, %d fetching",
                 t->calls + 1, p->to_stop, p->stopped, p->unwound, p->read, p->let_go,
                 p->fetching);
    }
    t->last = *p;
    t->last.fetch_name = NULL; /* valid during the call only */
    t->calls++;
    pthread_mutex_unlock(&t->lock);
    __atomic_store_n(&t->inside, 0, __ATOMIC_RELEASE);
}

static void test_save__progress_told_by_the_library(void **state)
{
    (void)state;
    struct job job;
    char err[512], mqd[PATH_MAX];
    if (job_start(&job, "ring", 4, err, sizeof err) != 0)
        fail_msg("ring: %s", err);
    job_build_path(mqd, sizeof mqd, "lib/libmqd_mpich.so");
    struct told t = {.lock = PTHREAD_MUTEX_INITIALIZER};
    for (int jobs = 1; jobs <= 2; jobs++) { /* on this thread alone, then with a worker */
        memset(&t.last, 0, sizeof t.last);
        t.calls = 0;
        struct mqdh_options o = MQDH_OPTIONS_INIT;
        o.dll = mqd;
        o.jobs = jobs;
        o.progress = told;
        o.progress_arg = &t;
        struct mqdh_dump *d = NULL;
        int rc = mqdh_dump_processes(job.ranks, NULL, NULL, job.np, &o, &d);
        assert_non_null(d);
        if (rc != MQDH_OK)
            fail_msg("dump of the ring (jobs %d): %s: %s", jobs, mqdh_strerror(rc),
                     d->procs[0].error ? d->procs[0].error : "");
        mqdh_dump_free(d);
        const struct mqdh_progress *l = &t.last;
        if (t.bad_size || t.went_back || t.overlapped)
            fail_msg("jobs %d: size %zu, %s%s", jobs, l->size, t.why,
                     t.overlapped ? ", and two calls at once" : "");
        if (l->to_stop != 4 || l->stopped != 4 || l->unwound != 4 || l->read != 4 ||
            l->let_go != 4 || l->agents || l->agents_started || l->agents_answered ||
            l->fetching)
            fail_msg("jobs %d, at the end: %d to stop, %d stopped, %d unwound, %d read, %d let "
                     "go, %d agents, %d fetching",
                     jobs, l->to_stop, l->stopped, l->unwound, l->read, l->let_go, l->agents,
                     l->fetching);
        /* A call a step: to stop, stopped, each unwound, each read, let go;
         * and two a fetch, if debuginfod is asked. */
        if (t.calls < 11 || t.calls > 11 + 2 * l->fetched)
            fail_msg("jobs %d: %d calls for 4 ranks and %d fetches", jobs, t.calls, l->fetched);
    }
    released_and_stop(&job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_save__ring),
        cmocka_unit_test(test_save__unexpected),
        cmocka_unit_test(test_save__comms),
        cmocka_unit_test(test_save__mismatch),
        cmocka_unit_test(test_save__hidden),
        cmocka_unit_test(test_save__not_a_saved_dump),
        cmocka_unit_test(test_save__bad_command_lines),
        cmocka_unit_test(test_save__progress_on_a_terminal_only),
        cmocka_unit_test(test_save__progress_told_by_the_library),
    };
    return cmocka_run_group_tests_name("save", tests, job_scratch_make, job_scratch_remove);
}
