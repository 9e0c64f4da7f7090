/*
 * agent_result.h - what an agent's output says (agent_result.c).
 */
#ifndef MQDH__AGENT_RESULT_H
#define MQDH__AGENT_RESULT_H

#include "job/agents.h"

/* Agent a has ended: its output read into a->results (whatever its exit
 * status, a result that reads is whole; through one command for several
 * hosts, one result per labelled stream), or a->unread saying why not. */
void mqdh__agent_conclude(struct mqdh__remote *r, struct agent *a);

/* Why host h's processes got no result from agent a, in words (malloc'd,
 * NULL without memory). */
char *mqdh__agent_reason(struct mqdh__remote *r, struct agent *a, const struct host *h);

#endif
