/*
 * test_openmpi.c - real Open MPI jobs through mqd's libmqd_ompi.so, and
 * through Open MPI's own debug DLL.
 *
 * Open MPI 4.1.4 built from Debian's source package with libmpi's DWARF
 * (scripts/build-openmpi.sh, $MQD_OPENMPI_PREFIX) runs every sample, built
 * with its mpicc ($MQD_BUILD/ompi/NAME), under its mpirun (pml ob1).  Each
 * held job is dumped twice:
 *
 * - with the plain `mqdump --job PID`, as a user types it: mqdump must
 *   choose mqd's libmqd_ompi.so by itself and show exactly what the
 *   sample's .expect promises, within only what Open MPI itself does
 *   otherwise than MPICH (compare_mqd_ompi_limits in tests/compare.c, each
 *   with its source line); the analysis must report exactly the .expect's
 *   deadlocks (where a sample's processes are all in the dump);
 *
 * - with `--target-dll`: the DLL the target names (libompi_dbg_msgq.so),
 *   allowing for what that DLL is known to get wrong (compare_ompi_limits),
 *   its analysis exact or, where the DLL hides what a deadlock rests on,
 *   honestly "cannot tell" (never a wrong deadlock).
 *
 * Every rank must be in the MPI call its `where` lines name, with the
 * arguments they give, read through libmpi's DWARF; and after each dump
 * every rank must be running and untraced.
 *
 * Environment: MQD_BUILD, MQD_OPENMPI_PREFIX, MQD_SAMPLES_SRC; MQD_TEST_FILTER
 * (a cmocka pattern) runs only the tests it matches.
 */
#define _GNU_SOURCE
#include "tests/compare.h"
#include "tests/expect.h"
#include "tests/joblaunch.h"
#include "tests/json.h"
#include "tests/procstate.h"

#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

struct ompi_case {
    const char *sample;
    /* Why the analysis may not tell under Open MPI's DLL; NULL: the
     * deadlocks (or their absence) must be exactly the .expect's. */
    const char *blind;
    /* The same under mqd's DLL: only where processes are not in the dump. */
    const char *mqd_blind;
    /* Why the sample cannot hold its state under Open MPI (its blocking
     * call returns); NULL: it holds.  Checked: a rank must end. */
    const char *returns;
    /* A line the plain dump under mqd's DLL shows: a request an MPI_Wait*
     * waits on, decoded from the program's MPI_Request (a pointer). */
    const char *waited;
};

/* Why the analysis may not tell, sample by sample. */
#define WAITED "the requests an MPI_Wait* waits on: their completion is read as one byte " \
               "of a pointer"
#define PROBED "a probe could match an unexpected message, and the DLL shows none"
#define NBC "a nonblocking collective's requests have negative tags, which the DLL hides"

static const struct ompi_case cases[] = {
    {.sample = "finalize"},
    {.sample = "ssend"},
    {.sample = "mismatch"},
    {.sample = "roots"},
    {.sample = "inflight"},
    {.sample = "hidden"},
    {.sample = "persist",
     .waited = ": persistent send to 1 tag 8 on \"MPI_COMM_WORLD\", pending"},
    {.sample = "probe", .blind = PROBED},
    /* Only ranks 1 and 2 (a synchronous send to a rank in MPI_Finalize)
     * are certain: rank 0 probes, rank 3 is in MPI_Waitany. */
    {.sample = "mixed", .blind = PROBED "; " WAITED},
    {.sample = "ring", .blind = WAITED,
     .waited = "request: receive from rank-1 tag 7 on \"MPI_COMM_WORLD\", pending"},
    {.sample = "anysource", .blind = WAITED},
    {.sample = "crossed", .blind = WAITED},
    {.sample = "wildcards", .blind = WAITED},
    {.sample = "comms", .blind = WAITED},
    {.sample = "intercomm", .blind = WAITED},
    {.sample = "unexpected", .blind = WAITED},
    {.sample = "waitany", .blind = WAITED,
     .waited = "request: receive from rank+1 tag 4 on \"MPI_COMM_WORLD\", pending"},
    {.sample = "nbcwait", .blind = NBC},
    /* Which communicator each MPI_Barrier is on: without handles, only a
     * predefined one is known (by name). */
    {.sample = "splitcoll", .blind = "the barriers are on unnamed communicators, and the "
                                     "DLL gives no communicator handles"},
    /* orterun fills MPIR_proctable once, for the launched job only
     * (orte/orted/orted_submit.c:2491, orte_debugger_init_after_spawn):
     * the spawned children are not in it, so --job shows the parents
     * alone, and the cycle through a child cannot be seen. */
    {.sample = "spawn", .blind = "the spawned world is not in orterun's MPIR_proctable",
     .mqd_blind = "the spawned world is not in orterun's MPIR_proctable"},
    /* Open MPI's libnbc gives each nonblocking collective the next tag of
     * its communicator (ompi/mca/coll/libnbc/nbc.c:710), whatever the
     * collective, and its messages match by tag and peer alone (462, 497):
     * the mismatched collectives' messages meet each other's, and the
     * MPI_Wait the sample means to hang in returns. */
    {.sample = "nbcmix", .returns = "Open MPI's libnbc lets the mismatched MPI_Iscan and "
                                    "MPI_Iallreduce complete each other"},
    {.sample = "nbcorder", .returns = "Open MPI's libnbc lets the MPI_Iallreduce and MPI_Ibcast "
                                      "started in opposite orders complete each other"},
};

/* Keep only what e promises of the launched world (spawn's parents), a
 * peer in another world, which is not in the dump, without identity. */
static void only_launched_world(struct expect *e)
{
    int n = 0;
    for (int i = 0; i < e->nops; i++)
        if (e->ops[i].gpeer >= EXPECT_WORLD)
            e->ops[i].gpeer = EXPECT_ANY;
    for (int i = 0; i < e->ncomms; i++)
        if (e->comms[i].rank < EXPECT_WORLD)
            e->comms[n++] = e->comms[i];
    e->ncomms = n;
    n = 0;
    for (int i = 0; i < e->nops; i++)
        if (e->ops[i].rank < EXPECT_WORLD)
            e->ops[n++] = e->ops[i];
    e->nops = n;
    e->nworlds = 1;
}

/* Which DLL dumps, and how the dump is judged. */
struct dll_run {
    const char *option; /* mqdump's option that chooses it, or NULL */
    const char *file, *source; /* the DLL's file name, the JSON's dll_source */
    const struct dll_limits *limits;
    int mqd; /* mqd's own: the analysis is exact but where mqd_blind says */
};

static const struct dll_run mqd_run = {NULL, "/libmqd_ompi.so", "mqd",
                                       &compare_mqd_ompi_limits, 1};
static const struct dll_run target_run = {"--target-dll", "/libompi_dbg_msgq.so", "target",
                                          &compare_ompi_limits, 0};

/* Every process dumped by the run's DLL, none with an error, each where
 * call with its arguments' source named. */
static int check_dll(const struct json *j, const struct dll_run *run, char *msg, size_t len)
{
    const struct json *ps = json_get(j, "processes");
    for (int i = 0; ps && i < ps->n; i++) {
        const struct json *p = &ps->items[i];
        const struct json *dll = json_get(p, "dll"), *src = json_get(p, "dll_source");
        if (!dll || dll->kind != JSON_STRING || !strstr(dll->string, run->file) || !src ||
            src->kind != JSON_STRING || strcmp(src->string, run->source) != 0) {
            snprintf(msg, len, "process %d not dumped by %s (%s)", i, run->file + 1,
                     run->source);
            return -1;
        }
        const struct json *w = json_get(p, "where");
        const struct json *args = w && w->kind == JSON_OBJECT ? json_get(w, "args") : NULL;
        const struct json *from = args ? json_get(w, "args_from") : NULL;
        if (args && args->kind == JSON_OBJECT && args->n > 0 &&
            (!from || from->kind != JSON_STRING ||
             !strstr(from->string, "the MPI library's debug information"))) {
            snprintf(msg, len, "process %d: its call's arguments not from libmpi's DWARF", i);
            return -1;
        }
    }
    return 0;
}

/* The analysis: exactly e's; or, where the case is blind under the run's
 * DLL, only what e's deadlocks hold, and "unknown" if it found none.
 * *how says which. */
static int check_analysis(const struct json *j, const struct expect *e,
                          const struct ompi_case *c, const struct dll_run *run,
                          const char **how, char *msg, size_t len)
{
    const char *blind = run->mqd ? c->mqd_blind : c->blind;
    *how = "exact";
    if (compare_deadlock(j, e, msg, (int)len) == 0)
        return 0;
    const struct json *a = json_get(j, "deadlock");
    const struct json *dls = a ? json_get(a, "deadlocks") : NULL;
    const struct json *verdict = a ? json_get(a, "verdict") : NULL;
    char within[512] = "";
    if (blind && dls && dls->kind == JSON_ARRAY && verdict && verdict->kind == JSON_STRING &&
        compare_deadlock_within(j, e, within, sizeof within) == 0 &&
        strcmp(verdict->string, dls->n ? "deadlock" : "unknown") == 0) {
        *how = dls->n ? "part of the deadlock" : "cannot tell";
        return 0;
    }
    size_t used = strlen(msg);
    snprintf(msg + used, len - used, " (%s%s%s)", blind ? blind : "must be exact",
             within[0] ? "; " : "", within);
    return -1;
}

/*
 * Dump job (held in e's state) through run's DLL and judge it: 0, or -1
 * with why in msg.  A rank that announces its state before its blocking
 * call (a collective's rounds) is dumped again until it has settled (5 s).
 */
static int dump_and_compare(const struct ompi_case *c, const struct expect *e, struct job *job,
                            const struct dll_run *run, char *msg, size_t len)
{
    char pid[16], *out = NULL, *errout = NULL;
    snprintf(pid, sizeof pid, "%d", (int)job->mpiexec);
    const char *args[] = {"--job", pid, "--json", run->option, NULL};
    struct json *j = NULL;
    int rc = -1, ok = 0;
    const char *how = "";
    for (int attempt = 0;; attempt++) {
        rc = job_run_mqdump(args, NULL, &out, &errout);
        j = out ? json_parse(out, msg, len) : NULL;
        ok = rc >= 0 && rc != 2 && j && check_dll(j, run, msg, len) == 0 &&
             compare_where(j, e, msg, (int)len) == 0 &&
             compare_dump(j, e, job, run->limits, msg, (int)len) == 0 &&
             check_analysis(j, e, c, run, &how, msg, len) == 0;
        if (ok || attempt == 50)
            break;
        json_free(j);
        free(out);
        free(errout);
        usleep(100 * 1000);
    }
    if (!ok && (rc < 0 || rc == 2))
        snprintf(msg, len, "mqdump exited %d: %s", rc, errout ? errout : "");
    for (int r = 0; ok && r < job->np; r++) {
        char why[256];
        if (proc_released(job->ranks[r], why, sizeof why) != 0)
            ok = 0, snprintf(msg, len, "after mqdump: %s", why);
    }
    if (ok) {
        const struct json *unseen = json_get(json_get(j, "deadlock"), "unseen");
        print_message("%s, %s: analysis %s%s%s\n", c->sample, run->file + 1, how,
                      strcmp(how, "exact") ? "; unseen: " : "",
                      strcmp(how, "exact") && unseen && unseen->n ? unseen->items[0].string
                                                                 : "");
    } else {
        size_t used = strlen(msg);
        snprintf(msg + used, len - used, "\n%s", out ? out : "");
    }
    json_free(j);
    free(out);
    free(errout);
    return ok ? 0 : -1;
}

/* The plain dump of job shows c's waited line: 0, or -1 with why in msg. */
static int check_waited(const struct ompi_case *c, struct job *job, char *msg, size_t len)
{
    char pid[16], *out = NULL, *errout = NULL;
    snprintf(pid, sizeof pid, "%d", (int)job->mpiexec);
    const char *args[] = {"--job", pid, NULL};
    int rc = job_run_mqdump(args, NULL, &out, &errout);
    int ok = rc >= 0 && rc != 2 && out && strstr(out, c->waited);
    if (!ok)
        snprintf(msg, len, "the plain dump (exit %d) does not show \"%s\":\n%s", rc, c->waited,
                 out ? out : errout ? errout : "");
    free(out);
    free(errout);
    return ok ? 0 : -1;
}

static void run_case(const struct ompi_case *c)
{
    char name[64], err[512], mpirun[PATH_MAX];
    static char msg[16384];
    const char *prefix = getenv("MQD_OPENMPI_PREFIX");
    assert_non_null(prefix);
    snprintf(mpirun, sizeof mpirun, "%s/bin/mpirun", prefix);
    snprintf(name, sizeof name, "ompi/%s", c->sample);
    struct expect e;
    if (expect_load_sample(c->sample, &e, err, sizeof err) != 0)
        fail_msg("%s", err);
    only_launched_world(&e);
    struct job job;
    if (job_start_in(&job, name, e.np, NULL, mpirun, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
    if (c->returns) {
        int gone = job_rank_ends(&job, 10);
        job_stop(&job);
        expect_free(&e);
        if (!gone)
            fail_msg("%s holds under Open MPI now (was: %s): compare it with its .expect",
                     name, c->returns);
        print_message("%s: cannot hold under Open MPI: %s\n", name, c->returns);
        return;
    }
    msg[0] = '\0';
    int rc = dump_and_compare(c, &e, &job, &mqd_run, msg, sizeof msg);
    if (rc == 0 && c->waited)
        rc = check_waited(c, &job, msg, sizeof msg);
    if (rc == 0)
        rc = dump_and_compare(c, &e, &job, &target_run, msg, sizeof msg);
    job_stop(&job);
    expect_free(&e);
    if (rc != 0)
        fail_msg("%s: %s", name, msg);
}

static const struct ompi_case *find_case(const char *sample)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(cases[i].sample, sample) == 0)
            return &cases[i];
    return NULL;
}

/* Every sample that promises a state (SAMPLE.expect) is run here. */
static void test_openmpi__every_sample_has_a_case(void **state)
{
    (void)state;
    const char *dir = getenv("MQD_SAMPLES_SRC");
    char pattern[PATH_MAX];
    glob_t g;
    snprintf(pattern, sizeof pattern, "%s/*.expect", dir && *dir ? dir : "samples");
    assert_int_equal(glob(pattern, 0, NULL, &g), 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char name[64];
        const char *base = strrchr(g.gl_pathv[i], '/');
        snprintf(name, sizeof name, "%s", base ? base + 1 : g.gl_pathv[i]);
        *strrchr(name, '.') = '\0';
        if (!find_case(name))
            fail_msg("sample %s is not run under Open MPI: add it to cases[]", name);
    }
    globfree(&g);
}

#define OMPI_TEST(name)                                                                       \
    static void test_openmpi__##name(void **state)                                            \
    {                                                                                         \
        (void)state;                                                                          \
        run_case(find_case(#name));                                                           \
    }
OMPI_TEST(finalize)
OMPI_TEST(ssend)
OMPI_TEST(mismatch)
OMPI_TEST(probe)
OMPI_TEST(roots)
OMPI_TEST(mixed)
OMPI_TEST(inflight)
OMPI_TEST(hidden)
OMPI_TEST(ring)
OMPI_TEST(anysource)
OMPI_TEST(crossed)
OMPI_TEST(wildcards)
OMPI_TEST(comms)
OMPI_TEST(intercomm)
OMPI_TEST(unexpected)
OMPI_TEST(nbcwait)
OMPI_TEST(nbcmix)
OMPI_TEST(nbcorder)
OMPI_TEST(waitany)
OMPI_TEST(splitcoll)
OMPI_TEST(persist)
OMPI_TEST(spawn)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_openmpi__every_sample_has_a_case),
        cmocka_unit_test(test_openmpi__finalize),  cmocka_unit_test(test_openmpi__ssend),
        cmocka_unit_test(test_openmpi__mismatch),  cmocka_unit_test(test_openmpi__probe),
        cmocka_unit_test(test_openmpi__roots),     cmocka_unit_test(test_openmpi__mixed),
        cmocka_unit_test(test_openmpi__inflight),  cmocka_unit_test(test_openmpi__hidden),
        cmocka_unit_test(test_openmpi__ring),      cmocka_unit_test(test_openmpi__anysource),
        cmocka_unit_test(test_openmpi__crossed),   cmocka_unit_test(test_openmpi__wildcards),
        cmocka_unit_test(test_openmpi__comms),     cmocka_unit_test(test_openmpi__intercomm),
        cmocka_unit_test(test_openmpi__unexpected), cmocka_unit_test(test_openmpi__nbcwait),
        cmocka_unit_test(test_openmpi__nbcmix),    cmocka_unit_test(test_openmpi__nbcorder),
        cmocka_unit_test(test_openmpi__waitany),   cmocka_unit_test(test_openmpi__splitcoll),
        cmocka_unit_test(test_openmpi__persist),   cmocka_unit_test(test_openmpi__spawn),
    };
    /* MQD_TEST_FILTER=test_openmpi__ring: only the tests it matches
     * (cmocka's pattern), one sample at a time while developing. */
    const char *only = getenv("MQD_TEST_FILTER");
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
