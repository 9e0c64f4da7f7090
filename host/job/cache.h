/*
 * cache.h - what dumps of the same processes keep for each other
 * (mqdh_options.cache, mqdh_cache_new): the ELF objects the processes
 * map, opened and indexed once for every look at a job.
 */
#ifndef MQDH__CACHE_H
#define MQDH__CACHE_H

struct mqdh_cache;
struct mqdh__files;

/*
 * The cache's files for one session, if no other session holds them now
 * (then they are that session's until mqdh__cache_give_back), ready for it
 * (mqdh__files_again); NULL if c is NULL or held: the session makes its
 * own files then, as without a cache.
 */
struct mqdh__files *mqdh__cache_take(struct mqdh_cache *c);

/* The files mqdh__cache_take gave, back to c for the next session. */
void mqdh__cache_give_back(struct mqdh_cache *c);

#endif
