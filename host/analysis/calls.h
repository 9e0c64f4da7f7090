/*
 * calls.h - what a blocked call waits for by its arguments alone, for a
 * process whose queues were not read (calls.c).
 */
#ifndef MQDH__CALLS_H
#define MQDH__CALLS_H

#include "analysis/waits.h"

/*
 * Does the dump hold every process of i's job, its world the only one, and
 * no program able to reach another?  1, or 0 with why.
 */
int mqdh__whole_job(struct mqdh__waits *b, int i, char *why, size_t len);

/*
 * The waits of process i, blocked but without queues (its MPI keeps none
 * for debuggers, or its DLL could not read them), from the arguments of
 * the call it is in alone (calls.c).
 */
void mqdh__call_waits(struct mqdh__waits *b, int i);

#endif
