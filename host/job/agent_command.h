/*
 * agent_command.h - the remote command that starts an agent on another
 * host, from the caller's template (agent_command.c).
 */
#ifndef MQDH__AGENT_COMMAND_H
#define MQDH__AGENT_COMMAND_H

#include "job/agents.h"

/* Set *why (if not set yet) to the printf-style message: why an agent or
 * a host got no result.  Without memory, *why stays NULL. */
void mqdh__agent_why(char **why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The template t split at blanks into *out (*n words, malloc'd); MQDH_OK
 * or MQDH_E_NOMEM.  Free with mqdh__words_free. */
int mqdh__command_split(const char *t, char ***out, int *n);
void mqdh__words_free(char **w, int n);

/*
 * The agent's path into out[len]: the caller's (mqdh_options.agent_path),
 * $MQD_AGENT, else mqdump beside this library.  One given is, as root,
 * refused unless this host's copy passes the trust rule.  0, or -1 with the
 * reason in why (empty: none found).
 */
int mqdh__agent_path(const struct mqdh_options *o, char *out, size_t len, char *why,
                     size_t whylen);

/* Whether r's command can start agents at all: the template, its program
 * (found as mqdh_program_path finds it, into r->program), the agent
 * (have_agent, else agent_why), plain words for the remote shell.  The
 * reason it cannot in *why (unset: it can). */
void mqdh__command_check(struct mqdh__remote *r, int have_agent, const char *agent_why,
                         char **why);

/* The bytes of host h's share of the job's table on an agent's command
 * line (what a plan may put on one command: MAX_TABLE). */
size_t mqdh__share_size(const struct host *h);

/* The command line (NULL-terminated, malloc'd words) that starts agent a:
 * the template with {host} or {hosts} replaced, then the agent and its
 * hosts' shares of the table.  NULL (a->why set) without memory. */
char **mqdh__agent_argv(struct mqdh__remote *r, struct agent *a);

#endif
