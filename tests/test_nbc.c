/*
 * test_nbc.c - the analysis of nonblocking collectives on real MPICH jobs
 * (integration).
 *
 * A rank in MPI_Wait on a nonblocking collective waits for the members of
 * that collective's instance.  Two ranks that started different
 * collectives as the same instance (nbcmix: MPI_Iscan against
 * MPI_Iallreduce; nbcorder: the same two in different orders) are a
 * deadlock, each wait named with its call site; a correct program that is
 * always inside two concurrent nonblocking collectives (nbcbusy) is never
 * called deadlocked, however often it is dumped.
 *
 * Environment: MQD_BUILD, MQD_MPICH_PREFIX, MQD_SAMPLES_SRC.
 */
#define _GNU_SOURCE
#include "tests/compare.h"
#include "tests/expect.h"
#include "tests/joblaunch.h"
#include "tests/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* What the MPICH under test does not show or hold (compare.c). */
static const struct mpich_allowances *allowed(void)
{
    return compare_mpich_allowed();
}

static const struct dll_limits *mqd_limits(void)
{
    return &allowed()->limits;
}

static void start(struct job *job, const char *name, int np)
{
    char err[512];
    if (job_start(job, name, np, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
}

/* mqdump --job JOB with args after it; its exit status, output in *out. */
static int dump(const struct job *job, const char *a1, const char *a2, char **out)
{
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)job->mpiexec);
    const char *args[] = {"--job", pid, a1, a2, NULL};
    int rc = job_run_mqdump(args, NULL, out, NULL);
    assert_true(rc >= 0 && *out);
    return rc;
}

/*
 * Sample name, dumped once every rank is in the call its .expect names
 * (5 s at most): its queues exactly as promised, the deadlock and its
 * edges as the .expect says; then the text names each rank's MPI_Wait and
 * its line, and says why the instances never complete.
 */
static void mismatched(const char *name)
{
    struct expect e;
    struct job job;
    char msg[8192] = "";
    if (expect_load_sample(name, &e, msg, sizeof msg) != 0)
        fail_msg("%s", msg);
    start(&job, name, e.np);
    const char *returns = compare_sample_returns(allowed(), name);
    if (returns) { /* this MPICH lets the pair complete: it must */
        int gone = job_rank_ends(&job, 10);
        job_stop(&job);
        expect_free(&e);
        if (!gone)
            fail_msg("%s holds on this MPICH now (was: %s): compare it with its .expect", name,
                     returns);
        print_message("%s cannot hold on this MPICH: %s\n", name, returns);
        return;
    }
    char *out = NULL;
    int ok = 0;
    for (int attempt = 0; !ok && attempt <= 50; attempt++) {
        if (attempt)
            usleep(100 * 1000);
        free(out);
        int rc = dump(&job, "--json", NULL, &out);
        struct json *j = json_parse(out, msg, sizeof msg);
        ok = rc == 0 && j && compare_where(j, &e, msg, sizeof msg) == 0 &&
             compare_dump(j, &e, &job, mqd_limits(), msg, sizeof msg) == 0 &&
             compare_deadlock(j, &e, msg, sizeof msg) == 0;
        if (j && !ok && rc != 0 && !msg[0])
            snprintf(msg, sizeof msg, "mqdump exited %d", rc);
        json_free(j);
    }
    free(out);
    if (ok) {
        int rc = dump(&job, "--full", NULL, &out);
        for (int r = 0; ok && r < e.np; r++) {
            char want[128];
            snprintf(want, sizeof want, "rank %d waits in MPI_Wait at %s.c:", r, name);
            if (rc != 0 || !strstr(out, "DEADLOCK: a cycle of 2 processes") ||
                !strstr(out, want) || !strstr(out, "started another collective as that "
                                                   "instance") ||
                strstr(out, "no deadlock found"))
                ok = 0, snprintf(msg, sizeof msg, "mqdump exited %d, no \"%s\" or no "
                                 "deadlock of the instances:\n%s", rc, want, out);
        }
        free(out);
    }
    expect_free(&e);
    assert_int_equal(job_stop(&job), 0);
    if (!ok)
        fail_msg("%s: %s", name, msg);
}

static void test_nbc__different_collectives_are_a_deadlock(void **state)
{
    (void)state;
    mismatched("nbcmix");
}

static void test_nbc__collectives_in_different_orders_are_a_deadlock(void **state)
{
    (void)state;
    mismatched("nbcorder");
}

/* Both ranks of dump j in MPI_Wait or MPI_Waitall: inside the collectives. */
static int both_waiting(const struct json *j)
{
    const struct json *procs = json_get(j, "processes");
    int n = 0;
    for (int i = 0; procs && i < procs->n; i++) {
        const struct json *w = json_get(&procs->items[i], "where");
        const struct json *call = w && w->kind == JSON_OBJECT ? json_get(w, "call") : NULL;
        n += call && call->kind == JSON_STRING &&
             (strcmp(call->string, "MPI_Wait") == 0 || strcmp(call->string, "MPI_Waitall") == 0);
    }
    return n == 2;
}

/*
 * nbcbusy, dumped 60 times while it runs: no dump says deadlock, and
 * enough of them caught both ranks waiting inside the collectives for
 * that to mean something.
 */
static void test_nbc__concurrent_collectives_never_a_deadlock(void **state)
{
    (void)state;
    struct job job;
    char msg[512] = "";
    int inside = 0, dumps = 60, bad = 0;
    start(&job, "nbcbusy", 2);
    for (int k = 0; k < dumps && !bad; k++) {
        char *out = NULL;
        int rc = dump(&job, "--json", NULL, &out);
        struct json *j = json_parse(out, msg, sizeof msg);
        const struct json *dl = j ? json_get(j, "deadlock") : NULL;
        const struct json *v = dl ? json_get(dl, "verdict") : NULL;
        if (rc > 1 || !v || v->kind != JSON_STRING)
            bad = 1, snprintf(msg, sizeof msg, "dump %d: mqdump exited %d", k, rc);
        else if (strcmp(v->string, "deadlock") == 0)
            bad = 1, snprintf(msg, sizeof msg, "dump %d says deadlock:\n%.400s", k,
                              strstr(out, "\"deadlock\""));
        else
            inside += both_waiting(j);
        json_free(j);
        free(out);
    }
    assert_int_equal(job_stop(&job), 0);
    if (bad)
        fail_msg("%s", msg);
    printf("[          ] %d dumps, %d with both ranks waiting inside the collectives, none "
           "a deadlock\n", dumps, inside);
    assert_true(inside >= 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nbc__different_collectives_are_a_deadlock),
        cmocka_unit_test(test_nbc__collectives_in_different_orders_are_a_deadlock),
        cmocka_unit_test(test_nbc__concurrent_collectives_never_a_deadlock),
    };
    return cmocka_run_group_tests_name("nbc", tests, NULL, NULL);
}
