/*
 * test_dump.c - the whole host protocol through the public API, against a
 * forked copy of this test (a real process, stopped and read with ptrace)
 * and the fake DLL (tests/fixtures/fake_dll.c), with no MPI involved:
 * every callback the DLL needs (DWARF type, symbol, fetch, byte order,
 * global rank, MPI-2 job and identity), no-information vs empty queues,
 * DLL error codes reaching the user, the choice and trust of the DLL the
 * target names, processes that are gone, mqdump killed mid-dump, and the
 * launcher's table taking the place of its ranks' environments.
 * After every dump, every target must be running and untraced.
 */
#define _GNU_SOURCE
#include "mqdhost.h"
#include "tests/fixtures/fixture_op.h"
#include "tests/procstate.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* What the fake DLL reads from the target: its type from this file's
 * DWARF, the variable by symbol.  The DLL names come as MPICH's and Open
 * MPI's do. */
struct mqd_fixture_op mqd_fixture_op = MQD_FIXTURE_OP_INIT;
char MPIR_dll_name[4096];
char **mpimsgq_dll_locations;

static char dll_buf[4096];

static const char *build_path(const char *rel)
{
    const char *b = getenv("MQD_BUILD");
    snprintf(dll_buf, sizeof dll_buf, "%s/%s", b ? b : "build", rel);
    return dll_buf;
}

/* A child that names dll_name / location (may be NULL) and waits. */
static pid_t start_target(const char *dll_name, const char *location)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t parent = getpid();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* A failed test returns without stop_target: go with it rather than
         * hold its output open. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(1);
        static char loc[4096];
        static char *list[2];
        snprintf(MPIR_dll_name, sizeof MPIR_dll_name, "%s", dll_name ? dll_name : "");
        if (location) {
            snprintf(loc, sizeof loc, "%s", location);
            list[0] = loc;
            mpimsgq_dll_locations = list;
        }
        if (write(fds[1], "r", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    char c;
    close(fds[1]);
    assert_int_equal(read(fds[0], &c, 1), 1);
    close(fds[0]);
    return pid;
}

static void stop_target(pid_t pid)
{
    char why[256];
    if (proc_released(pid, why, sizeof why) != 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("after the dump: %s", why);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void test_dump__mpi2_protocol_end_to_end(void **state)
{
    (void)state;
    pid_t pid = start_target(NULL, NULL);
    int rank = 5;
    struct mqdh_options o = {.size = sizeof o, .dll = build_path("tests/fake/fake_ok.so")};
    struct mqdh_dump *d = NULL;
    int rc = mqdh_dump_processes(&pid, &rank, NULL, 1, &o, &d);
    assert_non_null(d);
    const struct mqdh_process *p = &d->procs[0];
    if (rc != MQDH_OK)
        fail_msg("dump failed: %s", p->error ? p->error : mqdh_strerror(rc));
    assert_null(p->error);
    assert_int_equal(d->version, MQDH_VERSION);
    assert_int_equal(p->pid, pid);
    assert_int_equal(p->rank, 5);
    assert_int_equal(p->identity, 5);
    assert_string_equal(p->dll, o.dll);
    assert_non_null(strstr(p->image, "test_dump"));
    assert_int_equal(p->ncomms, 1);
    const struct mqdh_comm *c = &p->comms[0];
    assert_string_equal(c->name, "fixture-comm"); /* read from the target */
    assert_int_equal(c->unique_id, 0x5eed);
    assert_int_equal(c->size, 2);
    assert_int_equal(c->local_rank, 5); /* from mqs_get_global_rank */
    /* No information is not the same as empty. */
    assert_int_equal(c->queues[MQDH_SENDS].state, MQDH_QUEUE_NO_INFO);
    assert_int_equal(c->queues[MQDH_UNEXPECTED].state, MQDH_QUEUE_OK);
    assert_int_equal(c->queues[MQDH_UNEXPECTED].nops, 0);
    assert_int_equal(c->queues[MQDH_RECEIVES].state, MQDH_QUEUE_OK);
    assert_int_equal(c->queues[MQDH_RECEIVES].nops, 1);
    const struct mqdh_op *op = &c->queues[MQDH_RECEIVES].ops[0];
    assert_int_equal(op->status, 0);
    assert_int_equal(op->desired_tag, 7);
    assert_int_equal(op->desired_local_rank, 3);
    assert_int_equal(op->desired_length, 4096);
    assert_true(op->buffer == 0x1000);
    assert_string_equal(op->extra_text[0], "identity 5");
    assert_string_equal(op->extra_text[1], "global rank 5");
    assert_string_equal(op->extra_text[2], "job set up first: yes");
    assert_int_equal(strlen(op->extra_text[3]), 63); /* unterminated by the DLL */
    int image;
    void *at;
    assert_int_equal(sscanf(op->extra_text[4], "image %d, fixture at %p", &image, &at), 2);
    assert_true(at == (void *)&mqd_fixture_op); /* the target is a fork: at the same place */
    assert_true(p->stats.fetches >= 1);
    assert_true(p->stats.syscalls >= 1 && p->stats.syscalls <= p->stats.fetches + 4);
    assert_true(p->stats.callbacks > p->stats.fetches);
    mqdh_dump_free(d);
    stop_target(pid);
}

static void test_dump__mpi1_dll_gets_no_job(void **state)
{
    (void)state;
    pid_t pid = start_target(NULL, NULL);
    struct mqdh_options o = {.size = sizeof o, .dll = build_path("tests/fake/fake_mpi1.so")};
    struct mqdh_dump *d = NULL;
    int rank = 2;
    assert_int_equal(mqdh_dump_processes(&pid, &rank, NULL, 1, &o, &d), MQDH_OK);
    const struct mqdh_process *p = &d->procs[0];
    assert_int_equal(p->identity, -1);
    const struct mqdh_op *op = &p->comms[0].queues[MQDH_RECEIVES].ops[0];
    assert_string_equal(op->extra_text[0], "identity -1");
    assert_string_equal(op->extra_text[2], "job set up first: no");
    mqdh_dump_free(d);
    stop_target(pid);
}

static void test_dump__dll_errors_reach_the_user(void **state)
{
    (void)state;
    pid_t pid = start_target(NULL, NULL);
    struct mqdh_options o = {.size = sizeof o, .dll = build_path("tests/fake/fake_no_queues.so")};
    struct mqdh_dump *d = NULL;
    assert_int_equal(mqdh_dump_processes(&pid, NULL, NULL, 1, &o, &d), MQDH_E_NO_QUEUES);
    const char *e = d->procs[0].error;
    assert_non_null(e);
    assert_non_null(strstr(e, "fake: the fixture says it has no queues"));
    assert_non_null(strstr(e, "the fixture was built without queues"));
    assert_int_equal(d->procs[0].rank, -1); /* none given, none in the environment */
    mqdh_dump_free(d);
    stop_target(pid);
}

/* A copy of the good fake DLL in a fresh directory of the given modes. */
static void make_dll_copy(char *dir, size_t dirlen, char *file, size_t filelen, mode_t dmode,
                          mode_t fmode)
{
    snprintf(dir, dirlen, "/tmp/mqd-trust-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(file, filelen, "%s/libfake.so", dir);
    FILE *in = fopen(build_path("tests/fake/fake_ok.so"), "rb"), *out = fopen(file, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
    assert_int_equal(chmod(file, fmode), 0);
    assert_int_equal(chmod(dir, dmode), 0);
}

static void remove_dll_copy(const char *dir, const char *file)
{
    unlink(file);
    rmdir(dir);
}

static int dump_named(pid_t pid, int trust, char **error, char **dll)
{
    struct mqdh_options o = {.size = sizeof o, .trust_target_dll = trust};
    struct mqdh_dump *d = NULL;
    int rc = mqdh_dump_processes(&pid, NULL, NULL, 1, &o, &d);
    assert_non_null(d);
    *error = d->procs[0].error ? strdup(d->procs[0].error) : NULL;
    *dll = d->procs[0].dll ? strdup(d->procs[0].dll) : NULL;
    mqdh_dump_free(d);
    return rc;
}

static void test_dump__target_named_dll_must_be_trusted(void **state)
{
    (void)state;
    char dir[64], file[128], *error, *dll;
    unsetenv("MQD_DLL");

    /* A directory anyone can write to: refused, saying why, unless overridden. */
    make_dll_copy(dir, sizeof dir, file, sizeof file, 0777, 0644);
    pid_t pid = start_target(file, NULL);
    assert_int_equal(dump_named(pid, 0, &error, &dll), MQDH_E_DLL_UNTRUSTED);
    assert_non_null(error);
    assert_non_null(strstr(error, "refusing the debug DLL the process names"));
    assert_non_null(strstr(error, "writable by its group or by others"));
    assert_non_null(strstr(error, dir));
    free(error);
    free(dll);
    assert_int_equal(dump_named(pid, 1, &error, &dll), MQDH_OK);
    assert_null(error);
    assert_string_equal(dll, file);
    free(dll);
    stop_target(pid);
    remove_dll_copy(dir, file);

    /* The file itself writable by others. */
    make_dll_copy(dir, sizeof dir, file, sizeof file, 0755, 0666);
    pid = start_target(file, NULL);
    assert_int_equal(dump_named(pid, 0, &error, &dll), MQDH_E_DLL_UNTRUSTED);
    assert_non_null(strstr(error, "(mode 666)"));
    free(error);
    free(dll);
    stop_target(pid);
    remove_dll_copy(dir, file);

    /* Properly kept: loaded from MPIR_dll_name without any option. */
    make_dll_copy(dir, sizeof dir, file, sizeof file, 0755, 0644);
    pid = start_target(file, NULL);
    assert_int_equal(dump_named(pid, 0, &error, &dll), MQDH_OK);
    assert_string_equal(dll, file);
    free(dll);
    stop_target(pid);

    /* Open MPI's way: a list of locations, MPIR_dll_name empty. */
    pid = start_target(NULL, file);
    assert_int_equal(dump_named(pid, 0, &error, &dll), MQDH_OK);
    assert_string_equal(dll, file);
    free(dll);
    stop_target(pid);
    remove_dll_copy(dir, file);

    /* Nothing named at all. */
    pid = start_target(NULL, NULL);
    assert_int_equal(dump_named(pid, 0, &error, &dll), MQDH_E_NO_DLL);
    assert_non_null(strstr(error, "MPIR_dll_name"));
    free(error);
    free(dll);
    stop_target(pid);
}

static void test_dump__a_gone_process_fails_alone(void **state)
{
    (void)state;
    pid_t pids[2];
    pids[0] = start_target(NULL, NULL);
    pids[1] = start_target(NULL, NULL);
    kill(pids[1], SIGKILL);
    waitpid(pids[1], NULL, 0);
    struct mqdh_options o = {.size = sizeof o, .dll = build_path("tests/fake/fake_ok.so")};
    struct mqdh_dump *d = NULL;
    assert_int_equal(mqdh_dump_processes(pids, NULL, NULL, 2, &o, &d), MQDH_E_ATTACH);
    assert_null(d->procs[0].error);
    assert_int_equal(d->procs[0].ncomms, 1);
    assert_non_null(d->procs[1].error);
    assert_non_null(strstr(d->procs[1].error, "does not exist"));
    mqdh_dump_free(d);
    stop_target(pids[0]);
}

/*
 * A pid names the process only on its host.  A rank the launcher places on
 * another host is not attached (here, a process of this host with that
 * pid would be stopped and shown as the rank); one placed on this host,
 * under any of its names, is.
 */
static void test_dump__a_rank_on_another_host_is_not_attached(void **state)
{
    (void)state;
    pid_t pids[3];
    for (int i = 0; i < 3; i++)
        pids[i] = start_target(NULL, NULL);
    char me[256] = "";
    assert_int_equal(gethostname(me, sizeof me - 1), 0);
    const char *hosts[3] = {me, "node-elsewhere.invalid", "127.0.0.1"};
    struct mqdh_options o = {.size = sizeof o, .dll = build_path("tests/fake/fake_ok.so"),
                             .local_only = 1};
    struct mqdh_dump *d = NULL;
    assert_int_equal(mqdh_dump_processes(pids, NULL, hosts, 3, &o, &d), MQDH_E_ATTACH);
    assert_null(d->procs[0].error);
    assert_null(d->procs[2].error);
    assert_int_equal(d->procs[2].ncomms, 1);
    assert_non_null(d->procs[1].error);
    assert_non_null(strstr(d->procs[1].error, "node-elsewhere.invalid"));
    assert_string_equal(d->procs[1].host, "node-elsewhere.invalid");
    assert_int_equal(d->procs[1].ncomms, 0);
    mqdh_dump_free(d);
    /* Never traced, never stopped. */
    long tracer = -1;
    thread_state(pids[1], pids[1], &tracer);
    assert_int_equal(tracer, 0);
    char why[256];
    if (proc_released(pids[1], why, sizeof why) != 0)
        fail_msg("%s", why);
    for (int i = 0; i < 3; i++)
        stop_target(pids[i]);
}

/* ---------------------------------------------------------------- agents */

/* The remote command of tests/fixtures/remote.sh in mode `mode`. */
static const char *remote_cmd(const char *mode)
{
    static char buf[4096];
    const char *src = getenv("MQD_TESTS_SRC");
    snprintf(buf, sizeof buf, "%s/fixtures/remote.sh %s {host}", src ? src : "tests", mode);
    return buf;
}

/* Can this test make UTS namespaces (root, and a kernel that lets it)? */
static int can_unshare(void)
{
    return system("unshare --uts true 2>/dev/null") == 0;
}

/*
 * Each of a job's hosts through its own agent: here two processes on
 * "node-a" and one on "node-b", whose agents are this build's mqdump run
 * in a UTS namespace of that name.  The merged dump is the direct dump of
 * the same processes, but for what is each host's (host, the times), and
 * every process is let go.
 */
static void test_dump__other_hosts_through_their_agents(void **state)
{
    (void)state;
    if (!can_unshare())
        fail_msg("this test needs UTS namespaces (unshare --uts) to give an agent another "
                 "host name: run it as root on a kernel that allows them");
    pid_t pids[3];
    int ranks[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++)
        pids[i] = start_target(NULL, NULL);
    const char *hosts[3] = {"node-a", "node-a", "node-b"};
    char agent[4096];
    snprintf(agent, sizeof agent, "%s", build_path("bin/mqdump"));
    struct mqdh_options o = {.size = sizeof o, .dll = build_path("tests/fake/fake_ok.so"),
                             .remote = remote_cmd("ok"), .agent_path = agent};
    struct mqdh_dump *d = NULL, *direct = NULL;
    assert_int_equal(mqdh_dump_processes(pids, ranks, hosts, 3, &o, &d), MQDH_OK);
    assert_int_equal(mqdh_dump_processes(pids, ranks, NULL, 3, &o, &direct), MQDH_OK);
    for (int i = 0; i < 3; i++) {
        const struct mqdh_process *p = &d->procs[i], *q = &direct->procs[i];
        assert_null(p->error);
        assert_string_equal(p->host, hosts[i]);
        assert_int_equal(p->pid, pids[i]);
        assert_int_equal(p->rank, ranks[i]);
        assert_string_equal(p->dll, q->dll);
        assert_string_equal(p->image, q->image);
        assert_int_equal(p->ncomms, q->ncomms);
        assert_int_equal(p->ncomms, 1);
        assert_string_equal(p->comms[0].name, q->comms[0].name);
        assert_int_equal(p->comms[0].unique_id, q->comms[0].unique_id);
        for (int k = 0; k < MQDH_NQUEUES; k++) {
            const struct mqdh_queue *a = &p->comms[0].queues[k], *b = &q->comms[0].queues[k];
            assert_int_equal(a->state, b->state);
            assert_int_equal(a->nops, b->nops);
            for (int e = 0; e < a->nops; e++) {
                assert_int_equal(a->ops[e].desired_tag, b->ops[e].desired_tag);
                assert_int_equal(a->ops[e].desired_local_rank, b->ops[e].desired_local_rank);
                assert_int_equal(a->ops[e].desired_length, b->ops[e].desired_length);
                /* The same but for the MPI-2 job, which an agent's DLL is not
                 * given: it would know one host's processes only. */
                assert_string_equal(a->ops[e].extra_text[0], "identity -1");
                char id[32];
                snprintf(id, sizeof id, "identity %d", ranks[i]);
                assert_string_equal(b->ops[e].extra_text[0], id);
                assert_string_equal(a->ops[e].extra_text[1], b->ops[e].extra_text[1]);
                assert_string_equal(a->ops[e].extra_text[2], "job set up first: no");
                assert_string_equal(a->ops[e].extra_text[3], b->ops[e].extra_text[3]);
            }
        }
        assert_true(p->stats.callbacks > 0);
    }
    assert_int_equal(d->procs[0].comms[0].queues[MQDH_RECEIVES].nops, 1);
    mqdh_dump_free(d);
    mqdh_dump_free(direct);
    for (int i = 0; i < 3; i++)
        stop_target(pids[i]);
}

/*
 * Every way a host's agent can fail gives that host's ranks its reason,
 * leaves the other hosts' dumped, and never leaves a process stopped.
 */
static void test_dump__a_failed_agent_fails_its_host_alone(void **state)
{
    (void)state;
    static const struct {
        const char *mode, *says;
    } cases[] = {
        {"hang", "no result within 2 s"},
        {"garbage", "not an mqd result"},
        {"crash", "signal 11"},
        {"missing", "no agent there"},
        {"old", "another mqd version"},
        {"newer", "result format 2"},
        {"refused", "Connection refused"},
        {"truncated", "stops before its end"},
    };
    if (!can_unshare())
        fail_msg("this test needs UTS namespaces (unshare --uts): run it as root");
    char agent[4096];
    snprintf(agent, sizeof agent, "%s", build_path("bin/mqdump"));
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        pid_t pids[2] = {start_target(NULL, NULL), start_target(NULL, NULL)};
        char me[256] = "";
        assert_int_equal(gethostname(me, sizeof me - 1), 0);
        const char *hosts[2] = {me, "node-b"};
        struct mqdh_options o = {.size = sizeof o, .dll = build_path("tests/fake/fake_ok.so"),
                                 .remote = remote_cmd(cases[c].mode), .agent_path = agent,
                                 .remote_timeout = 2};
        struct mqdh_dump *d = NULL;
        assert_int_equal(mqdh_dump_processes(pids, NULL, hosts, 2, &o, &d), MQDH_E_REMOTE);
        assert_null(d->procs[0].error);
        assert_int_equal(d->procs[0].ncomms, 1);
        const char *e = d->procs[1].error;
        assert_non_null(e);
        if (strncmp(e, "host node-b: ", 13) != 0 || !strstr(e, cases[c].says))
            fail_msg("mode %s: the error reads '%s'", cases[c].mode, e);
        print_message("%-9s -> %s\n", cases[c].mode, e);
        for (const char *x = e; *x; x++)
            assert_true((unsigned char)*x >= ' '); /* nothing for a terminal to obey */
        assert_int_equal(d->procs[1].ncomms, 0);
        mqdh_dump_free(d);
        for (int i = 0; i < 2; i++)
            stop_target(pids[i]);
    }
}

/*
 * An agent answers only for the processes it was sent (issue 45, finding
 * 4): one whose result names this host's process (its pid, this host's
 * name) - a hostile node replacing rank 0 with a fabricated state - has
 * that process dropped; this host's own dump of it stands, and the
 * agent's own process is said unreported.
 */
static void test_dump__an_agent_answers_only_for_its_own(void **state)
{
    (void)state;
    if (!can_unshare())
        fail_msg("this test needs UTS namespaces (unshare --uts): run it as root");
    char agent[4096], me[256] = "", pid0[16];
    snprintf(agent, sizeof agent, "%s", build_path("bin/mqdump"));
    assert_int_equal(gethostname(me, sizeof me - 1), 0);
    pid_t pids[2] = {start_target(NULL, NULL), start_target(NULL, NULL)};
    snprintf(pid0, sizeof pid0, "%d", (int)pids[0]);
    setenv("MQD_FORGE_PID", pid0, 1);
    setenv("MQD_FORGE_HOST", me, 1);
    const char *hosts[2] = {me, "node-b"};
    struct mqdh_options o = {.size = sizeof o, .dll = build_path("tests/fake/fake_ok.so"),
                             .remote = remote_cmd("forge"), .agent_path = agent,
                             .remote_timeout = 20};
    struct mqdh_dump *d = NULL;
    assert_int_equal(mqdh_dump_processes(pids, NULL, hosts, 2, &o, &d), MQDH_E_REMOTE);
    unsetenv("MQD_FORGE_PID");
    unsetenv("MQD_FORGE_HOST");
    const struct mqdh_process *p0 = &d->procs[0], *p1 = &d->procs[1];
    assert_null(p0->error);
    assert_non_null(p0->image);
    if (strstr(p0->image, "forged"))
        fail_msg("another host's agent replaced this host's process %d", (int)pids[0]);
    assert_int_equal(p0->ncomms, 1);
    assert_non_null(p1->error);
    if (!strstr(p1->error, "host node-b: its agent did not report this process, and answered "
                           "for 1 it was not sent (dropped)"))
        fail_msg("process on node-b: '%s'", p1->error);
    mqdh_dump_free(d);
    for (int i = 0; i < 2; i++)
        stop_target(pids[i]);
}

/*
 * An agent that outlives its remote command (behind sshd, in a session of
 * its own) and is stuck in its DLL lets its ranks go when the front end,
 * its time up, closes the channel.
 */
static void test_dump__an_agent_lets_go_when_its_channel_closes(void **state)
{
    (void)state;
    if (!can_unshare())
        fail_msg("this test needs UTS namespaces (unshare --uts): run it as root");
    pid_t pid = start_target(NULL, NULL);
    const char *host = "node-b";
    char agent[4096];
    snprintf(agent, sizeof agent, "%s", build_path("bin/mqdump"));
    struct mqdh_options o = {.size = sizeof o, .dll = build_path("tests/fake/fake_slow.so"),
                             .remote = remote_cmd("detached"), .agent_path = agent,
                             .remote_timeout = 2};
    struct mqdh_dump *d = NULL;
    assert_int_equal(mqdh_dump_processes(&pid, NULL, &host, 1, &o, &d), MQDH_E_REMOTE);
    assert_non_null(strstr(d->procs[0].error, "no result within 2 s"));
    mqdh_dump_free(d);
    stop_target(pid); /* fails unless untraced and running within 2 s */
}

/* mqdump killed by sig while the slow DLL holds the target stopped. */
static void interrupt_mqdump(int sig)
{
    pid_t target = start_target(NULL, NULL);
    char pidarg[32], mqdump[4096], dll[4096];
    snprintf(pidarg, sizeof pidarg, "%d", (int)target);
    snprintf(mqdump, sizeof mqdump, "%s", build_path("bin/mqdump"));
    snprintf(dll, sizeof dll, "%s", build_path("tests/fake/fake_slow.so"));
    pid_t tool = fork();
    assert_true(tool >= 0);
    if (tool == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        execl(mqdump, "mqdump", "--pid", pidarg, "--dll", dll, (char *)NULL);
        _exit(127);
    }
    /* Wait until the target is traced, then a little more: the DLL is
     * loaded and asleep in mqs_setup_process. */
    long tracer = 0;
    for (int i = 0; i < 2500 && tracer <= 0; i++) {
        thread_state(target, target, &tracer);
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(tracer, tool);
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    assert_int_equal(kill(tool, sig), 0);
    int status;
    assert_int_equal(waitpid(tool, &status, 0), tool);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), sig);
    stop_target(target);
}

static void test_dump__mqdump_interrupted_lets_go(void **state)
{
    (void)state;
    interrupt_mqdump(SIGTERM);
    interrupt_mqdump(SIGINT);
}

/* The library reads no option beyond the size the caller gives, and
 * refuses options with no size at all. */
static void test_dump__options_by_their_size(void **state)
{
    (void)state;
    pid_t pid = start_target(NULL, NULL);
    struct mqdh_dump *d = NULL;
    struct mqdh_options o = {.dll = build_path("tests/fake/fake_ok.so")};
    assert_int_equal(mqdh_dump_processes(&pid, NULL, NULL, 1, &o, &d), MQDH_E_USAGE);
    assert_null(d);
    /* A caller that knows no member: the dll it does not know of is unread,
     * and this process (no MPI) names none. */
    o.size = offsetof(struct mqdh_options, dll);
    assert_int_equal(mqdh_dump_processes(&pid, NULL, NULL, 1, &o, &d), MQDH_E_NO_DLL);
    assert_non_null(d);
    assert_null(d->procs[0].dll);
    mqdh_dump_free(d);
    o.size = offsetof(struct mqdh_options, target_dll);
    assert_int_equal(mqdh_dump_processes(&pid, NULL, NULL, 1, &o, &d), MQDH_OK);
    assert_string_equal(d->procs[0].dll, o.dll);
    mqdh_dump_free(d);
    stop_target(pid);
}

/* A process whose environment a launcher would give rank 1 of 9, and
 * spawned: sleep, exec'd (the pipe closes at the exec). */
static pid_t start_env_target(void)
{
    int fds[2];
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    pid_t parent = getpid();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *env[] = {"PMI_RANK=1", "PMI_SIZE=9", "PMI_SPAWNED=1", NULL};
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(1);
        execle("/bin/sleep", "sleep", "60", (char *)NULL, env);
        _exit(127);
    }
    char c;
    close(fds[1]);
    assert_int_equal(read(fds[0], &c, 1), 0);
    close(fds[0]);
    return pid;
}

/* The launcher's table (mqdh_options.table_ranks) makes its processes
 * world 0 of its size, whatever their environments say: they are not
 * read.  The processes after it, and every one for a caller that knows
 * no table_ranks, are as their environments say. */
static void test_dump__table_ranks_are_world_0(void **state)
{
    (void)state;
    pid_t pids[2] = {start_env_target(), start_env_target()};
    int ranks[2] = {0, 1};
    struct mqdh_options o = {.size = sizeof o, .dll = build_path("tests/fake/fake_ok.so"),
                             .table_ranks = 1};
    struct mqdh_dump *d = NULL;
    (void)mqdh_dump_processes(pids, ranks, NULL, 2, &o, &d); /* sleep has no MPI */
    assert_non_null(d);
    assert_int_equal(d->procs[0].rank, 0);
    assert_int_equal(d->procs[0].world, 0);
    assert_int_equal(d->procs[0].world_size, 1);
    assert_int_equal(d->procs[1].rank, 1);
    assert_int_not_equal(d->procs[1].world, 0); /* PMI_SPAWNED */
    assert_int_equal(d->procs[1].world_size, 9);
    mqdh_dump_free(d);
    o.size = offsetof(struct mqdh_options, table_ranks);
    (void)mqdh_dump_processes(pids, ranks, NULL, 2, &o, &d);
    assert_non_null(d);
    assert_int_not_equal(d->procs[0].world, 0);
    assert_int_equal(d->procs[0].world_size, 9);
    mqdh_dump_free(d);
    stop_target(pids[0]);
    stop_target(pids[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dump__mpi2_protocol_end_to_end),
        cmocka_unit_test(test_dump__mpi1_dll_gets_no_job),
        cmocka_unit_test(test_dump__options_by_their_size),
        cmocka_unit_test(test_dump__table_ranks_are_world_0),
        cmocka_unit_test(test_dump__dll_errors_reach_the_user),
        cmocka_unit_test(test_dump__target_named_dll_must_be_trusted),
        cmocka_unit_test(test_dump__a_gone_process_fails_alone),
        cmocka_unit_test(test_dump__a_rank_on_another_host_is_not_attached),
        cmocka_unit_test(test_dump__mqdump_interrupted_lets_go),
        cmocka_unit_test(test_dump__other_hosts_through_their_agents),
        cmocka_unit_test(test_dump__a_failed_agent_fails_its_host_alone),
        cmocka_unit_test(test_dump__an_agent_answers_only_for_its_own),
        cmocka_unit_test(test_dump__an_agent_lets_go_when_its_channel_closes),
    };
    return cmocka_run_group_tests_name("dump", tests, NULL, NULL);
}
