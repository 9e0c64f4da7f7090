/*
 * calls.h - what a blocked call waits for by its arguments alone, for a
 * process whose queues were not read (calls.c).
 */
#ifndef MQDH__CALLS_H
#define MQDH__CALLS_H

#include "analysis/waits.h"

/*
 * The waits of process i, blocked but without queues (its MPI keeps none
 * for debuggers, or its DLL could not read them), from the arguments of
 * the call it is in alone (calls.c).
 */
void mqdh__call_waits(struct mqdh__waits *b, int i);

#endif
