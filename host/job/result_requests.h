/*
 * result_requests.h - the requests of a process's MPI_Wait* call, and its
 * communicators' next nonblocking collective tags (mqdh_dump.requests),
 * in the result format (docs/RESULT.md: rq, r, nbc), written and read
 * (result_requests.c), for result_write.c and result_read.c.
 */
#ifndef MQDH__RESULT_REQUESTS_H
#define MQDH__RESULT_REQUESTS_H

#include "mqdhost.h"
#include "job/result_fields.h"

#include <stdio.h>

/* Process p's requests (p: its communicators, written before), if it has
 * any to tell. */
void mqdh__result_put_requests(FILE *f, const struct mqdh_process *p,
                               const struct mqdh_requests *rq);

/* What the reader keeps of requests across records. */
struct mqdh__requests_read {
    int cap;            /* d->requests' room */
    int declared;       /* the current process's "rq N": N; -2 none yet */
};
#define MQDH__REQUESTS_READ_INIT {0, -2}

/* Room for process p's requests, when d has some: 0, or -1 (r failed). */
int mqdh__rd_requests_room(struct mqdh__reader *r, struct mqdh_dump *d,
                           struct mqdh__requests_read *rr, int p);

/* The records of process p (d->procs[p], its communicators read): "rq N
 * WHY", then N "r ..." records; "nbc K TAG..."; each returns 0, or -1 (r
 * failed). */
int mqdh__rd_requests(struct mqdh__reader *r, struct mqdh_dump *d,
                      struct mqdh__requests_read *rr, int p);
int mqdh__rd_request(struct mqdh__reader *r, struct mqdh_dump *d, struct mqdh__requests_read *rr,
                     int p);
int mqdh__rd_nbc_tags(struct mqdh__reader *r, struct mqdh_dump *d,
                      struct mqdh__requests_read *rr, int p);

/* The current process's requests all came (at the next process, and at
 * the end): 0, or -1 (r failed). */
int mqdh__rd_requests_close(struct mqdh__reader *r, struct mqdh_dump *d,
                            struct mqdh__requests_read *rr, int p);

#endif
