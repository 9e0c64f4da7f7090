/*
 * analyze.h - what the library's other files use of analyze.c beyond the
 * public API.
 */
#ifndef MQDH_ANALYZE_H
#define MQDH_ANALYZE_H

#include "mqdhost.h"

/* A peer, as the global rank g, seen from rank `self` of a job of n ranks:
 * "rank+1", "rank-2", "rank" (relative), or "rank 5" (relative 0). */
void mqdh__peer_label(long g, int self, int n, int relative, char *buf, size_t len);

/* Free a dump's index (mqdh_dump_index); NULL is fine. */
void mqdh__index_free(struct mqdh_index *x);

#endif
