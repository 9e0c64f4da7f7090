/*
 * test_dll.c - mqd's DLLs (libmqd_mpich.so, libmqd_ompi.so) as a debugger
 * first meets them: each exports the interface's entry points and nothing
 * else, validates as an MPI-2 DLL of compatibility 2 (usable by MPI-1
 * debuggers), says which MPI it is for, and has a message for every error
 * code it can return.
 */
#define _GNU_SOURCE
#include "mqdhost.h"
#include "mpi_interface.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* Each DLL, and the MPI its version string names. */
static const struct {
    const char *file, *mpi;
} dlls[] = {{"libmqd_mpich.so", "MPICH"}, {"libmqd_ompi.so", "Open MPI"}};
enum { NDLLS = sizeof dlls / sizeof dlls[0] };
static char paths[NDLLS][4096];

static int setup(void **state)
{
    (void)state;
    const char *b = getenv("MQD_BUILD");
    for (int i = 0; i < NDLLS; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/lib/%s", b && *b ? b : "build", dlls[i].file);
        if (access(paths[i], R_OK) != 0)
            return -1;
    }
    return 0;
}

/* The names a shared library defines in its dynamic symbol table (global
 * and weak), each handed to check; their number. */
static int each_export(const char *path, void (*check)(const char *lib, const char *name))
{
    elf_version(EV_CURRENT);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        fail_msg("cannot open %s", path);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    assert_non_null(e);
    Elf_Scn *scn = NULL;
    int defined = 0;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        gelf_getshdr(scn, &sh);
        if (sh.sh_type != SHT_DYNSYM)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym sym;
            gelf_getsym(data, (int)i, &sym);
            if (sym.st_shndx == SHN_UNDEF || GELF_ST_BIND(sym.st_info) == STB_LOCAL)
                continue;
            const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
            if (!name || !*name)
                continue;
            check(path, name);
            defined++;
        }
    }
    elf_end(e);
    close(fd);
    return defined;
}

/* mqs_*, next_new_process (the specification's name for
 * mqs_next_new_process, which some debuggers call), and mqd's extensions
 * (mpi_interface.h). */
static void dll_name(const char *lib, const char *name)
{
    if (strncmp(name, "mqs_", 4) != 0 && strcmp(name, "next_new_process") != 0 &&
        strcmp(name, "mqd_get_comm_handle") != 0 && strcmp(name, "mqd_get_operation_info") != 0 &&
        strcmp(name, "mqd_get_process_state") != 0 &&
        strcmp(name, "mqd_get_request_info") != 0 && strcmp(name, "mqd_get_comm_nbc_tag") != 0)
        fail_msg("%s exports %s", lib, name);
}

static void test_dll__exports_only_the_interface(void **state)
{
    (void)state;
    for (int i = 0; i < NDLLS; i++)
        assert_true(each_export(paths[i], dll_name) >= 25);
}

/* The host library's API is mqdh_* (mqdhost.h); its internals are
 * mqdh__*, and hidden (-fvisibility=hidden, a version script): the name
 * alone tells which is which. */
static void host_name(const char *lib, const char *name)
{
    if (strncmp(name, "mqdh_", 5) != 0 && strncmp(name, "MQDHOST_", 8) != 0)
        fail_msg("%s exports %s", lib, name);
    if (strncmp(name, "mqdh__", 6) == 0)
        fail_msg("%s exports its internal %s", lib, name);
}

static void test_dll__host_library_exports_only_its_api(void **state)
{
    (void)state;
    char lib[4096];
    const char *b = getenv("MQD_BUILD");
    snprintf(lib, sizeof lib, "%s/lib/libmqdhost.so", b && *b ? b : "build");
    assert_true(each_export(lib, host_name) >= 10);
}

static void validates_as_mpi2_compatibility_2(const char *dll, const char *mpi)
{
    char version[256], err[512];
    int mpi2 = 0;
    if (mqdh_dll_check(dll, version, sizeof version, &mpi2, err, sizeof err) != MQDH_OK)
        fail_msg("%s", err);
    assert_int_equal(mpi2, 1);
    void *h = dlopen(dll, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    int (*compat)(void) = (int (*)(void))dlsym(h, "mqs_version_compatibility");
    const char *(*vs)(void) = (const char *(*)(void))dlsym(h, "mqs_version_string");
    assert_int_equal(compat(), 2); /* MPI-1 debuggers may use it */
    assert_non_null(strstr(vs(), mpi));
    /* No build date in the version: the same DLL always says the same. */
    for (const char *m = "JanFebMarAprMayJunJulAugSepOctNovDec"; *m; m += 3) {
        char mon[4] = {m[0], m[1], m[2], 0};
        assert_null(strstr(vs(), mon));
    }
    dlclose(h);
}

static void test_dll__validates_as_mpi2_compatibility_2(void **state)
{
    (void)state;
    for (int i = 0; i < NDLLS; i++)
        validates_as_mpi2_compatibility_2(paths[i], dlls[i].mpi);
}

static void every_error_code_has_its_message(const char *dll)
{
    void *h = dlopen(dll, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    const char *(*es)(int) = (const char *(*)(int))dlsym(h, "mqs_dll_error_string");
    const char *unknown = es(99999);
    assert_non_null(strstr(unknown, "not an error code"));
    const char *seen[64] = {0};
    int n = 0;
    for (int code = mqs_first_user_code; code < mqs_first_user_code + 64; code++) {
        const char *m = es(code);
        if (m == unknown || strcmp(m, unknown) == 0)
            break;
        for (int j = 0; j < n; j++)
            assert_string_not_equal(m, seen[j]);
        seen[n++] = m;
    }
    assert_true(n >= 10);
    assert_string_not_equal(es(mqs_no_information), unknown);
    dlclose(h);
}

static void test_dll__every_error_code_has_its_message(void **state)
{
    (void)state;
    for (int i = 0; i < NDLLS; i++)
        every_error_code_has_its_message(paths[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dll__exports_only_the_interface),
        cmocka_unit_test(test_dll__host_library_exports_only_its_api),
        cmocka_unit_test(test_dll__validates_as_mpi2_compatibility_2),
        cmocka_unit_test(test_dll__every_error_code_has_its_message),
    };
    return cmocka_run_group_tests_name("dll", tests, setup, NULL);
}
