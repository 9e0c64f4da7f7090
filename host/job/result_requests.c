/*
 * result_requests.c - an MPI_Wait*'s requests and the next nonblocking
 * collective tags in the result format (result_requests.h), so that an
 * agent's result and a saved dump hold what the analysis reads of them.
 */
#include "job/result_requests.h"

#include "base/array.h"
#include "base/dump.h"
#include "target/where.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void mqdh__result_put_requests(FILE *f, const struct mqdh_process *p,
                               const struct mqdh_requests *rq)
{
    if (!rq || (!rq->n && !rq->why && !rq->nbc_next_tag))
        return;
    if (rq->n || rq->why) {
        fprintf(f, "rq %d", rq->n);
        mqdh__result_put_str(f, rq->why);
        putc('\n', f);
    }
    for (int i = 0; i < rq->n; i++) {
        const struct mqdh_request *q = &rq->v[i];
        fprintf(f, "r %" PRIu64 " %d %d %d %d %d %d %ld %ld %ld %ld %d %" PRIu64, q->handle,
                q->decoded, (int)q->kind, q->done, q->comm, q->peer_known, q->tag_known,
                q->peer_local, q->peer_global, q->tag, q->sched_tag, q->sched_receives,
                q->address);
        mqdh__result_put_str(f, q->text[0] ? q->text : NULL);
        putc('\n', f);
    }
    if (rq->nbc_next_tag) {
        int k = rq->nbc_ncomms < p->ncomms ? rq->nbc_ncomms : p->ncomms;
        fprintf(f, "nbc %d", k);
        for (int c = 0; c < k; c++)
            fprintf(f, " %ld", rq->nbc_next_tag[c]);
        putc('\n', f);
    }
}

int mqdh__rd_requests_room(struct mqdh__reader *r, struct mqdh_dump *d,
                           struct mqdh__requests_read *rr, int p)
{
    int had = d->requests ? rr->cap : 0;
    if (MQDH__GROW(d->requests, rr->cap, p + 1) != 0)
        return mqdh__rd_fail(r, MQDH_E_NOMEM, "out of memory");
    if (rr->cap > had)
        memset(d->requests + had, 0, (size_t)(rr->cap - had) * sizeof *d->requests);
    return 0;
}

int mqdh__rd_requests(struct mqdh__reader *r, struct mqdh_dump *d,
                      struct mqdh__requests_read *rr, int p)
{
    if (rr->declared != -2)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "a second rq record for one process");
    if (mqdh__rd_requests_room(r, d, rr, p) != 0)
        return -1;
    struct mqdh_requests *rq = &d->requests[p];
    int n;
    if (mqdh__rd_int(r, "requests", -1, MQDH__MAX_REQUESTS, &n) != 0 ||
        mqdh__rd_str(r, "why", NULL, 0, &rq->why) != 0 || mqdh__rd_end(r) != 0)
        return -1;
    if (n > 0 && mqdh__rd_spend(r, (size_t)n * sizeof *rq->v, "requests") != 0)
        return -1;
    if (n > 0 && !(rq->v = calloc((size_t)n, sizeof *rq->v)))
        return mqdh__rd_fail(r, MQDH_E_NOMEM, "out of memory");
    rq->n = n < 0 ? -1 : 0; /* counted up as they come */
    rr->declared = n;
    return 0;
}

/* The numbers of one "r" record, each in its range. */
static int request_numbers(struct mqdh__reader *r, const struct mqdh_process *p,
                           struct mqdh_request *q)
{
    int kind, comm;
    if (mqdh__rd_u64(r, "handle", &q->handle) != 0 ||
        mqdh__rd_int(r, "decoded", 0, 1, &q->decoded) != 0 ||
        mqdh__rd_int(r, "kind", MQDH_REQ_NULL, MQDH_REQ_OTHER, &kind) != 0 ||
        mqdh__rd_int(r, "done", 0, 1, &q->done) != 0 ||
        mqdh__rd_int(r, "communicator", -1, p->ncomms - 1, &comm) != 0 ||
        mqdh__rd_int(r, "peer known", 0, 1, &q->peer_known) != 0 ||
        mqdh__rd_int(r, "tag known", 0, 1, &q->tag_known) != 0 ||
        mqdh__rd_long(r, "local peer", &q->peer_local) != 0 ||
        mqdh__rd_long(r, "global peer", &q->peer_global) != 0 ||
        mqdh__rd_long(r, "tag", &q->tag) != 0 ||
        mqdh__rd_long(r, "schedule tag", &q->sched_tag) != 0 ||
        mqdh__rd_int(r, "schedule receives", 0, 1, &q->sched_receives) != 0 ||
        mqdh__rd_u64(r, "address", &q->address) != 0 ||
        mqdh__rd_str(r, "text", q->text, sizeof q->text, NULL) != 0)
        return -1;
    q->kind = (enum mqdh_request_kind)kind;
    q->comm = comm;
    return mqdh__rd_end(r);
}

int mqdh__rd_request(struct mqdh__reader *r, struct mqdh_dump *d, struct mqdh__requests_read *rr,
                     int p)
{
    struct mqdh_requests *rq = d->requests ? &d->requests[p] : NULL;
    if (!rq || rr->declared < 0)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "a request outside an rq record's");
    if (rq->n >= rr->declared)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "more requests than the rq record's %d",
                             rr->declared);
    if (request_numbers(r, &d->procs[p], &rq->v[rq->n]) != 0)
        return -1;
    rq->n++;
    return 0;
}

int mqdh__rd_nbc_tags(struct mqdh__reader *r, struct mqdh_dump *d,
                      struct mqdh__requests_read *rr, int p)
{
    if (mqdh__rd_requests_room(r, d, rr, p) != 0)
        return -1;
    struct mqdh_requests *rq = &d->requests[p];
    int k;
    if (rq->nbc_next_tag)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "a second nbc record for one process");
    if (mqdh__rd_int(r, "communicators", 0, d->procs[p].ncomms, &k) != 0)
        return -1;
    if (mqdh__rd_spend(r, (size_t)k * sizeof *rq->nbc_next_tag + 1, "nbc tags") != 0)
        return -1;
    if (!(rq->nbc_next_tag = calloc((size_t)k + 1, sizeof *rq->nbc_next_tag)))
        return mqdh__rd_fail(r, MQDH_E_NOMEM, "out of memory");
    for (int c = 0; c < k; c++)
        if (mqdh__rd_long(r, "next tag", &rq->nbc_next_tag[c]) != 0)
            return -1;
    rq->nbc_ncomms = k;
    return mqdh__rd_end(r);
}

int mqdh__rd_requests_close(struct mqdh__reader *r, struct mqdh_dump *d,
                            struct mqdh__requests_read *rr, int p)
{
    int declared = rr->declared, came = d->requests && p >= 0 ? d->requests[p].n : 0;
    rr->declared = -2;
    if (declared > 0 && came != declared)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "the rq record counts %d requests, and %d came",
                             declared, came);
    return 0;
}
