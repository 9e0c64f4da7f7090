/*
 * test_procjob.c - a job's ranks from /proc when its launcher keeps no
 * MPIR_proctable (host/job/procjob.c): Open MPI 5's prterun and prted, as
 * PRRTE and OpenPMIx leave their ranks' environments (PMIX_NAMESPACE
 * "prterun-HOST-PID@N", PMIX_RANK, no size), and hydra-shaped ones.
 *
 * Each case is a tree shaped like /proc, written into a temporary
 * directory from a table (PID/stat, PID/status, PID/environ, PID/comm, as
 * the kernel writes them), and read with that directory as the root; one
 * case reads the real /proc, under processes this test starts.
 */
#define _GNU_SOURCE
#include "mqdhost.h"
#include "host/job/procjob.h"

#include <dirent.h>
#include <fcntl.h>
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

#define MAXENV 6

/* One process of a fixture tree. */
struct fproc {
    int pid, ppid;
    unsigned uid[4]; /* real, effective, saved, file system */
    const char *comm;
    const char *env[MAXENV]; /* NULL-terminated */
};

#define U(u) {u, u, u, u}
#define NS1 "PMIX_NAMESPACE=prterun-n1-100@1"
#define NS2 "PMIX_NAMESPACE=prterun-n1-100@2"

/* The launcher, prterun 100 of user 1000, and what every case has. */
#define PRTERUN {100, 1, U(1000), "prterun", {"PATH=/usr/bin", NULL}}
#define INIT {1, 0, U(0), "init", {NULL}}

/* A case: its tree, the launcher asked about, and what must come out:
 * ranks (pid:rank:world, in order) or an error containing says; the note
 * containing each of notes. */
struct tcase {
    const char *name;
    struct fproc procs[12];
    int launcher;
    const char *ranks; /* "101:0:0 102:1:0", NULL when an error is expected */
    const char *says;
    const char *notes[3];
};

static const struct tcase cases[] = {
    {"prterun, one node: PMIx rank and namespace, no size",
     {INIT, PRTERUN,
      {101, 100, U(1000), "ring", {NS1, "PMIX_RANK=0", "PMIX_SECURITY_MODE=native", NULL}},
      {102, 100, U(1000), "ring", {NS1, "PMIX_RANK=1", NULL}},
      {103, 100, U(1000), "ring", {NS1, "PMIX_RANK=2", NULL}}},
     100, "101:0:0 102:1:0 103:2:0", NULL,
     {"ranks from /proc", ", PMIx namespace \"prterun-n1-100@1\"",
      "does not give the job's size"}},
    {"ranks found in any pid order come out by rank",
     {INIT, PRTERUN, {150, 100, U(1000), "ring", {NS1, "PMIX_RANK=1", NULL}},
      {120, 100, U(1000), "ring", {NS1, "PMIX_RANK=0", NULL}}},
     100, "120:0:0 150:1:0", NULL, {"with rank 0-1"}},
    {"prterun whose node lacks a rank between others: other nodes hold it",
     {INIT, PRTERUN, {101, 100, U(1000), "ring", {NS1, "PMIX_RANK=0", NULL}},
      {102, 100, U(1000), "ring", {NS1, "PMIX_RANK=2", NULL}}},
     100, NULL, "no process under prterun 100 has rank 1", {NULL}},
    {"the same under prted: this node's share",
     {INIT, {90, 1, U(0), "sshd", {NULL}}, {200, 90, U(1000), "prted", {NULL}},
      {201, 200, U(1000), "ring", {NS1, "PMIX_RANK=4", NULL}},
      {202, 200, U(1000), "ring", {NS1, "PMIX_RANK=6", NULL}}},
     200, "201:4:0 202:6:0", NULL, {"under prted 200", "this node's share"}},
    {"two processes claim one rank",
     {INIT, PRTERUN, {101, 100, U(1000), "ring", {NS1, "PMIX_RANK=0", NULL}},
      {102, 100, U(1000), "ring", {NS1, "PMIX_RANK=1", NULL}},
      {103, 100, U(1000), "ring", {NS1, "PMIX_RANK=1", NULL}}},
     100, NULL, "processes 102 and 103 under 100 both have rank 1 in PMIx namespace", {NULL}},
    {"a wrapper and the program it runs: the program",
     {INIT, PRTERUN, {101, 100, U(1000), "sh", {NS1, "PMIX_RANK=0", NULL}},
      {105, 101, U(1000), "ring", {NS1, "PMIX_RANK=0", NULL}},
      {102, 100, U(1000), "ring", {NS1, "PMIX_RANK=1", NULL}}},
     100, "105:0:0 102:1:0", NULL, {NULL}},
    {"another user's process under the launcher is not read",
     {INIT, PRTERUN, {101, 100, U(1000), "ring", {NS1, "PMIX_RANK=0", NULL}},
      {102, 100, U(1001), "ring", {NS1, "PMIX_RANK=1", NULL}}},
     100, "101:0:0", NULL, {"1 process under it runs as another user: not read"}},
    {"nor one that runs a setuid program",
     {INIT, PRTERUN, {101, 100, U(1000), "ring", {NS1, "PMIX_RANK=0", NULL}},
      {102, 100, {1000, 0, 0, 0}, "ring", {NS1, "PMIX_RANK=1", NULL}},
      {103, 100, U(1000), "ring", {NS1, "PMIX_RANK=2", NULL}}},
     100, NULL, "has rank 1 (ranks up to 2 were found; its processes of another user", {NULL}},
    {"the job's size in the environment: a missing rank is said",
     {INIT, {100, 1, U(1000), "mpiexec", {NULL}},
      {101, 100, U(1000), "ring", {"PMI_RANK=0", "PMI_SIZE=3", NULL}},
      {102, 100, U(1000), "ring", {"PMI_RANK=1", "PMI_SIZE=3", NULL}}},
     100, NULL, "has rank 2 (ranks up to 1 were found, of the job's size", {NULL}},
    {"ranks that disagree on the size",
     {INIT, PRTERUN,
      {101, 100, U(1000), "ring", {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2", NULL}},
      {102, 100, U(1000), "ring", {"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=3", NULL}}},
     100, NULL, "disagree on the job's size", {NULL}},
    {"a rank at or past the size",
     {INIT, PRTERUN,
      {101, 100, U(1000), "ring", {"OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=2", NULL}}},
     100, NULL, "has rank 2, but its environment gives the job 2 ranks", {NULL}},
    {"a complete job by its size needs no warning about other nodes",
     {INIT, PRTERUN,
      {101, 100, U(1000), "ring", {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2", NULL}},
      {102, 100, U(1000), "ring", {"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2", NULL}}},
     100, "101:0:0 102:1:0", NULL, {"with rank 0-1 in their environment"}},
    {"MPI_Comm_spawn's children: PRRTE's next namespace, after the launched",
     {INIT, PRTERUN, {101, 100, U(1000), "ring", {NS2, "PMIX_RANK=0", NULL}},
      {102, 100, U(1000), "ring", {NS1, "PMIX_RANK=0", NULL}},
      {103, 100, U(1000), "ring", {NS1, "PMIX_RANK=1", NULL}},
      {104, 100, U(1000), "ring", {NS2, "PMIX_RANK=1", NULL}}},
     100, "102:0:0 103:1:0 101:0:1 104:1:1", NULL,
     {"\"prterun-n1-100@1\"", "2 processes of later PMIx namespaces"}},
    {"two unrelated namespaces: two jobs",
     {INIT, PRTERUN,
      {101, 100, U(1000), "ring", {"PMIX_NAMESPACE=jobA", "PMIX_RANK=0", NULL}},
      {102, 100, U(1000), "ring", {"PMIX_NAMESPACE=jobB", "PMIX_RANK=0", NULL}}},
     100, NULL, "belong to 2 jobs (PMIx namespaces \"jobA\" and \"jobB\"", {NULL}},
    {"hydra's spawned processes are left to the caller",
     {INIT, {100, 1, U(1000), "mqd-launch", {NULL}},
      {101, 100, U(1000), "ring", {"PMI_RANK=0", NULL}},
      {102, 100, U(1000), "child", {"PMI_RANK=0", "PMI_SPAWNED=1", NULL}}},
     100, "101:0:0", NULL, {NULL}},
    {"ranks outside the launcher's tree are not its",
     {INIT, PRTERUN, {101, 100, U(1000), "ring", {NS1, "PMIX_RANK=0", NULL}},
      {300, 1, U(1000), "ring", {NS1, "PMIX_RANK=1", NULL}}},
     100, "101:0:0", NULL, {NULL}},
    {"a namespace is the process's word: shown escaped",
     {INIT, PRTERUN,
      {101, 100, U(1000), "ring", {"PMIX_NAMESPACE=x\nDEADLOCK", "PMIX_RANK=0", NULL}}},
     100, "101:0:0", NULL, {"\"x\\nDEADLOCK\""}},
    {"no rank under it",
     {INIT, PRTERUN, {101, 100, U(1000), "sleep", {"HOME=/", NULL}}},
     100, NULL, "no descendant of prterun 100 has an MPI rank", {NULL}},
    {"no such launcher",
     {INIT, PRTERUN}, 4242, NULL, "process 4242 does not exist", {NULL}},
};

static void write_file(const char *dir, int pid, const char *name, const char *data,
                       size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%d/%s", dir, pid, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* procs, written as /proc would show them, under dir. */
static void write_tree(const char *dir, const struct fproc *procs, size_t n)
{
    for (size_t i = 0; i < n && procs[i].pid; i++) {
        const struct fproc *p = &procs[i];
        char path[512], text[1024];
        snprintf(path, sizeof path, "%s/%d", dir, p->pid);
        assert_int_equal(mkdir(path, 0755), 0);
        int len = snprintf(text, sizeof text,
                           "%d (%s) S %d %d %d 0 -1 4194560 0 0 0 0 3 1 0 0 20 0 1 0\n",
                           p->pid, p->comm, p->ppid, p->pid, p->pid);
        write_file(dir, p->pid, "stat", text, (size_t)len);
        len = snprintf(text, sizeof text, "Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\n"
                       "Uid:\t%u\t%u\t%u\t%u\nGid:\t0\t0\t0\t0\n", p->comm, p->uid[0],
                       p->uid[1], p->uid[2], p->uid[3]);
        write_file(dir, p->pid, "status", text, (size_t)len);
        len = snprintf(text, sizeof text, "%s\n", p->comm);
        write_file(dir, p->pid, "comm", text, (size_t)len);
        size_t at = 0;
        for (int e = 0; e < MAXENV && p->env[e]; e++) {
            size_t l = strlen(p->env[e]) + 1;
            assert_true(at + l < sizeof text);
            memcpy(text + at, p->env[e], l);
            at += l;
        }
        write_file(dir, p->pid, "environ", text, at);
    }
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char sub[512];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        static const char *const files[] = {"stat", "status", "comm", "environ"};
        for (size_t f = 0; f < 4; f++) {
            char path[600];
            snprintf(path, sizeof path, "%s/%s", sub, files[f]);
            unlink(path);
        }
        rmdir(sub);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* "pid:rank:world ..." of what was found. */
static void ranks_text(const struct mqdh__pj_job *job, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < job->nranks && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%d:%d:%d", i ? " " : "",
                               (int)job->ranks[i].pid, job->ranks[i].rank,
                               job->ranks[i].world);
}

static void test_procjob__fixture_trees(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const struct tcase *t = &cases[c];
        char dir[] = "/tmp/mqd-procjob-XXXXXX";
        assert_non_null(mkdtemp(dir));
        write_tree(dir, t->procs, sizeof t->procs / sizeof t->procs[0]);
        struct mqdh__pj_job job;
        char err[1024] = "", got[512];
        int rc = mqdh__pj_find(dir, t->launcher, &job, err, sizeof err);
        ranks_text(&job, got, sizeof got);
        remove_tree(dir);
        if (t->ranks) {
            if (rc != MQDH_OK)
                fail_msg("%s: rc %d: %s", t->name, rc, err);
            if (strcmp(got, t->ranks) != 0)
                fail_msg("%s: found \"%s\", not \"%s\"", t->name, got, t->ranks);
            int launched = 0;
            while (launched < job.nranks && job.ranks[launched].world == 0)
                launched++;
            assert_int_equal(job.nlaunched, launched);
            for (int k = 0; k < 3 && t->notes[k]; k++)
                if (!strstr(job.note, t->notes[k]))
                    fail_msg("%s: note \"%s\" does not say \"%s\"", t->name, job.note,
                             t->notes[k]);
        } else {
            if (rc != MQDH_E_JOB)
                fail_msg("%s: rc %d (found \"%s\"), not MQDH_E_JOB", t->name, rc, got);
            assert_int_equal(job.nranks, 0);
            if (!strstr(err, t->says))
                fail_msg("%s: \"%s\" does not say \"%s\"", t->name, err, t->says);
        }
        mqdh__pj_free(&job);
    }
}

/* The real /proc: three children of this test with PMIx's variables, one
 * a shell that runs the program (a wrapper), under this process as their
 * launcher. */
static void test_procjob__real_proc(void **state)
{
    (void)state;
    pid_t kids[3];
    int ready[2];
    assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
    for (int i = 0; i < 3; i++) {
        kids[i] = fork();
        assert_true(kids[i] >= 0);
        if (kids[i] == 0) {
            char rank[32];
            snprintf(rank, sizeof rank, "PMIX_RANK=%d", 2 - i);
            char *env[] = {"PMIX_NAMESPACE=prterun-test-1@1", rank, NULL};
            close(ready[0]);
            /* A group of its own: killed with it, the wrapper's sleep does
             * not outlive the test holding its output open for 30 s. */
            setpgid(0, 0);
            /* The wrapper keeps its own process: sleep is its child. */
            if (i == 0)
                execle("/bin/sh", "sh", "-c", "sleep 30; true", (char *)NULL, env);
            else
                execle("/bin/sleep", "sleep", "30", (char *)NULL, env);
            _exit(127);
        }
    }
    close(ready[1]);
    /* Every child has exec'd (the pipe's write end closes on exec). */
    char b;
    assert_int_equal(read(ready[0], &b, 1), 0);
    close(ready[0]);
    struct mqdh__pj_job job = {0};
    char err[1024] = "";
    int rc = MQDH_E_JOB;
    /* The wrapper's sleep may not have started yet. */
    for (int tries = 0; tries < 200; tries++) {
        mqdh__pj_free(&job);
        rc = mqdh__pj_find("/proc", getpid(), &job, err, sizeof err);
        if (rc == MQDH_OK && job.nranks == 3 && job.ranks[2].pid != kids[0])
            break;
        usleep(10000);
    }
    for (int i = 0; i < 3; i++)
        kill(-kids[i], SIGKILL);
    for (int i = 0; i < 3; i++)
        waitpid(kids[i], NULL, 0);
    if (rc != MQDH_OK)
        fail_msg("%s", err);
    assert_int_equal(job.nranks, 3);
    assert_int_equal(job.ranks[0].pid, kids[2]);
    assert_int_equal(job.ranks[1].pid, kids[1]);
    assert_int_equal(job.ranks[2].rank, 2);
    assert_int_not_equal(job.ranks[2].pid, kids[0]); /* the program, not its wrapper */
    assert_non_null(strstr(job.note, "prterun-test-1@1"));
    mqdh__pj_free(&job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_procjob__fixture_trees),
        cmocka_unit_test(test_procjob__real_proc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
