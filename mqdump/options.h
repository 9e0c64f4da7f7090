/*
 * options.h - mqdump's command line (options.c), for the command that
 * does what it asks (main.c).
 */
#ifndef MQDUMP_OPTIONS_H
#define MQDUMP_OPTIONS_H

#include "mqdhost.h"

#include <stdio.h>
#include <sys/types.h>

/* What the command line asks for. */
enum task {
    TASK_DUMP,      /* --pid or --job: dump the processes and show them */
    TASK_LIST,      /* --list, or no argument at all */
    TASK_CHECK_DLL, /* --check-dll PATH */
    TASK_AGENT,     /* --agent HOST PID:RANK ... */
    TASK_HELP,      /* --help */
    TASK_LOAD,      /* --load FILE: show a saved dump */
    TASK_SENTINEL,  /* --sentinel: watch a job until it ends, or dump it once it is hung */
};

/* The command line, read (parse_command_line). */
struct command {
    enum task task;
    pid_t *pids;      /* --pid's, each once (malloc'd; command_free) */
    int npids;
    pid_t job;        /* --job's launcher; 0: none */
    int json, stats, full, list;
    int stacks;       /* --stacks; stack_flags: =full's MQDH_STACKS_FULL */
    unsigned stack_flags;
    const char *check, *graph, *stacks_graph, *agent_host; /* NULL: not given */
    int agent_any;    /* --agent-any: the agent of whichever host of the table this is */
    char **args;      /* the operands (--agent's PID:RANK), argv's */
    int nargs;
    const char *save, *load; /* --save FILE, --load FILE; NULL: not given */
    int quiet;               /* -q: no progress */
    int watch;               /* --watch S: seconds between two looks; 0: one look */
    struct mqdh_watch *watched; /* what moved between them; NULL: not watched */
    int sentinel;            /* --sentinel (watcher.h) */
    double interval;         /* --interval S: mean seconds between its looks (default 10) */
    double hung_after;       /* --hung-after S: quiet this long is a hang, whatever the job's
                              * past (its bound); 0: none */
    int signal;              /* --signal SIG: sent to the job once it is dumped hung; 0: none */
    const char *explain;     /* --explain FILE: the hung job explained there, not on stdout */
    struct watch_report *sentinel_report; /* what the sentinel found (malloc'd); NULL */
    int argc;                /* the command line, for what a saved dump says of itself */
    char **argv;
    struct mqdh_options o;
};

/* The usage text (--help, and after a bad command line) to f. */
void usage(FILE *f);

/*
 * Read argv into *c (zeroed first; c->o completed with the defaults):
 * 0, or an exit status (EXIT_USAGE said on stderr, EXIT_FATAL without
 * memory).  c holds what command_free frees either way.
 */
int parse_command_line(int argc, char **argv, struct command *c);

/* Free what parse_command_line made of c. */
void command_free(struct command *c);

#endif
