/*
 * remote.h - other hosts' ranks, through one agent per host (remote.c;
 * started one command per host, or one for all of them),
 * for session.c.  The agents' results are dumps (dump.h), read
 * (mqdh_result_read) and merged into the session's dump here: remote.c
 * uses the dump model, never the session.
 */
#ifndef MQDH__REMOTE_H
#define MQDH__REMOTE_H

#include "mqdhost.h"

/*
 * mqdh__remote_start starts the agents (mqdh_options) for procs[i] with
 * remote[i] set (their host and pid filled in; ranks[i] their rank, -1 or
 * ranks NULL for the agent to read it there), at most opt->fanout at once,
 * before the local processes are stopped: MQDH_OK and *out, or
 * MQDH_E_NOMEM.  opt, procs and ranks must outlive *out.
 * mqdh__remote_finish starts the rest, waits for each agent within its
 * time, merges every result into d, gives each process no result came for
 * its host's reason, and frees r.  It returns MQDH_OK, or MQDH_E_REMOTE if
 * some process got no result or an agent's came with an error.
 */
struct mqdh__remote;
int mqdh__remote_start(const struct mqdh_options *opt, const struct mqdh_process *procs,
                       const int *ranks, const int *remote, int n, struct mqdh__remote **out);
int mqdh__remote_finish(struct mqdh__remote *r, struct mqdh_dump *d);

/* Stop every agent running (async-signal-safe): mqdh_release_all. */
void mqdh__remote_kill_all(void);

#endif
