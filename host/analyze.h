/*
 * analyze.h - what the library's other files use of analyze.c beyond the
 * public API.
 */
#ifndef MQDH_ANALYZE_H
#define MQDH_ANALYZE_H

#include "mqdhost.h"

/* Free a dump's index (mqdh_dump_index); NULL is fine. */
void mqdh_index_free(struct mqdh_index *x);

#endif
