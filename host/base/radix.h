/*
 * radix.h - sorting by 64-bit keys in linear time.
 *
 * A file's functions are sorted by address once per dump to name the
 * frames of a stack (filesyms.c): 10,000 and more for an MPI library's
 * .symtab, which qsort took 6 M instructions for, an eighth of a 16-rank
 * dump.  Addresses are a few bytes wide, and a pass per byte that differs
 * does it in a fraction.
 */
#ifndef MQDH__RADIX_H
#define MQDH__RADIX_H

#include <stddef.h>
#include <stdint.h>

struct mqdh__keyed {
    uint64_t key;
    uint32_t idx;
};

/*
 * Sort a[0..n-1] by key, ascending and stable (equal keys keep their
 * order), with tmp[0..n-1] as room.  The sorted pairs end in a or in tmp:
 * the one returned.
 */
struct mqdh__keyed *mqdh__radix_sort(struct mqdh__keyed *a, struct mqdh__keyed *tmp, size_t n);

#endif
