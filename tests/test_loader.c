/*
 * test_loader.c - DLL validation against purpose-built DLLs
 * (tests/fixtures/fake_dll.c, one variant per defect), a shared object
 * that is no MQD DLL, a file that is no shared object, and a missing one.
 * Each must be refused with the reason named; the good ones must load.
 */
#define _GNU_SOURCE
#include "mqdhost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void test_loader__every_error_code_has_a_message(void **state)
{
    (void)state;
    const char *seen[32] = {0};
    for (int code = MQDH_OK; code <= MQDH_E_DLL_TIMEOUT; code++) {
        const char *m = mqdh_strerror(code);
        assert_non_null(m);
        assert_true(strlen(m) > 5);
        for (int j = 0; j < code; j++)
            assert_string_not_equal(m, seen[j]);
        seen[code] = m;
    }
    assert_non_null(strstr(mqdh_strerror(MQDH_E_DLL_TIMEOUT + 1), "unknown"));
    assert_non_null(strstr(mqdh_strerror(-1), "unknown"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loader__good_dlls_load),
        cmocka_unit_test(test_loader__broken_dlls_are_refused_with_the_reason),
        cmocka_unit_test(test_loader__every_error_code_has_a_message),
    };
    return cmocka_run_group_tests_name("loader", tests, NULL, NULL);
}
