/*
 * agents.h - the records of a dump's agents, shared by the files that run
 * them: the plan of hosts and agents and what each agent gave (remote.c),
 * the remote command's words (agent_command.c), and what an agent's
 * output says (agent_result.c).  Private to those three.
 */
#ifndef MQDH__AGENTS_H
#define MQDH__AGENTS_H

#include "mqdhost.h"

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#define DEFAULT_REMOTE "ssh -o BatchMode=yes {host}"
#define DEFAULT_TIMEOUT 60
#define DEFAULT_FANOUT 256
#define MAX_FANOUT 4096
/* More than any host's result (a few kB a rank): an agent sending more
 * is broken, and is stopped. */
#define MAX_RESULT ((size_t)1 << 30)


/* Most bytes of host tables one command carries: what a remote shell
 * is given is one argument (Linux: at most 128 kB), and ssh sends all of
 * it.  More hosts than that take more commands. */
#define MAX_TABLE ((size_t)96 * 1024)

/* A host other ranks are on. */
struct host {
    const char *name; /* the dump's */
    int *idx, n;      /* the dump's processes on it */
    char *why;        /* set: no agent was started for it, for this reason */
};

/*
 * One run of the remote command: for one host ({host}), or for several at
 * once ({hosts}), whose agents' outputs come back through it together.
 */
struct agent {
    int first, nhosts; /* its hosts: r->h[first .. first + nhosts - 1] */
    size_t table;     /* the bytes of their shares of the table (mqdh__share_size) */
    pid_t pid;        /* the remote command; 0 not started, -1 done */
    int slot;         /* in live[] */
    int out, err, in; /* its stdout, stderr, stdin (held open); -1 closed */
    char *buf;
    size_t len, cap;
    char *tail;       /* the end of its stderr */
    size_t tlen, tcap;
    double deadline;
    int status, timed_out, too_big;
    char *why;        /* set: it did not start, for this reason */
    char *unread;     /* set: a result it gave that did not read, and why */
    struct mqdh_dump **results;
    int nresults;
    int dropped; /* processes its results gave that it was not sent */
};

struct mqdh__remote {
    const struct mqdh_options *opt;
    char **words;     /* the remote command's words, {host}/{hosts} not yet replaced */
    int nwords;
    int all;          /* the template names {hosts}: one command for many hosts */
    char agent[PATH_MAX];
    char program[PATH_MAX]; /* the remote command's, found (mqdh_program_path) */
    int timeout, fanout;
    struct host *h;
    int nh;
    struct agent *a;
    int na, next;     /* agents; the next to start */
    const struct mqdh_process *procs;
    const int *ranks; /* the caller's; NULL: each agent reads them there */
};

#endif
