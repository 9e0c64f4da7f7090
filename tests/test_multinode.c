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
 * node reported, and every rank on every node running and untraced after;
 * the same through one pdsh for all hosts (the {hosts} form), and for an
 * Open MPI job whose orted on the other node started its ranks; and
 * mqdump --sentinel beside a job across two nodes, which hangs late.
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

/* A new executable script DIR/NAME (':' and ',' in NAME as '_'), its path
 * in path[len], open for writing; close_script makes it runnable. */
static FILE *new_script(char *path, size_t len, const char *name)
{
    snprintf(path, len, "%s/%s", dir, name);
    for (char *c = path + strlen(dir); *c; c++)
        if (*c == ':' || *c == ',')
            *c = '_';
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    return f;
}

static void close_script(FILE *f, const char *path)
{
    fclose(f);
    chmod(path, 0755);
}

/* A launcher across nodes: a script DIR/NAME that runs `exec` with
 * mqd-launch's arguments but those that keep a launcher on one node (the
 * words for which the bash test `drop` holds, `shift` of them). */
static const char *launcher_for(const char *name, const char *drop, int shift,
                                const char *exec)
{
    static char path[PATH_MAX + 300];
    FILE *f = new_script(path, sizeof path, name);
    fprintf(f, "#!/bin/bash\nargs=()\nwhile [ $# -gt 0 ]; do\n"
               "    if %s; then shift %d; continue; fi\n"
               "    args+=(\"$1\"); shift\ndone\n"
               "exec %s \"${args[@]}\"\n",
            drop, shift, exec);
    close_script(f, path);
    return path;
}

/* An mpiexec for hosts (hydra's -hosts), started over ssh: mqd-launch's
 * own "-launcher fork" is dropped. */
static const char *mpiexec_for(const char *hosts)
{
    char name[256], exec[PATH_MAX + 300];
    snprintf(name, sizeof name, "mpiexec-%.200s", hosts);
    snprintf(exec, sizeof exec, "%s/bin/mpiexec -launcher ssh -hosts %s",
             getenv("MQD_MPICH_PREFIX"), hosts);
    return launcher_for(name, "[ \"$1\" = -launcher ]", 2, exec);
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

/* The sample's program: $MQD_BUILD/samples/NAME, or a NAME with a '/' in
 * $MQD_BUILD (ompi/ring), as joblaunch.c takes it. */
static void sample_path(char *buf, size_t len, const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "%s%s", strchr(name, '/') ? "" : "samples/", name);
    job_build_path(buf, len, rel);
}

/*
 * The processes of this machine (every node's) running the sample: seen
 * from here, outside the nodes' PID namespaces.  Each must be running and
 * untraced.  Returns how many there are.
 */
static int check_released(const char *name)
{
    char want[PATH_MAX];
    sample_path(want, sizeof want, name);
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
    char path[PATH_MAX];
    sample_path(path, sizeof path, name);
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
static void check_across(const char *name, const char *hosts, const char *const *placed,
                         const char *remote)
{
    struct expect e;
    load_expect(name, &e);
    /* What the MPICH under test keeps of messages between nodes. */
    const struct mpich_allowances *all = compare_mpich_allowed();
    for (int o = 0; o < e.nops; o++) {
        struct expect_op *x = &e.ops[o];
        int across = x->peer >= 0 && x->peer < e.np && x->rank >= 0 && x->rank < e.np &&
                     strcmp(placed[x->rank], placed[x->peer]) != 0;
        if (across && x->queue == EXPECT_UNEXPECTED && all->internode_unexpected_unseen)
            x->status = EXPECT_NOT_RECORDED;
        if (across && x->queue == EXPECT_SEND && all->internode_send_length_unknown)
            x->bytes = -1;
    }
    struct job job;
    start(&job, name, e.np, hosts);
    char *out = NULL, pidarg[32];
    snprintf(pidarg, sizeof pidarg, "%d", (int)job.mpiexec);
    const char *args[] = {"--job", pidarg, "--json", remote ? "--remote" : NULL, remote, NULL};
    int rc = mqdump(&out, args);
    int live = check_released(name);
    char msg[1024] = "";
    struct json *j = json_parse(out, msg, sizeof msg);
    int ok = j && rc == 0 && compare_dump(j, &e, &job, &all->limits, msg, sizeof msg) == 0 &&
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
    check_across("ring", "nodeA:2,nodeB:2", placed, NULL);
}

/* Receives from MPI_ANY_SOURCE that nobody sends: a knot of three
 * nodes, one rank each. */
static void test_multinode__anysource_exact_across_three_nodes(void **state)
{
    (void)state;
    const char *placed[] = {"nodeA", "nodeB", "nodeC"};
    check_across("anysource", "nodeA,nodeB,nodeC", placed, NULL);
}

/* Synchronous sends whose tags cross, one rank a node: a cycle of two. */
static void test_multinode__crossed_exact_across_two_nodes(void **state)
{
    (void)state;
    const char *placed[] = {"nodeA", "nodeB"};
    check_across("crossed", "nodeA,nodeB", placed, NULL);
}

/*
 * The all-hosts form: one pdsh for nodeB and nodeC together (through a
 * script that logs each time it runs), each agent picking its host's
 * ranks from the table it is given; the dump exact, as with one ssh per
 * host.
 */
static const char *pdsh_logged(void)
{
    static char path[PATH_MAX + 32];
    FILE *f = new_script(path, sizeof path, "pdsh-logged");
    fprintf(f, "#!/bin/sh\nhosts=$1\nshift\necho \"$hosts\" >>%s/pdsh.log\n"
               "exec pdsh -R ssh -w \"$hosts\" \"$@\"\n", dir);
    close_script(f, path);
    return path;
}

/* What the log of pdsh_logged holds (malloc'd; NULL: no log), emptied. */
static char *pdsh_log(void)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/pdsh.log", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *out = calloc(1, 4096);
    if (out)
        out[fread(out, 1, 4095, f)] = '\0';
    fclose(f);
    unlink(path);
    return out;
}

static void need_pdsh(void)
{
    const char *which[] = {"sh", "-c", "command -v pdsh", NULL};
    if (run(NULL, which) != 0)
        fail_msg("pdsh is not installed (scripts/install-deps.sh installs it)");
}

static void test_multinode__one_command_for_all_hosts(void **state)
{
    (void)state;
    need_nodes();
    need_pdsh();
    char remote[PATH_MAX + 64];
    snprintf(remote, sizeof remote, "%s {hosts}", pdsh_logged());
    free(pdsh_log());
    const char *placed[] = {"nodeA", "nodeA", "nodeB", "nodeC"};
    check_across("ring", "nodeA:2,nodeB:1,nodeC:1", placed, remote);
    char *log = pdsh_log();
    if (!log || strcmp(log, "nodeB,nodeC\n") != 0)
        fail_msg("the remote command ran for: '%s', not once for nodeB,nodeC", log ? log : "");
    free(log);
    const char *placed3[] = {"nodeA", "nodeB", "nodeC"};
    check_across("anysource", "nodeA,nodeB,nodeC", placed3, remote);
    free(pdsh_log());
}

/*
 * An agent started on every host at once finds which host it is on by
 * the names it is given; names that do not resolve are looked up all at
 * once, within 5 s together, however slow the resolver: here 300 names
 * under a name server that never answers (an address on the nodes'
 * network nobody has: each look-up takes the resolver's whole timeout).
 */
static void test_multinode__host_names_are_looked_up_at_once(void **state)
{
    (void)state;
    need_nodes();
    char conf[PATH_MAX + 32], mq[PATH_MAX];
    snprintf(conf, sizeof conf, "%s/resolv.slow", dir);
    FILE *f = fopen(conf, "w");
    assert_non_null(f);
    fprintf(f, "nameserver 10.213.0.250\noptions timeout:5 attempts:2\n");
    fclose(f);
    job_build_path(mq, sizeof mq, "bin/mqdump");
    char cmd[PATH_MAX * 2 + 200];
    static char names[300][32];
    const char *argv[320] = {script, "run", dir, "nodeA", "unshare", "--mount", "sh", "-c",
                             cmd, "sh"};
    int k = 10;
    for (int i = 0; i < 300; i++) {
        snprintf(names[i], sizeof names[i], "n%d.mqd.invalid=1:%d", i, i);
        argv[k++] = names[i];
    }
    argv[k] = NULL;
    /* First with nodeA's own resolver: its name server is out of reach
     * (no route from the nodes' network), each name fails at once.  Then
     * with a silent one, bound over /etc/resolv.conf in a mount namespace
     * of its own: nodeA's other commands keep theirs. */
    for (int slow = 0; slow < 2; slow++) {
        char *out = NULL;
        double t0 = job_now();
        snprintf(cmd, sizeof cmd, "%s%s%s exec %s --agent-any \"$@\"",
                 slow ? "mount --bind " : "", slow ? conf : "", slow ? " /etc/resolv.conf &&" : "",
                 mq);
        int rc = run(&out, argv);
        double took = job_now() - t0;
        print_message("%s resolver: exit %d after %.1f s: %s", slow ? "a silent" : "no", rc, took,
                      out ? out : "");
        if (rc != 2 || !out || !strstr(out, "this host (nodeA) is none of the 300 hosts given"))
            fail_msg("mqdump --agent-any, 300 names, none this host's (exit %d): %s", rc,
                     out ? out : "");
        if (took > 9.0)
            fail_msg("300 names took %.1f s to look up: not within 5 s together", took);
        if (slow && !strstr(out, "some names were not looked up in time"))
            fail_msg("the silent resolver answered in time?: %s", out);
        free(out);
    }
    /* The front end: a launcher whose table names the 300 hosts, one
     * rank each (tests/fixtures/fake_launcher.c), under the silent name
     * server; mqdump --job --local-only says where each rank is. */
    char path[PATH_MAX + 32], fl[PATH_MAX];
    job_build_path(fl, sizeof fl, "tests/fake_launcher");
    f = new_script(path, sizeof path, "job-of-300");
    fprintf(f, "#!/bin/sh\nmount --bind %s /etc/resolv.conf || exit 99\n"
               "rm -f %s/fl.in %s/fl.out; mkfifo %s/fl.in\n"
               "%s \"$@\" <%s/fl.in >%s/fl.out &\nexec 3>%s/fl.in\n"
               "for i in $(seq 200); do grep -q ready %s/fl.out && break; sleep 0.05; done\n"
               "%s --job $! --local-only\n",
            conf, dir, dir, dir, fl, dir, dir, dir, dir, mq);
    close_script(f, path);
    static char table[600][32];
    const char *jargv[620] = {script, "run", dir, "nodeA", "unshare", "--mount", path};
    k = 7;
    for (int i = 0; i < 300; i++) {
        snprintf(table[2 * i], sizeof table[0], "n%d.mqd.invalid", i);
        snprintf(table[2 * i + 1], sizeof table[0], "%d", 10000 + i);
        jargv[k++] = table[2 * i];
        jargv[k++] = table[2 * i + 1];
    }
    jargv[k] = NULL;
    char *out = NULL;
    double t0 = job_now();
    int rc = run(&out, jargv);
    double took = job_now() - t0;
    print_message("a job naming 300 hosts: exit %d after %.1f s\n", rc, took);
    if (!out || !strstr(out, "n299.mqd.invalid") || !strstr(out, "n0.mqd.invalid"))
        fail_msg("mqdump --job, 300 hosts (exit %d): %.3000s", rc, out ? out : "");
    if (took > 9.0)
        fail_msg("a job naming 300 hosts took %.1f s: its names not looked up at once", took);
    free(out);
}

/* An Open MPI job over ssh: orterun on nodeA starts an orted on nodeB,
 * which starts its ranks; mqdump --job on orterun dumps nodeB's through
 * its agent, with mqd's libmqd_ompi.so on both nodes (chosen by each
 * mqdump itself), each rank's MPI_COMM_WORLD and its posted receive from
 * its left neighbour exact, and the ring's cycle found. */
static const char *mpirun_for(const char *hosts)
{
    const char *prefix = getenv("MQD_OPENMPI_PREFIX");
    if (!prefix)
        fail_msg("MQD_OPENMPI_PREFIX is not set (the Open MPI built with debug information)");
    /* mqd-launch's "--mca plm isolated" (no remote daemons) is dropped;
     * orted passes on only the environment it is told to: the ranks'
     * readiness FIFO (mqd-launch's). */
    char name[256], exec[3 * PATH_MAX];
    snprintf(name, sizeof name, "mpirun-%.200s", hosts);
    snprintf(exec, sizeof exec, "%s/bin/mpirun --prefix %s --mca plm rsh --mca plm_rsh_agent ssh "
                                "-x MQD_READY_FIFO --host %s",
             prefix, prefix, hosts);
    return launcher_for(name, "[ \"$1\" = --mca ] && [ \"$2\" = plm ]", 3, exec);
}

static const struct json *field(const struct json *o, const char *key, const char *out)
{
    const struct json *v = o ? json_get(o, key) : NULL;
    if (!v)
        fail_msg("no \"%s\" in:\n%.3000s", key, out);
    return v;
}

/* Rank r's receive from r-1 (tag 7, 32 bytes) in its MPI_COMM_WORLD of
 * np. */
static void check_ompi_rank(const struct json *p, int np, const char *out)
{
    int r = (int)field(p, "rank", out)->number;
    const struct json *e = field(p, "error", out), *dll = field(p, "dll", out);
    if (e->kind != JSON_NULL || dll->kind != JSON_STRING ||
        !strstr(dll->string, "/libmqd_ompi.so") ||
        strcmp(field(p, "dll_source", out)->string, "mqd") != 0)
        fail_msg("rank %d not dumped by mqd's libmqd_ompi.so:\n%.3000s", r, out);
    const struct json *cs = field(p, "communicators", out);
    for (int k = 0; k < cs->n; k++) {
        const struct json *c = &cs->items[k];
        if (strcmp(field(c, "name", out)->string, "MPI_COMM_WORLD") != 0)
            continue;
        if (field(c, "size", out)->number != np || field(c, "local_rank", out)->number != r)
            fail_msg("rank %d: MPI_COMM_WORLD of size %lld, rank %lld", r,
                     field(c, "size", out)->number, field(c, "local_rank", out)->number);
        const struct json *rq = field(c, "pending_receives", out);
        for (int i = 0; rq->kind == JSON_ARRAY && i < rq->n; i++) {
            const struct json *o = &rq->items[i];
            if (field(o, "desired_local_rank", out)->number == (r + np - 1) % np &&
                field(o, "desired_tag", out)->number == 7 &&
                field(o, "desired_length", out)->number == 32)
                return;
        }
        fail_msg("rank %d: no receive from %d, tag 7, 32 bytes:\n%.3000s", r, (r + np - 1) % np,
                 out);
    }
    fail_msg("rank %d shows no MPI_COMM_WORLD:\n%.3000s", r, out);
}

static void test_multinode__openmpi_ring_across_two_nodes(void **state)
{
    (void)state;
    need_nodes();
    struct job job;
    char err[512];
    const char *prefix[] = {script, "run", dir, "nodeA", NULL};
    if (job_start_in(&job, "ompi/ring", 4, prefix, mpirun_for("nodeA:2,nodeB:2"), err,
                     sizeof err) != 0)
        fail_msg("Open MPI's ring across nodeA:2,nodeB:2: %s", err);
    char *out = NULL, pidarg[32];
    snprintf(pidarg, sizeof pidarg, "%d", (int)job.mpiexec);
    const char *args[] = {"--job", pidarg, "--json", NULL};
    int rc = mqdump(&out, args);
    int live = check_released("ompi/ring");
    stop(&job, "ompi/ring");
    char msg[512] = "";
    struct json *j = out ? json_parse(out, msg, sizeof msg) : NULL;
    if (!j || rc == 2)
        fail_msg("mqdump --job (exit %d): %s\n%.3000s", rc, msg, out ? out : "");
    const struct json *procs = field(j, "processes", out);
    assert_int_equal(procs->n, 4);
    const char *placed[] = {"nodeA", "nodeA", "nodeB", "nodeB"};
    for (int i = 0; i < procs->n; i++) {
        const struct json *p = &procs->items[i];
        int r = (int)field(p, "rank", out)->number;
        const char *h = host_of(j, r);
        if (r < 0 || r > 3 || !h || strcmp(h, placed[r]) != 0)
            fail_msg("rank %d: host %s, orterun put it on %s", r, h ? h : "none",
                     r >= 0 && r < 4 ? placed[r] : "?");
        check_ompi_rank(p, 4, out);
    }
    /* The ring's cycle, across the two nodes. */
    const struct json *a = field(j, "deadlock", out);
    const char *verdict = field(a, "verdict", out)->string;
    const struct json *dls = field(a, "deadlocks", out);
    char got[64] = "";
    if (dls->n == 1)
        json_ranks(&dls->items[0], got, sizeof got);
    if (strcmp(verdict, "deadlock") != 0 || strcmp(got, "0,1,2,3") != 0)
        fail_msg("verdict %s [%s]:\n%.3000s", verdict, got, out);
    print_message("Open MPI across nodeA, nodeB: exit %d, verdict %s [%s]\n", rc, verdict, got);
    assert_int_equal(live, 4);
    json_free(j);
    free(out);
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

/*
 * mqdump --sentinel beside a job across two nodes: every look dumps
 * nodeB's ranks through their agent (their CPU time in its result), the
 * late hang is caught, the cycle across the nodes explained, and every
 * rank on both nodes left running.  Bounded: SIGINT after 120 s.
 */
static void test_multinode__sentinel_across_two_nodes(void **state)
{
    (void)state;
    struct job job;
    start(&job, "latehang", 4, "nodeA:2,nodeB:2");
    char mq[PATH_MAX], pidarg[32], *out = NULL;
    job_build_path(mq, sizeof mq, "bin/mqdump");
    snprintf(pidarg, sizeof pidarg, "%d", (int)job.mpiexec);
    const char *argv[] = {script, "run", dir, "nodeA", "timeout", "-s", "INT", "120", mq,
                          "--sentinel", "--job", pidarg, "--interval", "1", NULL};
    int rc = run_to(&out, argv, 1);
    int live = check_released("latehang");
    stop(&job, "latehang");
    print_message("%s", out);
    if (rc != 3 || !strstr(out, "Hung: nothing moved for ") ||
        !strstr(out, "4 processes on 2 hosts: nodeA [0-1], nodeB [2-3]\n") ||
        !strstr(out, "DEADLOCK: a cycle of 4 processes, ranks [0-3]") ||
        !strstr(out, "waits in MPI_Recv(source=rank-1, tag=9"))
        fail_msg("mqdump --sentinel across two nodes (exit %d) printed:\n%s", rc, out);
    assert_int_equal(live, 4);
    free(out);
}

/* The dump of a job whose nodeC is unreachable, by mqdump with args: its
 * ranks on nodeC (4, 5) say so and name ssh, the rest are dumped. */
static void check_unreachable(const char *const *args, const char *form)
{
    char *out = NULL;
    int rc = mqdump(&out, args);
    char msg[512] = "";
    struct json *j = json_parse(out, msg, sizeof msg);
    if (!j)
        fail_msg("%s: %s: %s", form, msg, out);
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
                fail_msg("%s: rank %d on the unreachable node: %s", form, r,
                         err->kind == JSON_STRING ? err->string : "no error");
            print_message("%s: rank %d: %s\n", form, r, err->string);
        } else if (err->kind != JSON_NULL) {
            fail_msg("%s: rank %d: %s", form, r, err->string);
        }
    }
    json_free(j);
    free(out);
}

/* A node whose ssh server is gone: its ranks say so, the rest is dumped,
 * and nothing anywhere is left stopped; through one ssh per host and
 * through one pdsh for all.  (Last: nodeC stays unreachable.) */
static void test_multinode__an_unreachable_node_is_reported(void **state)
{
    (void)state;
    need_pdsh();
    struct job job;
    start(&job, "ring", 6, "nodeA:2,nodeB:2,nodeC:2");
    const char *stop_sshd[] = {script, "sshd-stop", dir, "nodeC", NULL};
    assert_int_equal(run(NULL, stop_sshd), 0);
    char pidarg[32];
    snprintf(pidarg, sizeof pidarg, "%d", (int)job.mpiexec);
    const char *args[] = {"--job", pidarg, "--json", NULL};
    check_unreachable(args, "ssh per host");
    const char *all[] = {"--job", pidarg, "--json", "--remote", "pdsh -R ssh -w {hosts}", NULL};
    check_unreachable(all, "pdsh for all hosts");
    int live = check_released("ring");
    stop(&job, "ring");
    assert_int_equal(live, 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_multinode__ring_exact_across_two_nodes),
        cmocka_unit_test(test_multinode__anysource_exact_across_three_nodes),
        cmocka_unit_test(test_multinode__crossed_exact_across_two_nodes),
        cmocka_unit_test(test_multinode__ring_of_eight_folds_to_one_group),
        cmocka_unit_test(test_multinode__one_command_for_all_hosts),
        cmocka_unit_test(test_multinode__openmpi_ring_across_two_nodes),
        cmocka_unit_test(test_multinode__host_names_are_looked_up_at_once),
        cmocka_unit_test(test_multinode__sentinel_across_two_nodes),
        cmocka_unit_test(test_multinode__an_unreachable_node_is_reported),
    };
    return cmocka_run_group_tests_name("multinode", tests, setup, teardown);
}
