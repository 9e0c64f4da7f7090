/*
 * gen_layout.c - write the known-layout table of one MPICH build from its
 * DWARF, for targets whose libmpi.so has the symbols but no debug types.
 *
 *   gen_layout LIBMPI VERSION DEVICE > mpich_defs/layouts.h
 *   gen_layout --steps ID LIBMPI      (for mpich_defs/stock_builds.h)
 *
 * The second form writes a build's layout as the DLL resolves it step by
 * step: MPICH_STOCK_TYPE(ID, "T", size) for every type, and
 * MPICH_STOCK_FIELD(ID, "T", "f", offset) for every step "T:f" of every
 * field path of mpich_defs.h that the DWARF has (once each): a table that
 * stays usable when mpich_defs.h grows (a path it lacks reads as -1).
 *
 * Every field path and type size of mpich_defs.h is resolved exactly as
 * libmqd_mpich.so resolves it through a debugger's callbacks (each step
 * "T:f" is the offset of field f in type T); what the build lacks is
 * written as -1.  mpich_defs/gen-layouts.sh runs it on the cached MPICH, and
 * the integration tests check that the committed table still matches.
 */
#define _GNU_SOURCE
#include "host/target/image.h"
#include "host/target/types.h"
#include "mpich_defs/mpich_defs.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

/* The offset of "T1:f1/T2:f2", or -1 (as dll/mpich_layout.c computes it). */
static int path_offset(struct mqdh__image *im, const char *path)
{
    char buf[256];
    int total = 0;
    snprintf(buf, sizeof buf, "%s", path);
    for (char *step = buf; step && *step;) {
        char *next = strchr(step, '/'), *colon = strchr(step, ':');
        if (next)
            *next++ = '\0';
        if (!colon)
            return -1;
        *colon = '\0';
        struct mqdh__type *t = mqdh__type_find(im, step);
        int off = t ? mqdh__type_field_offset(t, colon + 1) : -1;
        if (off < 0)
            return -1;
        total += off;
        step = next;
    }
    return total;
}

/* Whether "T\tf" was written already (seen: a list of them, n). */
static int seen_before(char (*seen)[160], int *n, int max, const char *type, const char *field)
{
    char key[160];
    snprintf(key, sizeof key, "%s\t%s", type, field ? field : "");
    for (int i = 0; i < *n; i++)
        if (strcmp(seen[i], key) == 0)
            return 1;
    if (*n < max)
        snprintf(seen[(*n)++], sizeof seen[0], "%s", key);
    return 0;
}

/* Every step of path ("T1:f1/T2:f2") and each step's type, as a table. */
static void print_steps(struct mqdh__image *im, const char *id, const char *path,
                        char (*seen)[160], int *n, int max)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *step = buf; step && *step;) {
        char *next = strchr(step, '/'), *colon = strchr(step, ':');
        if (next)
            *next++ = '\0';
        if (!colon)
            return;
        *colon = '\0';
        struct mqdh__type *t = mqdh__type_find(im, step);
        int off = t ? mqdh__type_field_offset(t, colon + 1) : -1;
        if (off < 0)
            return; /* the build lacks it, and the rest of the path */
        if (!seen_before(seen, n, max, step, NULL))
            printf("MPICH_STOCK_TYPE(%s, \"%s\", %d)\n", id, step, mqdh__type_size(t));
        if (!seen_before(seen, n, max, step, colon + 1))
            printf("MPICH_STOCK_FIELD(%s, \"%s\", \"%s\", %d)\n", id, step, colon + 1, off);
        step = next;
    }
}

static int print_stock_steps(const char *id, const char *lib)
{
    static char seen[1024][160];
    int n = 0;
    struct mqdh__image im;
    char err[512];
    if (mqdh__image_open_file(&im, lib, err, sizeof err) != 0) {
        fprintf(stderr, "gen_layout: %s\n", err);
        return 1;
    }
#define STEPS_(id_, cls, path) print_steps(&im, id, path, seen, &n, 1024);
    MPICH_FIELDS(STEPS_)
#undef STEPS_
#define SIZE_STEP_(id_, cls, type)                                                           \
    {                                                                                        \
        struct mqdh__type *t_ = mqdh__type_find(&im, type);                                    \
        if (t_ && !seen_before(seen, &n, 1024, type, NULL))                                  \
            printf("MPICH_STOCK_TYPE(%s, \"%s\", %d)\n", id, type, mqdh__type_size(t_));     \
    }
    MPICH_SIZES(SIZE_STEP_)
#undef SIZE_STEP_
    mqdh__image_close(&im);
    return ferror(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--steps") == 0)
        return print_stock_steps(argv[2], argv[3]);
    if (argc != 4) {
        fprintf(stderr, "usage: gen_layout LIBMPI VERSION DEVICE\n"
                        "       gen_layout --steps ID LIBMPI\n");
        return 64;
    }
    struct mqdh__image im;
    char err[512];
    if (mqdh__image_open_file(&im, argv[1], err, sizeof err) != 0) {
        fprintf(stderr, "gen_layout: %s\n", err);
        return 1;
    }
    struct mqdh__type *comm = mqdh__type_find(&im, "MPIR_Comm");
    if (!comm) {
        fprintf(stderr, "gen_layout: %s has no DWARF for MPIR_Comm: not a debug build\n",
                argv[1]);
        mqdh__image_close(&im);
        return 1;
    }
    int nfields = 0, nsizes = 0;
#define COUNT_(id, cls, x) n++;
    {
        int n = 0;
        MPICH_FIELDS(COUNT_)
        nfields = n;
        n = 0;
        MPICH_SIZES(COUNT_)
        nsizes = n;
    }
#undef COUNT_
    printf("/*\n"
           " * layouts.h - known MPICH layouts, for a libmpi.so without DWARF types.\n"
           " * Generated from the build's DWARF by mpich_defs/gen-layouts.sh\n"
           " * (mpich_defs/gen_layout.c); do not edit.  A layout: VERSION, DEVICE,\n"
           " * POINTER_SIZE, BIG_ENDIAN, and how many fields and sizes it has (a table\n"
           " * older than mpich_defs.h is not used); then every field offset and type\n"
           " * size of mpich_defs.h, -1 for what the build lacks.\n"
           " */\n");
    printf("MPICH_LAYOUT_BEGIN(\"%s\", \"%s\", %d, %d, %d, %d)\n", argv[2], argv[3],
           im.elf_class == ELFCLASS64 ? 8 : 4, im.big_endian ? 1 : 0, nfields, nsizes);
#define PRINT_FIELD_(id, gen, path)                                                          \
    printf("MPICH_LAYOUT_FIELD(" #id ", %d)\n", path_offset(&im, path));
    MPICH_FIELDS(PRINT_FIELD_)
#undef PRINT_FIELD_
    printf("MPICH_LAYOUT_SIZES\n");
#define PRINT_SIZE_(id, gen, type)                                                           \
    {                                                                                        \
        struct mqdh__type *t_ = mqdh__type_find(&im, type);                                    \
        printf("MPICH_LAYOUT_SIZE(" #id ", %d)\n", t_ ? mqdh__type_size(t_) : -1);           \
    }
    MPICH_SIZES(PRINT_SIZE_)
#undef PRINT_SIZE_
    printf("MPICH_LAYOUT_END\n");
    mqdh__image_close(&im);
    return ferror(stdout) ? 1 : 0;
}
