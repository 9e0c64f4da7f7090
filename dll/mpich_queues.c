/*
 * mpich_queues.c - MPICH's three queues (mqd_be_read_queue): ch3's own
 * request lists and 4.0.2's MPIR_Sendq, or 4.0.3 and later's MPIR_Debugq
 * lists, each entry read through its request (mpich_requests.c).  See
 * mpich.h.
 */
#include "mpich.h"

#include <string.h>

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
    if ((rc = mpich__req_cc(p, addr, buf, &cc)) != mqs_ok) {
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
        op->desired_length = mpich__byte_length(p, count, dt, mqd_ptr(p, buf, o[F_REQ_DATATYPE_PTR]));
        op->buffer = mqd_ptr(p, buf, o[F_REQ_USER_BUF]);
        op->actual_local_rank = op->actual_tag = op->actual_length = -1;
        mpich__completed_receive(p, buf, op);
        mpich__describe_type(r, "receive", count, dt);
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
    mpich__request_line(r, addr, handle);
    mqd_free(buf);
    return mqs_ok;
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
    if ((rc = mpich__req_cc(p, req, buf, &cc)) != mqs_ok) {
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
        op->desired_length = mpich__byte_length(p, count, dt, dtp);
        if (!op->buffer && o[F_REQ_USER_BUF] >= 0)
            op->buffer = mqd_ptr(p, buf, o[F_REQ_USER_BUF]);
        mpich__describe_type(r,
                      kind == MPICH_REQ_PREQUEST_SEND ? "persistent send" : "send", count, dt);
    } else {
        const char *what = kind == MPICH_REQ_PREQUEST_SEND ? "persistent send" : "send";
        long count = count_hint;
        unsigned dt;
        if (use_hint ? mpich__ch4_datatype(p, buf, count_hint, op->buffer, &dt)
                     : mpich__ch4_sendq_type(p, buf, &count, &dt, &op->buffer)) {
            op->desired_length = mpich__byte_length(p, count, dt, 0);
            mpich__describe_type(r, what, count, dt);
        } else if (use_hint) {
            op->desired_length = -1;
            mqd_set_text(op->extra_text[0], "%s: %ld elements", what, count_hint);
        } else {
            op->desired_length = -1;
            mqd_set_text(op->extra_text[0], "%s: its count and datatype are not recorded",
                         what);
        }
    }
    mpich__request_line(r, req, handle);
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

/* ---------------------------------------------------------------- MPIDIG's lists */

/* One request of ch4's posted (queue 1) or unexpected (2) MPIDIG list
 * (mpich_defs.h, MPIDIG): an active-message request, matched on its
 * MPIDIG_REQUEST(req, u.recv) (4.3 on: its context there, its source and
 * tag in its status), its count and datatype beside. */
static int mpidig_request(struct mqd_process *p, mqs_taddr_t addr, int queue,
                          struct mqd_raw_op *r, mqs_taddr_t *next)
{
    const struct mpich_image *b = mpich__image(p);
    const int *o = b->off;
    unsigned char *buf = mqd_malloc((size_t)b->req_span.len);
    if (!buf)
        return MQD_ERR_NOMEM;
    long cc;
    int rc = mpich__read_span(p, addr, buf, b->req_span);
    if (rc == mqs_ok)
        rc = mpich__req_cc(p, addr, buf, &cc);
    if (rc != mqs_ok) {
        mqd_free(buf);
        return rc;
    }
    memset(r, 0, sizeof *r);
    *next = mqd_ptr(p, buf, o[F_REQ_DL_NEXT]);
    r->context = mqd_uint(p, buf, o[F_REQ_AM_CTX], b->size[S_SZ_CONTEXT_ID]);
    enum field_id src_at, tag_at; /* one pair is there: mpich__check_layout */
    mpich__mpidig_envelope(o, &src_at, &tag_at);
    long rank = (long)mqd_int(p, buf, o[src_at], 4);
    long tag = (long)mqd_int(p, buf, o[tag_at], 4);
    long count = (long)mqd_int(p, buf, o[F_REQ_AM_COUNT], b->size[S_SZ_AINT]);
    unsigned dt = mpich__user_type((unsigned)mqd_uint(p, buf, o[F_REQ_AM_DATATYPE], 4));
    mqs_pending_operation *op = &r->op;
    if (queue == mqs_pending_receives) {
        op->status = cc == 0 ? mqs_st_complete : mqs_st_pending;
        op->desired_local_rank = rank == MPICH_ANY_SOURCE ? -1 : rank;
        op->tag_wild = tag == MPICH_ANY_TAG;
        op->desired_tag = op->tag_wild ? -1 : tag;
        op->desired_length = mpich__byte_length(p, count, dt, 0);
        op->buffer = mqd_ptr(p, buf, o[F_REQ_AM_BUF]);
        op->actual_local_rank = op->actual_tag = op->actual_length = -1;
        mpich__completed_receive(p, buf, op);
        mpich__describe_type(r, "receive", count, dt);
    } else {
        /* create_unexp_rreq: MPI_BYTE, count the message's size */
        mpich__ch4_unexpected(op, rank, tag, mpich__byte_length(p, count, dt, 0), mpich__ch4_arrival(p, buf, 1));
    }
    mpich__request_line(r, addr, (unsigned)mqd_uint(p, buf, o[F_REQ_HANDLE], 4));
    mqd_free(buf);
    return mqs_ok;
}

/* A list of MPIR_Request (ch3's, or 4.0.2 ch4's MPIDIG lists) from the
 * variable at head_var that holds its head. */
static int request_list(struct mqd_process *p, mqs_taddr_t head_var, int queue,
                        struct mqd_ops *out)
{
    struct mpich_process *bp = mqd_process_backend(p);
    mqs_taddr_t node;
    int rc = mqd_read_ptr(p, head_var, &node);
    if (rc != mqs_ok)
        return rc;
    struct mqd_walk walk;
    mqd_walk_init(&walk);
    while (rc == mqs_ok && node) {
        struct mqd_raw_op r;
        mqs_taddr_t next = 0;
        if ((rc = mqd_walk_visit(&walk, node)) != mqs_ok)
            break;
        rc = mpich__gen_is_ch3(bp->gen) ? ch3_request(p, node, queue, &r, &next)
                                        : mpidig_request(p, node, queue, &r, &next);
        if (rc != mqs_ok)
            break;
        rc = mqd_ops_push(out, &r);
        node = next;
    }
    mqd_walk_fini(&walk);
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
        unsigned dt;
        op->desired_local_rank = rank == MPICH_ANY_SOURCE ? -1 : rank;
        op->tag_wild = tag == MPICH_ANY_TAG;
        op->desired_tag = op->tag_wild ? -1 : tag;
        op->actual_local_rank = op->actual_tag = op->actual_length = -1;
        /* MPIR_Debugq records the element count; the request, where ch4
         * keeps it, the datatype (ch4_datatype). */
        if (raddr && mpich__ch4_datatype(p, req, count, op->buffer, &dt)) {
            op->desired_length = mpich__byte_length(p, count, dt, 0);
            mpich__describe_type(r, "receive", count, dt);
        } else {
            op->desired_length = -1;
            mqd_set_text(op->extra_text[0], "receive: %ld elements", count);
        }
        if (raddr)
            mpich__completed_receive(p, req, op);
        return;
    }
    /* ch4 (MPIDIG's create_unexp_rreq): the size is in the status; cc
     * stays 1 until a receive matches it: how far its data has come is in
     * its active-message part (ch4_arrival). */
    long source, stag, bytes;
    if (!raddr || !mpich__req_status(p, req, &source, &stag, &bytes))
        bytes = -1;
    enum mpich_arrival arrival = raddr ? mpich__ch4_arrival(p, req, 0) : ARRIVAL_UNKNOWN;
    mpich__ch4_unexpected(op, rank, tag, bytes, arrival);
    if (raddr)
        mpich__ch4_self_send(p, req, r);
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
                  (rc = mpich__req_cc(p, raddr, req, &cc)) != mqs_ok))
        return rc;
    unsigned handle = raddr ? (unsigned)mqd_uint(p, req, o[F_REQ_HANDLE], 4) : 0;
    r->op.status = cc == 0 ? mqs_st_complete : mqs_st_pending;
    /* ch4 enters a collective's receive under the plain context too; an
     * active-message request matches on its own context id, which has
     * the collective offset (MPIDIG_do_irecv: recvcontext_id +
     * context_offset; MPIDIG's unexpected requests take the header's). */
    if (raddr && o[F_REQ_DEV_TYPE] >= 0 && o[F_REQ_AM_CTX] >= 0 &&
        mqd_int(p, req, o[F_REQ_DEV_TYPE], 4) == MPICH_CH4_REQ_TYPE_AM &&
        (mqd_uint(p, req, o[F_REQ_AM_CTX], b->size[S_SZ_CONTEXT_ID]) & MPICH_CONTEXT_COLL_BIT))
        r->internal = 1;
    /* Not so marked, a receive with a nonblocking collective's tag may be
     * one's all the same: the netmod's own requests keep no context, and
     * 5.0's shared-memory IPC path writes the sender's rank over the
     * context id once the data moves (MPIDIG_req_t's union u: u.ipc.
     * peer_rank, 5.0.1 ipc_control.c:131). */
    r->maybe_internal = !r->internal && queue == mqs_pending_receives &&
                        !mpich__gen_is_ch3(bp->gen) && tag >= MPICH_FIRST_NBC_TAG;
    debugq_received(p, queue, rank, tag, count, raddr, req, r);
    mpich__request_line(r, raddr, handle);
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

/*
 * MPICH 4.1+ ch4 enters a collective's sends under the plain context and
 * keeps no record of the offset on the send request (MPIDIG_isend_impl
 * puts it only in the message header; ch4_send.h: comm->recvcontext_id):
 * a send is taken for the collective's when this process has a receive
 * or unexpected message of a collective on the same communicator with the
 * same tag.  A nonblocking collective's schedule sends and receives
 * under one tag of its own (MPIR_Sched_next_tag), so a send with it is
 * that collective's, short of a program that sends with the very tag of
 * a nonblocking collective it has in progress on that communicator.  A
 * send of a collective whose process receives nothing with that tag
 * (MPI_Ibcast's root) stays unmarked, and any other send with a tag a
 * nonblocking collective may have is said to be maybe a collective's
 * (MQD_OP_MAYBE_COLLECTIVE): the host weighs it against its peer.
 */
void mqd_be_refine_sends(struct mqd_process *p, struct mqd_ops *sends,
                         const struct mqd_ops *recvs, const struct mqd_ops *unexps)
{
    const struct mpich_process *bp = mqd_process_backend(p);
    const struct mqd_ops *other[2] = {recvs, unexps};
    /* Only a hint: what could not be read leaves the sends as they are. */
    if (mpich__gen_is_ch3(bp->gen) || bp->gen == MPICH_GEN_CH4_MPIDIG ||
        mpich__gen_is_stock(bp->gen) || !recvs || !unexps)
        return;
    for (int i = 0; i < sends->n; i++) {
        struct mqd_raw_op *s = &sends->v[i];
        int coll = 0;
        for (int q = 0; q < 2 && !coll && !s->internal; q++)
            for (int k = 0; k < other[q]->n && !coll; k++) {
                const struct mqd_raw_op *x = &other[q]->v[k];
                long tag = q == 0 ? x->op.desired_tag : x->op.actual_tag;
                coll = x->internal && x->context == s->context &&
                       !(q == 0 && x->op.tag_wild) && tag == s->op.desired_tag;
            }
        s->internal |= coll;
        s->maybe_internal = !s->internal && s->op.desired_tag >= MPICH_FIRST_NBC_TAG;
    }
}

/* The list whose head variable the symbol at head_ptr_sym points at (ch3's
 * MPID_Recvq_*_head_ptr, which 4.0.2 ch4 exports for MPIDIG's lists). */
static int pointed_list(struct mqd_process *p, mqs_taddr_t head_ptr_sym, int queue,
                        struct mqd_ops *out)
{
    mqs_taddr_t head_var;
    int rc = mqd_read_ptr(p, head_ptr_sym, &head_var);
    return rc == mqs_ok ? request_list(p, head_var, queue, out) : rc;
}

/*
 * A build without debugger support: MPIDIG's lists of every VCI, in the order of the
 * VCIs.  No send is recorded anywhere (MPIR_Sendq is kept only with
 * --enable-debuginfo, src/mpi/debugger/dbginit.c:371-411): no
 * information.  Nor are the receive side's where ch4 sends every message
 * through its netmod (MPIDI_CH4_DIRECT_NETMOD: no shared-memory module,
 * which ch4:ucx chooses unless told otherwise, src/mpid/ch4/
 * subconfigure.m4:277-287; MPIDI_Devreq_t then has no is_local): the
 * netmod matches them itself (UCX's tag matching), and MPIDIG's lists
 * hold none of the program's point-to-point traffic: no information,
 * never "empty".
 */
static int stock_lists(struct mqd_process *p, int queue, struct mqd_ops *out)
{
    mqs_taddr_t heads[MPICH_CH4_MAX_VCIS];
    int n = 0;
    if (queue == mqs_pending_sends || mpich__image(p)->off[F_REQ_DEV_LOCAL] < 0)
        return mqs_no_information;
    int rc = mpich__stock_heads(p, queue, heads, &n);
    for (int i = 0; rc == mqs_ok && i < n; i++)
        rc = request_list(p, heads[i], queue, out);
    return rc;
}

int mqd_be_read_queue(struct mqd_process *p, int queue, struct mqd_ops *out)
{
    struct mpich_process *bp = mqd_process_backend(p);
    int rc;
    if (mpich__gen_is_stock(bp->gen))
        rc = stock_lists(p, queue, out);
    else if (!mpich__gen_is_ch3(bp->gen) && bp->gen != MPICH_GEN_CH4_MPIDIG)
        rc = debugq_list(p, queue == mqs_pending_sends      ? bp->sendq
                            : queue == mqs_pending_receives ? bp->recvq
                                                            : bp->unexpq,
                         queue, out);
    else if (queue == mqs_pending_sends)
        rc = bp->gen == MPICH_GEN_CH3_DEBUGQ ? debugq_list(p, bp->sendq, queue, out)
                                            : ch3_sendq(p, out);
    else
        rc = pointed_list(p, queue == mqs_pending_receives ? bp->posted_ptr
                                                           : bp->unexpected_ptr,
                          queue, out);
    /* In MPI_Finalize (finalized_world): left behind for good. */
    for (int i = 0; rc == mqs_ok && bp->finalized && i < out->n; i++)
        mqd_add_text(&out->v[i].op, "left behind: MPI_Finalize has freed the communicator");
    return rc;
}
