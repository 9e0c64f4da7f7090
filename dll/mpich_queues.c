/*
 * mpich_queues.c - MPICH's three queues (mqd_be_read_queue): ch3's own
 * request lists and 4.0.2's MPIR_Sendq, or 4.0.3 and later's MPIR_Debugq
 * lists, each entry with its request's status, and lengths from the
 * datatypes of the requests.  See mpich.h.
 */
#include "mpich.h"

#include <string.h>

/* ---------------------------------------------------------------- datatypes */

static const char *datatype_name(unsigned handle)
{
    switch (handle) {
#define DT_CASE_(h, name) case h: return name;
        MPICH_DATATYPE_NAMES(DT_CASE_)
#undef DT_CASE_
    }
    return NULL;
}

/* The size of one element of datatype handle, or -1 if unknown. */
static long datatype_size(struct mqd_process *p, unsigned handle, mqs_taddr_t dt_ptr)
{
    const struct mpich_image *b = mpich__image(p);
    struct mpich_process *bp = mqd_process_backend(p);
    unsigned kind = MPICH_HANDLE_KIND(handle);
    if (kind == MPICH_HANDLE_KIND_BUILTIN)
        return (long)MPICH_BUILTIN_TYPE_SIZE(handle);
    mqs_taddr_t addr = dt_ptr;
    if (!addr && kind == MPICH_HANDLE_KIND_DIRECT && bp->dt_direct &&
        MPICH_HANDLE_INDEX(handle) < 4096)
        addr = bp->dt_direct + (mqs_taddr_t)MPICH_HANDLE_INDEX(handle) *
                                   (mqs_taddr_t)b->size[S_SZ_DATATYPE];
    if (!addr)
        return -1;
    unsigned char buf[8];
    int as = b->size[S_SZ_AINT];
    if (mqd_read(p, addr + (mqs_taddr_t)b->off[F_DT_SIZE], buf, as) != mqs_ok)
        return -1;
    int64_t s = mqd_int(p, buf, 0, as);
    return s >= 0 && s < ((int64_t)1 << 40) ? (long)s : -1;
}

/* r's first line: what and count elements of datatype dt; a datatype
 * without a name goes by its handle, which is this process's (an address
 * line, as the request's). */
static void describe_type(struct mqd_raw_op *r, const char *what, long count, unsigned dt)
{
    const char *name = datatype_name(dt);
    if (name) {
        mqd_set_text(r->op.extra_text[0], "%s: %ld x %s", what, count, name);
    } else {
        mqd_set_text(r->op.extra_text[0], "%s: %ld x datatype 0x%x", what, count, dt);
        r->text_address |= MQD_OP_TEXT_ADDRESS(0);
    }
}

/* A request's length in bytes from its count and datatype; -1 unknown. */
static long byte_length(struct mqd_process *p, long count, unsigned dt, mqs_taddr_t dt_ptr)
{
    long size = datatype_size(p, dt, dt_ptr);
    if (size < 0 || count < 0)
        return -1;
    if (size && count > ((long)1 << 50) / size)
        return -1;
    return count * size;
}

/* ---------------------------------------------------------------- requests */

/*
 * The completion counter of the request at req (its bytes in buf).  A
 * started persistent request counts on its real request's: MPID_Startall
 * points cc_ptr there (ch3 src/mpid/ch3/src/mpid_startall.c, ch4's
 * MPIDIG_mpi_startall), and its own cc says nothing.  Without cc_ptr in
 * the layout, the request's own.
 */
static int req_cc(struct mqd_process *p, mqs_taddr_t req, const unsigned char *buf, long *cc)
{
    const int *o = mpich__image(p)->off;
    *cc = (long)mqd_int(p, buf, o[F_REQ_CC], 4);
    if (o[F_REQ_CC_PTR] < 0)
        return mqs_ok;
    mqs_taddr_t at = mqd_ptr(p, buf, o[F_REQ_CC_PTR]);
    if (!at || at == req + (mqs_taddr_t)o[F_REQ_CC])
        return mqs_ok;
    unsigned char v[4];
    int rc = mqd_read(p, at, v, 4);
    if (rc == mqs_ok)
        *cc = (long)mqd_int(p, v, 0, 4);
    return rc;
}

/*
 * What a request's status says (its bytes in buf): source, tag and byte
 * count (MPIR_STATUS_SET_COUNT: count_lo, and count_hi_and_cancelled's
 * upper bits).  MPICH sets it when a receive completes, and ch4 on an
 * unexpected message when it arrives.  0 if the layout lacks it.
 */
static int req_status(struct mqd_process *p, const unsigned char *buf, long *source, long *tag,
                      long *bytes)
{
    const int *o = mpich__image(p)->off;
    if (o[F_REQ_ST_SOURCE] < 0 || o[F_REQ_ST_TAG] < 0 || o[F_REQ_ST_COUNT_LO] < 0 ||
        o[F_REQ_ST_COUNT_HI] < 0)
        return 0;
    *source = (long)mqd_int(p, buf, o[F_REQ_ST_SOURCE], 4);
    *tag = (long)mqd_int(p, buf, o[F_REQ_ST_TAG], 4);
    uint64_t lo = mqd_uint(p, buf, o[F_REQ_ST_COUNT_LO], 4);
    uint64_t hi = mqd_uint(p, buf, o[F_REQ_ST_COUNT_HI], 4) >> 1;
    uint64_t n = lo | hi << 32;
    *bytes = n < ((uint64_t)1 << 50) ? (long)n : -1;
    return 1;
}

/* A completed receive (cc 0): what it matched, from its status. */
static void completed_receive(struct mqd_process *p, const unsigned char *buf,
                              mqs_pending_operation *op)
{
    long source, tag, bytes;
    if (op->status != mqs_st_complete || !req_status(p, buf, &source, &tag, &bytes))
        return;
    if (source < 0 || tag < 0) /* MPI_PROC_NULL, or never set */
        return;
    op->actual_local_rank = source;
    op->actual_tag = tag;
    op->actual_length = bytes;
}

/* The request behind r: its address, and a line naming it and its handle
 * (an address line: it differs between processes in the same state). */
static void request_line(struct mqd_raw_op *r, mqs_taddr_t addr, unsigned handle)
{
    r->request = addr;
    r->text_address |= MQD_OP_TEXT_ADDRESS(1);
    mqd_set_text(r->op.extra_text[1], "request 0x%llx (handle 0x%x)", (unsigned long long)addr,
                 handle);
}

/* ---------------------------------------------------------------- ch3's lists */

/* One ch3 request from the posted (queue 1) or unexpected (2) list. */
static int ch3_request(struct mqd_process *p, mqs_taddr_t addr, int queue,
                       struct mqd_raw_op *r, mqs_taddr_t *next)
{
    const struct mpich_image *b = mpich__image(p);
    const int *o = b->off;
    int as = b->size[S_SZ_AINT], ps = mqd_sizes(p)->pointer_size;
    unsigned char *buf = mqd_malloc((size_t)b->req_span.len);
    if (!buf)
        return MQD_ERR_NOMEM;
    int rc = mpich__read_span(p, addr, buf, b->req_span);
    if (rc != mqs_ok) {
        mqd_free(buf);
        return rc;
    }
    memset(r, 0, sizeof *r);
    *next = mqd_ptr(p, buf, o[F_REQ_NEXT]);
    r->context = mqd_uint(p, buf, o[F_REQ_MATCH_CTX], mpich__match_ctx_size(b));
    long rank = (long)mqd_int(p, buf, o[F_REQ_MATCH_RANK], b->size[S_SZ_RANK]);
    long tag = (long)mqd_int(p, buf, o[F_REQ_MATCH_TAG], 4);
    long cc;
    if ((rc = req_cc(p, addr, buf, &cc)) != mqs_ok) {
        mqd_free(buf);
        return rc;
    }
    unsigned handle = (unsigned)mqd_uint(p, buf, o[F_REQ_HANDLE], 4);
    mqs_pending_operation *op = &r->op;
    if (queue == mqs_pending_receives) {
        long count = (long)mqd_int(p, buf, o[F_REQ_USER_COUNT], as);
        unsigned dt = (unsigned)mqd_uint(p, buf, o[F_REQ_DATATYPE], 4);
        op->status = cc == 0 ? mqs_st_complete : mqs_st_pending;
        op->desired_local_rank = rank == MPICH_ANY_SOURCE ? -1 : rank;
        op->tag_wild = tag == MPICH_ANY_TAG;
        op->desired_tag = op->tag_wild ? -1 : tag;
        op->desired_length = byte_length(p, count, dt, mqd_ptr(p, buf, o[F_REQ_DATATYPE_PTR]));
        op->buffer = mqd_ptr(p, buf, o[F_REQ_USER_BUF]);
        op->actual_local_rank = op->actual_tag = op->actual_length = -1;
        completed_receive(p, buf, op);
        describe_type(r, "receive", count, dt);
    } else {
        long size = (long)mqd_int(p, buf, o[F_REQ_RECV_SZ], ps);
        /* Unexpected: what arrived.  Complete when all its data is here
         * (eager); pending when only the envelope is (rendezvous). */
        op->status = cc == 0 ? mqs_st_complete : mqs_st_pending;
        op->desired_local_rank = op->actual_local_rank = rank;
        op->desired_tag = op->actual_tag = tag;
        op->desired_length = op->actual_length = size;
        op->system_buffer = 1;
        op->buffer = mqd_ptr(p, buf, o[F_REQ_TMPBUF]);
        mqd_set_text(op->extra_text[0], "unexpected %s message",
                     cc == 0 ? "eager (data here)" : "rendezvous (envelope only)");
    }
    request_line(r, addr, handle);
    mqd_free(buf);
    return mqs_ok;
}

/* A list of ch3 requests, through the variable that points at its head. */
static int ch3_request_list(struct mqd_process *p, mqs_taddr_t head_ptr_sym, int queue,
                            struct mqd_ops *out)
{
    mqs_taddr_t head_var, node;
    int rc = mqd_read_ptr(p, head_ptr_sym, &head_var);
    if (rc != mqs_ok || (rc = mqd_read_ptr(p, head_var, &node)) != mqs_ok)
        return rc;
    struct mqd_walk walk;
    mqd_walk_init(&walk);
    while (rc == mqs_ok && node) {
        struct mqd_raw_op r;
        mqs_taddr_t next;
        if ((rc = mqd_walk_visit(&walk, node)) != mqs_ok)
            break;
        if ((rc = ch3_request(p, node, queue, &r, &next)) != mqs_ok)
            break;
        rc = mqd_ops_push(out, &r);
        node = next;
    }
    mqd_walk_fini(&walk);
    return rc;
}

/* The request behind a send entry: status, buffer, length. */
static int send_request(struct mqd_process *p, mqs_taddr_t req, long count_hint, int use_hint,
                        struct mqd_raw_op *r)
{
    const struct mpich_image *b = mpich__image(p);
    const int *o = b->off;
    int as = b->size[S_SZ_AINT];
    mqs_pending_operation *op = &r->op;
    if (!req)
        return MQD_ERR_BAD_VALUE;
    unsigned char *buf = mqd_malloc((size_t)b->req_span.len);
    if (!buf)
        return MQD_ERR_NOMEM;
    int rc = mpich__read_span(p, req, buf, b->req_span);
    if (rc != mqs_ok) {
        mqd_free(buf);
        return rc;
    }
    long cc;
    if ((rc = req_cc(p, req, buf, &cc)) != mqs_ok) {
        mqd_free(buf);
        return rc;
    }
    unsigned kind = (unsigned)mqd_uint(p, buf, o[F_REQ_KIND], 4);
    unsigned handle = (unsigned)mqd_uint(p, buf, o[F_REQ_HANDLE], 4);
    if (r->recv_keyed && o[F_REQ_MATCH_CTX] >= 0) {
        r->context = mqd_uint(p, buf, o[F_REQ_MATCH_CTX], mpich__match_ctx_size(b));
        r->recv_keyed = 0;
    }
    op->status = cc == 0 ? mqs_st_complete : mqs_st_pending;
    if (o[F_REQ_USER_COUNT] >= 0 && o[F_REQ_DATATYPE] >= 0) {
        long count = use_hint ? count_hint : (long)mqd_int(p, buf, o[F_REQ_USER_COUNT], as);
        unsigned dt = (unsigned)mqd_uint(p, buf, o[F_REQ_DATATYPE], 4);
        mqs_taddr_t dtp = o[F_REQ_DATATYPE_PTR] >= 0 ? mqd_ptr(p, buf, o[F_REQ_DATATYPE_PTR]) : 0;
        op->desired_length = byte_length(p, count, dt, dtp);
        if (!op->buffer && o[F_REQ_USER_BUF] >= 0)
            op->buffer = mqd_ptr(p, buf, o[F_REQ_USER_BUF]);
        describe_type(r,
                      kind == MPICH_REQ_PREQUEST_SEND ? "persistent send" : "send", count, dt);
    } else {
        op->desired_length = -1;
        mqd_set_text(op->extra_text[0], "%s: %ld elements",
                     kind == MPICH_REQ_PREQUEST_SEND ? "persistent send" : "send", count_hint);
    }
    request_line(r, req, handle);
    op->actual_local_rank = op->desired_local_rank;
    op->actual_tag = op->desired_tag;
    op->actual_length = op->desired_length;
    mqd_free(buf);
    return mqs_ok;
}

static int ch3_sendq(struct mqd_process *p, struct mqd_ops *out)
{
    const struct mpich_image *b = mpich__image(p);
    struct mpich_process *bp = mqd_process_backend(p);
    const int *o = b->off;
    mqs_taddr_t node;
    int rc = mqd_read_ptr(p, bp->sendq, &node);
    if (rc != mqs_ok)
        return rc;
    unsigned char *buf = mqd_malloc((size_t)b->sendq_span.len);
    if (!buf)
        return MQD_ERR_NOMEM;
    struct mqd_walk walk;
    mqd_walk_init(&walk);
    while (rc == mqs_ok && node) {
        if ((rc = mqd_walk_visit(&walk, node)) != mqs_ok ||
            (rc = mpich__read_span(p, node, buf, b->sendq_span)) != mqs_ok)
            break;
        struct mqd_raw_op r;
        memset(&r, 0, sizeof r);
        r.context = mqd_uint(p, buf, o[F_SENDQ_CTX], 4);
        r.op.desired_local_rank = (long)mqd_int(p, buf, o[F_SENDQ_RANK], 4);
        r.op.desired_tag = (long)mqd_int(p, buf, o[F_SENDQ_TAG], 4);
        rc = send_request(p, mqd_ptr(p, buf, o[F_SENDQ_REQ]), 0, 0, &r);
        if (rc == mqs_ok)
            rc = mqd_ops_push(out, &r);
        node = mqd_ptr(p, buf, o[F_SENDQ_NEXT]);
    }
    mqd_walk_fini(&walk);
    mqd_free(buf);
    if (rc == mqs_ok)
        mqd_ops_reverse(out); /* newest first in MPICH: show in posting order */
    return rc;
}

/* ---------------------------------------------------------------- debug queues */

/*
 * A receive (queue 1) or unexpected message (2) of an MPIR_Debugq entry
 * into r: what the entry says (rank, tag, count), and what its request at
 * raddr (0 if none; its bytes in req) says of its status.
 */
static void debugq_received(struct mqd_process *p, int queue, long rank, long tag, long count,
                            mqs_taddr_t raddr, const unsigned char *req, struct mqd_raw_op *r)
{
    mqs_pending_operation *op = &r->op;
    if (queue == mqs_pending_receives) {
        op->desired_local_rank = rank == MPICH_ANY_SOURCE ? -1 : rank;
        op->tag_wild = tag == MPICH_ANY_TAG;
        op->desired_tag = op->tag_wild ? -1 : tag;
        /* MPIR_Debugq records the element count, not the datatype:
         * the length in bytes is not known here. */
        op->desired_length = -1;
        op->actual_local_rank = op->actual_tag = op->actual_length = -1;
        if (raddr)
            completed_receive(p, req, op);
        mqd_set_text(op->extra_text[0], "receive: %ld elements", count);
        return;
    }
    /* ch4 (MPIDIG's create_unexp_rreq): the size is in the status; cc
     * stays 1 until a receive matches it, so whether its data is here is
     * not recorded. */
    long source, stag, bytes;
    if (!raddr || !req_status(p, req, &source, &stag, &bytes))
        bytes = -1;
    op->status = mqs_st_pending;
    op->desired_local_rank = op->actual_local_rank = rank;
    op->desired_tag = op->actual_tag = tag;
    op->desired_length = op->actual_length = bytes;
    op->system_buffer = 1;
    mqd_set_text(op->extra_text[0], "unexpected message (whether its data is "
                                    "here is not recorded)");
}

/* One MPIR_Debugq entry of queue (its bytes in buf) into r; req is room
 * for its request (req_span). */
static int debugq_entry(struct mqd_process *p, int queue, const unsigned char *buf,
                        unsigned char *req, struct mqd_raw_op *r)
{
    const struct mpich_image *b = mpich__image(p);
    const struct mpich_process *bp = mqd_process_backend(p);
    const int *o = b->off;
    memset(r, 0, sizeof *r);
    r->context = mqd_uint(p, buf, o[F_DQ_CTX], 4);
    long rank = (long)mqd_int(p, buf, o[F_DQ_RANK], 4);
    long tag = (long)mqd_int(p, buf, o[F_DQ_TAG], 4);
    long count = (long)mqd_int(p, buf, o[F_DQ_COUNT], b->size[S_SZ_AINT]);
    mqs_taddr_t raddr = mqd_ptr(p, buf, o[F_DQ_REQ]);
    r->op.buffer = mqd_ptr(p, buf, o[F_DQ_BUF]);
    /* Beyond MPI_TAG_UB: a collective's (MPIR_TAG_COLL_BIT), whatever the
     * context says; ch4 enters sends and receives under the plain context
     * (mpich_defs.h), so this is all it shows of collectives. */
    r->internal = bp->tag_ub > 0 && tag > bp->tag_ub;
    if (queue == mqs_pending_sends) {
        r->op.desired_local_rank = rank;
        r->op.desired_tag = tag;
        /* Entered under the receive context (mpich_defs.h); ch3's request
         * has the send context with the collective offset. */
        r->recv_keyed = 1;
        return send_request(p, raddr, count, 1, r);
    }
    int rc;
    long cc = 1;
    if (raddr && ((rc = mpich__read_span(p, raddr, req, b->req_span)) != mqs_ok ||
                  (rc = req_cc(p, raddr, req, &cc)) != mqs_ok))
        return rc;
    unsigned handle = raddr ? (unsigned)mqd_uint(p, req, o[F_REQ_HANDLE], 4) : 0;
    r->op.status = cc == 0 ? mqs_st_complete : mqs_st_pending;
    debugq_received(p, queue, rank, tag, count, raddr, req, r);
    request_line(r, raddr, handle);
    return mqs_ok;
}

/* MPICH 4.0.3+: a flat MPIR_Debugq list, newest first. */
static int debugq_list(struct mqd_process *p, mqs_taddr_t head_sym, int queue,
                       struct mqd_ops *out)
{
    const struct mpich_image *b = mpich__image(p);
    mqs_taddr_t node;
    int rc = mqd_read_ptr(p, head_sym, &node);
    if (rc != mqs_ok)
        return rc;
    unsigned char *buf = mqd_malloc((size_t)b->debugq_span.len);
    unsigned char *req = mqd_malloc((size_t)b->req_span.len);
    if (!buf || !req) {
        mqd_free(buf);
        mqd_free(req);
        return MQD_ERR_NOMEM;
    }
    struct mqd_walk walk;
    mqd_walk_init(&walk);
    while (rc == mqs_ok && node) {
        if ((rc = mqd_walk_visit(&walk, node)) != mqs_ok ||
            (rc = mpich__read_span(p, node, buf, b->debugq_span)) != mqs_ok)
            break;
        struct mqd_raw_op r;
        rc = debugq_entry(p, queue, buf, req, &r);
        if (rc == mqs_ok)
            rc = mqd_ops_push(out, &r);
        node = mqd_ptr(p, buf, b->off[F_DQ_NEXT]);
    }
    mqd_walk_fini(&walk);
    mqd_free(buf);
    mqd_free(req);
    if (rc == mqs_ok)
        mqd_ops_reverse(out); /* newest first in MPICH: show in matching order */
    return rc;
}

int mqd_be_read_queue(struct mqd_process *p, int queue, struct mqd_ops *out)
{
    struct mpich_process *bp = mqd_process_backend(p);
    if (mpich__gen_is_ch3(bp->gen)) {
        int rc;
        if (queue == mqs_pending_sends)
            rc = bp->gen == MPICH_GEN_CH3_SENDQ ? ch3_sendq(p, out)
                                               : debugq_list(p, bp->sendq, queue, out);
        else
            rc = ch3_request_list(p, queue == mqs_pending_receives ? bp->posted_ptr
                                                                   : bp->unexpected_ptr,
                                  queue, out);
        /* In MPI_Finalize (finalized_world): left behind for good. */
        for (int i = 0; rc == mqs_ok && bp->finalized && i < out->n; i++)
            mqd_add_text(&out->v[i].op, "left behind: MPI_Finalize has freed the communicator");
        return rc;
    }
    return debugq_list(p, queue == mqs_pending_sends      ? bp->sendq
                          : queue == mqs_pending_receives ? bp->recvq
                                                          : bp->unexpq,
                       queue, out);
}
