/*
 * progress.h - a long dump's progress on the terminal: one line on
 * standard error, refreshed in place, shown only when standard error is a
 * terminal and the dump has run for a second, and cleared at its end.
 *
 * mqdump watches the dump from outside the library, in a thread of its
 * own, by what /proc shows of it: the ranks of this host that mqdump has
 * stopped (their TracerPid), then let go; the agents it started for
 * other hosts (its child processes), running and answered.
 */
#ifndef MQDUMP_PROGRESS_H
#define MQDUMP_PROGRESS_H

#include <sys/types.h>

struct progress;

/*
 * Start watching a dump of pids[0..n-1] (hosts[i] their hosts: NULL, or
 * hosts NULL, for this one), shown on what is standard error now (a
 * duplicate is kept: the dump may redirect descriptor 2).  NULL when
 * nothing will be shown: standard error is not a terminal, or no thread
 * or memory for it.  The arrays are borrowed until progress_stop.
 */
struct progress *progress_start(const pid_t *pids, const char *const *hosts, int n);

/* Stop watching, the line cleared if one was shown; p may be NULL. */
void progress_stop(struct progress *p);

#endif
