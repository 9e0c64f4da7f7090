/*
 * test_watch.c - mqdump --watch S against real MPICH jobs (integration).
 *
 * Two looks some seconds apart, the ranks running between them: on the
 * hung `ring` nothing moves (every rank spins in MPI's progress loop:
 * CPU time inside MPI_Waitall, the same stacks and queues); on `inflight`
 * and `hidden` the rank that computes outside MPI is named as moved, with
 * CPU time outside MPI's progress loop and where it was, and no other
 * rank is.  The JSON fits docs/json-schema.json.  An agent's result
 * carries each process's CPU time ("cpu", "tc" records), which the
 * library reads back.  After every run, every rank and mpiexec are
 * running and untraced.  The comparison itself (mqdump/moved.c, linked
 * in) on dumps built by hand: MPI's progress loop is no move, queue
 * entries that change status, appear and go, a stack that changes, CPU
 * time outside MPI and below the noise, a process whose CPU time is not
 * known.  And --watch's bad values are usage errors.
 *
 * Environment: MQD_BUILD, MQD_MPICH_PREFIX, MQD_TESTS_SRC (docs/ beside
 * it).
 */
#define _GNU_SOURCE
#include "mqdhost.h"
#include "mqdump/moved.h"
#include "tests/handdump.h"
#include "tests/joblaunch.h"
#include "tests/json.h"
#include "tests/procstate.h"
#include "tests/schema.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

/* The seconds between the looks: enough for a rank that computes in
 * short bursts (10 ms sleeps) to spend well over the noise. */
#define WATCH_S "2"

/* ---------------------------------------------------------------- helpers */

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
        fail_msg("after mqdump --watch: %s", why);
    assert_int_equal(st, 0);
}

/* The rest of f (malloc'd), f closed; or a failed test. */
static char *read_all(FILE *f)
{
    char *text = NULL;
    size_t len = 0;
    assert_true(getdelim(&text, &len, '\0', f) > 0);
    fclose(f);
    return text;
}

/* The whole of file path (malloc'd), or a failed test. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot read %s: %s", path, strerror(errno));
    return read_all(f);
}

/* The JSON's document text fits docs/json-schema.json's "dump". */
static void fits_schema(const char *text)
{
    const char *tests = getenv("MQD_TESTS_SRC");
    char path[PATH_MAX], err[512];
    snprintf(path, sizeof path, "%s/../docs/json-schema.json", tests && *tests ? tests : "tests");
    char *s = slurp(path);
    struct json *schema = json_parse(s, err, sizeof err);
    free(s);
    if (!schema)
        fail_msg("%s: %s", path, err);
    int rc = schema_validate(schema, schema_def(schema, "dump"), text, err, sizeof err);
    json_free(schema);
    if (rc != 0)
        fail_msg("mqdump --watch --json does not fit the schema: %s", err);
}

/* mqdump --job MPIEXEC --watch S [--json]: its exit status, stdout into
 * *out (malloc'd); stderr shown if it fails. */
static int watch(const struct job *job, int json, char **out)
{
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)job->mpiexec);
    const char *args[] = {"--job", pid, "--watch", WATCH_S, json ? "--json" : NULL, NULL};
    char *err = NULL;
    int rc = job_run_mqdump(args, NULL, out, &err);
    assert_true(rc >= 0 && *out && err);
    if (rc != 0) /* every sample here is dumped whole, and the analysis sure */
        fail_msg("mqdump --watch exited %d: %s", rc, err);
    free(err);
    return rc;
}

/* A number member of the watch process for process index i, read from
 * the document's text (tests/json.h keeps integers only): the first
 * `"key": ` after that process's `"process": i,` in "watch". */
static double watch_number(const char *text, int i, const char *key)
{
    const char *w = strstr(text, "\"watch\": ");
    assert_non_null(w);
    char at[32], k[64];
    snprintf(at, sizeof at, "{\"process\": %d,", i);
    snprintf(k, sizeof k, "\"%s\": ", key);
    const char *p = strstr(w, at);
    assert_non_null(p);
    const char *v = strstr(p, k);
    assert_non_null(v);
    return strtod(v + strlen(k), NULL);
}

/* The "watch" process of index i. */
static const struct json *watch_process(const struct json *j, int i)
{
    const struct json *w = json_get(j, "watch");
    assert_non_null(w);
    const struct json *ps = json_get(w, "processes");
    assert_non_null(ps);
    assert_true(i < ps->n);
    const struct json *p = &ps->items[i];
    assert_int_equal(json_get(p, "process")->number, i);
    return p;
}

static int boolean(const struct json *obj, const char *key)
{
    const struct json *v = json_get(obj, key);
    assert_non_null(v);
    assert_int_equal(v->kind, JSON_BOOL);
    return (int)v->number;
}

/* Process index of rank r in the dump's processes. */
static int index_of_rank(const struct json *j, int r)
{
    const struct json *ps = json_get(j, "processes");
    for (int i = 0; i < ps->n; i++) {
        const struct json *rank = json_get(&ps->items[i], "rank");
        if (rank && rank->number == r)
            return i;
    }
    fail_msg("no process of rank %d", r);
    return -1;
}

/* ---------------------------------------------------------------- hung: nothing moved */

static void test_watch__ring_nothing_moved(void **state)
{
    (void)state;
    struct job job;
    start(&job, "ring", 4);
    char *out = NULL, msg[512];
    watch(&job, 1, &out);
    fits_schema(out);
    struct json *j = json_parse(out, msg, sizeof msg);
    if (!j)
        fail_msg("%s", msg);
    const struct json *w = json_get(j, "watch");
    assert_non_null(w);
    assert_int_equal(json_get(w, "seconds")->number, 2);
    assert_true(json_get(w, "elapsed")->number >= 2);
    assert_true(boolean(w, "nothing_moved"));
    double in_mpi = 0;
    for (int i = 0; i < job.np; i++) {
        const struct json *p = watch_process(j, i);
        assert_true(boolean(p, "seen"));
        assert_false(boolean(p, "moved"));
        assert_false(boolean(p, "may_have_moved"));
        assert_false(boolean(json_get(p, "stack"), "changed"));
        assert_true(boolean(p, "queues_compared"));
        assert_int_equal(json_get(p, "queue_changes")->n, 0);
        assert_true(watch_number(out, i, "outside_seconds") < 0.0005);
        in_mpi += watch_number(out, i, "in_mpi_seconds");
    }
    /* MPICH's ranks poll in MPI_Waitall: CPU time, all of it inside. */
    assert_true(in_mpi > 0.1);
    json_free(j);
    free(out);

    watch(&job, 0, &out);
    if (!strstr(out, "Observation over 2 s: no progress anywhere: every stack and queue the "
                     "same, no CPU spent outside MPI's progress loop\n"))
        fail_msg("no 'no progress' observation in:\n%s", out);
    assert_non_null(strstr(out, "DEADLOCK")); /* beside the analysis of the second look */
    free(out);
    released_and_stop(&job);
}

/* ---------------------------------------------------------------- moving: who */

/*
 * Sample `name` on np ranks, `computing` the rank that computes outside
 * MPI (in `function`): it alone moved, with CPU time outside MPI's
 * progress loop and where it spent it; the others did not.
 */
static void computing_rank_moved(const char *name, int np, int computing, const char *function)
{
    struct job job;
    start(&job, name, np);
    char *out = NULL, msg[512];
    watch(&job, 1, &out);
    fits_schema(out);
    struct json *j = json_parse(out, msg, sizeof msg);
    if (!j)
        fail_msg("%s", msg);
    assert_false(boolean(json_get(j, "watch"), "nothing_moved"));
    int ci = index_of_rank(j, computing);
    for (int i = 0; i < np; i++) {
        const struct json *p = watch_process(j, i);
        assert_true(boolean(p, "seen"));
        if (i != ci) {
            if (boolean(p, "moved"))
                fail_msg("%s: process %d moved, and only rank %d computes:\n%s", name, i,
                         computing, out);
            continue;
        }
        assert_true(boolean(p, "moved"));
        double outside = watch_number(out, i, "outside_seconds");
        if (!(outside >= 0.0005))
            fail_msg("%s: rank %d spent %.6f s outside MPI", name, computing, outside);
        const struct json *cpu = json_get(p, "cpu");
        assert_int_equal(json_get(cpu, "thread")->number, job.ranks[computing]);
        const struct json *after = json_get(cpu, "after");
        assert_int_equal(after->kind, JSON_STRING);
        if (!strstr(after->string, function))
            fail_msg("%s: rank %d was at '%s', not in %s", name, computing, after->string,
                     function);
    }
    json_free(j);
    free(out);

    watch(&job, 0, &out);
    char line[128];
    snprintf(line, sizeof line, "  rank %d (pid %d): moved\n    CPU ", computing,
             (int)job.ranks[computing]);
    if (!strstr(out, line) || !strstr(out, " s outside MPI's progress loop: thread "))
        fail_msg("%s: rank %d not named as moved in:\n%s", name, computing, out);
    snprintf(line, sizeof line, "Observation over 2 s: ranks [%d] moved; ranks [", computing);
    if (!strstr(out, line))
        fail_msg("%s: no observation naming rank %d in:\n%s", name, computing, out);
    free(out);
    released_and_stop(&job);
}

static void test_watch__inflight_names_the_computing_rank(void **state)
{
    (void)state;
    computing_rank_moved("inflight", 3, 1, "sample_compute");
}

static void test_watch__hidden_names_the_computing_rank(void **state)
{
    (void)state;
    computing_rank_moved("hidden", 4, 2, "relax");
}

/* ---------------------------------------------------------------- agents */

/* An agent's result carries each process's CPU time, and each thread's,
 * and the library reads it back. */
static void test_watch__agent_result_carries_cpu_time(void **state)
{
    (void)state;
    struct job job;
    start(&job, "ring", 2);
    char host[256] = "", ops[2][32];
    gethostname(host, sizeof host - 1);
    for (int r = 0; r < 2; r++)
        snprintf(ops[r], sizeof ops[r], "%d:%d", (int)job.ranks[r], r);
    const char *args[] = {"--agent", host, ops[0], ops[1], NULL};
    char *out = NULL, *err = NULL;
    int rc = job_run_mqdump(args, NULL, &out, &err);
    if (rc != 0)
        fail_msg("mqdump --agent exited %d: %s", rc, err ? err : "");
    assert_non_null(strstr(out, "\ncpu "));
    assert_non_null(strstr(out, "\ntc "));
    struct mqdh_dump *d = NULL;
    char why[512];
    if (mqdh_result_read(out, strlen(out), &d, why, sizeof why) != MQDH_OK)
        fail_msg("the agent's result does not read: %s", why);
    assert_int_equal(d->nprocs, 2);
    assert_non_null(d->cpu);
    for (int r = 0; r < 2; r++) {
        const struct mqdh_cpu *c = &d->cpu[r];
        assert_int_equal(d->procs[r].pid, job.ranks[r]);
        assert_true(c->known);
        assert_true(c->ns > 0); /* it has been polling in MPI_Waitall */
        assert_true(c->nthreads >= 1);
        int main_seen = 0;
        for (int t = 0; t < c->nthreads; t++)
            main_seen |= c->threads[t].tid == job.ranks[r] && c->threads[t].ns > 0;
        assert_true(main_seen);
    }
    /* The front end's merge puts each process's CPU time in its place. */
    struct mqdh_dump *into = handdump_job(2);
    for (int r = 0; r < 2; r++) {
        into->procs[1 - r].pid = job.ranks[r];
        assert_non_null(into->procs[1 - r].host = strdup(d->procs[r].host));
    }
    uint64_t ns1 = d->cpu[1].ns;
    assert_int_equal(mqdh_dump_merge(into, &d, 1), 2);
    assert_non_null(into->cpu);
    assert_true(into->cpu[0].known && into->cpu[1].known);
    assert_true(into->cpu[0].ns == ns1 && into->cpu[0].nthreads >= 1);
    assert_int_equal(into->cpu[0].threads[0].tid, job.ranks[1]);
    assert_null(d->cpu);
    mqdh_dump_free(into);
    mqdh_dump_free(d);
    free(out);
    free(err);
    released_and_stop(&job);
}

/* ---------------------------------------------------------------- by hand */

/*
 * The comparison itself (mqdump/moved.c, linked in) on dumps built by
 * hand (tests/handdump.h), where every kind of change can be made: two
 * ranks in MPI_Recv called from solve at app.c:42 from main, each thread
 * with its CPU time.
 */

/* What watch_text writes comparing before and after; malloc'd.  *nothing:
 * watch_nothing_moved. */
static char *compare_text(const struct mqdh_dump *before, const struct mqdh_dump *after,
                          int *nothing)
{
    struct mqdh_watch *w = NULL;
    assert_int_equal(mqdh_watch_compare(before, after, 2, 2.1, &w), MQDH_OK);
    assert_non_null(w);
    *nothing = mqdh_watch_nothing_moved(w);
    fflush(stdout);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(1);
    assert_true(saved >= 0 && dup2(fileno(tmp), 1) >= 0);
    watch_text(after, w);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    rewind(tmp);
    mqdh_watch_free(w);
    return read_all(tmp);
}

/* Comparing before and after says (nothing moved or not) each of says[]. */
static void compares_to(struct mqdh_dump *before, struct mqdh_dump *after, int nothing,
                        const char *const *says)
{
    int got;
    char *text = compare_text(before, after, &got);
    if (got != nothing)
        fail_msg("nothing moved: %d, want %d:\n%s", got, nothing, text);
    for (int k = 0; says[k]; k++)
        if (!strstr(text, says[k]))
            fail_msg("no '%s' in:\n%s", says[k], text);
    free(text);
    mqdh_dump_free(before);
    mqdh_dump_free(after);
}

static void test_watch__by_hand_progress_loop_is_no_move(void **state)
{
    (void)state;
    /* The library's innermost frame moved (MPI's progress loop): folded
     * into MPI_Recv, no change; its CPU time is inside MPI. */
    struct mqdh_dump *after = handdump_stacked(2, 0x7100, 0);
    handdump_add_cpu(after, 0, 900000000);
    handdump_add_cpu(after, 1, 1100000000);
    compares_to(handdump_stacked(2, 0x7000, 0), after, 1,
                (const char *const[]){"  unchanged: ranks [0-1] (same stacks and queues; CPU "
                                      "2.000 s, all inside their MPI calls)\n",
                                      "Observation over 2 s: no progress anywhere", NULL});
}

static void test_watch__by_hand_queue_changes(void **state)
{
    (void)state;
    struct mqdh_dump *after = handdump_stacked(2, 0x7000, 0);
    after->procs[0].comms[0].queues[MQDH_RECEIVES].ops[0].status = MQDH_OP_COMPLETE;
    after->procs[1].comms[0].queues[MQDH_RECEIVES].ops[0].desired_tag = 8;
    compares_to(handdump_stacked(2, 0x7000, 0), after, 0,
                (const char *const[]){
                    "  rank 0 (pid 1000): moved\n    receive from 1 tag 7, 32 bytes "
                    "(MPI_COMM_WORLD): pending -> complete\n",
                    "  rank 1 (pid 1001): moved\n    receive from 0 tag 8, 32 bytes "
                    "(MPI_COMM_WORLD): appeared, pending\n"
                    "    receive from 0 tag 7, 32 bytes (MPI_COMM_WORLD): gone (was pending)\n",
                    "Observation over 2 s: ranks [0-1] moved\n", NULL});
}

static void test_watch__by_hand_stack_and_cpu_outside(void **state)
{
    (void)state;
    /* Rank 1 computes in solve: elsewhere in it at the second look, and
     * 0.2 s of CPU time outside MPI; rank 0 spins in MPI_Recv. */
    struct mqdh_dump *before = handdump_stacked(2, 0x7000, 0), *after = handdump_stacked(2, 0x7000, 0);
    handdump_stacked_computing(before, 1, 0x1234);
    handdump_stacked_computing(after, 1, 0x1250);
    handdump_add_cpu(after, 1, 200000000);
    handdump_add_cpu(after, 0, 500000000);
    compares_to(before, after, 0,
                (const char *const[]){
                    "  rank 1 (pid 1001): moved\n    CPU 0.200 s outside MPI's progress loop: "
                    "thread 1001, solve at app.c:42 at both looks\n"
                    "    stack: thread 1001 at frame 1: solve at app.c:42, pc 0x1234, now "
                    "solve at app.c:42, pc 0x1250\n",
                    "  unchanged: ranks [0] (same stacks and queues; CPU 0.500 s",
                    "Observation over 2 s: ranks [1] moved; ranks [0] did not\n", NULL});
}

static void test_watch__by_hand_noise_and_unknown_cpu(void **state)
{
    (void)state;
    /* Less than the looks cost a thread outside MPI is no move; a
     * process whose CPU time is not known at a look is not compared, so
     * nothing can be said to have stopped. */
    struct mqdh_dump *before = handdump_stacked(2, 0x7000, 0), *after = handdump_stacked(2, 0x7000, 0);
    handdump_stacked_computing(before, 1, 0x1234);
    handdump_stacked_computing(after, 1, 0x1234);
    handdump_add_cpu(after, 1, 30000);
    compares_to(before, after, 1, (const char *const[]){"no progress anywhere", NULL});
    before = handdump_stacked(2, 0x7000, 0);
    after = handdump_stacked(2, 0x7000, 0);
    after->cpu[1].known = 0;
    compares_to(before, after, 0,
                (const char *const[]){"  rank 1 (pid 1001): not compared: its CPU time was not "
                                      "read at both looks\n",
                                      "ranks [0] did not; cannot tell for ranks [1]\n", NULL});
}

/* Rank r in MPI_Test, a call that returns by itself. */
static void hand_testing(struct mqdh_dump *d, int r)
{
    free(d->procs[r].where_call);
    free(d->stacks[r].threads[0].call);
    assert_non_null(d->procs[r].where_call = strdup("MPI_Test"));
    assert_non_null(d->stacks[r].threads[0].call = strdup("MPI_Test"));
}

static void test_watch__by_hand_polling_may_have_moved(void **state)
{
    (void)state;
    /* In MPI_Test at both looks with CPU time spent: it may have left
     * and come back, so no claim that nothing moved. */
    struct mqdh_dump *before = handdump_stacked(2, 0x7000, 0), *after = handdump_stacked(2, 0x7000, 0);
    hand_testing(before, 1);
    hand_testing(after, 1);
    handdump_add_cpu(after, 1, 300000000);
    compares_to(before, after, 0,
                (const char *const[]){
                    "  rank 1 (pid 1001): may have moved\n    CPU 0.300 s in MPI_Test at both "
                    "looks, a call that returns by itself: the program may have run between "
                    "the looks\n",
                    "Observation over 2 s: ranks [1] may have moved; ranks [0] did not\n", NULL});
}

/* ---------------------------------------------------------------- the result format */

/* A result of one process (pid 100) with the records `cpu` after its p. */
static int read_cpu_records(const char *cpu, struct mqdh_dump **d, char *why, size_t len)
{
    char text[512];
    snprintf(text, sizeof text,
             "mqd-result 1\ndump 1 1 0\np 100 0 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 0.0\n%send 1\n",
             cpu);
    return mqdh_result_read(text, strlen(text), d, why, len);
}

/* The CPU time goes through an agent's result and back as it was; a
 * result without it reads as one without; "cpu" and "tc" records out of
 * place are refused, naming the line. */
static void test_watch__result_cpu_records(void **state)
{
    (void)state;
    struct mqdh_dump *d = handdump_stacked(2, 0x7000, 5), *back = NULL;
    handdump_add_cpu(d, 1, 1234567891);
    char *text = NULL, why[256];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(mqdh_result_write(f, d), MQDH_OK);
    fclose(f);
    assert_non_null(strstr(text, "\ncpu 1234567896\ntc 1001 1234567896\n"));
    if (mqdh_result_read(text, len, &back, why, sizeof why) != MQDH_OK)
        fail_msg("%s", why);
    assert_non_null(back->cpu);
    for (int r = 0; r < 2; r++) {
        assert_true(back->cpu[r].known);
        assert_true(back->cpu[r].ns == d->cpu[r].ns);
        assert_int_equal(back->cpu[r].nthreads, 1);
        assert_int_equal(back->cpu[r].threads[0].tid, 1000 + r);
        assert_true(back->cpu[r].threads[0].ns == d->cpu[r].threads[0].ns);
    }
    mqdh_dump_free(back);
    free(text);
    mqdh_dump_free(d);

    assert_int_equal(read_cpu_records("", &back, why, sizeof why), MQDH_OK);
    assert_null(back->cpu);
    mqdh_dump_free(back);
    assert_int_equal(read_cpu_records("cpu 7\ntc 100 3\ntc 101 4\n", &back, why, sizeof why),
                     MQDH_OK);
    assert_true(back->cpu && back->cpu[0].known && back->cpu[0].ns == 7 &&
                back->cpu[0].nthreads == 2);
    mqdh_dump_free(back);
    static const struct {
        const char *records, *says;
    } bad[] = {
        {"tc 100 3\n", "line 4: a thread's cpu before its process's"},
        {"cpu 7\ncpu 8\n", "line 5: a second cpu record for one process"},
        {"cpu 7\ntc 101 3\ntc 100 4\n", "line 6: thread 100's cpu out of order"},
        {"cpu -7\n", "line 4: cpu is not an unsigned number"},
        {"cpu 7 8\n", "line 4: unexpected field '8'"},
        {"cpu 7\ntc 0 3\n", "line 5: thread '0' is not a number from 1"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        back = NULL;
        int rc = read_cpu_records(bad[k].records, &back, why, sizeof why);
        if (rc != MQDH_E_RESULT || !strstr(why, bad[k].says))
            fail_msg("case %zu: %d '%s' (want '%s')", k, rc, why, bad[k].says);
        assert_null(back);
    }
}

/* ---------------------------------------------------------------- bad values */

static void test_watch__bad_values_are_usage_errors(void **state)
{
    (void)state;
    static const struct {
        const char *args[8];
        const char *says;
    } cases[] = {
        {{"--pid", "1", "--watch", "0", NULL}, "--watch takes a number of seconds, 1 to 3600"},
        {{"--pid", "1", "--watch", "x", NULL}, "--watch takes a number of seconds, 1 to 3600"},
        {{"--pid", "1", "--watch", "2s", NULL}, "--watch takes a number of seconds, 1 to 3600"},
        {{"--pid", "1", "--watch", "3601", NULL}, "--watch takes a number of seconds, 1 to 3600"},
        {{"--pid", "1", "--watch", "-1", NULL}, "--watch takes a number of seconds, 1 to 3600"},
        {{"--list", "--watch", "2", NULL}, "--watch looks at a job twice"},
        {{"--check-dll", "/nonexistent", "--watch", "2", NULL}, "--watch looks at a job twice"},
    };
    char why[1024];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        if (job_usage_error(cases[k].args, cases[k].says, why, sizeof why) != 0)
            fail_msg("case %zu: %s", k, why);}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_watch__by_hand_progress_loop_is_no_move),
        cmocka_unit_test(test_watch__by_hand_queue_changes),
        cmocka_unit_test(test_watch__by_hand_stack_and_cpu_outside),
        cmocka_unit_test(test_watch__by_hand_noise_and_unknown_cpu),
        cmocka_unit_test(test_watch__by_hand_polling_may_have_moved),
        cmocka_unit_test(test_watch__result_cpu_records),
        cmocka_unit_test(test_watch__bad_values_are_usage_errors),
        cmocka_unit_test(test_watch__ring_nothing_moved),
        cmocka_unit_test(test_watch__inflight_names_the_computing_rank),
        cmocka_unit_test(test_watch__hidden_names_the_computing_rank),
        cmocka_unit_test(test_watch__agent_result_carries_cpu_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
