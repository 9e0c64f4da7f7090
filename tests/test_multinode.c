/*
 * test_multinode - mqdump --job on jobs across simulated nodes.
 *
 * Three nodes (tests/multinode.sh): Linux network, PID, UTS and mount
 * namespaces each, joined by a bridge, each with its own OpenSSH server
 * and host name.  The cached MPICH's hydra starts a sample across them
 * over ssh from nodeA, and mqdump runs in nodeA as a user would: the plain
 * `mqdump --job PID`, its agents reaching the other nodes through ssh.
 * The merged dump must be exact against the sample's .expect with every
 * rank's host, the cycle across nodes found and explained, an unreachable
 * node reported, and every rank on every node running and untraced after.
 *
 * Needs root and a kernel that allows namespaces: when it cannot make the
 * nodes, every test fails, saying why (never a silent pass).
 */
#define _GNU_SOURCE
#include "compare.h"
#include "expect.h"
#include "joblaunch.h"
#include "json.h"
#include "procstate.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char dir[PATH_MAX];      /* the nodes' keys and configuration */
static char script[PATH_MAX];   /* tests/multinode.sh */
static char up_error[4096];     /* why the nodes could not be made */

/* Run argv, its stdout (and stderr too unless to_stderr) into *out
 * (malloc'd); its exit status. */
static int run_to(char **out, const char *const *argv, int to_stderr)
{
    FILE *o = tmpfile();
    if (!o)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(fileno(o), 1);
        if (!to_stderr)
            dup2(fileno(o), 2);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    long len = ftell(o);
    rewind(o);
    char *buf = malloc((size_t)(len > 0 ? len : 0) + 1);
    if (buf)
        buf[fread(buf, 1, (size_t)(len > 0 ? len : 0), o)] = '\0';
    fclose(o);
    if (out)
        *out = buf;
    else
        free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int run(char **out, const char *const *argv)
{
    return run_to(out, argv, 0);
}

static int setup(void **state)
{
    (void)state;
    const char *src = getenv("MQD_TESTS_SRC");
    snprintf(script, sizeof script, "%s/multinode.sh", src ? src : "tests");
    snprintf(dir, sizeof dir, "/tmp/mqd-nodes.XXXXXX");
    if (!mkdtemp(dir)) {
        snprintf(up_error, sizeof up_error, "mkdtemp: %s", strerror(errno));
        return 0;
    }
    char *out = NULL;
    const char *argv[] = {script, "up", dir, "nodeA", "nodeB", "nodeC", NULL};
    int rc = run(&out, argv);
    if (rc != 0)
        snprintf(up_error, sizeof up_error,
                 "cannot make the simulated nodes (exit %d): %s -- this test needs root, "
                 "Linux namespaces and openssh-server (scripts/install-deps.sh)",
                 rc, out ? out : "?");
    free(out);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (dir[0]) {
        const char *down[] = {script, "down", dir, NULL};
        run(NULL, down);
        const char *rm[] = {"rm", "-rf", dir, NULL};
        run(NULL, rm);
    }
    return 0;
}

static void need_nodes(void)
{
    if (up_error[0])
        fail_msg("%s", up_error);
}

/* An mpiexec for hosts (hydra's -hosts), started over ssh: mqd-launch's
 * own "-launcher fork" is dropped. */
static const char *mpiexec_for(const char *hosts)
{
    static char path[PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/mpiexec-%.200s", dir, hosts);
    for (char *c = path + strlen(dir); *c; c++)
        if (*c == ':' || *c == ',')
            *c = '_';
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/bash\nargs=()\nwhile [ $# -gt 0 ]; do\n"
               "    if [ \"$1\" = -launcher ]; then shift 2; continue; fi\n"
               "    args+=(\"$1\"); shift\ndone\n"
               "exec %s/bin/mpiexec -launcher ssh -hosts %s \"${args[@]}\"\n",
            getenv("MQD_MPICH_PREFIX"), hosts);
    fclose(f);
    chmod(path, 0755);
    return path;
}

/* Start sample name of np ranks from nodeA across hosts. */
static void start(struct job *job, const char *name, int np, const char *hosts)
{
    need_nodes();
    char err[512];
    const char *prefix[] = {script, "run", dir, "nodeA", NULL};
    if (job_start_in(job, name, np, prefix, mpiexec_for(hosts), err, sizeof err) != 0)
        fail_msg("%s across %s: %s", name, hosts, err);
}

/* mqdump in nodeA with args (NULL-terminated): its standard output in
 * *out (its errors go to the test's); its exit status. */
static int mqdump(char **out, const char *const *args)
{
    char mq[PATH_MAX];
    job_build_path(mq, sizeof mq, "bin/mqdump");
    const char *argv[40] = {script, "run", dir, "nodeA", mq};
    int k = 5;
    for (int i = 0; args[i] && k < 39; i++)
        argv[k++] = args[i];
    argv[k] = NULL;
    return run_to(out, argv, 1);
}

/*
 * The processes of this machine (every node's) running the sample: seen
 * from here, outside the nodes' PID namespaces.  Each must be running and
 * untraced.  Returns how many there are.
 */
static int check_released(const char *name)
{
    char want[PATH_MAX], rel[256];
    snprintf(rel, sizeof rel, "samples/%s", name);
    job_build_path(want, sizeof want, rel);
    char real[PATH_MAX];
    if (!realpath(want, real))
        fail_msg("no %s", want);
    DIR *d = opendir("/proc");
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char link[64], exe[PATH_MAX];
        int pid = atoi(e->d_name);
        if (pid <= 0)
            continue;
        snprintf(link, sizeof link, "/proc/%d/exe", pid);
        ssize_t l = readlink(link, exe, sizeof exe - 1);
        if (l <= 0)
            continue;
        exe[l] = '\0';
        if (strcmp(exe, real) != 0)
            continue;
        char why[256];
        if (proc_released(pid, why, sizeof why) != 0)
            fail_msg("after mqdump, a rank of %s: %s", name, why);
        n++;
    }
    closedir(d);
    return n;
}

/* End the job, and anything of it a node's proxy left behind. */
static void stop(struct job *job, const char *name)
{
    job_stop(job);
    char rel[256], path[PATH_MAX];
    snprintf(rel, sizeof rel, "samples/%s", name);
    job_build_path(path, sizeof path, rel);
    const char *argv[] = {"pkill", "-KILL", "-f", path, NULL};
    run(NULL, argv);
}

static void load_expect(const char *name, struct expect *e)
{
    char err[512];
    if (expect_load_sample(name, e, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* Host of process rank in the dump's JSON. */
static const char *host_of(const struct json *j, int rank)
{
    const struct json *procs = json_get(j, "processes");
    for (int i = 0; i < procs->n; i++) {
        const struct json *p = &procs->items[i];
        if ((int)json_get(p, "rank")->number == rank) {
            const struct json *h = json_get(p, "host");
            return h && h->kind == JSON_STRING ? h->string : NULL;
        }
    }
    return NULL;
}

/*
 * A sample across nodes, dumped from nodeA: exact against its .expect,
 * its deadlocks found and explained, each rank on the host hydra put it.
 * hosts: hydra's -hosts; placed[r]: the host of rank r.
 */
static void check_across(const char *name, const char *hosts, const char *const *placed)
{
    struct expect e;
    load_expect(name, &e);
    struct job job;
    start(&job, name, e.np, hosts);
    char *out = NULL, pidarg[32];
    snprintf(pidarg, sizeof pidarg, "%d", (int)job.mpiexec);
    const char *args[] = {"--job", pidarg, "--json", NULL};
    int rc = mqdump(&out, args);
    int live = check_released(name);
    char msg[1024] = "";
    struct json *j = json_parse(out, msg, sizeof msg);
    int ok = j && rc == 0 && compare_dump(j, &e, &job, &(struct dll_limits){0}, msg, sizeof msg) == 0 &&
             compare_where(j, &e, msg, sizeof msg) == 0 &&
             compare_deadlock(j, &e, msg, sizeof msg) == 0;
    for (int r = 0; ok && r < e.np; r++) {
        const char *h = host_of(j, r);
        if (!h || strcmp(h, placed[r]) != 0) {
            snprintf(msg, sizeof msg, "rank %d: host %s, hydra put it on %s", r, h ? h : "none",
                     placed[r]);
            ok = 0;
        }
    }
    stop(&job, name);
    if (!ok)
        fail_msg("%s across %s (mqdump exit %d): %s\n%.3000s", name, hosts, rc, msg, out);
    assert_int_equal(live, e.np);
    json_free(j);
    free(out);
}

/* The ring's cycle crosses from nodeA to nodeB and back. */
static void test_multinode__ring_exact_across_two_nodes(void **state)
{
    (void)state;
    const char *placed[] = {"nodeA", "nodeA", "nodeB", "nodeB"};
    check_across("ring", "nodeA:2,nodeB:2", placed);
}

/* Receives from MPI_ANY_SOURCE that nobody sends: a knot of three
 * nodes, one rank each. */
static void test_multinode__anysource_exact_across_three_nodes(void **state)
{
    (void)state;
    const char *placed[] = {"nodeA", "nodeB", "nodeC"};
    check_across("anysource", "nodeA,nodeB,nodeC", placed);
}

/* Synchronous sends whose tags cross, one rank a node: a cycle of two. */
static void test_multinode__crossed_exact_across_two_nodes(void **state)
{
    (void)state;
    const char *placed[] = {"nodeA", "nodeB"};
    check_across("crossed", "nodeA,nodeB", placed);
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* The plain command on 8 ranks, 4 a node: one folded group, one cycle;
 * with --stacks, the agents' stacks merge into one path of all 8. */
static void test_multinode__ring_of_eight_folds_to_one_group(void **state)
{
    (void)state;
    struct job job;
    start(&job, "ring", 8, "nodeA:4,nodeB:4");
    char *out = NULL, pidarg[32];
    snprintf(pidarg, sizeof pidarg, "%d", (int)job.mpiexec);
    const char *sargs[] = {"--job", pidarg, "--stacks", NULL};
    int rc = mqdump(&out, sargs);
    print_message("%s", out);
    if (rc != 0 || !strstr(out, "where every process is: 8 stacks merged from main") ||
        count(out, "[0-7]\n") != 3 || !strstr(out, "\n  sample_block at sample.c:") ||
        !strstr(out, "\n    MPI_Waitall (libmpi"))
        fail_msg("mqdump --job --stacks (exit %d) printed:\n%s", rc, out);
    free(out);
    const char *args[] = {"--job", pidarg, NULL};
    rc = mqdump(&out, args);
    int live = check_released("ring");
    stop(&job, "ring");
    print_message("%s", out);
    if (rc != 0 || !strstr(out, "8 processes on 2 hosts: nodeA [0-3], nodeB [4-7]\n") ||
        count(out, "\nranks [") != 1 || !strstr(out, "\nranks [0-7] (8 processes") ||
        count(out, "DEADLOCK: ") != 1 ||
        !strstr(out, "DEADLOCK: a cycle of 8 processes, ranks [0-7]") ||
        !strstr(out, "[0-7] waits in MPI_Waitall at sample.c:") ||
        !strstr(out, ": receive(source=rank-1, tag=7"))
        fail_msg("mqdump --job (exit %d) printed:\n%s", rc, out);
    assert_int_equal(live, 8);
    free(out);
}

/* A node whose ssh server is gone: its ranks say so, the rest is dumped,
 * and nothing anywhere is left stopped.  (Last: nodeC stays unreachable.) */
static void test_multinode__an_unreachable_node_is_reported(void **state)
{
    (void)state;
    struct job job;
    start(&job, "ring", 6, "nodeA:2,nodeB:2,nodeC:2");
    const char *stop_sshd[] = {script, "sshd-stop", dir, "nodeC", NULL};
    assert_int_equal(run(NULL, stop_sshd), 0);
    char *out = NULL, pidarg[32];
    snprintf(pidarg, sizeof pidarg, "%d", (int)job.mpiexec);
    const char *args[] = {"--job", pidarg, "--json", NULL};
    int rc = mqdump(&out, args);
    int live = check_released("ring");
    stop(&job, "ring");
    char msg[512] = "";
    struct json *j = json_parse(out, msg, sizeof msg);
    if (!j)
        fail_msg("%s: %s", msg, out);
    assert_int_equal(rc, 1); /* some ranks not dumped */
    const struct json *procs = json_get(j, "processes");
    assert_int_equal(procs->n, 6);
    for (int i = 0; i < procs->n; i++) {
        const struct json *p = &procs->items[i];
        int r = (int)json_get(p, "rank")->number;
        const struct json *err = json_get(p, "error");
        if (r >= 4) {
            if (err->kind != JSON_STRING || strncmp(err->string, "host nodeC: ", 12) != 0 ||
                !strstr(err->string, "ssh"))
                fail_msg("rank %d on the unreachable node: %s", r,
                         err->kind == JSON_STRING ? err->string : "no error");
            print_message("rank %d: %s\n", r, err->string);
        } else if (err->kind != JSON_NULL) {
            fail_msg("rank %d: %s", r, err->string);
        }
    }
    assert_int_equal(live, 6);
    json_free(j);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_multinode__ring_exact_across_two_nodes),
        cmocka_unit_test(test_multinode__anysource_exact_across_three_nodes),
        cmocka_unit_test(test_multinode__crossed_exact_across_two_nodes),
        cmocka_unit_test(test_multinode__ring_of_eight_folds_to_one_group),
        cmocka_unit_test(test_multinode__an_unreachable_node_is_reported),
    };
    return cmocka_run_group_tests_name("multinode", tests, setup, teardown);
}
