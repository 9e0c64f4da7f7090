/*
 * watcher.h - mqdump --sentinel (watcher.c): beside a running job, look
 * at it now and then, briefly, until it ends or is hung; the library
 * decides which (mqdh_sentinel_look), this is the looking, the waiting
 * and the words.  main.c shows the hung job's last look as any dump and
 * saves it.
 */
#ifndef MQDUMP_WATCHER_H
#define MQDUMP_WATCHER_H

#include "options.h"

#include <sys/types.h>

/* How a watch ended. */
enum watch_end {
    WATCH_HUNG,   /* nothing moved for long enough: the last look is the dump */
    WATCH_ENDED,  /* the job ended by itself (its launcher, or every process, gone) */
    WATCH_FAILED, /* the job could not be looked at (said) */
};

/* What a watch found and what it cost (command.sentinel_report). */
struct watch_report {
    enum watch_end end;
    struct mqdh_sentinel_state state; /* after the last look */
    double seconds;        /* from the first look to the last */
    double stopped_mean;   /* seconds the processes were held stopped per look */
    double stopped_max;
    double own_cpu;        /* mqdump's CPU time over the watch */
    double job_cpu;        /* the job's, between the first look and the last */
};

/*
 * --sentinel without --job or --pid: the launcher of the one MPI job of
 * this user (any user's, as root) on this node, into c->job, waiting for
 * one to appear, a look every interval, for as long as the process that
 * started mqdump is there.  0, or EXIT_FATAL (said on stderr: several
 * jobs, or mqdump's parent gone first).
 */
int sentinel_find_job(struct command *c);

/* Between two tries at reading a job's ranks that are not all there yet:
 * wait an interval; 1 if the job may still start them (its launcher is
 * there), 0 if it ended. */
int sentinel_job_starting(const struct command *c);

/*
 * Look at processes pids[0..n-1] (ranks, hosts as mqdh_dump_processes
 * takes them) every c->interval seconds on average, each look a dump
 * kept short by a cache of the files, until the library's sentinel says
 * the job is hung, or the job ends.  Its own lines (what it watches, how
 * it ended) to descriptor say (stderr may be held).  Returns how it
 * ended, with c->sentinel_report set; WATCH_HUNG with *out the last look
 * (the dump to show and save) and c->watched its comparison with the look
 * before; *out NULL otherwise.
 */
enum watch_end sentinel_looks(struct command *c, const pid_t *pids, const int *ranks,
                              const char *const *hosts, int n, int say, struct mqdh_dump **out);

/* The explanation's first line on standard output: hung, after what, and
 * how the sentinel decided it. */
void sentinel_text(const struct command *c);

/*
 * --signal: c->signal sent to the job (its launcher, else each of
 * pids[0..n-1] still there), said on stderr.  0, or -1 if it could not
 * be sent.
 */
int sentinel_signal(const struct command *c, const pid_t *pids, int n);

/* A signal's number from its name (TERM, SIGTERM, term) or number;
 * 0 if it is neither. */
int signal_number(const char *s);

#endif
