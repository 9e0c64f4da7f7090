/*
 * test_loader.c - DLL validation against purpose-built DLLs
 * (tests/fixtures/fake_dll.c, one variant per defect), a shared object
 * that is no MQD DLL, a file that is no shared object, and a missing one.
 * Each must be refused with the reason named; the good ones must load.
 *
 * Then what the loader trusts (issue 33, findings 1 and 6): a DLL is loaded
 * exactly as it was checked, however its path is swapped around the check
 * (driven at the exact moment by this file's own dlopen and realpath,
 * which the loader, linked in statically, calls instead of libc's), and as
 * root a DLL the user gives that another user could have written is
 * refused unless --trust-target-dll.  tests/fixtures/evil_dll.c is the DLL
 * that must never run: its constructor sets $MQD_EVIL_RAN.
 */
#define _GNU_SOURCE
#include "mqdhost.h"
#include "host/protocol/callbacks.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static char path_buf[4096];

static const char *fixture(const char *name)
{
    const char *b = getenv("MQD_BUILD");
    snprintf(path_buf, sizeof path_buf, "%s/tests/%s", b ? b : "build", name);
    return path_buf;
}

struct refusal {
    const char *file;
    int code;
    const char *says; /* a part of the message */
};

static void test_loader__good_dlls_load(void **state)
{
    (void)state;
    char version[128], err[1024];
    int mpi2 = -1;
    assert_int_equal(mqdh_dll_check(fixture("fake/fake_ok.so"), version, sizeof version, &mpi2,
                                    err, sizeof err),
                     MQDH_OK);
    assert_string_equal(version, "mqd fake DLL (tests)");
    assert_int_equal(mpi2, 1);
    assert_int_equal(mqdh_dll_check(fixture("fake/fake_mpi1.so"), version, sizeof version, &mpi2,
                                    err, sizeof err),
                     MQDH_OK);
    assert_int_equal(mpi2, 0); /* no mqs_setup_job: MPI-1 protocol only */
}

static void test_loader__broken_dlls_are_refused_with_the_reason(void **state)
{
    (void)state;
    static const struct refusal cases[] = {
        {"fake/fake_no_setup_image.so", MQDH_E_DLL_SYMBOL, "lacks mqs_setup_image"},
        {"fake/fake_version99.so", MQDH_E_DLL_VERSION, "speaks interface version 99"},
        {"fake/fake_width4.so", MQDH_E_DLL_WIDTH, "built with 4-byte target addresses"},
        /* A shared object, but no MQD DLL: every entry point is named. */
        {"libtypes_fixture.so", MQDH_E_DLL_SYMBOL,
         "is not an MQD debug DLL: it lacks mqs_version_string, mqs_version_compatibility"},
        /* Not a shared object at all. */
        {"fake/not_a_dll.so", MQDH_E_DLL_LOAD, "cannot load"},
        {"fake/does_not_exist.so", MQDH_E_DLL_LOAD, "No such file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[1024] = "";
        const char *path = fixture(cases[i].file);
        int rc = mqdh_dll_check(path, NULL, 0, NULL, err, sizeof err);
        if (rc != cases[i].code || !strstr(err, cases[i].says) || !strstr(err, path))
            fail_msg("%s: code %d (want %d), message \"%s\" (want it to name the file and say "
                     "\"%s\")",
                     cases[i].file, rc, cases[i].code, err, cases[i].says);
    }
}

/*
 * A library that is no MQD DLL is refused before anything of it runs
 * (issue 45, finding 7): its exports are read from the file checked, with
 * libelf, before dlopen would run its constructors (which mark the
 * process: $MQD_EVIL_RAN).  A target naming such a root-owned library
 * (glibc's libmemusage.so) once ran it inside root's mqdump.
 */
static void test_loader__no_code_of_a_non_dll_runs(void **state)
{
    (void)state;
    unsetenv("MQD_EVIL_RAN");
    char err[1024] = "";
    const char *path = fixture("fake/not_mqd.so");
    int rc = mqdh_dll_check(path, NULL, 0, NULL, err, sizeof err);
    if (rc != MQDH_E_DLL_SYMBOL || !strstr(err, "is not an MQD debug DLL: it lacks "
                                                "mqs_version_string"))
        fail_msg("code %d, \"%s\"", rc, err);
    if (getenv("MQD_EVIL_RAN"))
        fail_msg("%s's constructor ran in the host", path);
}

static void test_loader__every_error_code_has_a_message(void **state)
{
    (void)state;
    const char *seen[32] = {0};
    for (int code = MQDH_OK; code <= MQDH_E_UNTRUSTED; code++) {
        const char *m = mqdh_strerror(code);
        assert_non_null(m);
        assert_true(strlen(m) > 5);
        for (int j = 0; j < code; j++)
            assert_string_not_equal(m, seen[j]);
        seen[code] = m;
    }
    assert_non_null(strstr(mqdh_strerror(MQDH_E_UNTRUSTED + 1), "unknown"));
    assert_non_null(strstr(mqdh_strerror(-1), "unknown"));
}

/* ---------------------------------------------------------------- trust */

/*
 * The moment between the check and the load.  The loader resolves a path
 * once (realpath) and loads with dlopen; linked in statically, it calls
 * these two instead of libc's.  Armed, realpath runs after_realpath once it
 * has resolved, dlopen runs before_dlopen before it loads: each once, and
 * counted in swaps.  A swap cannot fail the test itself (the loader holds
 * its lock): it sets swap_failed.  Everything else passes straight on.
 */
static void (*after_realpath)(void);
static void (*before_dlopen)(void);
static int swaps, swap_failed;

void *dlopen(const char *file, int mode)
{
    void *(*next)(const char *, int) = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    void (*swap)(void) = before_dlopen;
    if (swap && !(mode & RTLD_NOLOAD)) {
        before_dlopen = NULL;
        swap();
        swaps++;
    }
    return next(file, mode);
}

char *realpath(const char *restrict path, char *restrict resolved)
{
    char *(*next)(const char *, char *) =
        (char *(*)(const char *, char *))dlsym(RTLD_NEXT, "realpath");
    char *r = next(path, resolved);
    void (*swap)(void) = after_realpath;
    if (swap) {
        after_realpath = NULL;
        swap();
        swaps++;
    }
    return r;
}

/* A fresh directory per test, /tmp/mqd-loader-XXXXXX, mode 0755. */
static char scratch[64];

static const char *in_scratch(char *buf, size_t len, const char *rel)
{
    snprintf(buf, len, "%s/%s", scratch, rel);
    return buf;
}

static int scratch_setup(void **state)
{
    (void)state;
    snprintf(scratch, sizeof scratch, "/tmp/mqd-loader-XXXXXX");
    if (!mkdtemp(scratch) || chmod(scratch, 0755) != 0)
        return -1;
    unsetenv("MQD_EVIL_RAN");
    after_realpath = before_dlopen = NULL;
    swaps = swap_failed = 0;
    return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return type == FTW_DP ? rmdir(path) : unlink(path);
}

static int scratch_teardown(void **state)
{
    (void)state;
    after_realpath = before_dlopen = NULL;
    return nftw(scratch, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void scratch_dir(const char *rel, mode_t mode)
{
    char path[PATH_MAX];
    assert_int_equal(mkdir(in_scratch(path, sizeof path, rel), 0700), 0);
    assert_int_equal(chmod(path, mode), 0);
}

/* A copy of the fixture name (relative to the build's tests/) at rel. */
static void scratch_copy(const char *name, const char *rel, mode_t mode)
{
    char to[PATH_MAX];
    FILE *in = fopen(fixture(name), "rb"), *out = fopen(in_scratch(to, sizeof to, rel), "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(chmod(to, mode), 0);
}

static void scratch_symlink(const char *target, const char *rel)
{
    char path[PATH_MAX];
    assert_int_equal(symlink(target, in_scratch(path, sizeof path, rel)), 0);
}

static void assert_evil_never_ran(const char *what)
{
    if (getenv("MQD_EVIL_RAN"))
        fail_msg("%s: evil.so's constructor ran in the host: the DLL loaded is not the one "
                 "checked", what);
}

/*
 * The two ways a path reaches the loader: named by a target (the trust
 * rule, as choose.c asks for MPIR_dll_name) and given by the user
 * (mqdh_dll_check, as mqdump --check-dll, --dll and $MQD_DLL do).
 */
static const char *const ways[] = {"given", "named"};

static int load_by(int named, const char *path, struct mqdh__dll **dll, char *err, size_t errlen)
{
    *dll = NULL;
    if (named)
        return mqdh__dll_load_as(path, MQDH__DLL_TRUST_RULE, &mqdh__basic_callbacks, dll, err,
                                errlen);
    return mqdh_dll_check(path, NULL, 0, NULL, err, errlen);
}

/* The directory the swaps work in: scratch/<way>. */
static char swap_dir[128];

static void swap_in(const char *rel, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", swap_dir, rel);
}

/* lib.so, checked pointing at good.so, now points at evil.so. */
static void point_at_evil(void)
{
    char tmp[PATH_MAX], link[PATH_MAX];
    swap_in("lib.so.new", tmp, sizeof tmp);
    swap_in("lib.so", link, sizeof link);
    if (symlink("evil.so", tmp) != 0 || rename(tmp, link) != 0)
        swap_failed = 1;
}

/* Finding 1: a symlink the target names, flipped from mqd's DLL to the
 * user's own between the check and the load. */
static void test_loader__a_symlink_flipped_after_the_check_loads_what_was_checked(void **state)
{
    (void)state;
    for (int named = 0; named < 2; named++) {
        char rel[64], lib[PATH_MAX], good[PATH_MAX], to[64] = "", err[1024] = "";
        struct mqdh__dll *dll;
        struct stat st;
        scratch_dir(ways[named], 0755);
        snprintf(swap_dir, sizeof swap_dir, "%s/%s", scratch, ways[named]);
        snprintf(rel, sizeof rel, "%s/good.so", ways[named]);
        scratch_copy("fake/fake_ok.so", rel, 0644);
        in_scratch(good, sizeof good, rel);
        snprintf(rel, sizeof rel, "%s/evil.so", ways[named]);
        scratch_copy("fake/evil.so", rel, 0644);
        snprintf(rel, sizeof rel, "%s/lib.so", ways[named]);
        scratch_symlink("good.so", rel);
        in_scratch(lib, sizeof lib, rel);

        swaps = 0;
        before_dlopen = point_at_evil;
        int rc = load_by(named, lib, &dll, err, sizeof err);
        before_dlopen = NULL;
        assert_evil_never_ran(ways[named]);
        assert_false(swap_failed);
        assert_int_equal(swaps, 1); /* the swap did happen, between check and load */
        assert_int_equal(readlink(lib, to, sizeof to - 1), 7);
        if (rc != MQDH_OK)
            fail_msg("%s: %s", ways[named], err);
        if (named) {
            assert_int_equal(stat(good, &st), 0);
            assert_true(dll->dev == st.st_dev && dll->ino == st.st_ino);
        }
    }
}

/* sub/real, a directory when the path is resolved, becomes a symlink to
 * sub/evil, which holds evil.so as lib.so. */
static void dir_to_symlink(void)
{
    char real[PATH_MAX], old[PATH_MAX];
    swap_in("real", real, sizeof real);
    swap_in("real.old", old, sizeof old);
    if (rename(real, old) != 0 || symlink("evil", real) != 0)
        swap_failed = 1;
}

static void test_loader__a_directory_swapped_for_a_symlink_after_resolving_is_refused(
    void **state)
{
    (void)state;
    for (int named = 0; named < 2; named++) {
        char rel[64], link[PATH_MAX], err[1024] = "";
        struct mqdh__dll *dll;
        scratch_dir(ways[named], 0755);
        snprintf(swap_dir, sizeof swap_dir, "%s/%s", scratch, ways[named]);
        snprintf(rel, sizeof rel, "%s/real", ways[named]);
        scratch_dir(rel, 0755);
        snprintf(rel, sizeof rel, "%s/real/lib.so", ways[named]);
        scratch_copy("fake/fake_ok.so", rel, 0644);
        snprintf(rel, sizeof rel, "%s/evil", ways[named]);
        scratch_dir(rel, 0755);
        snprintf(rel, sizeof rel, "%s/evil/lib.so", ways[named]);
        scratch_copy("fake/evil.so", rel, 0644);
        snprintf(rel, sizeof rel, "%s/link.so", ways[named]);
        scratch_symlink("real/lib.so", rel);
        in_scratch(link, sizeof link, rel);

        swaps = 0;
        after_realpath = dir_to_symlink;
        int rc = load_by(named, link, &dll, err, sizeof err);
        after_realpath = NULL;
        assert_evil_never_ran(ways[named]);
        assert_false(swap_failed);
        assert_int_equal(swaps, 1); /* the path was resolved, then swapped */
        if (rc != MQDH_E_DLL_UNTRUSTED || !strstr(err, link) ||
            !strstr(err, "changed while it was being opened"))
            fail_msg("%s: code %d (want %d), message \"%s\" (want it to name %s and say it "
                     "changed)", ways[named], rc, MQDH_E_DLL_UNTRUSTED, err, link);
    }
}

/*
 * The rule for a DLL a target names covers every directory on its path: a
 * directory above it that its group can write is as bad as its own.  A
 * sticky directory of root's (/tmp, above scratch) is fine above it, not
 * as its own.
 */
static void test_loader__a_named_dll_is_trusted_only_if_its_whole_path_is(void **state)
{
    (void)state;
    char path[PATH_MAX], err[1024];
    struct mqdh__dll *dll;
    scratch_dir("kept", 0755);
    scratch_copy("fake/fake_ok.so", "kept/lib.so", 0644);
    scratch_dir("group", 0775);
    scratch_dir("group/sub", 0755);
    scratch_copy("fake/fake_ok.so", "group/sub/lib.so", 0644);

    in_scratch(path, sizeof path, "kept/lib.so");
    if (mqdh__dll_load_as(path, MQDH__DLL_TRUST_RULE, &mqdh__basic_callbacks, &dll, err,
                         sizeof err) != MQDH_OK)
        fail_msg("%s (under /tmp, sticky and root's) refused: %s", path, err);

    in_scratch(path, sizeof path, "group/sub/lib.so");
    int rc = mqdh__dll_load_as(path, MQDH__DLL_TRUST_RULE, &mqdh__basic_callbacks, &dll, err,
                              sizeof err);
    if (rc != MQDH_E_DLL_UNTRUSTED || !strstr(err, path) ||
        !strstr(err, "/group above it is writable by its group") || !strstr(err, "(mode 775)"))
        fail_msg("code %d, message \"%s\": want a refusal naming %s and its group-writable "
                 "parent", rc, err, path);

    /* Straight in /tmp: its own directory is shared. */
    char tmp[] = "/tmp/mqd-loader-lib-XXXXXX";
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    close(fd);
    rc = mqdh__dll_load_as(tmp, MQDH__DLL_TRUST_RULE, &mqdh__basic_callbacks, &dll, err,
                          sizeof err);
    unlink(tmp);
    if (rc != MQDH_E_DLL_UNTRUSTED || !strstr(err, "its directory /tmp is shared"))
        fail_msg("code %d, message \"%s\": want %s refused for its directory", rc, err, tmp);
}

/*
 * A walk starts below "/" at a directory an earlier walk found trusted
 * only if that is still the same directory: one swapped for another
 * (renamed away, a new one made in its place under a parent others can
 * now write) is walked to again from "/", and refused.
 */
static void test_loader__a_trusted_directory_swapped_after_a_check_is_checked_again(
    void **state)
{
    (void)state;
    char path[PATH_MAX], from[PATH_MAX], to[PATH_MAX], err[1024];
    struct mqdh__dll *dll;
    scratch_dir("memo", 0755);
    scratch_dir("memo/a", 0755);
    scratch_dir("memo/a/b", 0755);
    scratch_copy("fake/fake_ok.so", "memo/a/b/lib.so", 0644);
    in_scratch(path, sizeof path, "memo/a/b/lib.so");
    if (mqdh__dll_load_as(path, MQDH__DLL_TRUST_RULE, &mqdh__basic_callbacks, &dll, err,
                         sizeof err) != MQDH_OK)
        fail_msg("%s refused: %s", path, err);

    in_scratch(from, sizeof from, "memo/a");
    in_scratch(to, sizeof to, "memo/a.old");
    assert_int_equal(rename(from, to), 0);
    scratch_dir("memo/a", 0775);
    scratch_dir("memo/a/b", 0755);
    scratch_copy("fake/fake_ok.so", "memo/a/b/lib.so", 0644);
    int rc = mqdh__dll_load_as(path, MQDH__DLL_TRUST_RULE, &mqdh__basic_callbacks, &dll, err,
                              sizeof err);
    if (rc != MQDH_E_DLL_UNTRUSTED || !strstr(err, "/memo/a above it is writable by its group"))
        fail_msg("code %d, message \"%s\": want %s refused for its new parent", rc, err, path);
}

/*
 * The loaded DLLs are known by their file (device and inode), not by the
 * name they were asked for with: two names of one file are one DLL, and a
 * new file put where the old one was is a new DLL.
 */
static void test_loader__a_dll_is_known_by_its_file_not_its_name(void **state)
{
    (void)state;
    char a[PATH_MAX], b[PATH_MAX], next[PATH_MAX], err[1024];
    struct mqdh__dll *first, *again, *replaced;
    scratch_copy("fake/fake_ok.so", "a.so", 0644);
    scratch_symlink("a.so", "b.so");
    in_scratch(a, sizeof a, "a.so");
    in_scratch(b, sizeof b, "b.so");
    if (mqdh__dll_load(a, &mqdh__basic_callbacks, &first, err, sizeof err) != MQDH_OK ||
        mqdh__dll_load(b, &mqdh__basic_callbacks, &again, err, sizeof err) != MQDH_OK)
        fail_msg("%s", err);
    assert_ptr_equal(first, again);
    assert_int_equal(first->mpi2, 1);

    scratch_copy("fake/fake_mpi1.so", "next.so", 0644);
    assert_int_equal(rename(in_scratch(next, sizeof next, "next.so"), a), 0);
    if (mqdh__dll_load(a, &mqdh__basic_callbacks, &replaced, err, sizeof err) != MQDH_OK)
        fail_msg("%s", err);
    assert_ptr_not_equal(replaced, first);
    assert_int_equal(replaced->mpi2, 0); /* fake_mpi1.so's, not the cached fake_ok.so */
}

static int skip_unless_root(void)
{
    if (geteuid() == 0)
        return 0;
    print_message("[  SKIP    ] needs root: the rule for a DLL given to mqd running as root "
                  "(running as uid %u)\n", (unsigned)geteuid());
    return 1;
}

/* What another user could have written, as the four ways it can be. */
static const struct others_case {
    const char *rel;
    const char *says;
} others_cases[] = {
    {"owned/lib.so", "is owned by uid 65534: loading it as root runs that user's code as root"},
    {"open/lib.so", "is writable by its group or by others (mode 666)"},
    {"shared/lib.so", "/shared is writable by its group or by others (mode 777)"},
    {"theirs/sub/lib.so", "/theirs above it is owned by uid 65534"},
};

static void make_others_cases(void)
{
    char path[PATH_MAX];
    scratch_dir("owned", 0755);
    scratch_copy("fake/fake_ok.so", "owned/lib.so", 0644);
    assert_int_equal(chown(in_scratch(path, sizeof path, "owned/lib.so"), 65534, 65534), 0);
    scratch_dir("open", 0755);
    scratch_copy("fake/fake_ok.so", "open/lib.so", 0666);
    scratch_dir("shared", 0777);
    scratch_copy("fake/fake_ok.so", "shared/lib.so", 0644);
    scratch_dir("theirs", 0755);
    assert_int_equal(chown(in_scratch(path, sizeof path, "theirs"), 65534, 65534), 0);
    scratch_dir("theirs/sub", 0755);
    scratch_copy("fake/fake_ok.so", "theirs/sub/lib.so", 0644);
}

/* Finding 6: as root, --dll, $MQD_DLL and --check-dll (mqdh_dll_check)
 * refuse what another user could have written, saying why, unless
 * --trust-target-dll; as anyone else they load what they are given. */
static void test_loader__as_root_a_given_dll_others_could_write_is_refused(void **state)
{
    (void)state;
    if (skip_unless_root())
        skip();
    make_others_cases();
    for (size_t i = 0; i < sizeof others_cases / sizeof others_cases[0]; i++) {
        const struct others_case *c = &others_cases[i];
        char path[PATH_MAX], err[1024] = "";
        struct mqdh__dll *dll;
        in_scratch(path, sizeof path, c->rel);
        int rc = mqdh_dll_check(path, NULL, 0, NULL, err, sizeof err);
        if (rc != MQDH_E_DLL_UNTRUSTED || !strstr(err, path) || !strstr(err, c->says) ||
            !strstr(err, "as root") || !strstr(err, "pass --trust-target-dll to load it anyway"))
            fail_msg("%s: code %d (want %d), message \"%s\" (want it to name the file, say "
                     "\"%s\" and the risk)", c->rel, rc, MQDH_E_DLL_UNTRUSTED, err, c->says);
        if (mqdh__dll_load_as(path, MQDH__DLL_TRUST_ANY, &mqdh__basic_callbacks, &dll, err,
                             sizeof err) != MQDH_OK)
            fail_msg("%s with --trust-target-dll: %s", c->rel, err);
        /* Not root: the user's own choice, loaded as given. */
        assert_int_equal(seteuid(65534), 0);
        rc = mqdh_dll_check(path, NULL, 0, NULL, err, sizeof err);
        assert_int_equal(seteuid(0), 0);
        if (rc != MQDH_OK)
            fail_msg("%s as uid 65534: %s", c->rel, err);
    }
}

/* A process to dump: a fork of this test, waiting. */
static pid_t start_target(void)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t parent = getpid();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent ||
            write(fds[1], "r", 1) != 1)
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

/* The same through a dump: mqdh_options.dll and $MQD_DLL, refused as root,
 * loaded (and called: the fake DLL looks for its type) with
 * trust_target_dll. */
static void test_loader__as_root_a_dump_refuses_such_a_dll_unless_trusted(void **state)
{
    (void)state;
    if (skip_unless_root())
        skip();
    char path[PATH_MAX];
    scratch_dir("owned", 0755);
    scratch_copy("fake/fake_ok.so", "owned/lib.so", 0644);
    assert_int_equal(chown(in_scratch(path, sizeof path, "owned/lib.so"), 65534, 65534), 0);
    static const char *const how[] = {"given with --dll", "given in $MQD_DLL"};
    pid_t pid = start_target();
    for (int env = 0; env < 2; env++) {
        for (int trust = 0; trust < 2; trust++) {
            struct mqdh_options o = {.size = sizeof o, .trust_target_dll = trust};
            struct mqdh_dump *d = NULL;
            if (env)
                setenv("MQD_DLL", path, 1);
            else
                o.dll = path;
            int rc = mqdh_dump_processes(&pid, NULL, NULL, 1, &o, &d);
            unsetenv("MQD_DLL");
            char e[2048] = "(none)";
            if (d && d->procs[0].error)
                snprintf(e, sizeof e, "%s", d->procs[0].error);
            mqdh_dump_free(d);
            int ok = trust ? rc != MQDH_E_DLL_UNTRUSTED && strstr(e, "fake: no DWARF type")
                           : rc == MQDH_E_DLL_UNTRUSTED && strstr(e, "refusing the debug DLL") &&
                                 strstr(e, how[env]) && strstr(e, "owned by uid 65534") &&
                                 strstr(e, "--trust-target-dll");
            if (!ok) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                fail_msg("%s, trust_target_dll %d: code %d, error \"%s\"", how[env], trust, rc,
                         e);
            }
        }
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loader__good_dlls_load),
        cmocka_unit_test(test_loader__broken_dlls_are_refused_with_the_reason),
        cmocka_unit_test(test_loader__every_error_code_has_a_message),
        cmocka_unit_test(test_loader__no_code_of_a_non_dll_runs),
        cmocka_unit_test_setup_teardown(
            test_loader__a_symlink_flipped_after_the_check_loads_what_was_checked,
            scratch_setup, scratch_teardown),
        cmocka_unit_test_setup_teardown(
            test_loader__a_directory_swapped_for_a_symlink_after_resolving_is_refused,
            scratch_setup, scratch_teardown),
        cmocka_unit_test_setup_teardown(
            test_loader__a_named_dll_is_trusted_only_if_its_whole_path_is, scratch_setup,
            scratch_teardown),
        cmocka_unit_test_setup_teardown(
            test_loader__a_trusted_directory_swapped_after_a_check_is_checked_again, scratch_setup,
            scratch_teardown),
        cmocka_unit_test_setup_teardown(test_loader__a_dll_is_known_by_its_file_not_its_name,
                                        scratch_setup, scratch_teardown),
        cmocka_unit_test_setup_teardown(
            test_loader__as_root_a_given_dll_others_could_write_is_refused, scratch_setup,
            scratch_teardown),
        cmocka_unit_test_setup_teardown(
            test_loader__as_root_a_dump_refuses_such_a_dll_unless_trusted, scratch_setup,
            scratch_teardown),
    };
    return cmocka_run_group_tests_name("loader", tests, NULL, NULL);
}
