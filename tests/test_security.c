/*
 * test_security.c - what a target, a launcher or another user can make
 * mqdump do, tried as an attacker would, through the mqdump command.
 *
 * The launcher is tests/fixtures/fake_launcher.c: an MPIR_proctable that
 * names whatever host and pid its command line says.  Each test is one
 * attack: a host name with a forged line and a terminal escape in it, a
 * host name that is an ssh option, a launcher command line that forges a
 * --list row, a symlink planted where --graph writes.
 *
 * Environment: MQD_BUILD, MQD_TESTS_SRC.
 */
#define _GNU_SOURCE
#include "tests/joblaunch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

/* A started fake launcher: its pid, its stdin (closing it ends it) and its
 * child's pid (a process with PMI_RANK=0). */
struct launcher {
    pid_t pid, child;
    int hold;
};

/* Start fake_launcher with args (NULL-terminated), wait for "ready". */
static void launch(struct launcher *l, const char *const *args)
{
    char err[512];
    int child;
    l->pid = job_fixture_start("fake_launcher", 0, args, &l->hold, &child, err, sizeof err);
    if (l->pid < 0)
        fail_msg("%s", err);
    l->child = child;
}

static void stop(struct launcher *l)
{
    close(l->hold);
    waitpid(l->pid, NULL, 0);
}

/* A launcher whose one rank is its child on this host; the child's pid,
 * as text, in pid. */
static void launch_local(struct launcher *l, char *pid, size_t len)
{
    const char *largs[] = {"--rank-child", "localhost", "0", NULL};
    launch(l, largs);
    snprintf(pid, len, "%d", (int)l->child);
}

/*
 * Run mqdump with args (NULL-terminated), with $MQD_REMOTE the test's
 * recording remote command; stdout and stderr together, malloc'd.
 */
static char *mqdump(const char *record, const char *const *args)
{
    char remote[PATH_MAX + 64], recording[PATH_MAX + 16], *out;
    snprintf(remote, sizeof remote, "MQD_REMOTE=%s/fixtures/remote.sh record {host}",
             env_or("MQD_TESTS_SRC", "tests"));
    snprintf(recording, sizeof recording, "MQD_RECORD=%s", record);
    const char *env[] = {remote, recording, NULL};
    int rc = job_run_mqdump(args, env, &out, &out);
    assert_true(rc >= 0 && rc < 128 && rc != 127 && out);
    return out;
}

/* No byte of out is a control character but a newline. */
static void assert_no_controls(const char *out)
{
    for (const char *c = out; *c; c++)
        if (((unsigned char)*c < 0x20 && *c != '\n') || *c == 0x7f)
            fail_msg("a control byte 0x%02x at %ld of:\n%s", (unsigned char)*c,
                     (long)(c - out), out);
}

/* A line of out starts with what. */
static int has_line(const char *out, const char *what)
{
    size_t l = strlen(what);
    for (const char *c = out; c; c = strchr(c, '\n')) {
        c += *c == '\n';
        if (strncmp(c, what, l) == 0)
            return 1;
    }
    return 0;
}

static void record_path(char *buf, size_t len)
{
    snprintf(buf, len, "/tmp/mqd-security-record.%d", (int)getpid());
    unlink(buf);
}

/* A host name holding a newline, a forged verdict and a colour escape is
 * shown escaped in every view and on stderr, and no agent is started. */
static void test_security__forged_host_names_are_escaped(void **state)
{
    (void)state;
    char record[64], job[16];
    record_path(record, sizeof record);
    struct launcher l;
    const char *largs[] = {"--rank-child", "evil\\nDEADLOCK: forged line\\e[31m", "0", NULL};
    launch(&l, largs);
    snprintf(job, sizeof job, "%d", (int)l.pid);
    const char *views[][4] = {{"--job", job, NULL}, {"--job", job, "--json", NULL}};
    for (int v = 0; v < 2; v++) {
        char *out = mqdump(record, views[v]);
        assert_no_controls(out);
        if (has_line(out, "DEADLOCK: forged"))
            fail_msg("a forged line in:\n%s", out);
        if (!strstr(out, v ? "evil\\u000aDEADLOCK: forged line\\u001b[31m"
                           : "evil\\nDEADLOCK: forged line\\e[31m"))
            fail_msg("the host name is not shown escaped in:\n%s", out);
        if (!strstr(out, "not a host name, so no agent is started for it"))
            fail_msg("no reason given in:\n%s", out);
        free(out);
    }
    stop(&l);
    assert_int_equal(access(record, F_OK), -1); /* no remote command ran */
}

/* A host name that is an ssh option never reaches the remote command. */
static void test_security__option_hosts_reach_no_command(void **state)
{
    (void)state;
    char record[64], job[16];
    record_path(record, sizeof record);
    struct launcher l;
    const char *largs[] = {"--rank-child", "-oProxyCommand=/tmp/mqd-never", "0", NULL};
    launch(&l, largs);
    snprintf(job, sizeof job, "%d", (int)l.pid);
    const char *args[] = {"--job", job, NULL};
    char *out = mqdump(record, args);
    stop(&l);
    if (access(record, F_OK) == 0)
        fail_msg("the remote command was run with the host name (%s)", record);
    if (!strstr(out, "host -oProxyCommand=/tmp/mqd-never: not a host name, so no agent is "
                     "started for it: it starts with '-'"))
        fail_msg("no refusal in:\n%s", out);
    free(out);
}

/* A launcher's command line with a newline in it forges no --list row. */
static void test_security__list_escapes_command_lines(void **state)
{
    (void)state;
    char record[64];
    record_path(record, sizeof record);
    struct launcher l;
    const char *largs[] = {"--rank-child", "n1\nFORGED 1 2 3", "0", NULL};
    launch(&l, largs);
    const char *args[] = {"--list", NULL};
    char *out = mqdump(record, args);
    assert_no_controls(out);
    if (has_line(out, "FORGED"))
        fail_msg("a forged row in:\n%s", out);
    if (!strstr(out, "n1\\nFORGED 1 2 3"))
        fail_msg("the launcher (its child %d) is not listed, escaped, in:\n%s", (int)l.child,
                 out);
    free(out);
    stop(&l);
}

/* --graph replaces a symlink planted where it writes, the DOT beside a
 * picture included; it never writes through one. */
static void test_security__graph_never_follows_symlinks(void **state)
{
    (void)state;
    char dir[] = "/tmp/mqd-security.XXXXXX", record[64];
    record_path(record, sizeof record);
    assert_non_null(mkdtemp(dir));
    char victim[128], pic[128], dot[128], plain[128], pid[16];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(pic, sizeof pic, "%s/hang.svg", dir);
    snprintf(dot, sizeof dot, "%s/hang.svg.dot", dir);
    snprintf(plain, sizeof plain, "%s/hang.dot", dir);
    FILE *f = fopen(victim, "w");
    assert_non_null(f);
    fputs("precious\n", f);
    fclose(f);
    const char *links[] = {pic, dot, plain};
    for (int i = 0; i < 3; i++)
        assert_int_equal(symlink(victim, links[i]), 0);
    struct launcher l;
    launch_local(&l, pid, sizeof pid);
    const char *a1[] = {"--pid", pid, "--graph", pic, NULL};
    const char *a2[] = {"--pid", pid, "--graph", plain, NULL};
    free(mqdump(record, a1));
    free(mqdump(record, a2));
    stop(&l);
    char buf[64] = "";
    f = fopen(victim, "r");
    assert_non_null(f);
    buf[fread(buf, 1, sizeof buf - 1, f)] = '\0';
    fclose(f);
    assert_string_equal(buf, "precious\n");
    for (int i = 0; i < 3; i++) {
        struct stat st;
        assert_int_equal(lstat(links[i], &st), 0);
        if (!S_ISREG(st.st_mode))
            fail_msg("%s is not the file mqdump wrote", links[i]);
        unlink(links[i]);
    }
    unlink(victim);
    assert_int_equal(rmdir(dir), 0); /* and no temporary file left behind */
}

/* ---------------------------------------------------------------- round 2 */

static int skip_unless_root(const char *what)
{
    if (geteuid() == 0)
        return 0;
    print_message("[  SKIP    ] needs root: %s (running as uid %u)\n", what,
                  (unsigned)geteuid());
    return 1;
}

/* mqdump with args and extra environment entries env (NULL-terminated:
 * "NAME=VALUE", kept by the caller); stdout and stderr together. */
static char *mqdump_env(const char *const *args, const char *const *env)
{
    char *out;
    int rc = job_run_mqdump(args, env, &out, &out);
    assert_true(rc >= 0 && rc < 128 && rc != 127 && out);
    return out;
}

/* The whole of a small file (malloc'd), or NULL. */
static char *file_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = calloc(1, 65536);
    if (buf)
        buf[fread(buf, 1, 65535, f)] = '\0';
    fclose(f);
    return buf;
}

/* A scratch directory of root's under /tmp; and a copy of a fixture
 * script in it, as name, owned by uid (0: root). */
static void scratch(char *dir, size_t len)
{
    snprintf(dir, len, "/tmp/mqd-security2.XXXXXX");
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chmod(dir, 0755), 0);
}

static void plant(const char *dir, const char *fixture_name, const char *name, uid_t uid)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s/fixtures/%s' '%s/%s' && chmod 755 '%s' "
             "'%s/%s' && chown -R %u:%u '%s'", dir, env_or("MQD_TESTS_SRC", "tests"),
             fixture_name, dir, name, dir, dir, name, (unsigned)uid, (unsigned)uid, dir);
    assert_int_equal(system(cmd), 0);
}

static void remove_tree(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/*
 * Finding 1: Graphviz renders the DOT mqdump wrote, from the descriptor
 * mqdump holds (its standard input), never the path again: a dot that
 * swaps the file at the path before it reads (as a user with the
 * directory could, between the rename and the render) still renders what
 * mqdump wrote.
 */
static void test_security__graph_renders_the_dot_it_wrote(void **state)
{
    (void)state;
    char dir[64], bin[128], pic[128], dot[128], pid[16];
    scratch(dir, sizeof dir);
    snprintf(bin, sizeof bin, "%s/bin", dir);
    plant(bin, "swapdot.sh", "dot", 0);
    snprintf(pic, sizeof pic, "%s/hang.svg", dir);
    snprintf(dot, sizeof dot, "%s/hang.svg.dot", dir);
    struct launcher l;
    launch_local(&l, pid, sizeof pid);
    char path[4200], swap[200];
    snprintf(path, sizeof path, "PATH=%s:%s", bin, env_or("PATH", "/usr/bin:/bin"));
    snprintf(swap, sizeof swap, "MQD_SWAP_DOT=%s", dot);
    const char *env[] = {path, swap, NULL};
    const char *args[] = {"--pid", pid, "--graph", pic, NULL};
    char *out = mqdump_env(args, env);
    stop(&l);
    char *drawn = file_text(pic), *kept = file_text(dot);
    if (!drawn || !strstr(drawn, "digraph") || strstr(drawn, "SWAPPED"))
        fail_msg("the picture is not what mqdump wrote: '%s'\nmqdump said:\n%s",
                 drawn ? drawn : "(none)", out);
    assert_non_null(kept);
    assert_non_null(strstr(kept, "SWAPPED")); /* the swap did happen */
    free(drawn);
    free(kept);
    free(out);
    remove_tree(dir);
}

/*
 * The files mqdump writes replace only its own user's: in a sticky
 * directory, another user's file, or a symlink they planted, is left as
 * it is (root's rename would pass over the directory's protection), with
 * the reason; a file of mqdump's own user is replaced.
 */
static void test_security__graph_leaves_other_users_files(void **state)
{
    (void)state;
    if (skip_unless_root("another user's files in a sticky directory"))
        return;
    char dir[64], shared[128], theirs[160], link[160], mine[160], pid[16];
    scratch(dir, sizeof dir);
    snprintf(shared, sizeof shared, "%s/shared", dir);
    assert_int_equal(mkdir(shared, 0), 0);
    assert_int_equal(chmod(shared, 01777), 0);
    snprintf(theirs, sizeof theirs, "%s/theirs.dot", shared);
    snprintf(link, sizeof link, "%s/link.dot", shared);
    snprintf(mine, sizeof mine, "%s/mine.dot", shared);
    FILE *f = fopen(theirs, "w");
    assert_non_null(f);
    fputs("theirs\n", f);
    fclose(f);
    assert_int_equal(chown(theirs, 65534, 65534), 0);
    assert_int_equal(symlink("/nonexistent", link), 0);
    assert_int_equal(lchown(link, 65534, 65534), 0);
    struct launcher l;
    launch_local(&l, pid, sizeof pid);
    const char *targets[] = {theirs, link, mine};
    for (int i = 0; i < 3; i++) {
        const char *args[] = {"--pid", pid, "--graph", targets[i], NULL};
        char *out = mqdump_env(args, NULL);
        struct stat st;
        assert_int_equal(lstat(targets[i], &st), 0);
        if (i < 2 && (st.st_uid != 65534 || !strstr(out, "another user's file is never "
                                                         "replaced")))
            fail_msg("%s (uid %u now) was replaced, or no reason given:\n%s", targets[i],
                     (unsigned)st.st_uid, out);
        if (i == 2 && (st.st_uid != 0 || !S_ISREG(st.st_mode)))
            fail_msg("mqdump did not write %s", targets[i]);
        free(out);
    }
    stop(&l);
    char *still = file_text(theirs);
    assert_non_null(still);
    assert_string_equal(still, "theirs\n");
    free(still);
    remove_tree(dir);
}

/*
 * Finding 8: as root, the environment (sudo -E keeps the user's) names no
 * program root runs unless it passes the trust rule: a dot, a remote
 * command ($MQD_REMOTE) and an agent ($MQD_AGENT) in a directory of uid
 * 65534 are refused with the reason, and never run (they would leave a
 * mark).
 */
static void test_security__root_runs_no_program_another_user_chose(void **state)
{
    (void)state;
    if (skip_unless_root("programs another user planted"))
        return;
    char dir[64], evil[128], mark[160], job[16];
    scratch(dir, sizeof dir);
    snprintf(evil, sizeof evil, "%s/evil", dir);
    plant(evil, "marker.sh", "dot", 65534);
    plant(evil, "marker.sh", "ssh", 65534);
    plant(evil, "marker.sh", "agent", 65534);
    snprintf(mark, sizeof mark, "%s/mark", dir);
    char path[4200], remote[200], agent[200], markenv[200], pic[160];
    snprintf(path, sizeof path, "PATH=%s:%s", evil, env_or("PATH", "/usr/bin:/bin"));
    snprintf(markenv, sizeof markenv, "MQD_MARK=%s", mark);
    snprintf(pic, sizeof pic, "%s/hang.svg", dir);
    struct launcher l;
    const char *largs[] = {"--rank-child", "node-elsewhere", "0", NULL};
    launch(&l, largs);
    snprintf(job, sizeof job, "%d", (int)l.pid);
    /* The remote command found on PATH, then named by $MQD_REMOTE; then the
     * agent. */
    snprintf(remote, sizeof remote, "MQD_REMOTE=%s/ssh {host}", evil);
    snprintf(agent, sizeof agent, "MQD_AGENT=%s/agent", evil);
    const char *env_path[] = {path, markenv, "MQD_REMOTE=ssh {host}", NULL};
    const char *env_remote[] = {remote, markenv, NULL};
    const char *env_agent[] = {agent, markenv, "MQD_REMOTE=ssh {host}", NULL};
    const char *const *envs[] = {env_path, env_remote, env_agent};
    /* On PATH, the planted ones are passed over for the trusted ones after
     * them (Debian's ssh and dot); named, they are refused. */
    const char *says[] = {NULL, "the remote command cannot be run:",
                          "refusing the agent given in $MQD_AGENT:"};
    for (int i = 0; i < 3; i++) {
        const char *args[] = {"--job", job, "--graph", pic, "--remote-timeout", "5", NULL};
        char *out = mqdump_env(args, envs[i]);
        if (says[i] && (!strstr(out, says[i]) || !strstr(out, "is owned by uid 65534")))
            fail_msg("case %d: no refusal ('%s') in:\n%s", i, says[i], out);
        char *drawn = file_text(pic);
        if (!drawn || !strstr(drawn, "<svg"))
            fail_msg("case %d: no picture drawn by a trusted dot:\n%s", i, out);
        free(drawn);
        free(out);
    }
    stop(&l);
    char *ran = file_text(mark);
    if (ran)
        fail_msg("a planted program ran: %s", ran);
    remove_tree(dir);
}

/*
 * Finding 8 (debuginfod): as root, a cache the environment puts in a
 * directory another user controls (their $HOME, kept by sudo -E) is not
 * used: the cache is root's own, said so, and nothing is made in theirs.
 */
static void test_security__root_keeps_its_own_debuginfod_cache(void **state)
{
    (void)state;
    if (skip_unless_root("a user's debuginfod cache"))
        return;
    char dir[64], home[128], cache[160], pid[16];
    scratch(dir, sizeof dir);
    snprintf(home, sizeof home, "%s/home", dir);
    assert_int_equal(mkdir(home, 0755), 0);
    assert_int_equal(chown(home, 65534, 65534), 0);
    snprintf(cache, sizeof cache, "%s/.cache", home);
    char homeenv[200];
    snprintf(homeenv, sizeof homeenv, "HOME=%s", home);
    /* A server that is not there: the client gives up at once. */
    const char *env[] = {homeenv, "DEBUGINFOD_URLS=http://127.0.0.1:9", "XDG_CACHE_HOME=",
                         "DEBUGINFOD_CACHE_PATH=", NULL};
    struct launcher l;
    launch_local(&l, pid, sizeof pid);
    const char *args[] = {"--pid", pid, "--stacks", NULL};
    char *out = mqdump_env(args, env);
    stop(&l);
    if (!strstr(out, "debuginfod's cache is ") || !strstr(out, "is owned by uid 65534"))
        fail_msg("no word of the cache in:\n%s", out);
    if (access(cache, F_OK) == 0)
        fail_msg("root made %s in another user's home", cache);
    free(out);
    remove_tree(dir);
}

/*
 * Finding 9: a launcher's host name that cannot be read, or is 256 bytes
 * or longer, is no host name - never "this host", which would attach that
 * pid here, possibly another process, and show it as the rank.
 */
static void test_security__long_host_names_are_no_host(void **state)
{
    (void)state;
    char record[64], job[16], host[301];
    record_path(record, sizeof record);
    memset(host, 'a', 300);
    host[300] = '\0';
    struct launcher l;
    const char *largs[] = {"--rank-child", host, "0", NULL};
    launch(&l, largs);
    snprintf(job, sizeof job, "%d", (int)l.pid);
    const char *args[] = {"--job", job, NULL};
    char *out = mqdump(record, args);
    stop(&l);
    if (!strstr(out, "(MPIR_proctable[0].host_name unreadable or over 255 bytes): not a host "
                     "name"))
        fail_msg("the rank was not refused as on no host:\n%s", out);
    assert_int_equal(access(record, F_OK), -1); /* no remote command ran */
    free(out);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_security__forged_host_names_are_escaped),
        cmocka_unit_test(test_security__option_hosts_reach_no_command),
        cmocka_unit_test(test_security__list_escapes_command_lines),
        cmocka_unit_test(test_security__graph_never_follows_symlinks),
        cmocka_unit_test(test_security__graph_renders_the_dot_it_wrote),
        cmocka_unit_test(test_security__graph_leaves_other_users_files),
        cmocka_unit_test(test_security__root_runs_no_program_another_user_chose),
        cmocka_unit_test(test_security__root_keeps_its_own_debuginfod_cache),
        cmocka_unit_test(test_security__long_host_names_are_no_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
