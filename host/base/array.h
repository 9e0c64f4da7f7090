/*
 * array.h - the host's one growable array, and its one bound on lists read
 * from a target.
 */
#ifndef MQDH__ARRAY_H
#define MQDH__ARRAY_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/*
 * More entries than any list of a real job holds (the ranks of the largest
 * jobs run, a process's communicators, a queue's entries, a group's
 * members): a list read from a target that is longer is corrupt or a cycle.
 */
#define MQDH__MAX_LIST (1 << 23)

/*
 * Make room in the array *vp (a pointer to any element type, of size bytes
 * each) for at least need elements, doubling its capacity *cap.  0, or -1
 * with *vp and *cap unchanged when memory runs out or need is beyond
 * MQDH__MAX_LIST.
 */
static inline int mqdh__grow_(void *vp, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return 0;
    if (need > MQDH__MAX_LIST)
        return -1;
    int nc = *cap ? *cap : 8;
    while (nc < need)
        nc *= 2;
    void *v;
    memcpy(&v, vp, sizeof v);
    v = realloc(v, (size_t)nc * size);
    if (!v)
        return -1;
    memcpy(vp, &v, sizeof v);
    *cap = nc;
    return 0;
}

/* Room for need elements in array v of capacity cap (both lvalues). */
#define MQDH__GROW(v, cap, need) mqdh__grow_(&(v), &(cap), (need), sizeof *(v))

#endif
