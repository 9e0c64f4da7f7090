/* radix.c - a least-significant-byte-first radix sort (radix.h). */
#include "base/radix.h"

#include <string.h>

struct mqdh__keyed *mqdh__radix_sort(struct mqdh__keyed *a, struct mqdh__keyed *tmp, size_t n)
{
    size_t count[8][256];
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 8; b++)
            count[b][(a[i].key >> (8 * b)) & 0xff]++;
    for (int b = 0; b < 8; b++) {
        size_t *c = count[b];
        if (n == 0 || c[(a[0].key >> (8 * b)) & 0xff] == n)
            continue; /* every key has the same byte here: the order stands */
        size_t at = 0;
        for (int v = 0; v < 256; v++) {
            size_t k = c[v];
            c[v] = at;
            at += k;
        }
        for (size_t i = 0; i < n; i++)
            tmp[c[(a[i].key >> (8 * b)) & 0xff]++] = a[i];
        struct mqdh__keyed *t = a;
        a = tmp;
        tmp = t;
    }
    return a;
}
