/*
 * test_callsite.c - an MPI call's arguments from its caller's call site
 * (host/target/callsite.c), on real jobs (integration).
 *
 * Debian's own MPICH 4.0.2 ships libmpich stripped: the blocked calls'
 * arguments are known only where the program's DWARF describes them at
 * the call.  The stock samples (scripts/stock-samples.sh) built at -O2 -g
 * must show exactly the arguments their call sites describe, the
 * predefined communicator by value, and where they came from; those the
 * call site does not describe (a value GCC did not keep) must be said so;
 * those passed on the stack (MPI_Gather's root and comm, its 7th and 8th)
 * are read from the caller's stack where they validate, -O0 or -O2.  At
 * -O0 -g GCC describes no call site, and every rank must say so of the
 * arguments passed in registers.  tests/fixtures/callsite.c adds a source that
 * is an entry value (resolved through the caller's caller's call site)
 * and MPI_COMM_SELF.  With the cached MPICH, which has its DWARF, the
 * library's own debug information still comes first.
 *
 * Environment: MQD_BUILD, MQD_MPICH_PREFIX, MQD_SAMPLES_SRC, MQD_TESTS_SRC.
 */
#define _GNU_SOURCE
#include "tests/joblaunch.h"
#include "tests/json.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define EVERY_RANK (-1)

/* MPICH's MPI_COMM_WORLD and MPI_COMM_SELF, as the JSON writes them. */
#define WORLD "1140850688"
#define SELF "1140850689"

/*
 * What a rank (EVERY_RANK: each) must show: its call, made in function at
 * the line of file holding mark; exactly the arguments args ("tag=3
 * comm=..."), comm's name; args_from "the call site in FUNCTION at
 * FILE:LINE" (from_library: the MPI library's debug information;
 * from_site 2: "its caller's stack (the call site ...)"; neither: null);
 * args_why "ARG: the MPI library has no debug information, and the
 * call site in FUNCTION at FILE:LINE SITE" for why_arg ARG and why_site
 * SITE, or why, or null.
 */
struct rank_want {
    int rank;
    const char *call, *function, *file, *mark;
    const char *args, *comm_name;
    int from_site, from_library;
    const char *why_arg, *why_site, *why;
};

struct job_want {
    const char *program; /* in $MQD_BUILD */
    int np;
    int stock;           /* run by the stock MPICH's mpiexec, else the cached MPICH's */
    struct rank_want ranks[3];
};

static const char NO_LIB[] = "the MPI library has no debug information, and ";

/* -O2: what each call site describes, and why the rest is unknown. */
static const struct job_want at_o2[] = {
    /* The peer outlives the call (kept in a callee-saved register): the
     * call site describes it. */
    {"stock/O2/ssend", 2, 1,
     {{0, "MPI_Ssend", "main", "samples/ssend.c", "MPI_Ssend(", "dest=1 tag=3 comm=" WORLD,
       "MPI_COMM_WORLD", 1, 0, NULL, NULL, NULL},
      {1, "MPI_Ssend", "main", "samples/ssend.c", "MPI_Ssend(", "dest=0 tag=3 comm=" WORLD,
       "MPI_COMM_WORLD", 1, 0, NULL, NULL, NULL}}},
    {"stock/O2/probe", 2, 1,
     {{0, "MPI_Probe", "main", "samples/probe.c", "MPI_Probe(", "source=1 tag=7 comm=" WORLD,
       "MPI_COMM_WORLD", 1, 0, NULL, NULL, NULL},
      {1, "MPI_Probe", "main", "samples/probe.c", "MPI_Probe(", "source=0 tag=7 comm=" WORLD,
       "MPI_COMM_WORLD", 1, 0, NULL, NULL, NULL}}},
    /* The 7th and 8th arguments, passed on the stack, which the call site
     * does not describe: read from the caller's stack. */
    {"stock/O2/roots", 2, 1,
     {{0, "MPI_Gather", "main", "samples/roots.c", "MPI_Gather(", "root=0 comm=" WORLD,
       "MPI_COMM_WORLD", 2, 0, NULL, NULL, NULL},
      {1, "MPI_Gather", "main", "samples/roots.c", "MPI_Gather(", "root=1 comm=" WORLD,
       "MPI_COMM_WORLD", 2, 0, NULL, NULL, NULL}}},
    {"stock/O2/finalize", 2, 1,
     {{0, "MPI_Recv", "main", "samples/finalize.c", "MPI_Recv(",
       "source=1 tag=5 comm=" WORLD, "MPI_COMM_WORLD", 1, 0, NULL, NULL, NULL},
      {1, "MPI_Finalize", "main", "samples/finalize.c", "MPI_Finalize(", "", NULL, 0, 0, NULL,
       NULL, "the MPI library has no debug information for MPI_Finalize"}}},
    {"stock/O2/mismatch", 3, 1,
     {{0, "MPI_Barrier", "main", "samples/mismatch.c", "MPI_Barrier(", "comm=" WORLD,
       "MPI_COMM_WORLD", 1, 0, NULL, NULL, NULL},
      {1, "MPI_Recv", "main", "samples/mismatch.c", "MPI_Recv(", "source=0 tag=5 comm=" WORLD,
       "MPI_COMM_WORLD", 1, 0, NULL, NULL, NULL},
      {2, "MPI_Barrier", "main", "samples/mismatch.c", "MPI_Barrier(", "comm=" WORLD,
       "MPI_COMM_WORLD", 1, 0, NULL, NULL, NULL}}},
};

/* -O0: no call site at all. */
static const char NOT_OPTIMISED[] = "describes no arguments (the program was built without "
                                    "optimisation: -O1 -g or higher describes them)";

static const struct {
    const char *program;
    int np, rank;
    const char *call, *arg, *file, *mark;
} at_o0[] = {
    {"stock/O0/ssend", 2, EVERY_RANK, "MPI_Ssend", "dest", "samples/ssend.c", "MPI_Ssend("},
    {"stock/O0/probe", 2, EVERY_RANK, "MPI_Probe", "source", "samples/probe.c", "MPI_Probe("},
    {"stock/O0/finalize", 2, 0, "MPI_Recv", "source", "samples/finalize.c", "MPI_Recv("},
    {"stock/O0/mismatch", 3, 1, "MPI_Recv", "source", "samples/mismatch.c", "MPI_Recv("},
    {"stock/O0/mismatch", 3, 0, "MPI_Barrier", "comm", "samples/mismatch.c", "MPI_Barrier("},
};

/* The source file of a name as the DWARF gives it ("samples/ring.c",
 * "tests/fixtures/x.c"), where the tests find the sources. */
static void source_path(char *buf, size_t len, const char *file)
{
    const char *samples = getenv("MQD_SAMPLES_SRC"), *tests = getenv("MQD_TESTS_SRC");
    if (strncmp(file, "samples/", 8) == 0)
        snprintf(buf, len, "%s/%s", samples && *samples ? samples : "samples", file + 8);
    else if (strncmp(file, "tests/", 6) == 0)
        snprintf(buf, len, "%s/%s", tests && *tests ? tests : "tests", file + 6);
    else
        snprintf(buf, len, "%s", file);
}

/* The line of file holding mark (the test fails if none does). */
static int line_of(const char *file, const char *mark)
{
    char path[PATH_MAX], line[512];
    source_path(path, sizeof path, file);
    FILE *f = fopen(path, "r");
    int n = 0, found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        n++;
        found = strstr(line, mark) != NULL;
    }
    if (f)
        fclose(f);
    if (!found)
        fail_msg("no \"%s\" in %s", mark, path);
    return n;
}

/* Run program (np ranks) and dump the job as JSON; every rank must be
 * running after it. */
static struct json *dump_job(const char *program, int np, int stock)
{
    char mpiexec[PATH_MAX], err[512], pid[16];
    job_build_path(mpiexec, sizeof mpiexec, "stock/mpiexec");
    struct job job;
    if (job_start_in(&job, program, np, NULL, stock ? mpiexec : NULL, err, sizeof err) != 0)
        fail_msg("%s: %s", program, err);
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    const char *args[] = {"--job", pid, "--json", NULL};
    char *out = NULL, *errout = NULL;
    int rc = job_run_mqdump(args, NULL, &out, &errout);
    int gone = -1;
    for (int r = 0; r < job.np && gone < 0; r++)
        if (kill(job.ranks[r], 0) != 0)
            gone = r;
    job_stop(&job);
    struct json *j = out ? json_parse(out, err, sizeof err) : NULL;
    if (gone >= 0)
        fail_msg("%s: rank %d is gone after mqdump", program, gone);
    if (!j)
        fail_msg("%s: mqdump exited %d without JSON (%s): %s", program, rc, err,
                 errout ? errout : "");
    free(out);
    free(errout);
    return j;
}

/* The "where" of the process of rank in j. */
static const struct json *where_of(const struct json *j, int rank, const char *program)
{
    const struct json *procs = json_get(j, "processes");
    for (int i = 0; procs && i < procs->n; i++) {
        const struct json *r = json_get(&procs->items[i], "rank");
        if (r && r->kind == JSON_NUMBER && r->number == rank) {
            const struct json *w = json_get(&procs->items[i], "where");
            if (!w || w->kind != JSON_OBJECT)
                fail_msg("%s: rank %d is in no MPI call", program, rank);
            return w;
        }
    }
    fail_msg("%s: no rank %d in the dump", program, rank);
    return NULL;
}

/* A string member, or NULL for null. */
static const char *string_of(const struct json *obj, const char *key)
{
    const struct json *v = json_get(obj, key);
    assert_non_null(v);
    return v->kind == JSON_STRING ? v->string : NULL;
}

static void same_string(const char *what, const char *got, const char *want)
{
    if ((got == NULL) != (want == NULL) || (got && strcmp(got, want) != 0))
        fail_msg("%s: \"%s\", not \"%s\"", what, got ? got : "(null)", want ? want : "(null)");
}

/* w's args are exactly want ("tag=3 comm=1140850688") and comm_name. */
static void same_args(const char *what, const struct json *w, const char *want,
                      const char *comm_name)
{
    const struct json *args = json_get(w, "args");
    char copy[256], *save = NULL;
    int n = 0, comm = 0;
    assert_non_null(args);
    snprintf(copy, sizeof copy, "%s", want);
    for (char *kv = strtok_r(copy, " ", &save); kv; kv = strtok_r(NULL, " ", &save), n++) {
        char *eq = strchr(kv, '=');
        assert_non_null(eq);
        *eq = '\0';
        const struct json *v = json_get(args, kv);
        if (!v || v->kind != JSON_NUMBER || v->number != strtoll(eq + 1, NULL, 10))
            fail_msg("%s: %s is %lld, not %s", what, kv, v && v->kind == JSON_NUMBER ? v->number
                     : -999999, eq + 1);
        comm |= strcmp(kv, "comm") == 0;
    }
    if (comm) {
        same_string(what, string_of(args, "comm_name"), comm_name);
        n++;
    }
    if (args->n != n)
        fail_msg("%s: %d arguments read, not the %d of \"%s\"", what, args->n, n, want);
}

static void check_rank(const struct json *j, const char *program, int rank,
                       const struct rank_want *x)
{
    char what[128], want[512];
    const struct json *w = where_of(j, rank, program);
    int line = line_of(x->file, x->mark);
    snprintf(what, sizeof what, "%s rank %d", program, rank);
    same_string(what, string_of(w, "call"), x->call);
    same_string(what, string_of(w, "function"), x->function);
    assert_int_equal(json_get(w, "line")->number, line);
    same_args(what, w, x->args, x->comm_name);
    snprintf(want, sizeof want, "%sthe call site in %s at %s:%d%s",
             x->from_site == 2 ? "its caller's stack (" : "", x->function, x->file, line,
             x->from_site == 2 ? ")" : "");
    same_string(what, string_of(w, "args_from"),
                x->from_site ? want : x->from_library ? "the MPI library's debug information" : NULL);
    if (x->why_arg)
        snprintf(want, sizeof want, "%s: %sthe call site in %s at %s:%d %s", x->why_arg, NO_LIB,
                 x->function, x->file, line, x->why_site);
    else if (x->why)
        snprintf(want, sizeof want, "%s", x->why);
    same_string(what, string_of(w, "args_why"), x->why_arg || x->why ? want : NULL);
}

static void check_job(const struct job_want *c)
{
    struct json *j = dump_job(c->program, c->np, c->stock);
    for (int i = 0; i < 3 && c->ranks[i].call; i++)
        for (int r = 0; r < c->np; r++)
            if (c->ranks[i].rank == EVERY_RANK || c->ranks[i].rank == r)
                check_rank(j, c->program, r, &c->ranks[i]);
    json_free(j);
}

/* The stock samples at -O2: what their call sites describe, exactly. */
static void test_callsite__stock_samples_at_O2(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof at_o2 / sizeof at_o2[0]; i++)
        check_job(&at_o2[i]);
}

/* At -O0 no argument passed in a register is read, and each rank says its
 * call site describes none because the program was not optimised; those
 * passed on the stack are read there all the same. */
static void test_callsite__stock_samples_at_O0_say_why(void **state)
{
    (void)state;
    static const struct job_want roots = {
        "stock/O0/roots", 2, 1,
        {{0, "MPI_Gather", "main", "samples/roots.c", "MPI_Gather(", "root=0 comm=" WORLD,
          "MPI_COMM_WORLD", 2, 0, NULL, NULL, NULL},
         {1, "MPI_Gather", "main", "samples/roots.c", "MPI_Gather(", "root=1 comm=" WORLD,
          "MPI_COMM_WORLD", 2, 0, NULL, NULL, NULL}}};
    check_job(&roots);
    for (size_t i = 0; i < sizeof at_o0 / sizeof at_o0[0]; i++) {
        struct json *j = dump_job(at_o0[i].program, at_o0[i].np, 1);
        int line = line_of(at_o0[i].file, at_o0[i].mark);
        for (int r = 0; r < at_o0[i].np; r++) {
            if (at_o0[i].rank != EVERY_RANK && at_o0[i].rank != r)
                continue;
            char what[128], want[512];
            const struct json *w = where_of(j, r, at_o0[i].program);
            snprintf(what, sizeof what, "%s rank %d", at_o0[i].program, r);
            same_string(what, string_of(w, "call"), at_o0[i].call);
            same_args(what, w, "", NULL);
            same_string(what, string_of(w, "args_from"), NULL);
            snprintf(want, sizeof want, "%s's %s: %sthe call site in main at %s:%d %s",
                     at_o0[i].call, at_o0[i].arg, NO_LIB, at_o0[i].file, line, NOT_OPTIMISED);
            same_string(what, string_of(w, "args_why"), want);
        }
        json_free(j);
    }
}

/*
 * tests/fixtures/callsite.c: rank 0's source is an entry value of
 * recv_from's, which main's call site gives (from rbx, which recv_from
 * leaves as it was); rank 1 receives on MPI_COMM_SELF.
 */
static void test_callsite__entry_value_and_comm_self(void **state)
{
    (void)state;
    static const struct job_want fixture = {
        "stock/O2/callsite", 2, 1,
        {{0, "MPI_Recv", "recv_from", "tests/fixtures/callsite.c", "callsite: entry value",
          "source=1 tag=9 comm=" WORLD, "MPI_COMM_WORLD", 1, 0, NULL, NULL, NULL},
         {1, "MPI_Recv", "main", "tests/fixtures/callsite.c", "callsite: self",
          "source=0 tag=4 comm=" SELF, "MPI_COMM_SELF", 1, 0, NULL, NULL, NULL}}};
    check_job(&fixture);
}

/* An MPICH with its DWARF (the cached build): the library's own debug
 * information gives every argument, the stack-passed root too. */
static void test_callsite__library_debug_information_first(void **state)
{
    (void)state;
    static const struct job_want roots = {
        "roots", 2, 0,
        {{0, "MPI_Gather", "main", "samples/roots.c", "MPI_Gather(", "root=0 comm=" WORLD,
          "MPI_COMM_WORLD", 0, 1, NULL, NULL, NULL},
         {1, "MPI_Gather", "main", "samples/roots.c", "MPI_Gather(", "root=1 comm=" WORLD,
          "MPI_COMM_WORLD", 0, 1, NULL, NULL, NULL}}};
    check_job(&roots);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_callsite__stock_samples_at_O2),
        cmocka_unit_test(test_callsite__stock_samples_at_O0_say_why),
        cmocka_unit_test(test_callsite__entry_value_and_comm_self),
        cmocka_unit_test(test_callsite__library_debug_information_first),
    };
    return cmocka_run_group_tests_name("callsite", tests, NULL, NULL);
}
