/*
 * test_mqdump.c - mqdump against real MPICH jobs (integration).
 *
 * Each sample runs under the cached MPICH; `mqdump --job MPIEXEC --json`
 * must show what the sample left, field by field: exactly with mqd's
 * libmqd_mpich.so, and with MPICH's own libtvmpich.so allowing only for
 * that DLL's limitations (TVMPICH_LIMITS below).
 * After every dump, every rank and mpiexec must be running and untraced.
 * Also: a libmpi.so stripped of its DWARF (the DLL's known layout), a
 * program naming the DLL in its own MPIR_dll_name, --job through a
 * launcher without MPIR_proctable (mqd-launch), --pid,
 * the DLL the target names, Open MPI's DLL pointed at an MPICH process,
 * and bad command lines.
 *
 * Environment: MQD_BUILD, MQD_MPICH_PREFIX, MQD_SAMPLES_SRC, MQD_OMPI_DLL.
 */
#define _GNU_SOURCE
#include "tests/compare.h"
#include "tests/expect.h"
#include "tests/joblaunch.h"
#include "tests/json.h"
#include "tests/procstate.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/*
 * What MPICH 4.0.2's libtvmpich.so gets wrong, as seen on these samples:
 * - lengths of sends and receives are element counts, not bytes (1 MiB of
 *   doubles shows as 131072);
 * - unexpected messages have no length (-1);
 * - no global ranks (always -1);
 * - MPICH-internal communicators are listed ("--unnamed--" ones and
 *   MPI_ICOMM_WORLD), and an unnamed user communicator is "--unnamed--"
 *   like them.
 */
static const struct dll_limits TVMPICH_LIMITS = {
    .lengths_in_elements = 1,
    .unexpected_length_unknown = 1,
    .no_global_ranks = 1,
    .unnamed_name = "--unnamed--",
    .shows_internal_comms = 1,
};

static const struct mpich_allowances *allowed(void);

/* TVMPICH_LIMITS, and what libtvmpich.so gets wrong on the MPICH under test
 * only (compare.c). */
static const struct dll_limits *tvmpich_limits(void)
{
    static struct dll_limits lim;
    lim = TVMPICH_LIMITS;
    lim.any_source_16bit = allowed()->tvmpich.any_source_16bit;
    lim.unexpected_complete_as_pending = allowed()->tvmpich.unexpected_complete_as_pending;
    return &lim;
}

/* mqd's own DLL must be exact: no limits at all, but for what it cannot
 * show on the MPICH under test (mqd_limits: compare.c's allowances for its
 * generation and device). */
static const struct dll_limits EXACT = {0};

static const struct mpich_allowances *allowed(void)
{
    return compare_mpich_allowed();
}

static const struct dll_limits *mqd_limits(void)
{
    return &allowed()->limits;
}

static const char *mqd_dll(void)
{
    static char path[PATH_MAX];
    job_build_path(path, sizeof path, "lib/libmqd_mpich.so");
    return path;
}

static const char *tvmpich(void)
{
    static char path[PATH_MAX];
    const char *prefix = getenv("MQD_MPICH_PREFIX");
    snprintf(path, sizeof path, "%s/lib/libtvmpich.so", prefix ? prefix : "");
    return path;
}

/*
 * Run mqdump with args (NULL-terminated); its stdout and stderr into
 * *out / *errout (malloc'd).  Returns the exit status, 128+N for signal N.
 */
static int run_mqdump(char **out, char **errout, const char *const *args)
{
    char *err = NULL;
    int rc = job_run_mqdump(args, NULL, out, &err);
    assert_true(rc >= 0 && *out && err);
    if (errout)
        *errout = err;
    else
        free(err);
    return rc;
}

/* mqdump args, which must succeed with JSON of nprocs processes. */
static struct json *run_json(const char *const *args, int nprocs, char **out, char **err)
{
    int rc = run_mqdump(out, err, args);
    char msg[512];
    struct json *j = json_parse(*out, msg, sizeof msg);
    if (rc != 0 || !j)
        fail_msg("mqdump exited %d (%s): %s", rc, msg, *err);
    assert_int_equal(json_get(j, "processes")->n, nprocs);
    return j;
}

/* Sample name's .expect, as the MPICH under test holds it (its MPI_Finalize
 * may return). */
static void load_expect(const char *name, struct expect *e)
{
    char err[512];
    if (expect_load_sample(name, e, err, sizeof err) != 0)
        fail_msg("%s", err);
    if (allowed()->finalize_returns)
        expect_finalize_returns(e);
}

static void start(struct job *job, const char *name, int np)
{
    char err[512];
    if (job_start(job, name, np, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
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

/*
 * Every communicator of every process has its group (mqs_get_comm_group),
 * and it is the truth as the dump itself shows it: the process at its own
 * rank, and at each rank r a process that has a communicator of the same
 * name and size at rank r, with the same group (the same side of an
 * intercommunicator).  0, or -1 with the first difference in err.
 */
static int check_groups(const struct json *j, char *err, int errlen)
{
    const struct json *procs = json_get(j, "processes");
    for (int i = 0; i < procs->n; i++) {
        const struct json *p = &procs->items[i], *comms = json_get(p, "communicators");
        long id = (long)json_get(p, "identity")->number;
        if (id < 0)
            id = (long)json_get(p, "rank")->number;
        for (int c = 0; c < comms->n; c++) {
            const struct json *cm = &comms->items[c], *g = json_get(cm, "group");
            const char *name = json_get(cm, "name")->string;
            long size = (long)json_get(cm, "size")->number;
            long lr = (long)json_get(cm, "local_rank")->number;
            if (!g || g->kind != JSON_ARRAY || g->n != size) {
                snprintf(err, (size_t)errlen, "process %d, \"%s\": no group of %ld", i, name,
                         size);
                return -1;
            }
            if ((long)g->items[lr].number != id) {
                snprintf(err, (size_t)errlen, "process %d (%ld), \"%s\": its group has %ld at "
                         "its rank %ld", i, id, name, (long)g->items[lr].number, lr);
                return -1;
            }
            for (long r = 0; r < size; r++) {
                int found = 0;
                for (int k = 0; k < procs->n && !found; k++) {
                    const struct json *q = &procs->items[k];
                    long qid = (long)json_get(q, "identity")->number;
                    if (qid < 0)
                        qid = (long)json_get(q, "rank")->number;
                    if (qid != (long)g->items[r].number)
                        continue;
                    const struct json *qc = json_get(q, "communicators");
                    /* In MPI_Finalize, MPICH has freed them: nothing to check against. */
                    const struct json *qw = json_get(q, "where");
                    if (qc->n == 0 && qw && qw->kind == JSON_OBJECT &&
                        strcmp(json_get(qw, "call")->string, "MPI_Finalize") == 0)
                        found = 1;
                    for (int m = 0; m < qc->n && !found; m++) {
                        const struct json *x = &qc->items[m], *xg = json_get(x, "group");
                        const char *xn = json_get(x, "name")->string;
                        /* An unnamed one's name holds its handle, which differs. */
                        int same_name = strcmp(xn, name) == 0 ||
                                        (strncmp(xn, "unnamed ", 8) == 0 &&
                                         strncmp(name, "unnamed ", 8) == 0);
                        if (!same_name ||
                            (long)json_get(x, "size")->number != size ||
                            (long)json_get(x, "local_rank")->number != r || !xg ||
                            xg->kind != JSON_ARRAY || xg->n != size)
                            continue;
                        found = 1;
                        for (long t = 0; t < size; t++)
                            found &= xg->items[t].number == g->items[t].number;
                    }
                }
                if (!found) {
                    snprintf(err, (size_t)errlen, "process %d, \"%s\": group entry %ld is %ld, "
                             "which has no such communicator at that rank with this group", i,
                             name, r, (long)g->items[r].number);
                    return -1;
                }
            }
        }
    }
    return 0;
}

/*
 * Run sample name (from program binary) and dump its job with dll; with
 * dll NULL, no --dll (and no $MQD_DLL): mqdump must choose mqd's own DLL
 * for MPICH by itself, as it does for a user.
 */
static void check_program(const char *name, const char *binary, const char *dll,
                          const struct dll_limits *lim)
{
    struct expect e;
    struct job job;
    load_expect(name, &e);
    unsetenv("MQD_DLL");
    start(&job, binary, e.np);
    char pid[16], *out, *err;
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    const char *args[] = {"--job", pid, "--json", dll ? "--dll" : NULL, dll, NULL};
    char msg[8192] = "", want[PATH_MAX];
    struct json *j = NULL;
    int rc, ok;
    /* mqd's DLL: exact, but for what this MPICH cannot show. */
    const struct dll_limits *shown = lim == &EXACT ? mqd_limits() : lim;
    char word[64];
    snprintf(word, sizeof word, "%s ", name);
    const char *unseen = allowed()->samples_unseen;
    int partial = lim == &EXACT && unseen && strstr(unseen, word);
    /* A rank that cannot announce its state from inside its blocking call
     * (mismatch: a barrier goes through its rounds after the announcement;
     * spawn: a child leaves the barrier it announced with) is dumped again
     * until it has reached it (5 s at most): the state it settles in must be
     * exactly the expected one. */
    for (int attempt = 0;; attempt++) {
        rc = run_mqdump(&out, &err, args);
        j = json_parse(out, msg, sizeof msg);
        /* Exit 1 only for a DLL with limits whose analysis honestly cannot
         * tell (libtvmpich.so: no global ranks beyond MPI_COMM_WORLD). */
        int cannot_tell = rc == 1 && (lim != &EXACT || partial) && j &&
                          json_get(j, "deadlock") &&
                          strcmp(json_get(json_get(j, "deadlock"), "verdict")->string,
                                 "unknown") == 0;
        ok = (rc == 0 || cannot_tell) && j && compare_where(j, &e, msg, sizeof msg) == 0 &&
             (partial || compare_dump(j, &e, &job, shown, msg, sizeof msg) == 0);
        /* Part of the queues unseen: "cannot tell", or the true deadlocks. */
        if (ok && partial && rc == 0)
            ok = compare_deadlock(j, &e, msg, sizeof msg) == 0;
        /* The wait-for analysis needs global ranks: mqd's DLL (and, on
         * ring, world ranks on MPI_COMM_WORLD: libtvmpich.so too). */
        if (ok && !partial && (lim == &EXACT || strcmp(name, "ring") == 0) && e.analysed)
            ok = compare_deadlock(j, &e, msg, sizeof msg) == 0;
        if (ok && !partial && lim == &EXACT)
            ok = check_groups(j, msg, sizeof msg) == 0;
        if (ok || attempt == 50)
            break;
        json_free(j);
        free(out);
        free(err);
        usleep(100 * 1000);
    }
    if (!ok && rc != 0)
        snprintf(msg, sizeof msg, "mqdump exited %d: %s", rc, err);
    assert_non_null(realpath(mqd_dll(), want));
    const struct json *procs = j ? json_get(j, "processes") : NULL;
    for (int i = 0; ok && !dll && i < procs->n; i++) {
        const char *used = json_get(&procs->items[i], "dll")->string;
        const char *src = json_get(&procs->items[i], "dll_source")->string;
        if (!used || strcmp(used, want) != 0 || !src || strcmp(src, "mqd") != 0)
            ok = 0, snprintf(msg, sizeof msg, "process %d used %s (%s)", i,
                             used ? used : "no DLL", src ? src : "?");
    }
    /*
     * The plain command dumps with one worker per CPU: a serial dump
     * (--jobs 1), and one with more workers than processes to share out
     * (--jobs 16), must print the very same bytes.
     */
    for (int w = 0; ok && !dll && w < 2; w++) {
        const char *jargs[] = {"--job", pid, "--json", "--jobs", w ? "16" : "1", NULL};
        char *jout = NULL, *jerr = NULL;
        int jrc = run_mqdump(&jout, &jerr, jargs);
        if (jrc != rc || !jout || strcmp(jout, out) != 0)
            ok = 0, snprintf(msg, sizeof msg,
                             "mqdump --jobs %s (exit %d) differs from the default dump "
                             "(exit %d)", jargs[4], jrc, rc);
        free(jout);
        free(jerr);
    }
    /* Spawned processes too are left running and untraced. */
    for (int i = 0; procs && i < procs->n; i++) {
        char why[256];
        if (proc_released((pid_t)json_get(&procs->items[i], "pid")->number, why,
                          sizeof why) != 0 && ok)
            ok = 0, snprintf(msg, sizeof msg, "after mqdump: %s", why);
    }
    json_free(j);
    free(out);
    free(err);
    released_and_stop(&job);
    expect_free(&e);
    if (!ok)
        fail_msg("%s: %s", binary, msg);
}

static void check_sample(const char *name, const char *dll, const struct dll_limits *lim)
{
    check_program(name, name, dll, lim);
}

#define SAMPLE_TEST(name)                                                                     \
    static void test_mqdump__tvmpich_##name(void **state)                                     \
    {                                                                                         \
        (void)state;                                                                          \
        if (allowed()->tvmpich_blind) {                                                       \
            print_message("libtvmpich.so shows no queue of this MPICH (compare.c)\n");        \
            skip();                                                                           \
        }                                                                                     \
        check_sample(#name, tvmpich(), tvmpich_limits());                                     \
    }                                                                                         \
    static void test_mqdump__mqd_##name(void **state)                                         \
    {                                                                                         \
        (void)state;                                                                          \
        check_sample(#name, NULL, &EXACT);                                                    \
    }
SAMPLE_TEST(ring)
SAMPLE_TEST(unexpected)
SAMPLE_TEST(wildcards)
SAMPLE_TEST(comms)
SAMPLE_TEST(intercomm)

/* The deadlock samples: their queues exactly, and the analysis's deadlocks,
 * the ranks behind them and the edges that explain them (the .expect's
 * deadlock, behind and wait lines); inflight: no deadlock at all. */
#define ANALYSIS_TEST(name)                                                                   \
    static void test_mqdump__analysis_##name(void **state)                                    \
    {                                                                                         \
        (void)state;                                                                          \
        check_sample(#name, NULL, &EXACT);                                                    \
    }
ANALYSIS_TEST(crossed)
ANALYSIS_TEST(anysource)
ANALYSIS_TEST(mismatch)
ANALYSIS_TEST(inflight)
/* A rank outside MPI that two chains wait on, in functions inlined into main. */
ANALYSIS_TEST(hidden)
/* MPI-2: parents and the children they spawned, one job of two worlds. */
ANALYSIS_TEST(spawn)
/* The hangs the analysis used to miss: a nonblocking collective completed
 * by MPI_Wait, a rank in MPI_Finalize, blocking sends in no queue,
 * MPI_Waitany (no MPI_ frame), and one split's unnamed halves. */
ANALYSIS_TEST(nbcwait)
ANALYSIS_TEST(finalize)
ANALYSIS_TEST(ssend)
ANALYSIS_TEST(waitany)
ANALYSIS_TEST(splitcoll)
ANALYSIS_TEST(persist)
/* The calls' own arguments, read from their stopped frames: what a probe
 * waits for, and two roots given to one MPI_Gather. */
ANALYSIS_TEST(probe)
ANALYSIS_TEST(roots)
/* Their mixture: every rank waits on another for a different reason. */
ANALYSIS_TEST(mixed)

/* 1 if process pid maps a file whose path contains what. */
static int maps_file(pid_t pid, const char *what)
{
    char path[64], line[4096];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, what) != NULL;
    if (f)
        fclose(f);
    return found;
}

/*
 * libmpi.so without its DWARF (objcopy --strip-debug, build/stripped): the
 * DLL falls back on the known layout generated from the real build
 * (mpich_defs/layouts.h).  The dump must be exact, and byte for byte the
 * dump made of the same processes when their DWARF is found again (by
 * build id under $MQD_DEBUGINFO_PATH).
 */
/*
 * Remove each where's "args", "args_why" and "args_from" from a JSON dump,
 * in place: the call's arguments come from libmpi's DWARF first, so a
 * stripped libmpi.so has none (and says why) or has them from the call
 * site alone.  1 if some args_why said the DWARF is missing, or some
 * arguments came from elsewhere.
 */
static int drop_args(char *s)
{
    int no_dwarf = 0;
    /* Where they were read from: the library's DWARF (first), or without
     * it the call site alone. */
    static const char lib[] = "the MPI library's debug information";
    for (char *a; (a = strstr(s, ", \"args_from\": \""));) {
        char *v = a + strlen(", \"args_from\": \""), *end = v;
        while (*end && *end != '"')
            end += *end == '\\' ? 2 : 1;
        assert_int_equal(*end, '"');
        no_dwarf |= strncmp(v, lib, sizeof lib - 1) != 0;
        memmove(a, end + 1, strlen(end + 1) + 1);
    }
    for (char *a; (a = strstr(s, ", \"args\": {"));) {
        char *why = strstr(a, "}, \"args_why\": ");
        assert_non_null(why);
        char *v = why + strlen("}, \"args_why\": "), *end;
        if (strncmp(v, "null", 4) == 0) {
            end = v + 4;
        } else {
            assert_int_equal(*v, '"');
            for (end = v + 1; *end && *end != '"'; end += *end == '\\' ? 2 : 1)
                ;
            assert_int_equal(*end, '"');
            no_dwarf |= strncmp(v, "\"the MPI library has no debug information", 41) == 0;
            end++;
        }
        memmove(a, end, strlen(end) + 1);
    }
    return no_dwarf;
}

/* Do two JSON dumps of one job show the same, the calls' arguments (read
 * only where the DWARF is) aside? */
static int same_queues(const char *a, const char *b)
{
    char *x = strdup(a), *y = strdup(b);
    assert_non_null(x);
    assert_non_null(y);
    drop_args(x);
    drop_args(y);
    int same = strcmp(x, y) == 0;
    free(x);
    free(y);
    return same;
}

/* Does the JSON dump out show np processes, each with the error that mqd's
 * DLL knows no layout of its MPICH? */
static int says_no_layout(const char *out, int np)
{
    char msg[256];
    struct json *j = json_parse(out, msg, sizeof msg);
    const struct json *procs = j ? json_get(j, "processes") : NULL;
    int ok = procs && procs->kind == JSON_ARRAY && procs->n == np;
    for (int i = 0; ok && i < procs->n; i++) {
        const struct json *why = json_get(&procs->items[i], "error");
        ok = why && why->kind == JSON_STRING && strstr(why->string, "knows no layout");
    }
    json_free(j);
    return ok;
}

static void check_stripped(const char *name)
{
    char rel[PATH_MAX], stripped[PATH_MAX], debug[PATH_MAX];
    /* Absolute: libdwfl looks for build ids only under absolute paths. */
    assert_non_null(realpath(job_build_path(rel, sizeof rel, "stripped"), stripped));
    assert_non_null(realpath(job_build_path(rel, sizeof rel, "stripped/debug"), debug));
    struct expect e;
    struct job job;
    load_expect(name, &e);
    setenv("LD_LIBRARY_PATH", stripped, 1);
    unsetenv("MQD_DEBUGINFO_PATH");
    start(&job, name, e.np);
    unsetenv("LD_LIBRARY_PATH");
    for (int r = 0; r < job.np; r++)
        if (!maps_file(job.ranks[r], "/stripped/libmpi.so"))
            fail_msg("%s: rank %d does not run the stripped libmpi.so", name, r);
    char pid[16], *out[2], *err[2];
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    const char *args[] = {"--job", pid, "--json", "-v", "--dll", mqd_dll(), NULL};
    int rc[2];
    /* A sample is ready once its queue entries exist, but a rank may
     * still be on its way into the collective it blocks in: two dumps a
     * moment apart may see two states.  Dump the pair again (five times
     * at most) until both dumps see one. */
    for (int attempt = 0;; attempt++) {
        rc[0] = run_mqdump(&out[0], &err[0], args);
        setenv("MQD_DEBUGINFO_PATH", debug, 1);
        rc[1] = run_mqdump(&out[1], &err[1], args);
        unsetenv("MQD_DEBUGINFO_PATH");
        if (attempt == 4 || rc[0] || rc[1] || same_queues(out[0], out[1]))
            break;
        for (int i = 0; i < 2; i++) {
            free(out[i]);
            free(err[i]);
        }
        usleep(300 * 1000);
    }
    char msg[8192] = "";
    /* A build whose layout the DLL does not know: the stripped dump says
     * so for every rank, the one with the DWARF found again is exact. */
    int nolayout = allowed()->no_known_layout;
    struct json *j = json_parse(out[nolayout], msg, sizeof msg);
    int ok = (rc[0] == 0 || nolayout) && rc[1] == 0 && j &&
             compare_dump(j, &e, &job, mqd_limits(), msg, sizeof msg) == 0;
    if (nolayout) {
        if (ok && !says_no_layout(out[0], e.np))
            ok = 0, snprintf(msg, sizeof msg, "stripped: not every rank says the DLL knows no "
                             "layout: %s", out[0]);
        json_free(j);
        j = NULL;
        free(out[0]);
        out[0] = strdup(out[1]);
    } else if (ok && !strstr(err[0], "using the known layout of MPICH 4.0.2 (ch3:nemesis)")) {
        ok = 0, snprintf(msg, sizeof msg, "the known layout was not used: %s", err[0]);
    }
    if (ok && strstr(err[1], "known layout"))
        ok = 0, snprintf(msg, sizeof msg, "the DWARF was not found again: %s", err[1]);
    /* The queues alike; only the calls' arguments differ, read from the
     * DWARF when it is there, else from the call site. */
    int no_dwarf[2] = {drop_args(out[0]), drop_args(out[1])};
    if (ok && (no_dwarf[1] || (!nolayout && !no_dwarf[0] && strcmp(name, "ring") != 0)))
        ok = 0, snprintf(msg, sizeof msg, "stripped: %s arguments' debug information missing; "
                         "found again: %s", no_dwarf[0] ? "" : "no", no_dwarf[1] ? "" : "not");
    if (ok && strcmp(out[0], out[1]) != 0)
        ok = 0, snprintf(msg, sizeof msg, "dumps differ:\n%s\n---\n%s", out[0], out[1]);
    if (!ok && (rc[0] || rc[1]))
        snprintf(msg, sizeof msg, "mqdump exited %d/%d: %s%s", rc[0], rc[1], err[0], err[1]);
    json_free(j);
    for (int i = 0; i < 2; i++) {
        free(out[i]);
        free(err[i]);
    }
    released_and_stop(&job);
    expect_free(&e);
    if (!ok)
        fail_msg("%s: %s", name, msg);
}

static void test_mqdump__stripped_libmpi_known_layout(void **state)
{
    (void)state;
    static const char *const samples[] = {"ring", "unexpected", "wildcards", "comms",
                                          "intercomm"};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
        check_stripped(samples[i]);
}

/* A TCP port of 127.0.0.1 free a moment ago. */
static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_true(s >= 0);
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
    close(s);
    return ntohs(a.sin_port);
}

/* The soname of the stripped libmpi.so (build/stripped/soname, written by
 * the Makefile from the MPICH's own: libmpi.so.12 for 4.0, libmpi.so.0
 * from 4.1) into buf[len]. */
static void stripped_soname(char *buf, int len)
{
    char rel[PATH_MAX];
    FILE *f = fopen(job_build_path(rel, sizeof rel, "stripped/soname"), "r");
    if (!f || !fgets(buf, len, f) || strncmp(buf, "libmpi.so", 9) != 0)
        fail_msg("%s names no libmpi.so", rel);
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
}

/* mqdump args with DEBUGINFOD_URLS naming port on 127.0.0.1 and a client
 * cache of its own (dir/name): its exit status, *out, *err and *took. */
static int dump_through_port(int port, const char *dir, const char *name,
                             const char *const *args, char **out, char **err, double *took)
{
    char url[64], cache[PATH_MAX];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    snprintf(cache, sizeof cache, "%s/%s", dir, name);
    setenv("DEBUGINFOD_URLS", url, 1);
    setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
    *took = job_now();
    int rc = run_mqdump(out, err, args);
    *took = job_now() - *took;
    return rc;
}

/* Sample unexpected started under the stripped libmpi.so (its DWARF only
 * where MQD_DEBUGINFO_PATH or a debuginfod finds it), its expectation in
 * *e; and a scratch directory made from dir's template. */
static void start_stripped(struct expect *e, struct job *job, char *dir)
{
    char rel[PATH_MAX], stripped[PATH_MAX];
    assert_non_null(realpath(job_build_path(rel, sizeof rel, "stripped"), stripped));
    load_expect("unexpected", e);
    setenv("LD_LIBRARY_PATH", stripped, 1);
    unsetenv("MQD_DEBUGINFO_PATH");
    start(job, "unexpected", e->np);
    unsetenv("LD_LIBRARY_PATH");
    assert_non_null(mkdtemp(dir));
}

/* rm -rf dir. */
static void remove_dir(const char *dir)
{
    char rm[PATH_MAX + 16];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    if (system(rm) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/*
 * A debuginfod server as a hostile or overloaded one behaves, on a port of
 * 127.0.0.1 (returned), in a process group of its own (its pid in *pid):
 * it answers every request with a file of `length` bytes and then sends
 * them 40 kB every 200 ms - 200 kB/s, steady progress over the client's
 * low-speed limit (100 kB a second for DEBUGINFOD_TIMEOUT seconds), so no
 * timeout ever passes.  Only DEBUGINFOD_MAXSIZE (a length over it) and
 * DEBUGINFOD_MAXTIME, and mqd's bound on all fetches, end it.
 */
static int trickle_server(long long length, pid_t *pid)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t salen = sizeof sa;
    assert_true(s >= 0 && bind(s, (struct sockaddr *)&sa, sizeof sa) == 0 &&
                listen(s, 64) == 0 && getsockname(s, (struct sockaddr *)&sa, &salen) == 0);
    *pid = fork();
    assert_true(*pid >= 0);
    if (*pid == 0) {
        setpgid(0, 0);
        signal(SIGPIPE, SIG_IGN);
        for (;;) {
            int c = accept(s, NULL, NULL);
            if (c < 0 || fork() != 0) {
                if (c >= 0)
                    close(c);
                continue;
            }
            char req[4096], head[256];
            if (read(c, req, sizeof req) <= 0)
                _exit(0);
            int n = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Type: "
                             "application/octet-stream\r\nContent-Length: %lld\r\n\r\n",
                             length);
            if (write(c, head, (size_t)n) != n)
                _exit(0);
            char chunk[40000];
            memset(chunk, 'x', sizeof chunk);
            for (long long i = 0; i < length && write(c, chunk, sizeof chunk) > 0;
                 i += (long long)sizeof chunk)
                usleep(200 * 1000);
            _exit(0);
        }
    }
    close(s);
    return ntohs(sa.sin_port);
}

/* The size of the largest file under dir (0 if none). */
static long long largest_file(const char *dir)
{
    char cmd[PATH_MAX + 64], line[64] = "0";
    snprintf(cmd, sizeof cmd, "find '%s' -type f -printf '%%s\\n' 2>/dev/null | sort -n | tail -1",
             dir);
    FILE *p = popen(cmd, "r");
    if (p && !fgets(line, sizeof line, p))
        strcpy(line, "0");
    if (p)
        pclose(p);
    return atoll(line);
}

/*
 * A debuginfod server that sends without end (issue 45, finding 5): one
 * that announces 1 GB is refused by DEBUGINFOD_MAXSIZE, which mqdump sets,
 * before anything lands in the cache; one that sends 100 MB at 200 kB a
 * second is given up after DEBUGINFOD_MAXTIME (mqdump's 20 s), once, before
 * the ranks are stopped - then taken as too slow - so the dump ends (it
 * would not, before: progress kept the client's timeout from passing).
 * The old limit-free mqdump is stopped at 90 s by an alarm.
 */
static void test_mqdump__debuginfod_fetches_are_bounded(void **state)
{
    (void)state;
    char dir[] = "/tmp/mqd-debuginfod.XXXXXX";
    struct expect e;
    struct job job;
    start_stripped(&e, &job, dir);
    char pid[16], *out[2], *err[2], cache[PATH_MAX];
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    const char *args[] = {"--job", pid, "--dll", mqd_dll(), NULL};
    static const long long lengths[2] = {1LL << 30, 100LL << 20};
    int rc[2];
    double took[2];
    long long landed[2];
    setenv("MQD_TEST_ALARM", "90", 1);
    for (int k = 0; k < 2; k++) {
        pid_t server;
        int port = trickle_server(lengths[k], &server);
        rc[k] = dump_through_port(port, dir, k ? "cache-slow" : "cache-big", args, &out[k],
                                  &err[k], &took[k]);
        kill(-server, SIGKILL);
        waitpid(server, NULL, 0);
        snprintf(cache, sizeof cache, "%s/%s", dir, k ? "cache-slow" : "cache-big");
        landed[k] = largest_file(cache);
    }
    unsetenv("MQD_TEST_ALARM");
    unsetenv("DEBUGINFOD_URLS");
    unsetenv("DEBUGINFOD_CACHE_PATH");
    released_and_stop(&job);
    remove_dir(dir);
    for (int k = 0; k < 2; k++) {
        print_message("server sending %lld bytes: exit %d in %.1f s, %lld bytes in the cache\n",
                      lengths[k], rc[k], took[k], landed[k]);
        if (rc[k] >= 128 || took[k] > (k ? 45 : 20) || landed[k] > (1 << 20))
            fail_msg("a server sending %lld bytes: exit %d in %.1f s, %lld bytes landed:\n%s",
                     lengths[k], rc[k], took[k], landed[k], err[k]);
        free(out[k]);
        free(err[k]);
    }
    expect_free(&e);
}

/*
 * Debug information where a distribution keeps it: a debuginfod server
 * (elfutils', on 127.0.0.1) serves the DWARF split off the stripped
 * libmpi.so, and with DEBUGINFOD_URLS alone (no MQD_DEBUGINFO_PATH) the
 * dump is the one made with the DWARF found locally: types for the DLL,
 * the calls' arguments, and the fetch is said on stderr.  A server that
 * refuses, or takes the connection and never answers, costs a bounded time
 * (the silent one a single DEBUGINFOD_TIMEOUT, named on stderr) and leaves
 * the known layout.
 */
static void test_mqdump__stripped_libmpi_through_debuginfod(void **state)
{
    (void)state;
    char rel[PATH_MAX], stripped[PATH_MAX], debug[PATH_MAX], dir[] = "/tmp/mqd-debuginfod.XXXXXX";
    assert_non_null(realpath(job_build_path(rel, sizeof rel, "stripped"), stripped));
    assert_non_null(realpath(job_build_path(rel, sizeof rel, "stripped/debug"), debug));
    /* The job first: a test that fails starting it leaves no server. */
    struct expect e;
    struct job job;
    start_stripped(&e, &job, dir);
    char db[PATH_MAX], cache[PATH_MAX], url[64], port[16];
    snprintf(db, sizeof db, "%s/db.sqlite", dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(port, sizeof port, "%d", free_port());
    snprintf(url, sizeof url, "http://127.0.0.1:%s", port);
    pid_t server = fork();
    assert_true(server >= 0);
    if (server == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execlp("debuginfod", "debuginfod", "-F", debug, "-p", port, "-d", db, (char *)NULL);
        _exit(127);
    }
    /* Serving once it has scanned its directory: ask until it answers,
     * each time with a cache of its own (the client remembers a miss). */
    char id_cmd[3 * PATH_MAX], soname[64];
    stripped_soname(soname, sizeof soname);
    int up = 0;
    for (int i = 0; i < 100 && !up; i++) {
        snprintf(id_cmd, sizeof id_cmd,
                 "DEBUGINFOD_URLS=%s DEBUGINFOD_CACHE_PATH=%s/probe%d debuginfod-find debuginfo "
                 "%s/%s >/dev/null 2>&1",
                 url, dir, i, stripped, soname);
        up = system(id_cmd) == 0;
        if (!up)
            usleep(200 * 1000);
    }
    char pid[16], *out[4], *err[4];
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    const char *args[] = {"--job", pid, "--json", "-v", "--dll", mqd_dll(), NULL};
    int rc[4];
    double took[4] = {0};
    setenv("MQD_DEBUGINFO_PATH", debug, 1);
    rc[0] = run_mqdump(&out[0], &err[0], args);
    unsetenv("MQD_DEBUGINFO_PATH");
    setenv("DEBUGINFOD_URLS", url, 1);
    setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
    rc[1] = run_mqdump(&out[1], &err[1], args);
    /* Nobody answering there: the known layout, in bounded time. */
    rc[2] = dump_through_port(free_port(), dir, "cache-dead", args, &out[2], &err[2], &took[2]);
    /* A server that takes the connection and never answers: one timeout
     * (mqdump's 5 s) for the whole dump, the failed fetch named. */
    int silent = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t salen = sizeof sa;
    assert_true(silent >= 0 && bind(silent, (struct sockaddr *)&sa, sizeof sa) == 0 &&
                listen(silent, 64) == 0 &&
                getsockname(silent, (struct sockaddr *)&sa, &salen) == 0);
    rc[3] = dump_through_port(ntohs(sa.sin_port), dir, "cache-silent", args, &out[3], &err[3],
                              &took[3]);
    close(silent);
    unsetenv("DEBUGINFOD_URLS");
    unsetenv("DEBUGINFOD_CACHE_PATH");
    released_and_stop(&job);
    kill(server, SIGTERM);
    waitpid(server, NULL, 0);
    remove_dir(dir);
    if (!up)
        fail_msg("the debuginfod server at %s never served %s's DWARF", url, soname);
    if (rc[0] || rc[1] || strcmp(out[0], out[1]) != 0 || strstr(err[1], "known layout"))
        fail_msg("through debuginfod (exit %d/%d) the dump differs from the local DWARF's, or "
                 "the DWARF was not found:\n%s\n---\n%s\n%s",
                 rc[0], rc[1], out[0], out[1], err[1]);
    /* The fetch is said, naming the file. */
    if (!strstr(err[1], "mqdump: fetching the debug information of ") || !strstr(err[1], soname))
        fail_msg("the fetch through debuginfod was not said:\n%s", err[1]);
    for (int k = 2; k < 4; k++)
        if ((allowed()->no_known_layout ? !says_no_layout(out[k], e.np)
                                        : rc[k] || !strstr(err[k], "known layout")) ||
            /* the silent server: one 5 s timeout beyond the refusing one's
             * dump, not one per file (the vDSO and libmpi.so: 10 s) */
            took[k] > (k == 2 ? 30 : took[2] + 9) ||
            (k == 3 && !strstr(err[3], "no answer within DEBUGINFOD_TIMEOUT")))
            fail_msg("a server %s: exit %d in %.1f s:\n%s", k == 2 ? "refusing" : "silent",
                     rc[k], took[k], err[k]);
    for (int i = 0; i < 4; i++) {
        free(out[i]);
        free(err[i]);
    }
    expect_free(&e);
}

/* A program whose own MPIR_dll_name names libmqd_mpich.so (samples/
 * named_dll.c): mqdump loads that DLL without --dll, not the libtvmpich.so
 * that libmpi.so's definition names, and the dump is exact. */
static void test_mqdump__executable_names_the_dll(void **state)
{
    (void)state;
    unsetenv("MQD_DLL");
    check_program("unexpected", "unexpected-named", NULL, &EXACT);
}

/*
 * An MPI entry point that tail-calls its body (MPICH 4.1+'s generated
 * bindings): tests/fixtures/tailcall_*.c.  With the library's symbols the
 * body's internal_Waitall (a ".constprop" clone of it, here) names the
 * call; stripped of them, the call instruction before the caller's return
 * address does, through a PLT, a .plt.sec or a GOT slot.  Either way the
 * process is in MPI_Waitall, called from wait_here at its line.
 */
static void test_mqdump__tail_called_entry_points(void **state)
{
    (void)state;
    static const char *const progs[] = {"prog_plt", "prog_noplt", "prog_cet"};
    static const char *const libs[] = {"sym", "stripped"};
    char src[PATH_MAX], line[512];
    const char *dir = getenv("MQD_SAMPLES_SRC");
    snprintf(src, sizeof src, "%s/../tests/fixtures/tailcall_prog.c", dir && *dir ? dir : "samples");
    FILE *f = fopen(src, "r");
    int want_line = 0;
    for (int n = 1; f && !want_line && fgets(line, sizeof line, f); n++)
        if (strstr(line, "/* tailcall: the line the test wants */"))
            want_line = n;
    if (f)
        fclose(f);
    assert_true(want_line > 0);
    for (int l = 0; l < 2; l++) {
        for (int p = 0; p < 3; p++) {
            char prog[PATH_MAX], libdir[PATH_MAX], rel[64];
            snprintf(rel, sizeof rel, "tests/tail/%s", progs[p]);
            job_build_path(prog, sizeof prog, rel);
            snprintf(rel, sizeof rel, "tests/tail/%s", libs[l]);
            job_build_path(libdir, sizeof libdir, rel);
            int ready[2];
            assert_int_equal(pipe(ready), 0);
            pid_t pid = fork();
            assert_true(pid >= 0);
            if (pid == 0) {
                dup2(ready[1], 3);
                setenv("LD_LIBRARY_PATH", libdir, 1);
                execl(prog, prog, (char *)NULL);
                _exit(127);
            }
            close(ready[1]);
            char c;
            assert_int_equal(read(ready[0], &c, 1), 1); /* in internal_Waitall */
            close(ready[0]);
            char spid[16], *out, *err, msg[256];
            snprintf(spid, sizeof spid, "%d", (int)pid);
            const char *args[] = {"--pid", spid, "--json", NULL};
            run_mqdump(&out, &err, args);
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            struct json *j = json_parse(out, msg, sizeof msg);
            if (!j)
                fail_msg("%s with %s: %s: %s", progs[p], libs[l], msg, err);
            const struct json *w = json_get(&json_get(j, "processes")->items[0], "where");
            if (!w || w->kind == JSON_NULL)
                fail_msg("%s with %s: not in MPI:\n%s", progs[p], libs[l], out);
            assert_string_equal(json_get(w, "call")->string, "MPI_Waitall");
            assert_string_equal(json_get(w, "function")->string, "wait_here");
            assert_int_equal(json_get(w, "line")->number, want_line);
            const struct json *why = json_get(w, "args_why");
            const struct json *from = json_get(w, "args_from");
            int tail = why && why->kind == JSON_STRING && strstr(why->string, "tail-called");
            int lib = from && from->kind == JSON_STRING &&
                      strstr(from->string, "the MPI library's debug information");
            int site = from && from->kind == JSON_STRING &&
                       strstr(from->string, "the call site in wait_here");
            /* Stripped: no frame to read arguments in, so its count and
             * requests come from the call site (or its reason says so). */
            if (l == 1 ? lib || !(site || tail) : !lib || tail)
                fail_msg("%s with %s: arguments from %s, not read because %s", progs[p],
                         libs[l], from && from->kind == JSON_STRING ? from->string : "nowhere",
                         why && why->kind == JSON_STRING ? why->string : "(none)");
            json_free(j);
            free(out);
            free(err);
        }
    }
}

/* Where each rank is: every rank of ring waits in MPI_Waitall, called by
 * sample_block at its line of samples/sample.c (unwound with libdwfl). */
static void test_mqdump__where_each_rank_is(void **state)
{
    (void)state;
    int want_line = job_source_line("sample.c", "MPI_Waitall(n, reqs, st);");
    assert_true(want_line > 0);
    struct job job;
    start(&job, "ring", 4);
    char pid[16], *out, *err;
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    const char *args[] = {"--job", pid, "--json", "--dll", mqd_dll(), NULL};
    struct json *j = run_json(args, 4, &out, &err);
    const struct json *procs = json_get(j, "processes");
    for (int i = 0; i < 4; i++) {
        const struct json *w = json_get(&procs->items[i], "where");
        assert_non_null(w);
        if (w->kind == JSON_NULL)
            fail_msg("rank %d: no where", i);
        assert_string_equal(json_get(w, "call")->string, "MPI_Waitall");
        assert_string_equal(json_get(w, "function")->string, "sample_block");
        const char *file = json_get(w, "file")->string;
        assert_non_null(file);
        size_t n = strlen(file);
        assert_true(n >= 8 && strcmp(file + n - 8, "sample.c") == 0);
        assert_int_equal(json_get(w, "line")->number, want_line);
        assert_int_equal(json_get(w, "thread")->number, job.ranks[i]);
    }
    json_free(j);
    free(out);
    free(err);
    snprintf(pid, sizeof pid, "%d", (int)job.ranks[2]);
    const char *targs[] = {"--pid", pid, NULL};
    int rc = run_mqdump(&out, &err, targs);
    char line[128];
    snprintf(line, sizeof line, "  in MPI_Waitall, called from sample_block at samples/sample.c:%d\n",
             want_line);
    if (!strstr(out, line))
        fail_msg("no \"%s\" in:\n%s%s", line, out, err);
    /* One rank alone: what it waits for is not in the dump, so the verdict
     * is that it cannot tell, and the exit status says so. */
    if (rc != 1 || !strstr(out, "cannot tell whether the job is deadlocked") ||
        strstr(out, "no deadlock found"))
        fail_msg("one rank of a ring: exit %d, want 1 and 'cannot tell':\n%s%s", rc, out, err);
    free(out);
    free(err);
    released_and_stop(&job);
}

/* The lines of text that hold what, counted. */
static int count_lines(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
        n += what == NULL || strstr(line, what) != NULL;
    }
    return n;
}

/*
 * The folded text view: a 64-rank ring reads in a screen.  Ranks 0-63 are
 * one group (rank 0's receive from 63 is "rank-1" like every other's), the
 * deadlock is one cycle of 64 explained in one folded line, and the whole
 * output is at most 25 lines; --full still shows all 64 processes.
 */
static void test_mqdump__folded_64_rank_ring(void **state)
{
    (void)state;
    struct job job;
    start(&job, "ring", 64);
    char pid[16], *out, *err;
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    const char *args[] = {"--job", pid, "--dll", mqd_dll(), NULL};
    int rc = run_mqdump(&out, &err, args);
    if (rc != 0)
        fail_msg("mqdump exited %d: %s", rc, err);
    static const char *const want[] = {
        "64 processes, all running ",
        "ranks [0-63] (64 processes, peers relative to each: rank+1 is the next, modulo the job)",
        "  in MPI_Waitall, called from sample_block at samples/sample.c:",
        "  communicator \"MPI_COMM_WORLD\" (size 64, rank = world rank)",
        "      pending  from rank-1 tag 7, 32 bytes",
        "DEADLOCK: a cycle of 64 processes, ranks [0-63] (every wait in it is needed)",
        "  [0-63] waits in MPI_Waitall at sample.c:", /* the call site */
        ": receive(source=rank-1, tag=7, comm=MPI_COMM_WORLD) - "
        "rank-1 has no matching send pending (it is in MPI_Waitall at sample.c:",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (count_lines(out, want[i]) != 1)
            fail_msg("not once: \"%s\" in:\n%s", want[i], out);
    int lines = count_lines(out, NULL);
    if (lines > 25)
        fail_msg("%d lines:\n%s", lines, out);
    free(out);
    free(err);
    const char *full[] = {"--job", pid, "--dll", mqd_dll(), "--full", NULL};
    rc = run_mqdump(&out, &err, full);
    assert_int_equal(rc, 0);
    assert_int_equal(count_lines(out, "  in MPI_Waitall, called from sample_block"), 64);
    assert_int_equal(count_lines(out, "rank 63 waits in MPI_Waitall at sample.c:"), 1);
    free(out);
    free(err);
    /* --stacks: one path from main, in three lines labelled [0-63]. */
    int ring_line = job_source_line("ring.c", "sample_block(&req, 1);");
    int block_line = job_source_line("sample.c", "MPI_Waitall(n, reqs, st);");
    const char *stacks[] = {"--job", pid, "--stacks", NULL};
    rc = run_mqdump(&out, &err, stacks);
    assert_int_equal(rc, 0);
    const char *tree = strstr(out, "where every process is: 64 stacks merged from main");
    if (!tree)
        fail_msg("no merged stacks in:\n%s%s", out, err);
    char want_main[64], want_block[64];
    snprintf(want_main, sizeof want_main, "main at ring.c:%d ", ring_line);
    snprintf(want_block, sizeof want_block, "  sample_block at sample.c:%d ", block_line);
    const char *deadlock = strstr(tree, "\nDEADLOCK");
    assert_non_null(deadlock);
    /* The MPI library's own threads, where it runs some, apart. */
    const char *threads = strstr(tree, "\nother threads (");
    if (allowed()->library_threads != (threads && threads < deadlock))
        fail_msg("other threads %s:\n%s", threads ? "shown" : "not shown", out);
    if (threads && threads < deadlock)
        deadlock = threads;
    char *section = strndup(tree, (size_t)(deadlock - tree));
    if (count_lines(section, NULL) != 4 || count_lines(section, "[0-63]") != 3 ||
        count_lines(section, want_main) != 1 || count_lines(section, want_block) != 1 ||
        count_lines(section, "    MPI_Waitall (libmpi.so") != 1 || strstr(out, "pending  from"))
        fail_msg("not one path main > sample_block > MPI_Waitall [0-63]:\n%s", out);
    free(section);
    free(out);
    free(err);
    released_and_stop(&job);
}

static char *slurp(const char *path);

static const struct json *only_child(const struct json *n, const char *function, const char *ranks)
{
    const struct json *c = json_get(n, "children");
    char got[256];
    if (!c || c->n != 1 || strcmp(json_get(&c->items[0], "function")->string, function) != 0 ||
        strcmp(json_ranks(&c->items[0], got, sizeof got), ranks) != 0)
        fail_msg("under %s: not one child %s [%s]", json_get(n, "function")->string, function,
                 ranks);
    return &c->items[0];
}

/*
 * The hidden rank: 8 ranks of `hidden`, rank 4 busy in relax (inlined into
 * main) while two chains wait on it.  The default view says where rank 4
 * is at work and whom it holds up; the JSON tree parts at the inlined
 * step, by line, with the right ranks on each side, the MPI library folded
 * into MPI_Waitall and libc into nanosleep; --stacks-graph renders.
 */
static void test_mqdump__stacks_find_the_hidden_rank(void **state)
{
    (void)state;
    int relax_line = job_source_line("hidden.c", "nanosleep(&ts, NULL);");
    int busy_line = job_source_line("hidden.c", "relax((double *)x, 64);");
    int wait_line = job_source_line("hidden.c", "exchange(rank < middle ? rank + 1 : rank - 1);");
    assert_true(relax_line > 0 && busy_line > 0 && wait_line > 0);
    char dir[] = "/tmp/mqd-stacks-XXXXXX", svg[64], dotfile[80];
    assert_non_null(mkdtemp(dir));
    snprintf(svg, sizeof svg, "%s/stacks.svg", dir);
    snprintf(dotfile, sizeof dotfile, "%s.dot", svg);
    struct job job;
    start(&job, "hidden", 8);
    char pid[16], *out, *err, want[160];
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    const char *plain[] = {"--job", pid, NULL};
    int rc = run_mqdump(&out, &err, plain);
    snprintf(want, sizeof want, "  not in MPI: in relax at samples/hidden.c:%d\n", relax_line);
    if (rc != 0 || !strstr(out, want) ||
        !strstr(out, "no deadlock found: 7 of 8 processes blocked in MPI") ||
        count_lines(out, "  rank 4, not in MPI: in relax at samples/hidden.c:") != 1 ||
        count_lines(out, "holds up ranks [0-3,5-7]") != 1)
        fail_msg("exit %d; not rank 4 in relax at line %d, holding up the rest:\n%s%s", rc,
                 relax_line, out, err);
    free(out);
    free(err);
    const char *args[] = {"--job", pid, "--json", "--stacks", "--stacks-graph", svg, NULL};
    rc = run_mqdump(&out, &err, args);
    released_and_stop(&job);
    char msg[256], got[256];
    struct json *j = json_parse(out, msg, sizeof msg);
    if (rc != 0 || !j)
        fail_msg("mqdump exited %d (%s): %s", rc, msg, err);
    const struct json *st = json_get(j, "stacks");
    assert_non_null(st);
    assert_int_equal(json_get(st, "processes")->number, 8);
    const struct json *roots = json_get(st, "shown");
    assert_int_equal(roots->n, 1);
    const struct json *m = &roots->items[0];
    assert_string_equal(json_get(m, "function")->string, "main");
    assert_string_equal(json_ranks(m, got, sizeof got), "0,1,2,3,4,5,6,7");
    const struct json *kids = json_get(m, "children");
    if (kids->n != 2)
        fail_msg("main has %d children, not 2 (waiting, busy)", kids->n);
    const struct json *waiting = &kids->items[0], *busy = &kids->items[1];
    assert_string_equal(json_get(waiting, "function")->string, "step");
    assert_string_equal(json_ranks(waiting, got, sizeof got), "0,1,2,3,5,6,7");
    assert_int_equal(json_get(waiting, "line")->number, wait_line);
    const struct json *n = only_child(waiting, "exchange", "0,1,2,3,5,6,7");
    n = only_child(n, "sample_block", "0,1,2,3,5,6,7");
    n = only_child(n, "MPI_Waitall", "0,1,2,3,5,6,7");
    assert_string_equal(json_get(n, "kind")->string, "mpi");
    assert_int_equal(json_get(n, "folded")->number, 1);
    assert_int_equal(json_get(n, "children")->n, 0);
    assert_string_equal(json_get(busy, "function")->string, "step");
    assert_string_equal(json_ranks(busy, got, sizeof got), "4");
    assert_int_equal(json_get(busy, "line")->number, busy_line);
    n = only_child(busy, "relax", "4");
    assert_int_equal(json_get(n, "inlined")->number, 1); /* from the DWARF */
    assert_int_equal(json_get(n, "line")->number, relax_line);
    n = json_get(n, "children");
    assert_int_equal(n->n, 1);
    assert_string_equal(json_get(&n->items[0], "kind")->string, "system");
    /* Every process's own frames are in the JSON too. */
    const struct json *t4 = json_get(&json_get(j, "processes")->items[4], "threads");
    assert_true(t4 && t4->n >= 1 && json_get(&t4->items[0], "frames")->n >= 4);
    json_free(j);
    char *dot = slurp(dotfile), *pic = slurp(svg);
    if (!dot || !pic || !strstr(pic, "<svg") || !strstr(pic, "relax") ||
        count_lines(dot, "[label=\"7:[0-3,5-7]\"]") < 4 ||
        count_lines(dot, "[label=\"1:[4]\"]") < 2)
        fail_msg("no picture of the tree in %s:\n%s", svg, dot ? dot : "(no DOT)");
    free(dot);
    free(pic);
    free(out);
    free(err);
    unlink(dotfile);
    unlink(svg);
    rmdir(dir);
}

/* The whole of a file, malloc'd (NULL if it cannot be read). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[4096];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = 2 * (len + n + 1);
            char *m = realloc(buf, cap);
            if (!m)
                break;
            buf = m;
        }
        memcpy(buf + len, chunk, n);
        len += n;
        buf[len] = '\0';
    }
    fclose(f);
    return buf;
}

/*
 * --graph: the 4-rank ring as DOT and rendered to SVG by Graphviz dot.
 * The DOT holds every process and exactly the four red waits of the
 * cycle, rank r to rank r-1; dot parses it (it made the SVG).
 */
static void test_mqdump__graph_shows_the_cycle(void **state)
{
    (void)state;
    char dir[] = "/tmp/mqd-graph-XXXXXX", svg[64], dotfile[80];
    assert_non_null(mkdtemp(dir));
    snprintf(svg, sizeof svg, "%s/ring.svg", dir);
    snprintf(dotfile, sizeof dotfile, "%s.dot", svg);
    struct job job;
    start(&job, "ring", 4);
    char pid[16], *out, *err;
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    const char *args[] = {"--job", pid, "--dll", mqd_dll(), "--full", "--graph", svg, NULL};
    int rc = run_mqdump(&out, &err, args);
    released_and_stop(&job);
    if (rc != 0)
        fail_msg("mqdump exited %d: %s", rc, err);
    char *dot = slurp(dotfile), *pic = slurp(svg);
    assert_non_null(dot);
    if (!pic || !strstr(pic, "<svg") || !strstr(pic, "rank 3"))
        fail_msg("no SVG of the ring in %s", svg);
    assert_int_equal(count_lines(dot, "[color=red, fontcolor=red"), 4);
    for (int r = 0; r < 4; r++) {
        char node[32], wait[32];
        snprintf(node, sizeof node, "  p%d [label=\"rank %d\\n", r, r);
        snprintf(wait, sizeof wait, "  p%d -> p%d [color=red", r, (r + 3) % 4);
        if (count_lines(dot, node) != 1 || count_lines(dot, wait) != 1)
            fail_msg("no \"%s\" or \"%s\" in:\n%s", node, wait, dot);
    }
    free(dot);
    free(pic);
    free(out);
    free(err);
    unlink(dotfile);
    unlink(svg);
    rmdir(dir);
}

/*
 * MPI-2 end to end in text: `spawn`'s launched ranks and the two processes
 * they spawned are one job, found through either launcher (hydra's table
 * lists only the launched ranks), named apart, with the messages between
 * them put on the right process, the deadlock across the worlds, and each
 * world in a box of the graph.
 */
static void test_mqdump__spawn_is_one_job(void **state)
{
    (void)state;
    static const char *const want[] = {
        "4 processes, all running ",
        "\nrank 0 (pid ",
        "\nworld 1 rank 0 (pid ",
        "\nworld 1 rank 1 (pid ",
        "      pending  from 1 (world 1 rank 1) tag 3, 4 bytes, buffer 0x",
        "      pending  from 0 (world 1 rank 0) tag 4, 1048576 bytes, buffer 0x0 (system)\n",
        "      pending  to 1 (rank 1) tag 4, 1048576 bytes, buffer 0x",
        "\nDEADLOCK: a cycle of 2 processes, ranks [0, world 1: 1] (every wait in it is needed)\n",
        "\n  rank 0 waits in MPI_Waitall at sample.c:",
        ": receive(source=1 (world 1 rank 1), tag=3, comm=mqd-spawn) - world 1 rank 1 has no "
        "matching send pending (it is in MPI_Waitall at sample.c:",
        "\nalso stuck, waiting on it: ranks [1, world 1: 0]\n",
    };
    /* Where the build keeps the messages between the worlds out of its
     * lists (compare.c): the job and its worlds, and "cannot tell" or the
     * very deadlock. */
    const char *unseen = allowed()->samples_unseen;
    int partial = unseen && strstr(unseen, "spawn ");
    size_t nwant = sizeof want / sizeof want[0];
    char dir[] = "/tmp/mqd-spawn-XXXXXX", dotfile[64];
    assert_non_null(mkdtemp(dir));
    snprintf(dotfile, sizeof dotfile, "%s/spawn.dot", dir);
    struct job job;
    start(&job, "spawn", 2);
    pid_t launchers[2] = {job.mpiexec, job.launcher};
    char msg[8192] = "";
    for (int l = 0; l < 2 && !msg[0]; l++) {
        char pid[16], *out = NULL, *err = NULL;
        snprintf(pid, sizeof pid, "%d", (int)launchers[l]);
        const char *args[] = {"--job", pid, "--dll", mqd_dll(), "--graph", dotfile, NULL};
        /* A child may still be leaving the barrier it announced with. */
        for (int attempt = 0; attempt <= 50; attempt++) {
            free(out);
            free(err);
            int rc = run_mqdump(&out, &err, args);
            msg[0] = '\0';
            /* Partly unseen: the worlds' ranks, and exit 1 ("cannot tell",
             * the launched ranks perhaps folded into one state) or the
             * deadlock and the ranks behind it. */
            int rc_ok = rc == 0 || (partial && rc == 1);
            for (size_t k = 0; k < nwant && !msg[0]; k++) {
                int needed = !partial || k == 0 || k == 2 || k == 3 || (rc == 0 && k >= 7);
                if (!rc_ok || (needed && !strstr(out, want[k])))
                    snprintf(msg, sizeof msg, "launcher %d: exit %d, no \"%s\" in:\n%s%s",
                             (int)launchers[l], rc, want[k], out, err);
            }
            if (!msg[0])
                break;
            usleep(100 * 1000);
        }
        free(out);
        free(err);
    }
    released_and_stop(&job);
    if (msg[0])
        fail_msg("%s", msg);
    char *dot = slurp(dotfile);
    assert_non_null(dot);
    if (count_lines(dot, "  subgraph cluster_world1 {") != 1 ||
        count_lines(dot, "  subgraph cluster_world2 {") != 1 ||
        !strstr(dot, "label=\"world 1 (spawned)\"") ||
        (!partial && count_lines(dot, "  p3 [label=\"world 1 rank 1\\n") != 1) ||
        (!partial && (count_lines(dot, "  p0 -> p3 [color=red") != 1 ||
                      count_lines(dot, "  p3 -> p0 [color=red") != 1 ||
                      count_lines(dot, "[color=red, fontcolor=red") != 2)))
        fail_msg("not the two worlds and their cycle in:\n%s", dot);
    free(dot);
    unlink(dotfile);
    rmdir(dir);
}

/* Text output of --job lists every rank with its pid, whichever way the
 * ranks are found: hydra's MPIR_proctable, or the descendants of a
 * launcher that has none (mqd-launch). */
static void test_mqdump__job_lists_every_rank(void **state)
{
    (void)state;
    struct job job;
    start(&job, "ring", 4);
    pid_t launchers[2] = {job.mpiexec, job.launcher};
    for (int l = 0; l < 2; l++) {
        char pid[16], *out, *err;
        snprintf(pid, sizeof pid, "%d", (int)launchers[l]);
        const char *args[] = {"--job", pid, "--dll", tvmpich(), "--stats", "--full", NULL};
        int rc = run_mqdump(&out, &err, args);
        int nproc = 0;
        for (const char *p = out; (p = strstr(p, "process ")); p++)
            nproc += p == out || p[-1] == '\n';
        for (int r = 0; r < 4; r++) {
            char line[64];
            snprintf(line, sizeof line, "process %d, rank %d,", (int)job.ranks[r], r);
            if (!strstr(out, line))
                fail_msg("launcher %d: no \"%s\" in:\n%s%s", (int)launchers[l], line, out, err);
        }
        /* A libtvmpich.so that shows none of this MPICH's queues leaves the
         * analysis unsure (1); every rank is still listed and dumped. */
        if (rc != 0 && !(rc == 1 && allowed()->tvmpich_blind))
            fail_msg("launcher %d: exit %d:\n%s%s", (int)launchers[l], rc, out, err);
        assert_int_equal(nproc, 4);
        assert_non_null(strstr(out, "communicator \"MPI_COMM_WORLD\" (size 4, rank 2)"));
        assert_non_null(strstr(out, "stats: "));
        free(out);
        free(err);
    }
    released_and_stop(&job);
}

/* --pid: ranks from the process environment; mqd's own DLL for MPICH with
 * no option, and with --target-dll the one MPIR_dll_name names (the cached
 * MPICH is root's or ours, not writable by others: trusted). */
static void test_mqdump__pids_and_the_dll_the_target_names(void **state)
{
    (void)state;
    struct job job;
    start(&job, "unexpected", 2);
    char p0[16], p1[16], *out, *err;
    snprintf(p0, sizeof p0, "%d", (int)job.ranks[0]);
    snprintf(p1, sizeof p1, "%d", (int)job.ranks[1]);
    unsetenv("MQD_DLL");
    char own[PATH_MAX];
    assert_non_null(realpath(mqd_dll(), own));
    for (int target = 0; target < 2; target++) {
        const char *args[] = {"--pid", p1, "--pid", p0, "--json",
                              target ? "--target-dll" : NULL, NULL};
        /* A libtvmpich.so that shows none of this MPICH's queues leaves the
         * analysis unsure (exit 1); the processes are dumped all the same. */
        int rc = run_mqdump(&out, &err, args);
        char msg[512];
        struct json *j = json_parse(out, msg, sizeof msg);
        if (!j || (rc != 0 && !(rc == 1 && target && allowed()->tvmpich_blind)))
            fail_msg("mqdump exited %d (%s): %s", rc, msg, err);
        const struct json *procs = json_get(j, "processes");
        assert_int_equal(procs->n, 2);
        for (int i = 0; i < 2; i++) {
            const struct json *p = &procs->items[i];
            int want_rank = i == 0 ? 1 : 0; /* in the order given */
            assert_int_equal(json_get(p, "pid")->number, job.ranks[want_rank]);
            assert_int_equal(json_get(p, "rank")->number, want_rank);
            /* libtvmpich is MPI-1 (no identities), mqd's DLL MPI-2. */
            assert_int_equal(json_get(p, "identity")->number, target ? -1 : want_rank);
            assert_string_equal(json_get(p, "dll")->string, target ? tvmpich() : own);
            assert_string_equal(json_get(p, "dll_source")->string, target ? "target" : "mqd");
            assert_int_equal(json_get(p, "error")->kind, JSON_NULL);
            assert_null(json_get(p, "host")->string); /* --pid: not known */
        }
        json_free(j);
        free(out);
        free(err);
    }
    released_and_stop(&job);
}

/* Open MPI's DLL, from Debian's package: it validates, and its own
 * message reaches the user when it cannot make sense of an MPICH process.
 * (It also prints warnings on stderr by itself.) */
static void test_mqdump__openmpi_dll_speaks_for_itself(void **state)
{
    (void)state;
    const char *ompi = getenv("MQD_OMPI_DLL");
    if (!ompi || !*ompi)
        fail_msg("MQD_OMPI_DLL is not set: run scripts/fetch-ompi-dll.sh (make check does)");
    char *out, *err;
    const char *check[] = {"--check-dll", ompi, NULL};
    assert_int_equal(run_mqdump(&out, &err, check), 0);
    assert_non_null(strstr(out, "Open MPI message queue support for parallel debuggers"));
    assert_non_null(strstr(out, "the MPI-1 protocol")); /* no mqs_setup_job */
    free(out);
    free(err);

    struct job job;
    start(&job, "unexpected", 2);
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)job.ranks[0]);
    const char *args[] = {"--pid", pid, "--dll", ompi, "--json", NULL};
    int rc = run_mqdump(&out, &err, args);
    char msg[512];
    struct json *j = json_parse(out, msg, sizeof msg);
    assert_non_null(j);
    assert_int_equal(rc, 1); /* not dumped, but unwound */
    const struct json *p = &json_get(j, "processes")->items[0];
    const char *e = json_get(p, "error")->string;
    assert_non_null(e);
    if (!strstr(e, "has no message queues: Failed to find some type"))
        fail_msg("Open MPI's message did not come through: %s", e);
    json_free(j);
    free(out);
    free(err);
    released_and_stop(&job);
}

/* --list: a running job is listed under its mpiexec with its rank count
 * and program, read from /proc without stopping anything. */
static void test_mqdump__list_finds_the_job(void **state)
{
    (void)state;
    struct job job;
    start(&job, "ring", 3);
    char *out, *err, want[128];
    const char *args[] = {"--list", NULL};
    int rc = run_mqdump(&out, &err, args);
    snprintf(want, sizeof want, "%8d %6d ", (int)job.mpiexec, 3);
    if (rc != 0 || !strstr(out, want) || !strstr(out, "/samples/ring"))
        fail_msg("exit %d; no line \"%s... ring\" in:\n%s%s", rc, want, out, err);
    free(out);
    free(err);
    const char *jargs[] = {"--list", "--json", NULL};
    struct json *j;
    char msg[256];
    rc = run_mqdump(&out, &err, jargs);
    assert_int_equal(rc, 0);
    assert_non_null(j = json_parse(out, msg, sizeof msg));
    const struct json *jobs = json_get(j, "jobs");
    int found = 0;
    for (int i = 0; i < jobs->n; i++)
        found += json_get(&jobs->items[i], "launcher")->number == job.mpiexec &&
                 json_get(&jobs->items[i], "ranks")->number == 3;
    assert_int_equal(found, 1);
    json_free(j);
    free(out);
    free(err);
    released_and_stop(&job);
}

static void test_mqdump__bad_command_lines(void **state)
{
    (void)state;
    static const struct {
        const char *args[6];
        int status;
        const char *says;
    } cases[] = {
        {{NULL}, 0, "MPI job"}, /* no target: the jobs on this node */
        {{"123", NULL}, 64, "unexpected argument '123'"},
        {{"--list", "--pid", "1", NULL}, 64, "--list takes no other argument"},
        {{"--pid", "abc", NULL}, 64, "'abc' is not a process id"},
        {{"--pid", "0", NULL}, 64, "is not a process id"},
        {{"--pid", "1", "--job", "1", NULL}, 64, "give --pid"},
        {{"--frobnicate", NULL}, 64, "usage"},
        {{"--pid", "1", "--stacks=all", NULL}, 64, "--stacks takes no value but 'full'"},
        {{"--agent", "h", "--stacks", "1:0", NULL}, 64, "--agent takes PID:RANK arguments"},
        {{"--pid", "2147483647", "--dll", "/nonexistent.so", NULL}, 2, "does not exist"},
        {{"--job", "2147483647", NULL}, 2, "does not exist"},
        {{"--check-dll", "/nonexistent.so", NULL}, 2, "cannot load /nonexistent.so"},
        {{"--help", NULL}, 0, "Exit status"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out, *err;
        int rc = run_mqdump(&out, &err, cases[i].args);
        if (rc != cases[i].status || (!strstr(err, cases[i].says) && !strstr(out, cases[i].says)))
            fail_msg("case %zu: exit %d (want %d), output \"%s%s\" (want \"%s\")", i, rc,
                     cases[i].status, out, err, cases[i].says);
        free(out);
        free(err);
    }
}

/* ------------------------------------------------ whose processes */

#define NOBODY 65534

/* What a test started: killed (and its stdin closed) by kill_started
 * however the test ends. */
static pid_t started[8];
static int holds[8], nstarted;

static int kill_started(void **state)
{
    (void)state;
    for (int i = nstarted - 1; i >= 0; i--) {
        close(holds[i]); /* a launcher ends when its stdin closes */
        kill(started[i], SIGKILL);
        waitpid(started[i], NULL, 0);
    }
    nstarted = 0;
    return 0;
}

/*
 * Run tests/NAME (fake_launcher or fake_rank) with args (NULL-terminated)
 * as user uid (0: as this test, root), in a child that dies with this
 * test; wait for its "ready N" and return its pid.  Tracked for
 * kill_started.
 */
static pid_t start_fixture(const char *name, uid_t uid, const char *const *args)
{
    char err[512];
    int n;
    assert_true(nstarted < 8);
    pid_t pid = job_fixture_start(name, uid, args, &holds[nstarted], &n, err, sizeof err);
    if (pid < 0)
        fail_msg("%s", err);
    started[nstarted++] = pid;
    return pid;
}

static int need_root(void)
{
    if (geteuid() == 0)
        return 1;
    print_message("SKIPPED: this test runs a launcher as user nobody (setuid): run it as "
                  "root\n");
    return 0;
}

static const char *fake_dll(void)
{
    static char path[PATH_MAX];
    job_build_path(path, sizeof path, "tests/fake/fake_ok.so");
    return path;
}

/* mqdump --job launcher --json with args after; its JSON, exit status in
 * *rc, stderr in *err. */
static struct json *job_json(pid_t launcher, const char *const *more, int *rc, char **out,
                             char **err)
{
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)launcher);
    const char *args[16] = {"--job", pid, "--json", "--dll", fake_dll()};
    for (int i = 0; more && more[i] && i < 10; i++)
        args[5 + i] = more[i];
    *rc = run_mqdump(out, err, args);
    char msg[512];
    struct json *j = json_parse(*out, msg, sizeof msg);
    if (!j)
        fail_msg("mqdump exited %d, no JSON (%s): %s%s", *rc, msg, *out, *err);
    return j;
}

/*
 * Finding 2 of issue 33: a launcher run by nobody whose table names a
 * process of root's and pid 1 on localhost makes root's mqdump --job
 * attach neither, and each says why; its own user's process is dumped.
 */
static void test_mqdump__job_attaches_only_the_launchers_user(void **state)
{
    (void)state;
    if (!need_root())
        skip();
    pid_t roots = start_fixture("fake_rank", 0, NULL);
    pid_t own = start_fixture("fake_rank", NOBODY, NULL);
    char r[16], o[16];
    snprintf(r, sizeof r, "%d", (int)roots);
    snprintf(o, sizeof o, "%d", (int)own);
    const char *largs[] = {"localhost", r, "localhost", "1", "localhost", o, NULL};
    pid_t launcher = start_fixture("fake_launcher", NOBODY, largs);
    int rc;
    char *out, *err;
    struct json *j = job_json(launcher, NULL, &rc, &out, &err);
    const struct json *procs = json_get(j, "processes");
    assert_int_equal(procs->n, 3);
    pid_t victims[2] = {roots, 1};
    for (int i = 0; i < 2; i++) {
        const struct json *p = &procs->items[i];
        char want[320];
        snprintf(want, sizeof want, "process %d belongs to user 0 (root), but the launcher %d "
                 "runs as user 65534: a launcher's table names only its own user's processes; "
                 "not attached", (int)victims[i], (int)launcher);
        const char *e = json_get(p, "error")->string;
        assert_int_equal(json_get(p, "pid")->number, victims[i]);
        if (!e || strcmp(e, want) != 0)
            fail_msg("process %d: error \"%s\", not \"%s\"", (int)victims[i], e ? e : "(none)",
                     want);
        assert_int_equal(json_get(p, "communicators")->n, 0);
    }
    const struct json *mine = &procs->items[2];
    if (json_get(mine, "error")->kind != JSON_NULL)
        fail_msg("the launcher's own process was not dumped: %s", json_get(mine, "error")->string);
    assert_int_equal(json_get(mine, "communicators")->n, 1);
    assert_int_equal(rc, 1); /* some process not dumped */
    json_free(j);
    free(out);
    free(err);
    long tracer;
    thread_state(roots, roots, &tracer);
    assert_int_equal(tracer, 0);
}

/* A launcher whose table names its own user's processes alone: root's
 * mqdump --job dumps every one of them. */
static void test_mqdump__job_of_the_launchers_own_processes(void **state)
{
    (void)state;
    if (!need_root())
        skip();
    pid_t a = start_fixture("fake_rank", NOBODY, NULL), b = start_fixture("fake_rank", NOBODY, NULL);
    char pa[16], pb[16];
    snprintf(pa, sizeof pa, "%d", (int)a);
    snprintf(pb, sizeof pb, "%d", (int)b);
    const char *largs[] = {"localhost", pa, "localhost", pb, NULL};
    pid_t launcher = start_fixture("fake_launcher", NOBODY, largs);
    int rc;
    char *out, *err;
    struct json *j = job_json(launcher, NULL, &rc, &out, &err);
    const struct json *procs = json_get(j, "processes");
    assert_int_equal(procs->n, 2);
    for (int i = 0; i < 2; i++) {
        const struct json *p = &procs->items[i];
        if (json_get(p, "error")->kind != JSON_NULL)
            fail_msg("rank %d not dumped: %s", i, json_get(p, "error")->string);
        assert_int_equal(json_get(p, "rank")->number, i);
        assert_int_equal(json_get(p, "communicators")->n, 1);
    }
    if (rc == 2)
        fail_msg("mqdump exited 2: %s", err);
    json_free(j);
    free(out);
    free(err);
}

/*
 * The same rule on another host: the front end passes the launcher's user
 * to the agent (--owner), which refuses root's process even though it
 * runs as root.  The "other host" is a UTS namespace (remote.sh ok).
 */
static void test_mqdump__agents_attach_only_the_launchers_user(void **state)
{
    (void)state;
    if (!need_root())
        skip();
    pid_t roots = start_fixture("fake_rank", 0, NULL);
    pid_t own = start_fixture("fake_rank", NOBODY, NULL);
    char r[16], o[16], remote[PATH_MAX + 32];
    snprintf(r, sizeof r, "%d", (int)roots);
    snprintf(o, sizeof o, "%d", (int)own);
    const char *src = getenv("MQD_TESTS_SRC");
    snprintf(remote, sizeof remote, "%s/fixtures/remote.sh ok {host}", src && *src ? src : "tests");
    const char *largs[] = {"node-b", r, "node-b", o, NULL};
    pid_t launcher = start_fixture("fake_launcher", NOBODY, largs);
    const char *more[] = {"--remote", remote, NULL};
    int rc;
    char *out, *err;
    struct json *j = job_json(launcher, more, &rc, &out, &err);
    const struct json *procs = json_get(j, "processes");
    assert_int_equal(procs->n, 2);
    char want[320];
    snprintf(want, sizeof want, "host node-b: process %d belongs to user 0 (root), but the "
             "job's launcher runs as user 65534: a launcher's table names only its own user's "
             "processes; not attached", (int)roots);
    const char *e = json_get(&procs->items[0], "error")->string;
    if (!e || strcmp(e, want) != 0)
        fail_msg("root's process on node-b: error \"%s\", not \"%s\" (stderr: %s)",
                 e ? e : "(none)", want, err);
    const struct json *mine = &procs->items[1];
    if (json_get(mine, "error")->kind != JSON_NULL)
        fail_msg("the launcher's own process on node-b was not dumped: %s",
                 json_get(mine, "error")->string);
    assert_int_equal(json_get(mine, "communicators")->n, 1);
    assert_int_equal(rc, 1);
    json_free(j);
    free(out);
    free(err);
}

/* Finding 7: --pid P --pid P dumps P once, not "already traced by
 * process N" (N mqdump itself). */
static void test_mqdump__repeated_pid_dumped_once(void **state)
{
    (void)state;
    pid_t pid = start_fixture("fake_rank", 0, NULL);
    char p[16];
    snprintf(p, sizeof p, "%d", (int)pid);
    const char *args[] = {"--pid", p, "--pid", p, "--json", "--dll", fake_dll(), NULL};
    char *out, *err;
    int rc = run_mqdump(&out, &err, args);
    char msg[256];
    struct json *j = json_parse(out, msg, sizeof msg);
    if (!j)
        fail_msg("exit %d, no JSON: %s%s", rc, out, err);
    const struct json *procs = json_get(j, "processes");
    if (procs->n != 1 || json_get(&procs->items[0], "error")->kind != JSON_NULL)
        fail_msg("not one process, dumped, in:\n%s%s", out, err);
    assert_int_equal(json_get(&procs->items[0], "pid")->number, pid);
    json_free(j);
    free(out);
    free(err);
}

/* Finding 7: what can never be attached says so, in its own words. */
static void test_mqdump__refusals_say_the_true_reason(void **state)
{
    (void)state;
    pid_t zombie = fork();
    assert_true(zombie >= 0);
    if (zombie == 0)
        _exit(0);
    started[nstarted] = zombie; /* reaped by kill_started */
    holds[nstarted++] = -1;
    long tracer;
    for (int i = 0; i < 2000 && thread_state(zombie, zombie, &tracer) != 'Z'; i++)
        usleep(1000);
    char z[16], want[160];
    snprintf(z, sizeof z, "%d", (int)zombie);
    snprintf(want, sizeof want, "process %d is a zombie (it has exited; its parent has not "
             "reaped it): nothing to dump", (int)zombie);
    const struct {
        const char *pid, *says;
    } cases[] = {
        {"1", "process 1 is the system's init process, never an MPI rank: not attached"},
        {z, want},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *args[] = {"--pid", cases[i].pid, NULL};
        char *out, *err;
        int rc = run_mqdump(&out, &err, args);
        if (rc != 2 || !strstr(out, cases[i].says))
            fail_msg("--pid %s: exit %d, no \"%s\" in:\n%s%s", cases[i].pid, rc, cases[i].says,
                     out, err);
        /* and the verdict says what really happened: nothing attached */
        if (!strstr(out, "cannot tell whether the job is deadlocked: no process could be "
                         "dumped or unwound\n"))
            fail_msg("--pid %s: not the verdict of nothing attached in:\n%s", cases[i].pid,
                     out);
        free(out);
        free(err);
    }
}

/* A process that was stopped and unwound, but whose queues no DLL can
 * read (here: no MPI at all), is not said to be "not unwound": it is not
 * blocked in MPI, and the exit status says it was unwound (1, not 2). */
static void test_mqdump__verdict_of_unwound_processes_without_queues(void **state)
{
    (void)state;
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        execlp("sleep", "sleep", "600", (char *)NULL);
        _exit(127);
    }
    started[nstarted] = child;
    holds[nstarted++] = -1;
    usleep(100 * 1000);
    char pid[16], *out, *err;
    snprintf(pid, sizeof pid, "%d", (int)child);
    const char *args[] = {"--pid", pid, NULL};
    int rc = run_mqdump(&out, &err, args);
    if (rc != 1 || !strstr(out, "no deadlock found: 0 of 1 processes blocked in MPI, 1 not "
                                "blocked, 0 waits\n") ||
        !strstr(out, "'s message queues (the waits are read from the calls instead)"))
        fail_msg("exit %d, not the verdict of an unwound process in:\n%s%s", rc, out, err);
    free(out);
    free(err);
}

/* --owner is the agent's, given by the front end: a user gives --job. */
static void test_mqdump__owner_is_the_agents(void **state)
{
    (void)state;
    static const struct {
        const char *args[6];
        const char *says;
    } cases[] = {
        {{"--pid", "1", "--owner", "0", NULL}, "--owner is --agent's"},
        {{"--agent", "h", "--owner", "x", "1:0", NULL}, "--owner takes a user id"},
        {{"--agent", "h", "--owner", "-1", "1:0", NULL}, "--owner takes a user id"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out, *err;
        int rc = run_mqdump(&out, &err, cases[i].args);
        if (rc != 64 || !strstr(err, cases[i].says))
            fail_msg("case %zu: exit %d, no \"%s\" in \"%s\"", i, rc, cases[i].says, err);
        free(out);
        free(err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mqdump__tvmpich_ring),
        cmocka_unit_test(test_mqdump__tvmpich_unexpected),
        cmocka_unit_test(test_mqdump__tvmpich_wildcards),
        cmocka_unit_test(test_mqdump__tvmpich_comms),
        cmocka_unit_test(test_mqdump__tvmpich_intercomm),
        cmocka_unit_test(test_mqdump__mqd_ring),
        cmocka_unit_test(test_mqdump__mqd_unexpected),
        cmocka_unit_test(test_mqdump__mqd_wildcards),
        cmocka_unit_test(test_mqdump__mqd_comms),
        cmocka_unit_test(test_mqdump__mqd_intercomm),
        cmocka_unit_test(test_mqdump__analysis_crossed),
        cmocka_unit_test(test_mqdump__analysis_anysource),
        cmocka_unit_test(test_mqdump__analysis_mismatch),
        cmocka_unit_test(test_mqdump__analysis_inflight),
        cmocka_unit_test(test_mqdump__analysis_hidden),
        cmocka_unit_test(test_mqdump__stacks_find_the_hidden_rank),
        cmocka_unit_test(test_mqdump__analysis_spawn),
        cmocka_unit_test(test_mqdump__analysis_nbcwait),
        cmocka_unit_test(test_mqdump__analysis_finalize),
        cmocka_unit_test(test_mqdump__analysis_ssend),
        cmocka_unit_test(test_mqdump__analysis_waitany),
        cmocka_unit_test(test_mqdump__analysis_splitcoll),
        cmocka_unit_test(test_mqdump__analysis_persist),
        cmocka_unit_test(test_mqdump__analysis_probe),
        cmocka_unit_test(test_mqdump__analysis_roots),
        cmocka_unit_test(test_mqdump__analysis_mixed),
        cmocka_unit_test(test_mqdump__stripped_libmpi_known_layout),
        cmocka_unit_test(test_mqdump__stripped_libmpi_through_debuginfod),
        cmocka_unit_test(test_mqdump__debuginfod_fetches_are_bounded),
        cmocka_unit_test(test_mqdump__executable_names_the_dll),
        cmocka_unit_test(test_mqdump__where_each_rank_is),
        cmocka_unit_test(test_mqdump__tail_called_entry_points),
        cmocka_unit_test(test_mqdump__job_lists_every_rank),
        cmocka_unit_test(test_mqdump__folded_64_rank_ring),
        cmocka_unit_test(test_mqdump__graph_shows_the_cycle),
        cmocka_unit_test(test_mqdump__spawn_is_one_job),
        cmocka_unit_test(test_mqdump__list_finds_the_job),
        cmocka_unit_test(test_mqdump__pids_and_the_dll_the_target_names),
        cmocka_unit_test(test_mqdump__openmpi_dll_speaks_for_itself),
        cmocka_unit_test(test_mqdump__bad_command_lines),
        cmocka_unit_test_teardown(test_mqdump__job_attaches_only_the_launchers_user,
                                  kill_started),
        cmocka_unit_test_teardown(test_mqdump__job_of_the_launchers_own_processes,
                                  kill_started),
        cmocka_unit_test_teardown(test_mqdump__agents_attach_only_the_launchers_user,
                                  kill_started),
        cmocka_unit_test_teardown(test_mqdump__repeated_pid_dumped_once, kill_started),
        cmocka_unit_test_teardown(test_mqdump__refusals_say_the_true_reason, kill_started),
        cmocka_unit_test_teardown(test_mqdump__verdict_of_unwound_processes_without_queues,
                                  kill_started),
        cmocka_unit_test(test_mqdump__owner_is_the_agents),
    };
    return cmocka_run_group_tests_name("mqdump", tests, NULL, NULL);
}
