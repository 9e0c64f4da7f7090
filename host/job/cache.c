/*
 * cache.c - the ELF objects kept from one dump to the next of the same
 * processes (mqdh_cache_new, mqdhost.h; cache.h).
 *
 * A dump spends most of the time it holds the processes stopped on their
 * files: opening the executable and libmpi, hashing their symbols,
 * indexing their DWARF and CFI (docs/DEVELOPMENT.md: the first rank
 * costs tens of milliseconds, each other one less than one).  A tool that
 * looks at the same job again and again keeps them: the next look stops
 * the ranks only for their own state.  A file is known again by the
 * device and inode the maps give, as within one session (files.h).  One
 * session at a time holds the files (libdw and libelf are not
 * thread-safe, and a session's workers already share them under its
 * lock): another that asks meanwhile makes its own.
 */
#define _GNU_SOURCE
#include "mqdhost.h"

#include "job/cache.h"
#include "target/files.h"

#include <stdatomic.h>
#include <stdlib.h>

struct mqdh_cache {
    struct mqdh__files *files;
    atomic_int held; /* 1 while a session has the files */
};

int mqdh_cache_new(struct mqdh_cache **out)
{
    if (!out)
        return MQDH_E_USAGE;
    struct mqdh_cache *c = calloc(1, sizeof *c);
    if (!c || !(c->files = mqdh__files_new())) {
        free(c);
        *out = NULL;
        return MQDH_E_NOMEM;
    }
    atomic_init(&c->held, 0);
    *out = c;
    return MQDH_OK;
}

void mqdh_cache_free(struct mqdh_cache *c)
{
    if (!c)
        return;
    mqdh__files_free(c->files);
    free(c);
}

struct mqdh__files *mqdh__cache_take(struct mqdh_cache *c)
{
    int free_now = 0;
    if (!c || !atomic_compare_exchange_strong(&c->held, &free_now, 1))
        return NULL;
    mqdh__files_again(c->files);
    return c->files;
}

void mqdh__cache_give_back(struct mqdh_cache *c)
{
    if (c)
        atomic_store(&c->held, 0);
}
