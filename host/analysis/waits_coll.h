/*
 * waits_coll.h - the waits of a process blocked in a collective
 * (waits_coll.c).
 */
#ifndef MQDH__WAITS_COLL_H
#define MQDH__WAITS_COLL_H

#include "analysis/waits.h"

/* Process i in a blocking collective: every member of its communicator
 * not in it, or in it with another root or another call. */
void mqdh__collective_waits(struct mqdh__waits *b, int i);

/* Process i waiting on a nonblocking collective (MPI_Wait and the like,
 * only a collective's traffic pending): the members not in its instance. */
void mqdh__nbc_waits(struct mqdh__waits *b, int i);

/* Process i in MPI_Finalize: the members of its world not in it yet. */
void mqdh__finalize_waits(struct mqdh__waits *b, int i);

#endif
