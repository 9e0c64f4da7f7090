/*
 * test_openmpi.c - real Open MPI jobs through Open MPI's own debug DLL.
 *
 * Open MPI 4.1.4 built from Debian's source package with libmpi's DWARF
 * (scripts/build-openmpi.sh, $MQD_OPENMPI_PREFIX) runs samples built with
 * its mpicc ($MQD_BUILD/ompi/NAME) under its mpirun; the plain
 * `mqdump --job PID` must find every rank through orterun's
 * MPIR_proctable, load the DLL the target names (libompi_dbg_msgq.so),
 * show each rank's MPI_COMM_WORLD and the posted operations the sample
 * promises (peer, tag, bytes), and explain the deadlocks that what the
 * DLL shows allows, exactly.
 *
 * What Open MPI's DLL shows differently is pinned here as allowances,
 * each explained from its source (docs/COMPARISON.md, "Open MPI's DLL"):
 * it lists MPI_COMM_NULL; it has no information on unexpected messages;
 * it reads a request's completion as one byte of a pointer, so a request
 * MPI_Waitall waits on may read "complete"; it hides MPI's own collective
 * traffic (negative tags).  A sample whose deadlock needs what the DLL
 * does not show is "cannot tell", never a wrong deadlock.
 *
 * Environment: MQD_BUILD, MQD_OPENMPI_PREFIX.
 */
#define _GNU_SOURCE
#include "tests/joblaunch.h"
#include "tests/json.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* A posted receive every rank has: from the rank `from` away (modulo the
 * job; 0: none promised), with tag and bytes. */
struct ompi_case {
    const char *sample;
    int np;
    const char *call;    /* where every rank is ("": they differ) */
    const char *members; /* the deadlock's ranks, NULL: none (cannot tell) */
    /* 1: members, or cannot tell: what the DLL shows varies from run to
     * run (a request's completion read as one byte of a pointer) */
    int may;
    int recv_from, recv_tag, recv_bytes;
};

static const struct ompi_case cases[] = {
    {"finalize", 2, "", "0,1", 0, 0, 0, 0},
    {"ssend", 2, "MPI_Ssend", "0,1", 0, 0, 0, 0},
    {"mismatch", 3, "", "0,1", 0, 0, 0, 0},
    /* Each probe's message would be an unexpected one: no information. */
    {"probe", 2, "MPI_Probe", NULL, 0, 0, 0, 0},
    /* Each rank's receive from its left neighbour reads "complete" or
     * "pending" (the DLL's one byte of a pointer): the cycle, or cannot
     * tell. */
    {"ring", 4, "MPI_Waitall", "0,1,2,3", 1, 3, 7, 32},
    {"anysource", 3, "MPI_Waitall", "0,1,2", 1, 0, 0, 0},
    /* Its tag-1 messages would be unexpected ones: no information. */
    {"crossed", 2, "MPI_Waitall", "0,1", 1, 1, 2, 16},
};

static const struct json *member(const struct json *o, const char *key, const char *what)
{
    const struct json *v = json_get(o, key);
    if (!v)
        fail_msg("%s: no \"%s\"", what, key);
    return v;
}

/* Process p's MPI_COMM_WORLD, checked: size np, p's own rank. */
static const struct json *world_of(const struct json *p, int np, const char *what)
{
    const struct json *cs = member(p, "communicators", what);
    long long rank = member(p, "rank", what)->number;
    for (int k = 0; k < cs->n; k++) {
        const struct json *c = &cs->items[k];
        if (strcmp(member(c, "name", what)->string, "MPI_COMM_WORLD") != 0)
            continue;
        if (member(c, "size", what)->number != np ||
            member(c, "local_rank", what)->number != rank)
            fail_msg("%s: rank %lld's MPI_COMM_WORLD has size %lld, rank %lld", what, rank,
                     member(c, "size", what)->number, member(c, "local_rank", what)->number);
        return c;
    }
    fail_msg("%s: rank %lld shows no MPI_COMM_WORLD", what, rank);
    return NULL;
}

static void run_case(const struct ompi_case *c)
{
    char name[64], err[512], mpirun[PATH_MAX];
    const char *prefix = getenv("MQD_OPENMPI_PREFIX");
    assert_non_null(prefix);
    snprintf(mpirun, sizeof mpirun, "%s/bin/mpirun", prefix);
    snprintf(name, sizeof name, "ompi/%s", c->sample);
    struct job job;
    if (job_start_in(&job, name, c->np, NULL, mpirun, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
    char pid[16], *out = NULL;
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    const char *args[] = {"--job", pid, "--json", NULL};
    int rc = job_run_mqdump(args, NULL, &out, NULL);
    int gone = 0;
    for (int r = 0; r < job.np; r++)
        gone += !job_pid_alive(job.ranks[r]);
    job_stop(&job);
    struct json *j = out ? json_parse(out, err, sizeof err) : NULL;
    if (!j || rc == 2 || gone)
        fail_msg("%s: exit %d, %d ranks gone, JSON %s:\n%s", name, rc, gone, j ? "ok" : err,
                 out ? out : "");
    const struct json *ps = member(j, "processes", name);
    assert_int_equal(ps->n, c->np);
    for (int i = 0; i < ps->n; i++) {
        const struct json *p = &ps->items[i];
        const struct json *dll = member(p, "dll", name), *e = member(p, "error", name);
        const struct json *where = member(p, "where", name);
        if (dll->kind != JSON_STRING || !strstr(dll->string, "/libompi_dbg_msgq.so") ||
            strcmp(member(p, "dll_source", name)->string, "target") != 0 ||
            e->kind != JSON_NULL)
            fail_msg("%s: process %d not dumped by the DLL the target names:\n%s", name, i, out);
        if (c->call[0] && (where->kind != JSON_OBJECT ||
                           strcmp(member(where, "call", name)->string, c->call) != 0))
            fail_msg("%s: process %d is not in %s:\n%s", name, i, c->call, out);
        const struct json *w = world_of(p, c->np, name);
        if (!c->recv_tag)
            continue;
        const struct json *rq = member(w, "pending_receives", name);
        long long rank = member(p, "rank", name)->number, want = (rank + c->recv_from) % c->np;
        int found = 0;
        for (int k = 0; rq->kind == JSON_ARRAY && k < rq->n; k++) {
            const struct json *o = &rq->items[k];
            found |= member(o, "desired_local_rank", name)->number == want &&
                     member(o, "desired_tag", name)->number == c->recv_tag &&
                     member(o, "desired_length", name)->number == c->recv_bytes;
        }
        if (!found)
            fail_msg("%s: rank %lld has no receive from %lld, tag %d, %d bytes:\n%s", name, rank,
                     want, c->recv_tag, c->recv_bytes, out);
    }
    const struct json *a = member(j, "deadlock", name);
    const struct json *dls = member(a, "deadlocks", name);
    char got[64] = "";
    if (dls->n == 1 && member(&dls->items[0], "ranks", name))
        json_ranks(&dls->items[0], got, sizeof got);
    const char *verdict = member(a, "verdict", name)->string;
    int none = !c->members || (c->may && !got[0]);
    if (dls->n > 1 || strcmp(got, none ? "" : c->members) != 0 ||
        strcmp(verdict, none ? "unknown" : "deadlock") != 0)
        fail_msg("%s: deadlock [%s] (%s), want [%s]:\n%s", name, got, verdict,
                 c->members ? c->members : "", out);
    json_free(j);
    free(out);
}

static void test_openmpi__samples_through_its_own_dll(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_openmpi__samples_through_its_own_dll),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
