/*
 * gen_layout.c - write the known layout of one Open MPI build from its
 * DWARF, for libmqd_ompi.so on targets whose libmpi has the symbols but no
 * debug types (Debian's, whose DWARF is in a separate debug package), and
 * check it against the binaries it is for.
 *
 *   gen_layout VERSION BUILD DWARF-FILE... -- STOCK-FILE... > layout
 *
 * Every field path and type size of ompi_defs.h is resolved by the DLL's
 * own mqd_path_offset (dll/target.c) over the DWARF-FILEs as a debugger's
 * image (each type found in the first file that has it: libmpi.so,
 * libopen-pal.so, then the component mca_pml_ob1.so);
 * what the build lacks is written as -1.  Then every class of
 * OMPI_CLASS_SIZES is read from the STOCK-FILEs (libmpi.so.40,
 * libopen-pal.so.40, mca_pml_ob1.so: the static opal_class_t each exports)
 * and its cls_sizeof must be the size the DWARF gives, as the DLL requires
 * of a process before it uses the layout: otherwise nothing is written and
 * the exit status is 1.  ompi_defs/gen-layouts.sh runs it.
 */
#define _GNU_SOURCE
#include "dll/target.h"
#include "host/target/image.h"
#include "host/target/types.h"
#include "ompi_defs/ompi_defs.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_FILES = 16 };

struct files {
    int n;
    struct mqdh__image im[MAX_FILES];
};

/* Type name in the first file that has it. */
static struct mqdh__type *find(struct files *f, const char *name)
{
    for (int i = 0; i < f->n; i++) {
        struct mqdh__type *t = mqdh__type_find(&f->im[i], name);
        if (t)
            return t;
    }
    return NULL;
}

/* The files as a debugger's image, for the DLL's own path resolution
 * (mqd_path_offset, dll/target.c): the same steps, the same answer. */
static mqs_type *cb_find_type(mqs_image *image, char *name, mqs_lang_code lang)
{
    (void)lang;
    return (mqs_type *)find((struct files *)image, name);
}

static int cb_field_offset(mqs_type *type, char *field)
{
    return mqdh__type_field_offset((struct mqdh__type *)type, field);
}

static const mqs_image_callbacks callbacks = {.mqs_find_type_fp = cb_find_type,
                                              .mqs_field_offset_fp = cb_field_offset};

/* The offset of "T1:f1/T2:f2", or -1, as libmqd_ompi.so resolves it. */
static int path_offset(struct files *f, const char *path)
{
    return mqd_path_offset((mqs_image *)f, &callbacks, path);
}

static int type_size(struct files *f, const char *name)
{
    struct mqdh__type *t = find(f, name);
    return t ? mqdh__type_size(t) : -1;
}

/* The 8 bytes at vaddr of ELF file path (its allocated sections' data),
 * little-endian into *v: 0, or -1. */
static int read_vaddr(const char *path, uint64_t vaddr, uint64_t *v)
{
    int fd = open(path, O_RDONLY), rc = -1;
    Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
    Elf_Scn *scn = NULL;
    while (e && rc != 0 && (scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        Elf_Data *d;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_ALLOC) ||
            vaddr < sh.sh_addr || vaddr + 8 > sh.sh_addr + sh.sh_size ||
            !(d = elf_getdata(scn, NULL)) || !d->d_buf)
            continue;
        const unsigned char *b = (const unsigned char *)d->d_buf + (vaddr - sh.sh_addr);
        *v = 0;
        for (int i = 7; i >= 0; i--)
            *v = *v << 8 | b[i];
        rc = 0;
    }
    if (e)
        elf_end(e);
    if (fd >= 0)
        close(fd);
    return rc;
}

/* The DWARF's size of the type OMPI_SIZES calls id ("SZ_COMM"). */
static int size_of_id(struct files *f, const char *id)
{
    static const struct {
        const char *id, *type;
    } sizes[] = {
#define SIZE_(sid, cls, type) {#sid, type},
        OMPI_SIZES(SIZE_)
#undef SIZE_
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(sizes[i].id, id) == 0)
            return type_size(f, sizes[i].type);
    return -1;
}

/* Every class's cls_sizeof in the stock files (paths) against the DWARF's
 * size of its type: 0 if all agree, else -1 (each difference said). */
static int check_classes(struct files *dwarf, struct files *stock, char **paths)
{
    static const struct {
        const char *symbol, *size;
    } classes[] = {
#define CLASS_(sym, id, cls) {sym, #id},
        OMPI_CLASS_SIZES(CLASS_)
#undef CLASS_
    };
    int off = path_offset(dwarf, "opal_class_t:cls_sizeof"), bad = off < 0;
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        uint64_t at = 0, v = 0;
        int k = 0, want = size_of_id(dwarf, classes[i].size);
        while (k < stock->n && mqdh__image_symbol(&stock->im[k], classes[i].symbol, 0, &at,
                                                  NULL) != 0)
            k++;
        if (k == stock->n || off < 0 || read_vaddr(paths[k], at + (uint64_t)off, &v) != 0) {
            fprintf(stderr, "gen_layout: no %s in the stock files\n", classes[i].symbol);
            bad = 1;
        } else if (v != (uint64_t)want) {
            fprintf(stderr, "gen_layout: %s: the stock build's objects are %llu bytes, %d in "
                            "this build's DWARF\n", classes[i].symbol, (unsigned long long)v,
                    want);
            bad = 1;
        } else {
            fprintf(stderr, "gen_layout: %s: %llu bytes in both\n", classes[i].symbol,
                    (unsigned long long)v);
        }
    }
    return bad ? -1 : 0;
}

static void print_layout(struct files *f, const char *version, const char *build)
{
    int nfields = 0, nsizes = 0;
#define COUNT_(id, cls, x) n++;
    {
        int n = 0;
        OMPI_FIELDS(COUNT_)
        nfields = n;
        n = 0;
        OMPI_SIZES(COUNT_)
        nsizes = n;
    }
#undef COUNT_
    printf("/*\n"
           " * layouts.h - known Open MPI layouts, for a libmpi without DWARF types.\n"
           " * Generated by ompi_defs/gen-layouts.sh (ompi_defs/gen_layout.c) from the\n"
           " * DWARF of a build made as the distribution makes it; do not edit.  A\n"
           " * layout: VERSION, BUILD, POINTER_SIZE, BIG_ENDIAN, how many fields and\n"
           " * sizes it has; then every field offset and type size of ompi_defs.h,\n"
           " * -1 for what the build lacks.\n"
           " */\n");
    printf("OMPI_LAYOUT_BEGIN(\"%s\", \"%s\", %d, %d, %d, %d)\n", version, build,
           f->im[0].elf_class == ELFCLASS64 ? 8 : 4, f->im[0].big_endian ? 1 : 0, nfields,
           nsizes);
#define PRINT_FIELD_(id, cls, path) printf("OMPI_LAYOUT_FIELD(" #id ", %d)\n", path_offset(f, path));
    OMPI_FIELDS(PRINT_FIELD_)
#undef PRINT_FIELD_
    printf("OMPI_LAYOUT_SIZES\n");
#define PRINT_SIZE_(id, cls, type) printf("OMPI_LAYOUT_SIZE(" #id ", %d)\n", type_size(f, type));
    OMPI_SIZES(PRINT_SIZE_)
#undef PRINT_SIZE_
    printf("OMPI_LAYOUT_END\n");
}

/* Open each of paths[0..n-1] into f: 0, or -1 (said). */
static int open_all(struct files *f, char **paths, int n)
{
    char err[512];
    for (f->n = 0; f->n < n; f->n++) {
        if (f->n == MAX_FILES ||
            mqdh__image_open_file(&f->im[f->n], paths[f->n], err, sizeof err) != 0) {
            fprintf(stderr, "gen_layout: %s\n", f->n == MAX_FILES ? "too many files" : err);
            return -1;
        }
    }
    return 0;
}

static void close_all(struct files *f)
{
    for (int i = 0; i < f->n; i++)
        mqdh__image_close(&f->im[i]);
    f->n = 0;
}

int main(int argc, char **argv)
{
    int sep = 3;
    while (sep < argc && strcmp(argv[sep], "--") != 0)
        sep++;
    if (argc < 6 || sep == 3 || sep >= argc - 1) {
        fprintf(stderr, "usage: gen_layout VERSION BUILD DWARF-FILE... -- STOCK-FILE...\n");
        return 64;
    }
    elf_version(EV_CURRENT);
    static struct files dwarf, stock;
    int rc = 1;
    if (open_all(&dwarf, argv + 3, sep - 3) != 0 ||
        open_all(&stock, argv + sep + 1, argc - sep - 1) != 0)
        goto out;
    if (!find(&dwarf, "ompi_communicator_t")) {
        fprintf(stderr, "gen_layout: no DWARF for ompi_communicator_t: not a debug build\n");
        goto out;
    }
    if (check_classes(&dwarf, &stock, argv + sep + 1) != 0) {
        fprintf(stderr, "gen_layout: this build is not the stock one: no layout written\n");
        goto out;
    }
    print_layout(&dwarf, argv[1], argv[2]);
    rc = ferror(stdout) ? 1 : 0;
out:
    close_all(&dwarf);
    close_all(&stock);
    return rc;
}
