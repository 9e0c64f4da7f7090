/*
 * watch.h - mqdump --watch S (watch.c): two looks at the same processes,
 * S seconds apart, the processes running between them, compared process
 * by process: which stacks changed (at which frame), which queue entries
 * appeared, went or changed status or length, and the CPU time each
 * thread used, inside the one MPI call it was in at both looks (MPI's
 * progress loop) or elsewhere.  What it finds is an observation over
 * time, shown beside the analysis of the second look: "nothing moved" is
 * how a hang is told from a slow job when no cycle can be shown.
 *
 * Over the public libmqdhost API alone; a watch borrows nothing from the
 * dumps it was made from (its strings are its own, as read: the text view
 * escapes them, the JSON view writes them by its own grammar).
 */
#ifndef MQDUMP_WATCH_H
#define MQDUMP_WATCH_H

#include "mqdhost.h"

/* Less CPU than this, in a thread outside MPI, is what the two looks
 * themselves cost it (stopping and resuming it): not counted as work. */
#define WATCH_NOISE_SECONDS 0.0005

struct watch;

/*
 * Compare before and after, two dumps of the same processes in the same
 * order (two calls of mqdh_dump_processes with the same list), the second
 * taken `seconds` after the first ended, `elapsed` after it began.  NULL
 * out of memory.  Free with watch_free (NULL is nothing).
 */
struct watch *watch_compare(const struct mqdh_dump *before, const struct mqdh_dump *after,
                            double seconds, double elapsed);
void watch_free(struct watch *w);

/* 1 if every process was seen at both looks and none moved: no stack, no
 * queue changed, no CPU spent outside MPI's progress loop. */
int watch_nothing_moved(const struct watch *w);

/* What moved, as text on standard output: d is the second look (escaped
 * or not: only its ranks are read). */
void watch_text(const struct mqdh_dump *d, const struct watch *w);

/* The "watch" member of mqdump's JSON object (json.h's order: after
 * "deadlock"), as docs/JSON.md describes it. */
void watch_json(const struct mqdh_dump *d, const struct watch *w);

#endif
