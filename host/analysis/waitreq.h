/*
 * waitreq.h - what a process in MPI_Wait* waits for by the requests behind
 * its call (waitreq.c): read from the program and decoded by the DLL
 * (mqdh_requests), where its queues cannot tell which operations it waits
 * on, or show none.
 */
#ifndef MQDH__WAITREQ_H
#define MQDH__WAITREQ_H

#include "analysis/waits.h"

/*
 * The requests of process i's MPI_Wait* call, when every one is known
 * (read and decoded), else NULL; whether the call returns (one: it needs
 * one of them); whether one pending lives in queue q; whether queue entry
 * o is behind one pending; whether every pending one is a nonblocking
 * collective's.
 */
const struct mqdh_requests *mqdh__call_requests(const struct mqdh__waits *b, int i);
int mqdh__requests_return(const struct mqdh_requests *rq, int one);
int mqdh__requests_in_queue(const struct mqdh_requests *rq, int q);
int mqdh__requests_hold(const struct mqdh_requests *rq, const struct mqdh_op *o);
int mqdh__requests_all_collective(const struct mqdh_requests *rq);

/*
 * Process i in MPI_Wait* on nonblocking collectives only, which its queues
 * show nothing of (an MPI that keeps no queue): each waits for the member
 * its schedule receives from next where that member has not started its
 * instance; else unseen.
 */
void mqdh__nbc_request_waits(struct mqdh__waits *b, int i, const struct mqdh_requests *rq,
                             int one);

/*
 * The waits of process i's pending requests that no queue entry stands
 * for: a send (an MPI that records none) waits for its destination's
 * receive (group: the next group number, for a call that needs all); any
 * other is unseen.  *free_any set where one may be met.
 */
void mqdh__request_waits(struct mqdh__waits *b, int i, const struct mqdh_requests *rq, int one,
                         int *group, int *free_any);

#endif
