/*
 * test_stock.c - the plain command on the MPI a distribution installs.
 *
 * Debian's own MPICH 4.0.2 (ch4:ucx, configured without
 * --enable-debuginfo: no queues for debuggers, libmpich stripped),
 * unpacked by scripts/fetch-stock-mpich.sh, runs samples built against it
 * by scripts/stock-samples.sh at -O2 -g and at -O0 -g.  mqd's DLL knows
 * that build (mpich_defs/stock_builds.h): it shows each rank's
 * communicators, and the requests behind an MPI_Wait*'s handles, but no
 * queue (no send is recorded, and UCX matches the receives itself).  What
 * `mqdump --job PID` says comes from the calls the ranks are blocked in,
 * their arguments (at -O2 the program's DWARF describes them at each call
 * site, at -O0 nothing does; the 7th and later from the caller's stack at
 * both) and their requests.
 *
 * Each sample's deadlock is exactly the members listed (none: none, or it
 * cannot be told), with the line given, and a verdict that rests on the
 * job having stopped moving says so; the exit status is 0 for a verdict, 1
 * for "cannot tell".  No sample that is not deadlocked ever is.  Every
 * rank is left running.
 *
 * Under Debian's own Open MPI 4.1.4 (scripts/fetch-stock-ompi.sh, samples
 * in $MQD_BUILD/stock/ompi, run by its orterun), libmpi's DWARF is gone too
 * (Debian moves it into a debug-symbols package), but mqd's libmqd_ompi.so
 * knows the layout of that very build (ompi_defs/layouts.h), which it uses
 * once the process has shown itself to be it: the plain command shows the
 * queues of ring, mismatch, unexpected and wildcards exactly as their
 * .expect files say (within what Open MPI does otherwise than MPICH,
 * tests/compare.c), with their exact verdicts.  Run with pml ucx, which
 * matches inside UCX, it says so once for the job, and the analysis goes
 * by the calls.
 *
 * Open MPI's own DLL, as an installed Open MPI names it ($MQD_DLL here: the
 * unpacked one is not where the library says), finds no types, says so
 * once for the job with what to do, and its WARNING on stderr is written
 * once, however many ranks; the calls alone then say what they can.  Open
 * MPI's MPI_COMM_WORLD is an object the program reaches through its GOT,
 * which the call sites do not describe: the communicator is not known, and
 * a rank names some process of the job.
 *
 * Environment: MQD_BUILD (the stock samples in $MQD_BUILD/stock); run from
 * the source tree (scripts/fetch-stock-ompi.sh).
 */
#define _GNU_SOURCE
#include "tests/compare.h"
#include "tests/expect.h"
#include "tests/joblaunch.h"
#include "tests/json.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

struct stock_case {
    const char *sample;
    int np;
    /* -O2: the deadlock's ranks ("0,1"), NULL for none; then a line the
     * text must hold (a wait, or why it cannot tell). */
    const char *members;
    const char *says;
    /* -O0: the deadlock's ranks, where what decides it is read at -O0 too
     * (arguments passed on the stack) or not needed; NULL: none.  Its line
     * (NULL: says). */
    const char *o0_members;
    const char *o0_says;
    /* -O2: a line the dump shows (a request behind MPI_Wait*), or NULL. */
    const char *shows;
};

/* Open MPI's ranks are unwound, not dumped: the calls alone.  At -O0 a
 * peer in MPI_Finalize, or in the same kind of call, is no partner
 * whatever the arguments. */
static const struct stock_case ompi_cases[] = {
    {"finalize", 2, "0,1",
     "rank 0 waits in MPI_Recv(source=1, tag=5, comm=?) at finalize.c:16 - rank 1 is blocked in "
     "a call that is no matching send (it is in MPI_Finalize at finalize.c:18: it will never send "
     "or receive again)", "0,1",
     "rank 0 waits in MPI_Recv(source=?, tag=?, comm=?) at finalize.c:16 - rank 1 is blocked in "
     "a call that is no matching send (it is in MPI_Finalize", NULL},
    /* Rank 1's receive names rank 0 of a communicator not known: ranks 0
     * and 2 both, each in MPI_Barrier. */
    {"mismatch", 3, "0,1,2",
     "rank 1 waits in MPI_Recv(source=0, tag=5, comm=?) at mismatch.c:20 - rank 2 is blocked in "
     "a call that is no matching send (it is in MPI_Barrier at mismatch.c:22)", NULL, NULL, NULL},
    {"probe", 2, "0,1",
     "rank 0 waits in MPI_Probe(source=1, tag=7, comm=?) at probe.c:18 - rank 1 is blocked in a "
     "call that is no matching send (it is in MPI_Probe at probe.c:18)", "0,1",
     "waits in MPI_Probe(source=?, tag=?, comm=?) at probe.c:18 - rank", NULL},
    {"ssend", 2, "0,1",
     "rank 0 waits in MPI_Ssend(dest=1, tag=3, comm=?) at ssend.c:22 - rank 1 is blocked in a "
     "call that is no matching receive (it is in MPI_Ssend at ssend.c:22)", "0,1",
     "waits in MPI_Ssend(dest=?, tag=?, comm=?) at ssend.c:22 - rank", NULL},
    /* MPI_Gather's root and comm, its 7th and 8th arguments, from the
     * caller's stack, -O0 or -O2. */
    {"roots", 2, "0,1",
     "rank 0 waits in MPI_Gather(comm=MPI_COMM_WORLD, root=0) at roots.c:16 - rank 1 calls it "
     "with root 1: the roots must agree", "0,1", NULL, NULL},
    {"inflight", 3, NULL,
     "what rank 0 waits for in MPI_Wait (the operations of its requests are in the MPI "
     "library's queues, which cannot be read)", NULL, NULL, NULL},
    {"ring", 4, NULL, "waits for in MPI_Waitall (the operations of its requests", NULL, NULL,
     NULL},
    {"hidden", 4, NULL, "waits for in MPI_Waitall (the operations of its requests", NULL, NULL,
     NULL},
};

static const struct stock_case cases[] = {
    /* Rank 1 in MPI_Finalize sends nothing again: rank 0's receive waits
     * for it whatever its arguments, which -O0 does not read. */
    {"finalize", 2, "0,1",
     "rank 0 waits in MPI_Recv(source=1, tag=5, comm=MPI_COMM_WORLD) at finalize.c:16 - rank 1 is "
     "blocked in a call that is no matching send (it is in MPI_Finalize at finalize.c:18: it "
     "will never send or receive again)", "0,1",
     "rank 0 waits in MPI_Recv(source=?, tag=?, comm=?) at finalize.c:16 - rank 1 is blocked in "
     "a call that is no matching send (it is in MPI_Finalize", NULL},
    {"mismatch", 3, "0,1",
     "rank 1 waits in MPI_Recv(source=0, tag=5, comm=MPI_COMM_WORLD) at mismatch.c:20 - rank 0 "
     "is blocked in a call that is no matching send (it is in MPI_Barrier at mismatch.c:22)",
     NULL, NULL, NULL},
    /* Both probe: neither sends, whatever the arguments. */
    {"probe", 2, "0,1",
     "[0-1] waits in MPI_Probe(source=rank+1, tag=7, comm=MPI_COMM_WORLD) at probe.c:18 - "
     "rank+1 is blocked in a call that is no matching send (it is in MPI_Probe at probe.c:18)",
     "0,1", "waits in MPI_Probe(source=?, tag=?, comm=?) at probe.c:18 - rank", NULL},
    {"ssend", 2, "0,1",
     "[0-1] waits in MPI_Ssend(dest=rank+1, tag=3, comm=MPI_COMM_WORLD) at ssend.c:22 - rank+1 "
     "is blocked in a call that is no matching receive (it is in MPI_Ssend at ssend.c:22)",
     "0,1", "waits in MPI_Ssend(dest=?, tag=?, comm=?) at ssend.c:22 - rank", NULL},
    /* MPI_Gather's root and comm are its 7th and 8th arguments, passed on
     * the stack, which GCC's call sites do not describe: read from the
     * caller's stack where they validate, -O0 or -O2. */
    {"roots", 2, "0,1",
     "rank 0 waits in MPI_Gather(comm=MPI_COMM_WORLD, root=0) at roots.c:16 - rank 1 calls it "
     "with root 1: the roots must agree", "0,1", NULL, NULL},
    /* MPI_Wait*: by the requests behind their handles (read at -O2). */
    {"inflight", 3, NULL, "no deadlock found: 2 of 3 processes blocked in MPI, 1 not blocked",
     NULL, NULL, NULL},
    {"ring", 4, "0,1,2,3",
     "[0-3] waits in MPI_Waitall at sample.c:63: receive(source=?, tag=?, comm=?) - rank+1 is "
     "blocked in a call that is no matching send (it is in MPI_Waitall at sample.c:63)", NULL,
     NULL, NULL},
    {"hidden", 4, NULL, "no deadlock found: 3 of 4 processes blocked in MPI, 1 not blocked",
     NULL, NULL, NULL},
    {"wildcards", 3, "0,1,2",
     "[0-2] waits in MPI_Waitall at sample.c:63: receive(source=?, tag=?, comm=?) - rank-1 is "
     "blocked in a call that is no matching send (it is in MPI_Waitall at sample.c:63)", NULL,
     NULL, NULL},
    {"waitany", 2, "0,1",
     "[0-1] waits in MPI_Waitany at waitany.c:17: receive(source=?, tag=?, comm=?) - rank+1 is "
     "blocked in a call that is no matching send (it is in MPI_Waitany at waitany.c:17)", NULL,
     NULL, NULL},
    /* Rank 0's MPI_Wait is on its MPI_Ireduce (its request: the schedule's
     * tag, the member it receives from next); rank 1, in MPI_Barrier, has
     * started no nonblocking collective. */
    {"nbcwait", 2, "0,1",
     "rank 0 waits in MPI_Wait at nbcwait.c:23: nonblocking collective(comm=MPI_COMM_WORLD) - "
     "rank 1 has not entered it or a matching one (it is in MPI_Barrier at nbcwait.c:26)", NULL,
     NULL,
     "request 0xac000000: nonblocking collective on \"MPI_COMM_WORLD\", schedule tag 287, next "
     "1, pending"},
    /* Deadlocked, but what tells them apart is in UCX, or the collective
     * each request belongs to: cannot tell. */
    {"unexpected", 2, NULL,
     "whether rank 1's MPI_Waitall is the partner of rank 0's receive request 0xac000000", NULL,
     NULL, NULL},
    {"nbcmix", 2, NULL,
     "whether rank 1 is in rank 0's nonblocking collective on \"MPI_COMM_WORLD\" (schedule tag "
     "287): it has started that one or a later one", NULL, NULL, NULL},
    {"nbcorder", 2, NULL,
     "whether rank 0 is in rank 1's nonblocking collective on \"MPI_COMM_WORLD\" (schedule tag "
     "288): it has started that one or a later one", NULL, NULL, NULL},
};

/* Open MPI's DLL in the unpacked Debian tree (static; a failed test if
 * not there). */
static const char *ompi_dll(void)
{
    static char path[4096];
    if (path[0])
        return path;
    FILE *f = popen("find \"$(scripts/fetch-stock-ompi.sh | tail -n 1)\" -name "
                    "libompi_dbg_msgq.so | head -n 1",
                    "r");
    if (!f || !fgets(path, sizeof path, f) || !strchr(path, '/'))
        fail_msg("no libompi_dbg_msgq.so in the unpacked Open MPI");
    pclose(f);
    path[strcspn(path, "\n")] = '\0';
    return path;
}

/* Run mqdump on job's launcher with extra (NULL-terminated, at most 4),
 * env (NULL-terminated "NAME=VALUE", or NULL): its exit status, standard
 * output into *out, standard error into *err (NULL: discarded). */
static int dump(const struct job *job, const char *const *extra, const char *const *env,
                char **out, char **err)
{
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)job->mpiexec);
    const char *args[8] = {"--job", pid};
    int k = 2;
    for (int i = 0; extra && extra[i] && k < 7; i++)
        args[k++] = extra[i];
    args[k] = NULL;
    return job_run_mqdump(args, env, out, err);
}

/* The members of the JSON analysis's only deadlock, as "0,1"; "" if none. */
static const char *deadlock_members(const struct json *j, char *buf, size_t len)
{
    const struct json *dl = json_get(json_get(j, "deadlock"), "deadlocks");
    buf[0] = '\0';
    if (!dl || dl->n == 0)
        return buf;
    assert_int_equal(dl->n, 1);
    return json_ranks(&dl->items[0], buf, len);
}

/* Sample c built at opt (O2, O0) against the stock MPICH, or Open MPI if
 * ompi, run and dumped. */
static void run_case(const struct stock_case *c, const char *opt, int ompi)
{
    char name[64], err[512], members[64], env_dll[4200];
    snprintf(name, sizeof name, "stock/%s%s/%s", ompi ? "ompi/" : "", opt, c->sample);
    char mpiexec[4096];
    job_build_path(mpiexec, sizeof mpiexec, ompi ? "stock/ompi/mpirun" : "stock/mpiexec");
    snprintf(env_dll, sizeof env_dll, "MQD_DLL=%s", ompi ? ompi_dll() : "");
    const char *const env[] = {env_dll, NULL};
    struct job job;
    if (job_start_in(&job, name, c->np, NULL, mpiexec, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
    char *text = NULL, *js = NULL, *stderr_text = NULL;
    int rc = dump(&job, NULL, ompi ? env : NULL, &text, &stderr_text);
    const char *json_args[] = {"--json", NULL};
    int jrc = dump(&job, json_args, ompi ? env : NULL, &js, NULL);
    for (int r = 0; r < job.np; r++) /* every rank left running */
        if (!job_pid_alive(job.ranks[r]) || kill(job.ranks[r], 0) != 0)
            fail_msg("%s: rank %d is gone", name, r);
    job_stop(&job);
    assert_non_null(text);
    assert_non_null(js);
    struct json *j = json_parse(js, err, sizeof err);
    if (!j)
        fail_msg("%s: JSON: %s", name, err);
    int o2 = strcmp(opt, "O2") == 0;
    const char *decided = o2 ? c->members : c->o0_members;
    const char *want = decided ? decided : "";
    const char *says = !o2 && c->o0_says ? c->o0_says : c->says;
    const char *found = deadlock_members(j, members, sizeof members);
    /* Open MPI's processes are unwound, not dumped (1); Debian's MPICH is
     * dumped: 0 for a verdict, 1 for "cannot tell". */
    int want_rc = ompi || strstr(text, "cannot tell whether the job is deadlocked") ? 1 : 0;
    if (rc != want_rc || jrc != want_rc || strcmp(found, want) != 0 ||
        ((o2 || decided) && !strstr(text, says)) || (o2 && c->shows && !strstr(text, c->shows)) ||
        (decided && !strstr(text, "holds once the job has stopped moving")) ||
        strstr(text, "not an MPICH program"))
        fail_msg("%s (exit %d, JSON exit %d): deadlock [%s], want [%s]%s%s:\n%s", name, rc, jrc,
                 found, want, o2 || decided ? " and a line with " : "",
                 o2 || decided ? says : "", text);
    if (ompi) {
        /* The missing queues: one line for the job in the view, one in the
         * analysis, however many ranks. */
        const char *lacks = "Open MPI's DLL needs libmpi's debug information";
        int lines = 0;
        for (const char *t = text; (t = strstr(t, lacks)); t++)
            lines++;
        if (lines != 1)
            fail_msg("%s: the missing queues said %d times:\n%s", name, lines, text);
    } else if (!strstr(text, "libmqd_mpich.so (mqd's DLL for MPICH") ||
               strstr(text, "has no message queues") ||
               !strstr(text, "communicator \"MPI_COMM_WORLD\"")) {
        fail_msg("%s: Debian's MPICH not dumped by mqd's DLL:\n%s", name, text);
    }
    /* Open MPI's DLL's own WARNING: one line, however many ranks said it.
     * The DLL says it when it sets up an image, once for a program's ranks
     * that share one (host/protocol/images.c) and once more for each rank
     * whose libraries differ: then with its count, at most the ranks'. */
    const char *warning = stderr_text ? strstr(stderr_text, "WARNING: ") : NULL;
    const char *count = warning ? strstr(warning, " (written ") : NULL;
    if (count && strchr(warning, '\n') && count > strchr(warning, '\n'))
        count = NULL; /* another line's */
    int times = count ? atoi(count + strlen(" (written ")) : 1;
    if (ompi && (!warning || strstr(warning + 1, "WARNING: ") || times < 1 || times > c->np))
        fail_msg("%s: the DLL's warning not written once, with its count:\n%s", name,
                 stderr_text ? stderr_text : "(none)");
    free(stderr_text);
    /* At -O0 what is not decided says what is unknown: the arguments, or
     * the requests of an MPI_Wait*. */
    if (!o2 && !decided && !strstr(text, "describes no arguments") &&
        !strstr(text, "the operations of its requests are in the MPI library's queues"))
        fail_msg("%s: -O0 does not say its arguments are unknown:\n%s", name, text);
    json_free(j);
    free(text);
    free(js);
}

static void test_stock__samples_at_O2(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i], "O2", 0);
}

static void test_stock__samples_at_O0(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i], "O0", 0);
}

static void test_stock__open_mpi_samples_at_O2(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ompi_cases / sizeof ompi_cases[0]; i++)
        run_case(&ompi_cases[i], "O2", 1);
}

static void test_stock__open_mpi_samples_at_O0(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ompi_cases / sizeof ompi_cases[0]; i++)
        run_case(&ompi_cases[i], "O0", 1);
}

/* ---------------------------------------------------------------- mqd's DLL */

/* Every process of dump j dumped by mqd's libmqd_ompi.so, with no error. */
static void check_mqd_dll(const struct json *j, const char *name)
{
    const struct json *ps = json_get(j, "processes");
    assert_non_null(ps);
    for (int i = 0; i < ps->n; i++) {
        const struct json *dll = json_get(&ps->items[i], "dll");
        const struct json *src = json_get(&ps->items[i], "dll_source");
        if (!dll || dll->kind != JSON_STRING || !strstr(dll->string, "/libmqd_ompi.so") ||
            !src || src->kind != JSON_STRING || strcmp(src->string, "mqd") != 0)
            fail_msg("%s: process %d not dumped by mqd's libmqd_ompi.so", name, i);
    }
}

/* Sample (built at -O2) under Debian's Open MPI, dumped by the plain
 * command: its queues, where and deadlocks exactly its .expect's. */
static void stock_queues(const char *sample)
{
    char name[64], err[512], mpirun[4096];
    static char msg[16384];
    struct expect e;
    if (expect_load_sample(sample, &e, err, sizeof err) != 0)
        fail_msg("%s", err);
    snprintf(name, sizeof name, "stock/ompi/O2/%s", sample);
    job_build_path(mpirun, sizeof mpirun, "stock/ompi/mpirun");
    struct job job;
    if (job_start_in(&job, name, e.np, NULL, mpirun, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
    char *js = NULL, *text = NULL;
    const char *json_args[] = {"--json", NULL};
    int ok = 0;
    struct json *j = NULL;
    msg[0] = '\0';
    /* A rank in a collective's rounds settles within 5 s (test_openmpi). */
    for (int attempt = 0; !ok && attempt < 50; attempt++) {
        json_free(j);
        free(js);
        if (attempt)
            usleep(100 * 1000);
        dump(&job, json_args, NULL, &js, NULL);
        j = js ? json_parse(js, msg, sizeof msg) : NULL;
        ok = j && compare_where(j, &e, msg, sizeof msg) == 0 &&
             compare_dump(j, &e, &job, &compare_mqd_ompi_limits, msg, sizeof msg) == 0 &&
             compare_deadlock(j, &e, msg, sizeof msg) == 0;
    }
    dump(&job, NULL, NULL, &text, NULL);
    for (int r = 0; r < job.np; r++)
        if (!job_pid_alive(job.ranks[r]) || kill(job.ranks[r], 0) != 0)
            fail_msg("%s: rank %d is gone", name, r);
    job_stop(&job);
    if (!ok)
        fail_msg("%s: %s\n%s", name, msg, js ? js : "");
    check_mqd_dll(j, name);
    print_message("%s:\n%s", name, text ? text : "");
    json_free(j);
    free(js);
    free(text);
    expect_free(&e);
}

/* The Open MPI a distribution installs: every queue through its known
 * layout, every verdict exact. */
static void test_stock__open_mpi_queues_through_mqd_dll(void **state)
{
    (void)state;
    static const char *const samples[] = {"ring", "mismatch", "unexpected", "wildcards"};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
        stock_queues(samples[i]);
}

/*
 * pml ucx (Debian disables it by default, openmpi-mca-params.conf; UCX
 * takes shared memory here only when told to), which matches messages
 * inside UCX: said once for the job, and the analysis from the calls
 * alone (ring, all in MPI_Waitall: cannot tell).
 */
static void test_stock__open_mpi_pml_ucx_said_once(void **state)
{
    (void)state;
    static const char *const env[] = {"env", "OMPI_MCA_pml=ucx", "OMPI_MCA_pml_ucx_tls=any",
                                      "OMPI_MCA_pml_ucx_devices=any", NULL};
    static const char why[] = "this Open MPI matches messages inside UCX (pml ucx): no queue "
                              "to show";
    char err[512], mpirun[4096];
    job_build_path(mpirun, sizeof mpirun, "stock/ompi/mpirun");
    struct job job;
    if (job_start_in(&job, "stock/ompi/O2/ring", 4, env, mpirun, err, sizeof err) != 0) {
        /* UCX could not run here at all (no transport it can use): said,
         * and skipped, not passed. */
        print_message("SKIPPED: ring does not start under pml ucx here: %s\n", err);
        skip();
    }
    char *text = NULL;
    int rc = dump(&job, NULL, NULL, &text, NULL);
    job_stop(&job);
    assert_non_null(text);
    const char *at = strstr(text, why);
    if (rc != 1 || !at || strstr(at + 1, why) ||
        !strstr(text, "cannot tell whether the job is deadlocked") ||
        !strstr(text, "the waits are read from the calls instead"))
        fail_msg("ring under pml ucx (exit %d):\n%s", rc, text);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stock__samples_at_O2),
        cmocka_unit_test(test_stock__samples_at_O0),
        cmocka_unit_test(test_stock__open_mpi_samples_at_O2),
        cmocka_unit_test(test_stock__open_mpi_samples_at_O0),
        cmocka_unit_test(test_stock__open_mpi_queues_through_mqd_dll),
        cmocka_unit_test(test_stock__open_mpi_pml_ucx_said_once),
    };
    const char *only = getenv("MQD_TEST_FILTER"); /* a cmocka pattern */
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
