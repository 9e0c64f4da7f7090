/*
 * meter.h - a long dump's progress on the terminal: one line on
 * standard error, refreshed in place, shown only when standard error is a
 * terminal and the dump has run for a second, and cleared at its end.
 *
 * The library tells each step of the dump (mqdh_options.progress: the
 * ranks of this host stopped, unwound, read and let go; the agents of
 * other hosts started and answered; the debug files being fetched) to
 * progress_note, which keeps the counts; a thread of its own shows them,
 * at most every 250 ms, so that the dump never waits on the terminal.
 */
#ifndef MQDUMP_METER_H
#define MQDUMP_METER_H

#include "mqdhost.h"

struct progress;

/*
 * Start showing a dump's progress on what is standard error now (a
 * duplicate is kept: the dump may redirect descriptor 2).  NULL when
 * nothing will be shown: standard error is not a terminal, or no thread
 * or memory for it.
 */
struct progress *progress_start(void);

/* mqdh_options.progress, arg the struct progress: keep p's counts. */
void progress_note(void *arg, const struct mqdh_progress *p);

/* Stop showing, the line cleared if one was shown; p may be NULL. */
void progress_stop(struct progress *p);

#endif
