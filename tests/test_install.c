/*
 * test_install.c - `make install` gives a tree that works as installed:
 * into a temporary DESTDIR, the installed mqdump dumps a live job with no
 * environment variable at all (it finds libmqdhost by its rpath and mqd's
 * DLL beside the library), a client builds with nothing but pkg-config,
 * and man renders mqdump(1).
 *
 * Run from the top of the tree (make check does); MQD_BUILD is the build.
 */
#define _GNU_SOURCE
#include "joblaunch.h"
#include "json.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* The output of a shell command (malloc'd) and its exit status. */
static char *sh(const char *cmd, int *status)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    size_t got;
    while ((got = fread(out + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 4096) {
            char *n = realloc(out, cap *= 2);
            assert_non_null(n);
            out = n;
        }
    }
    out[len] = '\0';
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

static char dest[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dest, sizeof dest, "/tmp/mqd-install.XXXXXX");
    if (!mkdtemp(dest))
        return -1;
    const char *build = getenv("MQD_BUILD");
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "make -s --no-print-directory BUILD=%s PREFIX=/usr/local DESTDIR=%s install 2>&1",
             build && *build ? build : "build", dest);
    int st;
    char *out = sh(cmd, &st);
    if (st != 0)
        fprintf(stderr, "make install failed:\n%s", out);
    free(out);
    return st == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dest);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_install__mqdump_runs_without_environment(void **state)
{
    (void)state;
    struct job job;
    char err[512], cmd[1024];
    if (job_start(&job, "ring", 3, err, sizeof err) != 0)
        fail_msg("ring: %s", err);
    /* env -i: no MQD_DLL, no LD_LIBRARY_PATH, nothing of the build. */
    snprintf(cmd, sizeof cmd, "env -i PATH=/usr/bin:/bin %s/usr/local/bin/mqdump --job %d --json",
             dest, (int)job.mpiexec);
    int st;
    char *out = sh(cmd, &st), msg[256], want[PATH_MAX];
    struct json *j = json_parse(out, msg, sizeof msg);
    job_stop(&job);
    if (st != 0 || !j)
        fail_msg("installed mqdump exited %d (%s):\n%s", st, j ? "" : msg, out);
    snprintf(want, sizeof want, "%s/usr/local/lib/libmqd_mpich.so", dest);
    const struct json *procs = json_get(j, "processes");
    assert_int_equal(procs->n, 3);
    for (int i = 0; i < procs->n; i++) {
        assert_string_equal(json_get(&procs->items[i], "dll")->string, want);
        assert_string_equal(json_get(&procs->items[i], "dll_source")->string, "mqd");
    }
    const struct json *dl = json_get(json_get(j, "deadlock"), "deadlocks");
    assert_int_equal(dl->n, 1);
    assert_string_equal(json_get(&dl->items[0], "kind")->string, "cycle");
    assert_int_equal(json_get(&dl->items[0], "ranks")->n, 3);
    json_free(j);
    free(out);
    /* And Open MPI's, beside it, where mqdump looks for it. */
    snprintf(want, sizeof want, "%s/usr/local/lib/libmqd_ompi.so", dest);
    if (access(want, R_OK) != 0)
        fail_msg("make install put no %s", want);
}

static void test_install__pkg_config_builds_a_client(void **state)
{
    (void)state;
    char cmd[2048], want[PATH_MAX];
    int st;
    snprintf(cmd, sizeof cmd,
             "PKG_CONFIG_SYSROOT_DIR=%s PKG_CONFIG_PATH=%s/usr/local/lib/pkgconfig "
             "cc -std=c11 -Wall -Werror -o %s/client tests/fixtures/mqdh_client.c "
             "$(PKG_CONFIG_SYSROOT_DIR=%s PKG_CONFIG_PATH=%s/usr/local/lib/pkgconfig "
             "pkg-config --cflags --libs mqdhost) 2>&1 && "
             "LD_LIBRARY_PATH=%s/usr/local/lib %s/client",
             dest, dest, dest, dest, dest, dest, dest);
    char *out = sh(cmd, &st);
    snprintf(want, sizeof want, "dll %s/usr/local/lib/libmqd_mpich.so\n", dest);
    if (st != 0 || !strstr(out, want) || !strstr(out, "cannot find the processes of the job"))
        fail_msg("the pkg-config client (exit %d) printed:\n%s", st, out);
    free(out);
}

static void test_install__man_page_renders(void **state)
{
    (void)state;
    char cmd[512];
    int st;
    snprintf(cmd, sizeof cmd, "MANPAGER=cat MANWIDTH=80 man -l %s/usr/local/share/man/man1/mqdump.1 2>&1",
             dest);
    char *out = sh(cmd, &st);
    if (st != 0 || !strstr(out, "EXIT STATUS") || !strstr(out, "--target-dll") ||
        strstr(out, "warning"))
        fail_msg("man -l (exit %d):\n%s", st, out);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_install__mqdump_runs_without_environment),
        cmocka_unit_test(test_install__pkg_config_builds_a_client),
        cmocka_unit_test(test_install__man_page_renders),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
