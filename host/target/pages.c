/* pages.c - the pages a program's processes read, learnt once; see pages.h. */
#define _GNU_SOURCE
#include "target/pages.h"
#include "target/image.h"
#include "target/memory.h"
#include "base/array.h"

#include <stdlib.h>
#include <string.h>

/* A page learnt: the name of its mapping and its offset in it (from its
 * top for a stack). */
struct mqdh__learnt {
    uint64_t key, offset;
    unsigned phases; /* MQDH__PAGES_* of the reads that needed it */
};

enum { MAX_LEARNT = 4096 }; /* 16 MB of 4 kB pages: far beyond a queue walk */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t mix_text(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = mix(h, (unsigned char)*s);
    return h;
}

/*
 * A file's segment: its device, inode and offset, whoever maps it.  A
 * named mapping of the kernel's ([heap], [stack], [vdso], ...), and an
 * anonymous one (the n-th after the last file mapped: a library's .bss,
 * the mappings its allocator made), within the program (program_of).
 */
void mqdh__region_name(struct mqdh__region *r, const char *path, unsigned long long dev,
                       unsigned long long ino, uint64_t offset, uint64_t *last_file, int *anon)
{
    r->from_end = strcmp(path, "[stack]") == 0;
    r->of_program = ino == 0 && dev == 0;
    if (!r->of_program) {
        r->key = *last_file = mix(mix(mix(1, dev), ino), offset);
        *anon = 0;
    } else if (path[0]) {
        r->key = mix_text(2, path);
    } else {
        r->key = mix(mix(3, *last_file), (uint64_t)++*anon);
    }
}

/* Whose regions they are: the executable's file. */
static uint64_t program_of(const struct mqdh__image *im)
{
    const struct mqdh__file *f = im->nmods ? im->mods[0].file : NULL;
    return f ? mix(mix(4, f->dev), f->ino) : 0;
}

static uint64_t key_of(const struct mqdh__region *r, uint64_t program)
{
    return r->of_program ? mix(r->key, program) : r->key;
}

/* The region of im holding addr, or NULL. */
static const struct mqdh__region *region_at(const struct mqdh__image *im, uint64_t addr)
{
    for (int i = 0; i < im->nregions; i++)
        if (addr >= im->regions[i].start && addr < im->regions[i].end)
            return &im->regions[i];
    return NULL;
}

static int cmp_learnt(const void *a, const void *b)
{
    const struct mqdh__learnt *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

/* One page learnt (its region's key, offset) for phase; 0, or -1 out of
 * memory. */
static int learn_one(struct mqdh__pages *pg, uint64_t key, uint64_t offset, unsigned phase)
{
    if (MQDH__GROW(pg->v, pg->cap, pg->n + 1) != 0)
        return -1;
    pg->v[pg->n++] = (struct mqdh__learnt){key, offset, phase};
    return 0;
}

/*
 * How far from its top a stack's page may lie in another process of the
 * program: the kernel puts the first stack pointer a random distance
 * below the stack's top (up to 8 KiB on x86-64, arch_align_stack), so
 * the same frame is up to two pages off.  A stack page learnt brings its
 * neighbours that far on either side: bytes, not calls.
 */
enum { STACK_SLACK = 2 };

void mqdh__pages_learn(struct mqdh__pages *pg, const struct mqdh__image *im,
                       const struct mqdh__mem *m, size_t from, unsigned phase)
{
    uint64_t program = program_of(im), ps = m->page_size;
    int full = 0;
    pthread_mutex_lock(&pg->lock);
    for (size_t i = from; i < m->nmissed && pg->n < MAX_LEARNT && !full; i++) {
        const struct mqdh__region *r = region_at(im, m->missed[i]);
        if (!r)
            continue;
        uint64_t key = key_of(r, program);
        if (!r->from_end) {
            full = learn_one(pg, key, m->missed[i] - r->start, phase) != 0;
            continue;
        }
        uint64_t off = r->end - m->missed[i], size = r->end - r->start;
        for (int d = -STACK_SLACK; d <= STACK_SLACK && !full; d++) {
            uint64_t o = off + (uint64_t)((int64_t)d * (int64_t)ps);
            full = o >= ps && o <= size && learn_one(pg, key, o, phase) != 0;
        }
    }
    if (pg->n > 1)
        qsort(pg->v, (size_t)pg->n, sizeof *pg->v, cmp_learnt);
    int keep = 0;
    for (int i = 0; i < pg->n; i++) {
        if (keep && cmp_learnt(&pg->v[keep - 1], &pg->v[i]) == 0)
            pg->v[keep - 1].phases |= pg->v[i].phases; /* one page, both reads */
        else
            pg->v[keep++] = pg->v[i];
    }
    pg->n = keep;
    pthread_mutex_unlock(&pg->lock);
}

/* The first of v[0..n-1] (sorted) with key, or NULL. */
static struct mqdh__learnt *bsearch_first(struct mqdh__learnt *v, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].key == key ? &v[lo] : NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

size_t mqdh__pages_fetch(struct mqdh__pages *pg, const struct mqdh__image *im,
                         struct mqdh__mem *m, unsigned phase)
{
    uint64_t program = program_of(im);
    pthread_mutex_lock(&pg->lock);
    uint64_t *want = pg->n ? malloc((size_t)pg->n * sizeof *want) : NULL;
    size_t n = 0;
    for (int r = 0; want && r < im->nregions; r++) {
        const struct mqdh__region *g = &im->regions[r];
        uint64_t size = g->end - g->start;
        struct mqdh__learnt k = {key_of(g, program), 0, 0};
        /* The region's pages learnt: a run of the sorted set. */
        struct mqdh__learnt *at = bsearch_first(pg->v, (size_t)pg->n, k.key);
        for (; at && at < pg->v + pg->n && at->key == k.key; at++) {
            if (!(at->phases & phase) ||
                (g->from_end ? at->offset == 0 || at->offset > size : at->offset >= size))
                continue;
            uint64_t page = g->from_end ? g->end - at->offset : g->start + at->offset;
            if (!mqdh__mem_cached(m, page))
                want[n++] = page;
        }
    }
    pthread_mutex_unlock(&pg->lock);
    if (n > 1)
        qsort(want, n, sizeof *want, cmp_u64);
    size_t keep = 0;
    for (size_t i = 0; i < n; i++)
        if (!keep || want[keep - 1] != want[i])
            want[keep++] = want[i];
    size_t got = keep ? mqdh__mem_fetch_pages(m, want, keep) : 0;
    free(want);
    return got;
}

void mqdh__pages_free(struct mqdh__pages *pg)
{
    free(pg->v);
    pg->v = NULL;
    pg->n = pg->cap = 0;
}
