/*
 * waits_p2p.h - the waits of a process blocked in a point-to-point call
 * (waits_p2p.c); t has room for every process of the dump.
 */
#ifndef MQDH__WAITS_P2P_H
#define MQDH__WAITS_P2P_H

#include "analysis/waits.h"

/* Process i in a call of kind k (one request, all, any, a receive or a
 * send): each pending operation of its queues, or a nonblocking
 * collective's, or its blocked send by its arguments. */
void mqdh__p2p_waits(struct mqdh__waits *b, int i, enum mqdh__call_kind k,
                     struct mqdh__candidate *t);

/* Process i in MPI_Probe or MPI_Mprobe: a message its arguments name. */
void mqdh__probe_waits(struct mqdh__waits *b, int i, struct mqdh__candidate *t);

#endif
