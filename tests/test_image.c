/*
 * test_image.c - host/target/image.c and host/target/types.c against a shared object the
 * build compiles with -g (tests/fixtures/types_fixture.c), and against this
 * very test process.
 */
#define _GNU_SOURCE
#include "host/base/clock.h"
#include "host/base/radix.h"
#include "host/target/files.h"
#include "host/target/gnuhash.h"
#include "host/target/image.h"
#include "host/target/proc.h"
#include "host/target/types.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <limits.h>
#include <link.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
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

static char fixture[4096];

static int setup(void **state)
{
    (void)state;
    const char *b = getenv("MQD_BUILD");
    snprintf(fixture, sizeof fixture, "%s/tests/libtypes_fixture.so", b && *b ? b : "build");
    return access(fixture, R_OK);
}

static void test_image__file_symbols(void **state)
{
    (void)state;
    struct mqdh__image im;
    char err[512];
    uint64_t g = 0, f = 0, l = 0, x;
    assert_int_equal(mqdh__image_open_file(&im, fixture, err, sizeof err), 0);
    assert_int_equal(im.elf_class, ELFCLASS64);
    assert_int_equal(im.big_endian, 0);
    assert_int_equal(mqdh__image_symbol(&im, "fx_global_request", 0, &g, NULL), 0);
    assert_int_equal(mqdh__image_symbol(&im, "fx_function", 1, &f, NULL), 0);
    /* A local (static) symbol, in .symtab only. */
    assert_int_equal(mqdh__image_symbol(&im, "fx_local_counter", 0, &l, NULL), 0);
    assert_true(g != 0 && f != 0 && l != 0 && g != l);
    /* A variable is not a function; unknown names are not found. */
    assert_int_equal(mqdh__image_symbol(&im, "fx_global_request", 1, &x, NULL), -ENOENT);
    assert_int_equal(mqdh__image_symbol(&im, "fx_no_such_symbol", 0, &x, NULL), -ENOENT);
    mqdh__image_close(&im);
}

static void test_image__types_and_offsets(void **state)
{
    (void)state;
    struct mqdh__image im;
    char err[512];
    assert_int_equal(mqdh__image_open_file(&im, fixture, err, sizeof err), 0);

    static const struct {
        const char *type, *field;
        int offset;
    } cases[] = {
        {"fx_request_t", "handle", 0},
        {"fx_request_t", "next", 8},
        {"fx_request_t", "match", 16},         /* inside anonymous struct+union */
        {"fx_request_t", "user_buf", 24},
        {"fx_request_t", "pad", 16},
        {"fx_request_t", "cc", 56},            /* const volatile */
        {"fx_request_t", "match.rank", 20},    /* dotted path */
        {"fx_request_t", "match.context_id", 22},
        {"fx_request", "kind", 4},             /* struct tag */
        {"fx_request_alias", "next", 8},       /* typedef of a typedef */
        {"fx_match", "context_id", 6},
        {"fx_request_t", "nosuchfield", -1},
        {"fx_request_t", "match.nosuch", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct mqdh__type *t = mqdh__type_find(&im, cases[i].type);
        if (!t)
            fail_msg("type %s not found", cases[i].type);
        int got = mqdh__type_field_offset(t, cases[i].field);
        if (got != cases[i].offset)
            fail_msg("%s.%s: %d, want %d", cases[i].type, cases[i].field, got,
                     cases[i].offset);
    }
    assert_int_equal(mqdh__type_size(mqdh__type_find(&im, "fx_request_t")), 64);
    assert_int_equal(mqdh__type_size(mqdh__type_find(&im, "fx_match")), 8);
    /* An incomplete type, and an unknown one, are not found (twice: cached). */
    for (int i = 0; i < 2; i++) {
        assert_null(mqdh__type_find(&im, "fx_opaque_t"));
        assert_null(mqdh__type_find(&im, "fx_no_such_type"));
    }
    /* The same pointer for the same name. */
    assert_ptr_equal(mqdh__type_find(&im, "fx_match"), mqdh__type_find(&im, "fx_match"));
    assert_int_equal(mqdh__type_field_offset(NULL, "x"), -1);
    mqdh__image_close(&im);
}

/* The guide fixture (tests/fixtures/guide_fixture.c) as a file image. */
static void open_guide_fixture(struct mqdh__image *im)
{
    char path[4096], err[512];
    const char *b = getenv("MQD_BUILD");
    snprintf(path, sizeof path, "%s/tests/libguide_fixture.so", b && *b ? b : "build");
    assert_int_equal(mqdh__image_open_file(im, path, err, sizeof err), 0);
}

/*
 * Past its first units a file's types are found through the type guide
 * (host/target/typeguide.h), which looks only at the units that mention a
 * name.  It must find what a scan of every unit in order finds: the first
 * top-level definition, past declarations, members of that name, a
 * typedef of the incomplete type and a struct defined inside a function.
 */
static void test_image__guided_lookups_find_the_first_definition(void **state)
{
    (void)state;
    struct mqdh__image im;
    open_guide_fixture(&im);
    static const struct {
        const char *type;
        int size;
    } cases[] = {
        {"fx_late", 56},      /* unit 6, not unit 7's, past 5 units' declarations */
        {"fx_late_t", 56},    /* unit 6's, not unit 3's typedef of the incomplete one */
        {"fx_nested", 24},    /* unit 6's, not the one inside unit 5's function */
        {"fx_only_last", 20}, /* the last unit */
        {"fx_holder_5", 4},   /* past the first units */
        {"fx_holder_2", 4},   /* among them */
        {"fx_no_such_type", -1},
        {"fx_late", 56}, /* again, from the index */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct mqdh__type *t = mqdh__type_find(&im, cases[i].type);
        int got = t ? mqdh__type_size(t) : -1;
        if (got != cases[i].size)
            fail_msg("%s: size %d, want %d", cases[i].type, got, cases[i].size);
    }
    assert_int_equal(mqdh__type_field_offset(mqdh__type_find(&im, "fx_late"), "c"), 16);
    mqdh__image_close(&im);
}

/*
 * A name a file's strings do not hold (another layer's type: Open MPI's DLL
 * asks for ob1's in each of 30 components) is known absent from the guide
 * alone: no unit is read, not even the first ones a lookup would index.
 * A name among those still is found by reading them, as before.
 */
static void test_image__absent_names_read_no_unit(void **state)
{
    (void)state;
    struct mqdh__image im;
    open_guide_fixture(&im);
    assert_null(mqdh__type_find(&im, "fx_no_such_type"));
    assert_int_equal(mqdh__types_units_read(im.mods[0].file), 0);
    assert_int_equal(mqdh__type_size(mqdh__type_find(&im, "fx_holder_2")), 4);
    assert_true(mqdh__types_units_read(im.mods[0].file) >= 1);
    assert_int_equal(mqdh__type_size(mqdh__type_find(&im, "fx_late")), 56);
    mqdh__image_close(&im);
}

/* In a live process, addresses are relocated: they match dlsym's. */
static void test_image__live_process_relocated(void **state)
{
    (void)state;
    void *h = dlopen(fixture, RTLD_NOW);
    assert_non_null(h);
    void *want = dlsym(h, "fx_global_request");
    int *(*local)(void) = (int *(*)(void))dlsym(h, "fx_local_address");
    assert_non_null(want);
    assert_non_null(local);

    struct mqdh__image im;
    char err[512];
    uint64_t got, lgot;
    int mod = -1;
    assert_int_equal(mqdh__image_open_pid(&im, getpid(), NULL, err, sizeof err), 0);
    assert_int_equal(mqdh__image_symbol(&im, "fx_global_request", 0, &got, &mod), 0);
    assert_int_equal(got, (uint64_t)(uintptr_t)want);
    assert_true(mod > 0 && mod < im.nmods);
    assert_non_null(strstr(im.mods[mod].file->path, "libtypes_fixture.so"));
    assert_int_equal(mqdh__image_symbol(&im, "fx_local_counter", 0, &lgot, NULL), 0);
    assert_int_equal(lgot, (uint64_t)(uintptr_t)local());
    /* The executable comes first: it is this test program. */
    assert_non_null(strstr(im.exe_path, "test_image"));
    mqdh__image_close(&im);
    dlclose(h);
}

/* The objects of this process in the dynamic loader's order (its link
 * map, as dl_iterate_phdr walks it), by real path; the executable and the
 * vDSO, which have none, are left out. */
struct link_order {
    char paths[64][PATH_MAX];
    int n;
};

static int add_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct link_order *lo = data;
    if (info->dlpi_name[0] == '/' && lo->n < 64 && realpath(info->dlpi_name, lo->paths[lo->n]))
        lo->n++;
    return 0;
}

/* Is module m of im named by some DT_NEEDED of a module before position
 * upto?  (The objects the loader loads for the executable; dlopen's and
 * their own needs are not.) */
static int needed_before(const struct mqdh__image *im, int m, int upto)
{
    const char *base = strrchr(im->mods[m].file->path, '/');
    const char *soname;
    char *const *needed;
    int n;
    mqdh__file_dynamic(im->mods[m].file, &soname, &needed, &n);
    const char *name = soname ? soname : base ? base + 1 : "";
    for (int k = 0; k < upto; k++) {
        const char *ks;
        mqdh__file_dynamic(im->mods[k].file, &ks, &needed, &n);
        for (int i = 0; i < n; i++)
            if (strcmp(needed[i], name) == 0)
                return 1;
    }
    return 0;
}

/*
 * A name no object defines (one an MPI DLL tries for another MPI's
 * version) is looked for in the libraries' exports and the symbol tables
 * they carry, never in the debug file of a stripped library that is not
 * MPI's (the C library's: a file to find, open and hash for nothing);
 * an exported one is still found there.
 */
static void test_image__absent_symbol_reads_no_debug_file(void **state)
{
    (void)state;
    struct mqdh__image im;
    char err[512];
    uint64_t a;
    assert_int_equal(mqdh__image_open_pid(&im, getpid(), NULL, err, sizeof err), 0);
    assert_int_equal(mqdh__image_symbol(&im, "mqd_defined_nowhere", 0, &a, NULL), -ENOENT);
    int stripped = 0;
    for (int m = 1; m < im.nmods; m++) {
        struct mqdh__file *f = im.mods[m].file;
        if (!f->usable || f->own_symtab || mqdh__file_exports_mpi(f))
            continue;
        stripped++;
        if (f->all.built)
            fail_msg("%s: its whole symbol table read for a name nobody defines", f->path);
    }
    assert_true(stripped > 0); /* the C library, at least */
    /* Its functions named from what it exports as libdwfl names them
     * from its debug file (where /usr/lib/debug has it), version aside. */
    for (int m = 1; m < im.nmods; m++) {
        struct mqdh__file *f = im.mods[m].file;
        if (!f->usable || f->own_symtab || !strstr(f->path, "/libc.so"))
            continue;
        Dwfl_Module *mod = mqdh__file_module(f);
        int n = mod ? dwfl_module_getsymtab(mod) : 0, compared = 0, same = 0;
        for (int i = 1; i < n; i++) {
            GElf_Sym sym;
            GElf_Addr v;
            const char *full = dwfl_module_getsym_info(mod, i, &sym, &v, NULL, NULL, NULL);
            if (!full || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
                continue;
            for (uint64_t at = v; at < v + (sym.st_size ? sym.st_size : 1); at += sym.st_size / 2 + 1) {
                const char *ours = mqdh__file_function_at(f, at);
                const char *theirs = dwfl_module_addrname(mod, at);
                if (!ours)
                    continue;
                compared++;
                /* The same function: the same name, or an alias of it (bcmp
                 * and memcmp: which of the two is the tables' order). */
                char written[256];
                uint64_t mine, its;
                snprintf(written, sizeof written, "%.*s", theirs ? (int)strcspn(theirs, "@") : 0,
                         theirs ? theirs : "");
                if (!theirs || mqdh__file_global(f, ours, 1, &mine) != 0 ||
                    mqdh__file_global(f, written, 1, &its) != 0 || mine != its)
                    fail_msg("%s+%#lx: %s, libdwfl says %s", f->path, (unsigned long)at, ours,
                             theirs ? theirs : "nothing");
                same += strcmp(ours, written) == 0;
            }
        }
        assert_true(compared > 100);
        printf("image: %d of libc's exported functions named, %d as libdwfl names them, the "
               "others by an alias\n", compared, same);
    }
    int mod = -1;
    assert_int_equal(mqdh__image_symbol(&im, "getpid", 1, &a, &mod), 0);
    assert_int_equal(a, (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "getpid"));
    assert_true(mod > 0 && mod < im.nmods);
    assert_non_null(strstr(im.mods[mod].file->path, "libc"));
    mqdh__image_close(&im);
}

/* The value of the function called name whose range holds at, in mod's
 * table; UINT64_MAX if none. */
static uint64_t function_value(Dwfl_Module *mod, const char *name, uint64_t at)
{
    int n = dwfl_module_getsymtab(mod);
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr v;
        const char *s = dwfl_module_getsym_info(mod, i, &sym, &v, NULL, NULL, NULL);
        if (s && strcmp(s, name) == 0 && GELF_ST_TYPE(sym.st_info) == STT_FUNC && v <= at &&
            at - v < (sym.st_size ? sym.st_size : 1))
            return v;
    }
    return UINT64_MAX;
}

struct named {
    int compared, same, locals, files;
    char failed[512];
};

/* Every own-table function of im's files, at its start, middle and last
 * byte, named by us and by libdwfl: into *c, or c->failed. */
static void name_functions(struct mqdh__image *im, struct named *c)
{
    for (int m = 0; m < im->nmods && !c->failed[0]; m++) {
        struct mqdh__file *f = im->mods[m].file;
        Dwfl_Module *mod = f->usable && f->own_symtab ? mqdh__file_module(f) : NULL;
        int n = mod ? dwfl_module_getsymtab(mod) : 0;
        c->files += n > 0;
        for (int i = 1; i < n && !c->failed[0]; i++) {
            GElf_Sym sym;
            GElf_Addr v;
            const char *name = dwfl_module_getsym_info(mod, i, &sym, &v, NULL, NULL, NULL);
            if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
                continue;
            uint64_t size = sym.st_size ? sym.st_size : 1;
            uint64_t at[3] = {v, v + size / 2, v + size - 1};
            for (int k = 0; k < 3 && !c->failed[0]; k++) {
                const char *ours = mqdh__file_function_at(f, at[k]);
                const char *theirs = dwfl_module_addrname(mod, at[k]);
                uint64_t a = ours ? function_value(mod, ours, at[k]) : UINT64_MAX;
                uint64_t b = theirs ? function_value(mod, theirs, at[k]) : UINT64_MAX - 1;
                c->compared++;
                if (ours && theirs && strcmp(ours, theirs) == 0)
                    c->same++;
                else if (a == UINT64_MAX || a != b)
                    snprintf(c->failed, sizeof c->failed, "%s+%#lx (in %s): %s, libdwfl says %s",
                             f->path, (unsigned long)at[k], name, ours ? ours : "nothing",
                             theirs ? theirs : "nothing");
            }
            c->locals += GELF_ST_BIND(sym.st_info) == STB_LOCAL;
        }
    }
    mqdh__image_close(im);
}

/* Addresses around some of the symbols of every file of im, named by
 * mqdh__file_addrname and by libdwfl: into *c, or c->failed. */
static void name_addresses(struct mqdh__image *im, struct named *c)
{
    for (int m = 0; m < im->nmods && !c->failed[0]; m++) {
        struct mqdh__file *f = im->mods[m].file;
        Dwfl_Module *mod = f->usable ? mqdh__file_module(f) : NULL;
        int n = mod ? dwfl_module_getsymtab(mod) : 0;
        c->files += n > 0;
        /* libdwfl reads the whole table for each address: 300 symbols a
         * file, their starts, middles, ends, and the bytes either side. */
        for (int i = 1; i < n && !c->failed[0]; i += n / 300 + 1) {
            GElf_Sym sym;
            GElf_Addr v;
            if (!dwfl_module_getsym_info(mod, i, &sym, &v, NULL, NULL, NULL) ||
                sym.st_shndx == SHN_UNDEF)
                continue;
            uint64_t at[5] = {v - 1, v, v + sym.st_size / 2, v + sym.st_size - 1, v + sym.st_size};
            for (int k = 0; k < 5 && !c->failed[0]; k++) {
                const char *ours, *theirs = dwfl_module_addrname(mod, at[k]);
                c->compared++;
                if (!mqdh__file_addrname(f, at[k], &ours))
                    continue;
                c->same++;
                c->locals += !theirs; /* here: the addresses no symbol names */
                if (ours != theirs && (!ours || !theirs || strcmp(ours, theirs) != 0))
                    snprintf(c->failed, sizeof c->failed, "%s+%#lx: %s, libdwfl says %s",
                             f->path, (unsigned long)at[k], ours ? ours : "nothing",
                             theirs ? theirs : "nothing");
            }
        }
    }
    mqdh__image_close(im);
}

/* walk (which closes the image) over this process's image, then over the
 * host library's alone: into *c, a failure if c->failed. */
static void name_here_and_in_host(void (*walk)(struct mqdh__image *, struct named *),
                                  struct named *c)
{
    struct mqdh__image im;
    char err[512], lib[4096];
    const char *b = getenv("MQD_BUILD");
    snprintf(lib, sizeof lib, "%s/lib/libmqdhost.so", b && *b ? b : "build");
    assert_int_equal(mqdh__image_open_pid(&im, getpid(), NULL, err, sizeof err), 0);
    walk(&im, c);
    if (mqdh__image_open_file(&im, lib, err, sizeof err) != 0)
        fail_msg("%s", err);
    walk(&im, c);
    if (c->failed[0])
        fail_msg("%s", c->failed);
}

/*
 * A file with a .symtab of its own names its functions, locals among
 * them, by a binary search of its table: the function libdwfl names, by
 * the same name or by an alias at the same address (a weak one before the
 * global).  This executable's and the host library's functions.
 */
static void test_image__functions_named_from_own_table(void **state)
{
    (void)state;
    struct named c = {0};
    name_here_and_in_host(name_functions, &c);
    printf("image: %d addresses of %d files' own functions (%d local) named, %d as libdwfl "
           "names them, the others by an alias\n", c.compared, c.files, c.locals, c.same);
    assert_true(c.files >= 2 && c.compared > 1500 && c.locals > 300);
}

/*
 * Where a file's own table does not name an address (a stripped library's
 * static functions, the C library's from its debug file), the host names
 * it as libdwfl does, from the same table by a binary search: the same
 * name, or none where libdwfl has none.  Every file of this process and
 * the host library; libdwfl asked only where a label without a size may
 * be the answer.
 */
static void test_image__addresses_named_as_libdwfl_names_them(void **state)
{
    (void)state;
    struct named c = {0};
    name_here_and_in_host(name_addresses, &c);
    printf("image: %d addresses of %d files, %d named as libdwfl names them without asking it "
           "(%d named by nothing)\n", c.compared, c.files, c.same, c.locals);
    assert_true(c.files >= 3 && c.same > 1000 && c.same * 10 > c.compared * 9 && c.locals > 0);
}

/*
 * Symbols and types are looked up in the loader's order: the executable,
 * then breadth first through DT_NEEDED, then the rest.  This process's
 * image must list the objects its executable needs first, in the order of
 * its own link map (the loader itself aside: glibc places it by its own
 * rules; and this process maps its own executable again, libelf reading
 * it, which a target never does).  The image is read from a forked copy
 * of this process, whose link map is this one's and whose maps do not
 * change while they are read (this process's own do, as libelf maps the
 * files it opens).
 */
static void test_image__loader_order(void **state)
{
    (void)state;
    static struct link_order lo;
    lo.n = 0;
    dl_iterate_phdr(add_loaded, &lo);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        pause();
        _exit(0);
    }

    struct mqdh__image im;
    char err[512];
    int opened = mqdh__image_open_pid(&im, child, NULL, err, sizeof err);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    assert_int_equal(opened, 0);
    assert_non_null(strstr(im.mods[0].file->path, "test_image"));
    int next = 0, seen = 0, m = 1;
    for (; m < im.nmods && needed_before(&im, m, m); m++) {
        const char *p = im.mods[m].file->path;
        if (strstr(p, "/ld-linux"))
            continue;
        char real[PATH_MAX];
        assert_non_null(realpath(p, real));
        while (next < lo.n && strstr(lo.paths[next], "/ld-linux"))
            next++;
        assert_true(next < lo.n);
        if (strcmp(real, lo.paths[next]) != 0)
            fail_msg("module %d is %s, the link map has %s there", m, real, lo.paths[next]);
        next++;
        seen++;
    }
    assert_true(seen >= 4); /* libdw, libelf, cmocka, libc at least */
    /* No object the executable needs comes after the first it does not. */
    for (int k = m; k < im.nmods; k++)
        assert_false(needed_before(&im, k, m));
    /* The first is the executable's first DT_NEEDED. */
    const char *soname;
    char *const *needed;
    int n;
    mqdh__file_dynamic(im.mods[0].file, &soname, &needed, &n);
    assert_true(n >= 1);
    const char *first = needed[0];
    mqdh__file_dynamic(im.mods[1].file, &soname, &needed, &n);
    assert_non_null(soname);
    assert_string_equal(soname, first);
    mqdh__image_close(&im);
}

/*
 * Two images of one process over one set of files: the second opens no
 * file and builds no index again, and finds the same addresses and types
 * (a job's ranks share their files this way).  The process is a child
 * that has loaded the fixture and waits: its maps do not change.
 */
/* The paths of the types and guide fixtures (4096 bytes each). */
static void two_fixtures(char *types, char *guide)
{
    const char *b = getenv("MQD_BUILD");
    snprintf(types, 4096, "%s/tests/libtypes_fixture.so", b && *b ? b : "build");
    snprintf(guide, 4096, "%s/tests/libguide_fixture.so", b && *b ? b : "build");
}

/* A child of this program that has dlopen'd first, then second, and
 * waits. */
static pid_t child_loading(const char *first, const char *second)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(fds[0]);
        char ok = dlopen(first, RTLD_NOW) && dlopen(second, RTLD_NOW) ? 'y' : 'n';
        if (write(fds[1], &ok, 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    close(fds[1]);
    char ok = 0;
    ssize_t got = read(fds[0], &ok, 1);
    close(fds[0]);
    if (got != 1 || ok != 'y') {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        fail_msg("a child could not load %s and %s", first, second);
    }
    return child;
}

/*
 * What a process loads itself (dlopen, after its DT_NEEDED) comes after
 * what the loader placed, by path: not by address, which under ASLR
 * differs from rank to rank, so that ranks mapping the same files get one
 * search order and share one image.  The child loads the two fixtures in
 * the order opposite to their paths' (the second loaded usually below).
 */
static void test_image__loaded_later_in_path_order(void **state)
{
    (void)state;
    char types[4096], guide[4096];
    two_fixtures(types, guide);
    assert_true(strcmp(guide, types) < 0);
    pid_t child = child_loading(guide, types);
    struct mqdh__image im;
    char err[512];
    int opened = mqdh__image_open_pid(&im, child, NULL, err, sizeof err);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    assert_int_equal(opened, 0);
    int first = -1, at_types = -1, at_guide = -1;
    for (int m = 1; m < im.nmods; m++) {
        const char *p = im.mods[m].file->path;
        if (strstr(p, "libtypes_fixture.so"))
            at_types = m;
        if (strstr(p, "libguide_fixture.so"))
            at_guide = m;
        if (first < 0 && !needed_before(&im, m, m))
            first = m;
    }
    assert_true(first > 0 && at_types >= first && at_guide >= first);
    assert_true(at_guide < at_types);
    for (int m = first; m + 1 < im.nmods; m++)
        if (strcmp(im.mods[m].file->path, im.mods[m + 1].file->path) > 0)
            fail_msg("%s before %s", im.mods[m].file->path, im.mods[m + 1].file->path);
    mqdh__image_close(&im);
}

/*
 * Two ranks of one program with the same libraries, loaded in another
 * order (their maps list them in another order, as Open MPI's components
 * are in every rank): the second is put in the search order the first was
 * (image.c keeps it for the files), and that order is the one the second
 * alone is put in.
 */
static void test_image__same_files_put_in_one_order(void **state)
{
    (void)state;
    char types[4096], guide[4096];
    two_fixtures(types, guide);
    pid_t one = child_loading(guide, types), two = child_loading(types, guide);
    struct mqdh__files *fs = mqdh__files_new();
    assert_non_null(fs);
    struct mqdh__image a, again, alone;
    char err[512];
    int opened = mqdh__image_open_pid(&a, one, fs, err, sizeof err) == 0;
    unsigned gen = fs->order.gen;
    opened += mqdh__image_open_pid(&again, two, fs, err, sizeof err) == 0;
    unsigned gen_again = fs->order.gen;
    opened += mqdh__image_open_pid(&alone, two, NULL, err, sizeof err) == 0;
    /* The premise: the two list the fixtures in the maps the other way round. */
    int first_guide[2];
    for (int k = 0; k < 2; k++) {
        char path[64], line[4096];
        snprintf(path, sizeof path, "/proc/%d/maps", (int)(k ? two : one));
        FILE *f = fopen(path, "r");
        first_guide[k] = -1;
        while (f && fgets(line, sizeof line, f) && first_guide[k] < 0)
            if (strstr(line, "libguide_fixture.so") || strstr(line, "libtypes_fixture.so"))
                first_guide[k] = strstr(line, "libguide_fixture.so") != NULL;
        if (f)
            fclose(f);
    }
    kill(one, SIGKILL);
    kill(two, SIGKILL);
    waitpid(one, NULL, 0);
    waitpid(two, NULL, 0);
    assert_int_equal(opened, 3);
    assert_true(first_guide[0] >= 0 && first_guide[1] >= 0);
    assert_int_not_equal(first_guide[0], first_guide[1]);
    assert_true(gen != 0);
    assert_int_equal(gen_again, gen); /* not put again */
    assert_int_equal(again.nmods, alone.nmods);
    for (int m = 0; m < again.nmods; m++) {
        assert_ptr_equal(again.mods[m].file, a.mods[m].file);
        if (strcmp(again.mods[m].file->path, alone.mods[m].file->path) != 0)
            fail_msg("module %d: %s as kept, %s put alone", m, again.mods[m].file->path,
                     alone.mods[m].file->path);
        /* each at its own address */
        assert_int_equal(again.mods[m].bias, alone.mods[m].bias);
    }
    mqdh__image_close(&a);
    mqdh__image_close(&again);
    mqdh__image_close(&alone);
    mqdh__files_free(fs);
}

/* A child of this program that has loaded the fixture and waits. */
static pid_t child_with_fixture(void)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* Gone with the test, should an assertion end it before its kill. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        void *h = dlopen(fixture, RTLD_NOW);
        char c = h ? 'y' : 'n';
        if (write(fds[1], &c, 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    char c = 0;
    assert_int_equal(read(fds[0], &c, 1), 1);
    assert_int_equal(c, 'y');
    close(fds[0]);
    close(fds[1]);
    return child;
}

/*
 * A process's libraries, described from its memory (dynmem.h), are
 * described as their files describe them: load extent, DT_SONAME and
 * DT_NEEDED, the calls that reach other worlds they import; and a name
 * no object defines opens none of them but the MPI library's (the
 * fixture, which exports PMPI_Init), whose locals are looked in.
 */
static void test_image__libraries_described_from_memory_as_their_files(void **state)
{
    (void)state;
    pid_t child = child_with_fixture();
    struct mqdh__files *fs = mqdh__files_new(), *own = mqdh__files_new();
    assert_non_null(fs);
    assert_non_null(own);
    struct mqdh__image im;
    char err[512];
    uint64_t a;
    assert_int_equal(mqdh__image_open_pid(&im, child, fs, err, sizeof err), 0);
    assert_int_equal(mqdh__image_symbol(&im, "mqd_no_such_name", 0, &a, NULL), -ENOENT);
    int described = 0, with_needed = 0;
    for (int m = 0; m < im.nmods; m++) {
        struct mqdh__file *f = im.mods[m].file;
        int lib = m > 0 && !f->bytes, mpi = strstr(f->path, "libtypes_fixture.so") != NULL;
        if (lib && f->opened != mpi)
            fail_msg("%s: opened %d for a name no object defines", f->path, f->opened);
        if (!lib || !f->described)
            continue;
        described++;
        struct stat st;
        assert_int_equal(stat(f->path, &st), 0);
        struct mqdh__file *g = mqdh__files_get(own, f->path, (unsigned long long)st.st_dev,
                                               (unsigned long long)st.st_ino, 0, 0, 0);
        assert_non_null(mqdh__file_elf(g));
        assert_int_equal(f->vaddr, g->vaddr);
        assert_int_equal(f->span, g->span);
        const char *fso, *gso;
        char *const *fneed, *const *gneed;
        int fn, gn;
        assert_int_equal(f->dynamic_read, 1); /* from memory */
        mqdh__file_dynamic(f, &fso, &fneed, &fn);
        mqdh__file_dynamic(g, &gso, &gneed, &gn);
        assert_string_equal(fso ? fso : "-", gso ? gso : "-");
        assert_int_equal(fn, gn);
        for (int i = 0; i < fn; i++)
            assert_string_equal(fneed[i], gneed[i]);
        with_needed += fn > 0;
        assert_int_equal(mqdh__file_reaches_worlds(f), mqdh__file_reaches_worlds(g));
        assert_non_null(f->mem_hash);
        /* Opened now, its file agrees with the memory: still usable. */
        assert_non_null(mqdh__file_elf(f));
    }
    print_message("%d libraries described from memory, %d with DT_NEEDED\n", described,
                  with_needed);
    assert_true(described >= 3 && with_needed >= 2);
    mqdh__image_close(&im);
    mqdh__files_free(fs);
    mqdh__files_free(own);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
}

static void test_image__files_are_read_once(void **state)
{
    (void)state;
    pid_t child = child_with_fixture();
    struct mqdh__files *fs = mqdh__files_new();
    assert_non_null(fs);
    struct mqdh__image a, b;
    char err[512];
    uint64_t ga, gb, la, lb;
    assert_int_equal(mqdh__image_open_pid(&a, child, fs, err, sizeof err), 0);
    /* This program alone is opened: its libraries (the fixture, libc,
     * ...) are described from its memory (dynmem.h). */
    assert_int_equal(fs->opened, 1);
    assert_true(a.nmods >= 4);
    assert_int_equal(mqdh__image_symbol(&a, "fx_global_request", 0, &ga, NULL), 0);
    assert_int_equal(mqdh__image_symbol(&a, "fx_local_counter", 0, &la, NULL), 0);
    struct mqdh__type *ta = mqdh__type_find(&a, "fx_request_t");
    assert_non_null(ta);
    unsigned long opened = fs->opened;
    /* The vDSO, known by its ABI: not read again (a copy changed where
     * nothing looks would tell a second reading from it). */
    struct mqdh__file *vdso = NULL;
    for (int m = 0; m < a.nmods; m++)
        if (a.mods[m].file->bytes)
            vdso = a.mods[m].file;
    assert_non_null(vdso);
    assert_true(vdso->vdso_abi != 0);
    assert_ptr_equal(mqdh__files_vdso(fs, vdso->vdso_abi, vdso->nbytes), vdso);
    GElf_Ehdr eh;
    assert_non_null(gelf_getehdr(vdso->elf, &eh));
    size_t spare = vdso->nbytes - 1; /* past its section headers: padding */
    int changed = eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize <= spare;
    if (changed)
        ((unsigned char *)vdso->bytes)[spare] ^= 0x5a;
    assert_int_equal(mqdh__image_open_pid(&b, child, fs, err, sizeof err), 0);
    if (changed)
        ((unsigned char *)vdso->bytes)[spare] ^= 0x5a;
    assert_int_equal(fs->opened, opened);
    assert_int_equal(b.nmods, a.nmods);
    for (int m = 0; m < a.nmods; m++) {
        assert_ptr_equal(b.mods[m].file, a.mods[m].file);
        assert_int_equal(b.mods[m].bias, a.mods[m].bias);
    }
    assert_int_equal(mqdh__image_symbol(&b, "fx_global_request", 0, &gb, NULL), 0);
    assert_int_equal(mqdh__image_symbol(&b, "fx_local_counter", 0, &lb, NULL), 0);
    assert_int_equal(ga, gb);
    assert_int_equal(la, lb);
    struct mqdh__type *tb = mqdh__type_find(&b, "fx_request_t");
    assert_non_null(tb);
    assert_int_equal(mqdh__type_field_offset(tb, "match.context_id"), 22);
    assert_int_equal(mqdh__type_field_offset(ta, "match.context_id"), 22);
    assert_int_equal(fs->opened, opened);
    mqdh__image_close(&a);
    mqdh__image_close(&b);
    mqdh__files_free(fs);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
}

static void test_image__bad_files(void **state)
{
    (void)state;
    struct mqdh__image im;
    char err[512] = "";
    assert_int_equal(mqdh__image_open_file(&im, "/nonexistent/x.so", err, sizeof err), -ENOENT);
    assert_non_null(strstr(err, "/nonexistent/x.so"));
    char path[] = "/tmp/mqd-notelf.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "not an ELF file\n", 16), 16);
    close(fd);
    assert_int_equal(mqdh__image_open_file(&im, path, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "not a usable ELF file"));
    unlink(path);
    assert_true(mqdh__image_open_pid(&im, 0x7ffffff0, NULL, err, sizeof err) < 0);
}

/*
 * Separate debug information: the fixture stripped of its DWARF, with a
 * .gnu_debuglink to the DWARF kept in a file beside it (as Debian's -dbg
 * packages do, by build-id or debuglink); types are found all the same.
 */
static void test_image__separate_debug_file(void **state)
{
    (void)state;
    char stripped[4096], err[512];
    snprintf(stripped, sizeof stripped, "%.*s/debuglink/libtypes_fixture.so",
             (int)(strrchr(fixture, '/') - fixture), fixture);
    struct mqdh__image im;
    assert_int_equal(mqdh__image_open_file(&im, stripped, err, sizeof err), 0);
    struct mqdh__type *t = mqdh__type_find(&im, "fx_request_t");
    if (!t)
        fail_msg("fx_request_t not found through the debuglink of %s", stripped);
    assert_int_equal(mqdh__type_field_offset(t, "match.context_id"), 22);
    assert_int_equal(mqdh__type_size(t), 64);
    mqdh__image_close(&im);
}

/* The fixture's copy in directory dir (beside the fixture), into buf. */
static const char *sibling(char *buf, size_t len, const char *dir)
{
    snprintf(buf, len, "%.*s/%s/libtypes_fixture.so", (int)(strrchr(fixture, '/') - fixture),
             fixture, dir);
    return buf;
}

/*
 * In a child with 10 s: open lib and look a type up (which looks for its
 * separate debug file).  1 if the type was found, 0 if not, -1 if the
 * look-up did not return (the child ran out of time).
 */
static int type_found_in_time(const char *lib)
{
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        alarm(10);
        struct mqdh__image im;
        char err[512];
        if (mqdh__image_open_file(&im, lib, err, sizeof err) != 0)
            _exit(2);
        int found = mqdh__type_find(&im, "fx_request_t") != NULL;
        mqdh__image_close(&im);
        _exit(found);
    }
    int st;
    assert_int_equal(waitpid(child, &st, 0), child);
    if (WIFSIGNALED(st))
        return -1;
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) <= 1);
    return WEXITSTATUS(st);
}

/*
 * What a target's .gnu_debuglink names is never opened blocking, never
 * outside a plain name, never anything but a regular file (issue 45,
 * finding 2): a FIFO named by the link, or by "../evillink/evil.debug",
 * held the dump (and every stopped rank) until it was killed.  And as
 * root, a debug file in a directory another user controls is not read.
 */
static void test_image__hostile_debug_links(void **state)
{
    (void)state;
    char evil[4096], slash[4096], fifo[4200];
    sibling(evil, sizeof evil, "evillink");
    sibling(slash, sizeof slash, "evilslash");
    snprintf(fifo, sizeof fifo, "%.*s/evil.debug", (int)(strrchr(evil, '/') - evil), evil);
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const char *libs[] = {evil, slash};
    for (int i = 0; i < 2; i++) {
        int found = type_found_in_time(libs[i]);
        if (found < 0)
            fail_msg("looking for %s's debug file blocked on the FIFO its link names", libs[i]);
        assert_int_equal(found, 0);
    }
    unlink(fifo);
    if (geteuid() != 0) {
        print_message("[  SKIP    ] the rule for debug directories as root (uid %u)\n",
                      (unsigned)geteuid());
        return;
    }
    /* The good debug link, its files in a directory of uid 65534's: refused
     * as root; the same directory root's again: read. */
    char good[4096], dir[4096], cmd[24576];
    sibling(good, sizeof good, "debuglink");
    sibling(dir, sizeof dir, "theirs");
    *strrchr(dir, '/') = '\0';
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' && cp '%s' '%s.debug' '%s/'", dir,
             dir, good, good, dir);
    assert_int_equal(system(cmd), 0);
    char lib[4200];
    snprintf(lib, sizeof lib, "%s/libtypes_fixture.so", dir);
    assert_int_equal(type_found_in_time(lib), 1);
    assert_int_equal(chown(dir, 65534, 65534), 0);
    assert_int_equal(type_found_in_time(lib), 0);
    assert_int_equal(chown(dir, 0, 0), 0);
    assert_int_equal(chmod(dir, 0777), 0);
    assert_int_equal(type_found_in_time(lib), 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/*
 * An object's .gnu.hash tells the names it cannot define: every symbol its
 * .dynsym defines is one it may (a "no" would hide a definition from the
 * DLL), and of names it does not define, almost all are told "no" (each a
 * whole .dynsym read else).  libc's and the fixture's.
 */
static void test_image__gnu_hash_filters_names(void **state)
{
    (void)state;
    Dl_info info;
    assert_true(dladdr((void *)printf, &info) && info.dli_fname);
    const char *objs[] = {fixture, info.dli_fname};
    for (int o = 0; o < 2; o++) {
        int fd = open(objs[o], O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        assert_non_null(elf);
        Elf_Data *cache = NULL;
        Elf_Scn *scn = NULL;
        GElf_Shdr sh;
        while ((scn = elf_nextscn(elf, scn)) && !(gelf_getshdr(scn, &sh) &&
                                                 sh.sh_type == SHT_DYNSYM))
            ;
        assert_non_null(scn);
        Elf_Data *syms = elf_getdata(scn, NULL);
        int defined = 0, told_no = 0;
        for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym sym;
            assert_non_null(gelf_getsym(syms, (int)i, &sym));
            const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
            if (sym.st_shndx == SHN_UNDEF || !name || !*name)
                continue;
            defined++;
            if (mqdh__gnuhash_may_define(elf, name, &cache) != 1)
                fail_msg("%s defines %s, but its .gnu.hash says it may not", objs[o], name);
        }
        for (int k = 0; k < 1000; k++) {
            char name[64];
            snprintf(name, sizeof name, "mqd_not_defined_%d", k);
            told_no += mqdh__gnuhash_may_define(elf, name, &cache) == 0;
        }
        print_message("%s: %d names defined, %d of 1000 others told no\n", objs[o], defined,
                      told_no);
        assert_true(defined >= (o ? 1000 : 3));
        assert_true(told_no >= 990);
        elf_end(elf);
        close(fd);
    }
}

static int by_key_then_index(const void *a, const void *b)
{
    const struct mqdh__keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * The radix sort that orders a file's functions by address (files.c)
 * orders as qsort by address then table index did: keys of every width
 * (one byte to eight, as a small DSO's and a high mapping's addresses),
 * many equal (aliases), none, one.
 */
static void test_image__functions_sorted_as_by_address_and_index(void **state)
{
    (void)state;
    enum { N = 5000 };
    static struct mqdh__keyed a[N], tmp[N], want[N];
    uint64_t seed = 88172645463325252u;
    size_t sizes[] = {0, 1, 2, 257, N};
    for (int width = 1; width <= 8; width++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            size_t n = sizes[z];
            for (size_t i = 0; i < n; i++) {
                seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
                uint64_t k = width == 8 ? seed : seed & ((1ull << (8 * width)) - 1);
                a[i] = (struct mqdh__keyed){i % 3 == 2 ? a[i - 1].key : k, (uint32_t)i};
            }
            memcpy(want, a, n * sizeof *a);
            qsort(want, n, sizeof *want, by_key_then_index);
            const struct mqdh__keyed *got = mqdh__radix_sort(a, tmp, n);
            for (size_t i = 0; i < n; i++)
                if (got[i].key != want[i].key || got[i].idx != want[i].idx)
                    fail_msg("width %d, %zu keys: at %zu, %#llx #%u where qsort has %#llx #%u",
                             width, n, i, (unsigned long long)got[i].key, got[i].idx,
                             (unsigned long long)want[i].key, want[i].idx);
        }
}

/* The file at path given to fs as the maps give one: its DWARF, found
 * through its debug link, or NULL. */
static Dwarf *linked_dwarf(struct mqdh__files *fs, const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    struct mqdh__file *f = mqdh__files_get(fs, path, (unsigned long long)st.st_dev,
                                           (unsigned long long)st.st_ino, 0, 0, 0);
    assert_non_null(f);
    Dwfl_Module *m = mqdh__file_module(f);
    assert_non_null(m);
    Dwarf_Addr bias;
    return dwfl_module_getdwarf(m, &bias);
}

/*
 * The debug link's candidate directories are asked once a dump for the
 * files of one directory (a job's files lie in a few; each candidate cost
 * a realpath and an access per file): a .debug directory made after the
 * first file's look-up is not seen by the second file's, and is by the
 * next dump's (the files kept, mqdh__files_again), for every file.
 */
static void test_image__debug_directories_asked_once_a_dump(void **state)
{
    (void)state;
    char good[4096], dir[4096], cmd[24576], lib[4300];
    sibling(good, sizeof good, "debuglink");
    sibling(dir, sizeof dir, "oncedir");
    *strrchr(dir, '/') = '\0';
    unsetenv("MQD_DEBUGINFO_PATH"); /* the default: beside, .debug, /usr/lib/debug */
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' && for f in a b c d; do "
             "cp '%s' '%s'/$f.so || exit 1; done", dir, dir, good, dir);
    assert_int_equal(system(cmd), 0);
    struct mqdh__files *fs = mqdh__files_new();
    assert_non_null(fs);
    snprintf(lib, sizeof lib, "%s/a.so", dir);
    assert_null(linked_dwarf(fs, lib));
    snprintf(cmd, sizeof cmd, "mkdir '%s/.debug' && cp '%s.debug' '%s/.debug/'", dir, good,
             dir);
    assert_int_equal(system(cmd), 0);
    snprintf(lib, sizeof lib, "%s/b.so", dir);
    assert_null(linked_dwarf(fs, lib));
    mqdh__files_again(fs);
    snprintf(lib, sizeof lib, "%s/c.so", dir);
    assert_non_null(linked_dwarf(fs, lib));
    snprintf(lib, sizeof lib, "%s/d.so", dir);
    assert_non_null(linked_dwarf(fs, lib));
    mqdh__files_free(fs);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* A FIFO written in two pieces, the second after delay_ms, then held
 * open hold_ms before its end; the writer's pid. */
static pid_t fifo_writer(const char *fifo, const char *one, const char *two, int delay_ms,
                         int hold_ms)
{
    pid_t w = fork();
    assert_true(w >= 0);
    if (w == 0) {
        int fd = open(fifo, O_WRONLY);
        if (fd < 0 || write(fd, one, strlen(one)) != (ssize_t)strlen(one))
            _exit(1);
        usleep((useconds_t)delay_ms * 1000);
        if (two && write(fd, two, strlen(two)) != (ssize_t)strlen(two))
            _exit(1);
        usleep((useconds_t)hold_ms * 1000);
        _exit(0);
    }
    return w;
}

/*
 * A process's maps are read until the gate area's line, which the kernel
 * writes last (a read less than to the end); a mapping whose name ends so
 * (a file called "x [vsyscall]") does not end the reading.  Through a
 * FIFO that gives the lines in two reads: the gate line's piece is taken
 * without waiting for the end, the forged one's is not.
 */
static void test_image__maps_read_to_the_gate_line(void **state)
{
    (void)state;
    size_t n;
    char *own = mqdh__proc_alloc("/proc/self/maps", &n, MQDH__PROC_MAPS);
    assert_non_null(own);
    assert_non_null(strstr(own, "[vsyscall]"));
    free(own);
    char fifo[64];
    snprintf(fifo, sizeof fifo, "/tmp/mqd-maps-%d", (int)getpid());
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const char *forged = "55d0c0de0000-55d0c0de1000 r--p 00000000 fe:01 42   /tmp/x [vsyscall]\n",
               *rest = "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0   [stack]\n",
               *gate = "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0   [vsyscall]\n";
    pid_t w = fifo_writer(fifo, forged, rest, 200, 0);
    char *got = mqdh__proc_alloc(fifo, &n, MQDH__PROC_MAPS);
    assert_non_null(got);
    assert_non_null(strstr(got, "[stack]")); /* read on past the forged line */
    free(got);
    waitpid(w, NULL, 0);
    w = fifo_writer(fifo, gate, NULL, 0, 5000);
    double t0 = mqdh__monotonic();
    got = mqdh__proc_alloc(fifo, &n, MQDH__PROC_MAPS);
    double took = mqdh__monotonic() - t0;
    kill(w, SIGKILL);
    waitpid(w, NULL, 0);
    unlink(fifo);
    assert_non_null(got);
    assert_string_equal(got, gate);
    free(got);
    if (took > 2.0)
        fail_msg("the read waited %.1f s for the end after the gate line", took);
}

/* /proc/PID/maps lines, parsed by hand: each field as the kernel writes
 * it, the file after any run of spaces, and a line that is not one
 * refused whole. */
static void test_image__maps_lines(void **state)
{
    (void)state;
    struct mqdh__maps_entry e;
    char ok[] = "7f64f8191000-7f64f8198000 r-xp 00016000 fe:01 333607      "
                "/usr/lib/a b.so (deleted)\n";
    assert_int_equal(mqdh__text_maps_line(ok, &e), 0);
    assert_true(e.start == 0x7f64f8191000u && e.end == 0x7f64f8198000u && e.offset == 0x16000);
    assert_true(e.dev == (0xfeull << 32 | 1) && e.ino == 333607);
    assert_string_equal(e.perms, "r-xp");
    assert_string_equal(e.file, "/usr/lib/a b.so (deleted)");
    char anon[] = "561d0e7f0000-561d0e811000 rw-p 00000000 00:00 0 \n";
    assert_int_equal(mqdh__text_maps_line(anon, &e), 0);
    assert_string_equal(e.file, "");
    assert_true(e.ino == 0 && e.dev == 0);
    char big[] = "ffffffffff600000-ffffffffff601000 --xp 00000000 103:2a 18446744073709551615 [vsyscall]";
    assert_int_equal(mqdh__text_maps_line(big, &e), 0);
    assert_true(e.start == 0xffffffffff600000u && e.dev == (0x103ull << 32 | 0x2a));
    assert_true(e.ino == 18446744073709551615ull);
    assert_string_equal(e.file, "[vsyscall]");
    static const char *const bad[] = {
        "",
        "7f64f8191000 r-xp 00016000 fe:01 333607 /a",         /* no end */
        "7f64f8191000-7f64f8198000r-xp 00016000 fe:01 1 /a",  /* no space */
        "7f64f8191000-7f64f8198000 r-xp 00016000 fe01 1 /a",  /* no minor */
        "7f64f8191000-7f64f8198000 r-xp 0001600g fe:01 1 /a", /* not hex */
        "7f64f8191000-7f64f8198000 r-xp 00016000 fe:01 -1 /a",
        "7f64f8191000-7f64f8198000 r-xp 00016000 fe:01 3b /a",
        "7f64f8191000-7f64f8198000 r-xp 00016000 fe:01 18446744073709551616 /a",
        "17f64f81910000000-7f64f8198000 r-xp 00016000 fe:01 1 /a", /* 17 digits */
        "7f64f8191000-7f64f8198000 r-xp 00016000 100000000:01 1 /a",
        "7f64f8191000-7f64f8198000 r-xp 00016000 fe:01",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char line[128];
        snprintf(line, sizeof line, "%s", bad[i]);
        if (mqdh__text_maps_line(line, &e) != -1)
            fail_msg("parsed: %s", bad[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_image__file_symbols),
        cmocka_unit_test(test_image__maps_lines),
        cmocka_unit_test(test_image__types_and_offsets),
        cmocka_unit_test(test_image__guided_lookups_find_the_first_definition),
        cmocka_unit_test(test_image__absent_names_read_no_unit),
        cmocka_unit_test(test_image__live_process_relocated),
        cmocka_unit_test(test_image__absent_symbol_reads_no_debug_file),
        cmocka_unit_test(test_image__functions_named_from_own_table),
        cmocka_unit_test(test_image__addresses_named_as_libdwfl_names_them),
        cmocka_unit_test(test_image__loader_order),
        cmocka_unit_test(test_image__loaded_later_in_path_order),
        cmocka_unit_test(test_image__same_files_put_in_one_order),
        cmocka_unit_test(test_image__files_are_read_once),
        cmocka_unit_test(test_image__libraries_described_from_memory_as_their_files),
        cmocka_unit_test(test_image__bad_files),
        cmocka_unit_test(test_image__separate_debug_file),
        cmocka_unit_test(test_image__hostile_debug_links),
        cmocka_unit_test(test_image__debug_directories_asked_once_a_dump),
        cmocka_unit_test(test_image__gnu_hash_filters_names),
        cmocka_unit_test(test_image__functions_sorted_as_by_address_and_index),
        cmocka_unit_test(test_image__maps_read_to_the_gate_line),
    };
    return cmocka_run_group_tests_name("image", tests, setup, NULL);
}
