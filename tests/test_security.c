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
    const char *largs[] = {"--rank-child", "localhost", "0", NULL};
    launch(&l, largs);
    snprintf(pid, sizeof pid, "%d", (int)l.child);
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

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_security__forged_host_names_are_escaped),
        cmocka_unit_test(test_security__option_hosts_reach_no_command),
        cmocka_unit_test(test_security__list_escapes_command_lines),
        cmocka_unit_test(test_security__graph_never_follows_symlinks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
