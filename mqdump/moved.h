/*
 * moved.h - mqdump --watch S (moved.c): what moved between two looks at
 * the same processes, S seconds apart (mqdh_watch_compare, the library's),
 * as text and as JSON.  The text view escapes the watch's strings, the
 * JSON view writes them by its own grammar.
 */
#ifndef MQDUMP_MOVED_H
#define MQDUMP_MOVED_H

#include "mqdhost.h"

/* What moved, as text on standard output: d is the second look (escaped
 * or not: only its ranks are read). */
void watch_text(const struct mqdh_dump *d, const struct mqdh_watch *w);

/* The "watch" member of mqdump's JSON object (json.h's order: after
 * "deadlock"), as docs/JSON.md describes it. */
void watch_json(const struct mqdh_dump *d, const struct mqdh_watch *w);

#endif
