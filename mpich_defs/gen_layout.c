/*
 * gen_layout.c - write the known-layout table of one MPICH build from its
 * DWARF, for targets whose libmpi.so has the symbols but no debug types.
 *
 *   gen_layout LIBMPI VERSION DEVICE > mpich_defs/layouts.h
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

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: gen_layout LIBMPI VERSION DEVICE\n");
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
