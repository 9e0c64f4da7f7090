/*
 * agent.h - mqdump --agent: one host's share of a job dumped for a front
 * end on another host (the front end starts it through the remote
 * command), and mqdump's exit statuses, which the agent shares.
 */
#ifndef MQDUMP_AGENT_H
#define MQDUMP_AGENT_H

#include "mqdhost.h"

/* The exit statuses, one per meaning (docs/mqdump.1, EXIT STATUS; usage()). */
enum exit_status {
    EXIT_OK = 0,      /* every process dumped, and the analysis sure: a deadlock, or none */
    EXIT_PARTIAL = 1, /* some process not dumped (or none, but unwound), the analysis cannot
                       * tell, or a graph
                       * asked for not written */
    EXIT_FATAL = 2,   /* nothing dumped: no process, no job, no DLL that checks, no /proc,
                       * no memory */
    EXIT_HUNG = 3,    /* --sentinel: the job is hung, and was dumped (its other ends: the
                       * job ended by itself, EXIT_OK; it could not be watched, EXIT_FATAL) */
    EXIT_USAGE = 64,  /* a bad command line (sysexits.h's EX_USAGE) */
};

/*
 * Dump this host's processes named by args[0..nargs-1] ("PID:RANK"), host
 * being this host's name as the front end knows it, with options o, and
 * write the result (mqdh_result_write, docs/RESULT.md) on standard output.
 * The ranks are let go before it is written, and at once should standard
 * output close.  EXIT_OK when the result was written (whatever it holds),
 * EXIT_FATAL when not, EXIT_USAGE for arguments that are not PID:RANK.
 */
int agent_run(const char *host, char **args, int nargs, struct mqdh_options *o);

/*
 * The same, started on every host of a list by one command (the front
 * end's {hosts} template): args are every host's share, each
 * "HOST=PID:RANK[,PID:RANK...]", and this agent dumps the share of the
 * host that is this one (mqdh_host_find), named as the front end names
 * it.  EXIT_FATAL, said, when none is this host.
 */
int agent_run_any(char **args, int nargs, struct mqdh_options *o);

#endif
