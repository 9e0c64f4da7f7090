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
 * without a name goes by its handle, which (unless predefined: one of
 * 5.0's internal types) is this process's (an address line, as the
 * request's). */
static void describe_type(struct mqd_raw_op *r, const char *what, long count, unsigned dt)
{
    const char *name = datatype_name(dt);
    if (name) {
        mqd_set_text(r->op.extra_text[0], "%s: %ld x %s", what, count, name);
    } else {
        mqd_set_text(r->op.extra_text[0], "%s: %ld x datatype 0x%x", what, count, dt);
        if (MPICH_HANDLE_KIND(dt) != MPICH_HANDLE_KIND_BUILTIN)
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

/* ---------------------------------------------------------------- ch4's requests */

/*
 * ch4: the datatype of the request whose bytes are in buf, from the part of
 * its device union that holds it (mpich_defs.h, CH4_REQ): a persistent
 * request's MPIDI_PREQUEST; an active-message request's MPIDIG_REQUEST
 * (dev.type AM: shared memory, and the netmod's active messages); else the
 * OFI netmod's own, which MPICH 4.1 and 4.2 set for sends and receives
 * (src/mpid/ch4/netmod/ofi/ofi_send.h, ofi_recv.h), 4.3 and 5.0 for
 * receives only (ofi_recv.h: their requests have am_req, and ofi_send.h
 * keeps no datatype).  A request of ch4_self.c (a one-process
 * communicator's: dev.type NONE too) keeps its own in dev.ch4.self, beside
 * the buffer and count its debug queue entry has (count, user_buf): those
 * three agreeing tell it from the netmod's.  0 if none is kept, or what is
 * there is no datatype handle (a netmod without that field).
 */
static int ch4_datatype(struct mqd_process *p, const unsigned char *buf, long count,
                        mqs_taddr_t user_buf, unsigned *dt)
{
    const struct mpich_image *b = mpich__image(p);
    const int *o = b->off;
    unsigned kind = (unsigned)mqd_uint(p, buf, o[F_REQ_KIND], 4);
    int at = -1;
    if (o[F_REQ_DEV_TYPE] < 0)
        return 0; /* before 4.1: nothing says which part is the request's */
    if (kind == MPICH_REQ_PREQUEST_SEND || kind == MPICH_REQ_PREQUEST_RECV)
        at = o[F_REQ_PREQ_DATATYPE];
    else if (mqd_int(p, buf, o[F_REQ_DEV_TYPE], 4) == MPICH_CH4_REQ_TYPE_AM)
        at = o[F_REQ_AM_DATATYPE];
    else if (o[F_REQ_SELF_BUF] >= 0 && o[F_REQ_SELF_COUNT] >= 0 && o[F_REQ_SELF_DATATYPE] >= 0 &&
             mqd_ptr(p, buf, o[F_REQ_SELF_BUF]) == user_buf &&
             mqd_int(p, buf, o[F_REQ_SELF_COUNT], b->size[S_SZ_AINT]) == count)
        at = o[F_REQ_SELF_DATATYPE];
    else if (kind == MPICH_REQ_RECV)
        at = o[F_REQ_OFI_DATATYPE] >= 0 ? o[F_REQ_OFI_DATATYPE] : o[F_REQ_OFI_DIRECT_DATATYPE];
    else if (o[F_REQ_OFI_AM_REQ] < 0) /* 4.1 and 4.2: sends too */
        at = o[F_REQ_OFI_DATATYPE];
    if (at < 0)
        return 0;
    *dt = (unsigned)mqd_uint(p, buf, at, 4);
    if (MPICH_DATATYPE_IS_INTERNAL(*dt) && (*dt & 0xffu))
        *dt = MPICH_DATATYPE_PREDEFINED(*dt); /* 5.0: the user's type behind it */
    unsigned hkind = MPICH_HANDLE_KIND(*dt);
    return hkind != 0 && MPICH_HANDLE_OBJECT(*dt) == MPICH_OBJECT_DATATYPE &&
           (hkind != MPICH_HANDLE_KIND_BUILTIN || datatype_name(*dt) ||
            MPICH_DATATYPE_IS_INTERNAL(*dt));
}

/*
 * 4.0.2 ch4, a send from MPIR_Sendq (which records no count): its count
 * and datatype (and buffer), where the request keeps them.  A persistent request's
 * MPIDI_PREQUEST; a shared-memory send's MPIDIG_REQUEST (dev.is_local 1:
 * MPIDI_POSIX_mpi_isend is MPIDIG_mpi_isend, src/mpid/ch4/shm/posix/
 * posix_send.h; and its MPIDIG_req_ext_t, which freeing a request clears,
 * src/mpid/ch4/src/ch4_request.h).  The netmod's is either an
 * active-message request or OFI's own (a datatype, no count), and a
 * one-process communicator's (ch4_self.c) sets neither is_local nor the
 * extension: nothing in 4.0.2's request tells which, so 0.
 */
static int ch4_sendq_type(struct mqd_process *p, const unsigned char *buf, long *count,
                          unsigned *dt, mqs_taddr_t *user_buf)
{
    const struct mpich_image *b = mpich__image(p);
    const int *o = b->off;
    unsigned kind = (unsigned)mqd_uint(p, buf, o[F_REQ_KIND], 4);
    int at_count = -1, at_dt = -1;
    if (kind == MPICH_REQ_PREQUEST_SEND) {
        at_count = o[F_REQ_PREQ_COUNT];
        at_dt = o[F_REQ_PREQ_DATATYPE];
    } else if (o[F_REQ_DEV_LOCAL] >= 0 && mqd_int(p, buf, o[F_REQ_DEV_LOCAL], 4) == 1 &&
               o[F_REQ_AM_EXT] >= 0 && mqd_ptr(p, buf, o[F_REQ_AM_EXT]) != 0) {
        at_count = o[F_REQ_AM_COUNT];
        at_dt = o[F_REQ_AM_DATATYPE];
        *user_buf = mqd_ptr(p, buf, o[F_REQ_AM_BUF]);
    }
    if (at_count < 0 || at_dt < 0)
        return 0;
    *count = (long)mqd_int(p, buf, at_count, b->size[S_SZ_AINT]);
    *dt = (unsigned)mqd_uint(p, buf, at_dt, 4);
    return MPICH_HANDLE_KIND(*dt) != 0 && MPICH_HANDLE_OBJECT(*dt) == MPICH_OBJECT_DATATYPE;
}

/* How far an unexpected message has come. */
enum ch4_arrival {
    ARRIVAL_UNKNOWN, /* not an active-message request: not recorded */
    ARRIVAL_EAGER,   /* all its data is in MPICH's buffer */
    ARRIVAL_COMING,  /* eager, its data still being copied in */
    ARRIVAL_RNDV     /* rendezvous: the envelope only, the data at the sender */
};

/*
 * ch4: an unexpected message's arrival, from its active-message request's
 * MPIDIG_req_ext_t status (buf: the request's bytes).  MPIDIG_send_target_
 * msg_cb (src/mpid/ch4/src/mpidig_pt2pt_callbacks.c) makes it with
 * MPIDIG_REQ_UNEXPECTED, sets BUSY for an eager message until
 * recv_target_cmpl_cb's handle_unexp_cmpl has its data, and RTS for a
 * rendezvous one.  The request's cc stays 1 until a receive matches it.
 * is_am: the request is known to be an active-message one (MPIDIG's own
 * lists hold nothing else); else its dev.type must say so.
 */
static enum ch4_arrival ch4_arrival(struct mqd_process *p, const unsigned char *buf, int is_am)
{
    const int *o = mpich__image(p)->off;
    if (!is_am && (o[F_REQ_DEV_TYPE] < 0 ||
                   mqd_int(p, buf, o[F_REQ_DEV_TYPE], 4) != MPICH_CH4_REQ_TYPE_AM))
        return ARRIVAL_UNKNOWN;
    if (o[F_REQ_AM_EXT] < 0 || o[F_AMEXT_STATUS] < 0)
        return ARRIVAL_UNKNOWN;
    mqs_taddr_t ext = mqd_ptr(p, buf, o[F_REQ_AM_EXT]);
    unsigned char v[8];
    if (!ext || mqd_read(p, ext + (mqs_taddr_t)o[F_AMEXT_STATUS], v, 8) != mqs_ok)
        return ARRIVAL_UNKNOWN;
    uint64_t st = mqd_uint(p, v, 0, 8);
    if (!(st & MPICH_MPIDIG_REQ_UNEXPECTED))
        return ARRIVAL_UNKNOWN;
    if (st & MPICH_MPIDIG_REQ_RTS)
        return ARRIVAL_RNDV;
    return st & MPICH_MPIDIG_REQ_BUSY ? ARRIVAL_COMING : ARRIVAL_EAGER;
}

/*
 * ch4, an unexpected message whose request (its bytes in buf) is a send:
 * ch4_self.c's, on a one-process communicator, enters the send request
 * itself (MPIDI_Self_isend: MPII_UNEXPQ_REMEMBER(sreq, ...)), its buffer,
 * count and datatype in dev.ch4.self and its data still in the sender's
 * buffer until a receive matches it.  If so, r's length, buffer, text and
 * status say that (else r is left as it is).
 */
static void ch4_self_send(struct mqd_process *p, const unsigned char *buf, struct mqd_raw_op *r)
{
    const struct mpich_image *b = mpich__image(p);
    const int *o = b->off;
    mqs_pending_operation *op = &r->op;
    if (o[F_REQ_DEV_TYPE] < 0 || o[F_REQ_SELF_BUF] < 0 || o[F_REQ_SELF_COUNT] < 0 ||
        o[F_REQ_SELF_DATATYPE] < 0 ||
        mqd_uint(p, buf, o[F_REQ_KIND], 4) != MPICH_REQ_SEND ||
        mqd_int(p, buf, o[F_REQ_DEV_TYPE], 4) == MPICH_CH4_REQ_TYPE_AM)
        return;
    long count = (long)mqd_int(p, buf, o[F_REQ_SELF_COUNT], b->size[S_SZ_AINT]);
    unsigned dt = (unsigned)mqd_uint(p, buf, o[F_REQ_SELF_DATATYPE], 4);
    if (MPICH_HANDLE_KIND(dt) == 0 || MPICH_HANDLE_OBJECT(dt) != MPICH_OBJECT_DATATYPE)
        return;
    op->status = mqs_st_pending;
    op->desired_length = op->actual_length = byte_length(p, count, dt, 0);
    op->buffer = mqd_ptr(p, buf, o[F_REQ_SELF_BUF]);
    op->system_buffer = 0;
    mqd_set_text(op->extra_text[0], "unexpected: its own send, data in the send buffer");
}

/* A ch4 unexpected message from rank with tag, of bytes, as far as it has
 * come, into op. */
static void ch4_unexpected(mqs_pending_operation *op, long rank, long tag, long bytes,
                           enum ch4_arrival arrival)
{
    op->status = arrival == ARRIVAL_EAGER ? mqs_st_complete : mqs_st_pending;
    op->desired_local_rank = op->actual_local_rank = rank;
    op->desired_tag = op->actual_tag = tag;
    op->desired_length = op->actual_length = bytes;
    op->system_buffer = 1;
    switch (arrival) {
    case ARRIVAL_EAGER:
        mqd_set_text(op->extra_text[0], "unexpected eager message (data here)");
        break;
    case ARRIVAL_COMING:
        mqd_set_text(op->extra_text[0], "unexpected eager message (its data arriving)");
        break;
    case ARRIVAL_RNDV:
        mqd_set_text(op->extra_text[0], "unexpected rendezvous message (envelope only)");
        break;
    case ARRIVAL_UNKNOWN:
        mqd_set_text(op->extra_text[0], "unexpected message (whether its data is "
                                        "here is not recorded)");
        break;
    }
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
        const char *what = kind == MPICH_REQ_PREQUEST_SEND ? "persistent send" : "send";
        long count = count_hint;
        unsigned dt;
        if (use_hint ? ch4_datatype(p, buf, count_hint, op->buffer, &dt)
                     : ch4_sendq_type(p, buf, &count, &dt, &op->buffer)) {
            op->desired_length = byte_length(p, count, dt, 0);
            describe_type(r, what, count, dt);
        } else if (use_hint) {
            op->desired_length = -1;
            mqd_set_text(op->extra_text[0], "%s: %ld elements", what, count_hint);
        } else {
            op->desired_length = -1;
            mqd_set_text(op->extra_text[0], "%s: its count and datatype are not recorded",
                         what);
        }
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

/* ---------------------------------------------------------------- MPIDIG's lists */

/* One request of 4.0.2 ch4's posted (queue 1) or unexpected (2) MPIDIG
 * list (mpich_defs.h, MPIDIG): an active-message request, matched on its
 * MPIDIG_REQUEST(req, u.recv), its count and datatype beside. */
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
        rc = req_cc(p, addr, buf, &cc);
    if (rc != mqs_ok) {
        mqd_free(buf);
        return rc;
    }
    memset(r, 0, sizeof *r);
    *next = mqd_ptr(p, buf, o[F_REQ_DL_NEXT]);
    r->context = mqd_uint(p, buf, o[F_REQ_AM_CTX], b->size[S_SZ_CONTEXT_ID]);
    long rank = (long)mqd_int(p, buf, o[F_REQ_AM_SOURCE], 4);
    long tag = (long)mqd_int(p, buf, o[F_REQ_AM_TAG], 4);
    long count = (long)mqd_int(p, buf, o[F_REQ_AM_COUNT], b->size[S_SZ_AINT]);
    unsigned dt = (unsigned)mqd_uint(p, buf, o[F_REQ_AM_DATATYPE], 4);
    mqs_pending_operation *op = &r->op;
    if (queue == mqs_pending_receives) {
        op->status = cc == 0 ? mqs_st_complete : mqs_st_pending;
        op->desired_local_rank = rank == MPICH_ANY_SOURCE ? -1 : rank;
        op->tag_wild = tag == MPICH_ANY_TAG;
        op->desired_tag = op->tag_wild ? -1 : tag;
        op->desired_length = byte_length(p, count, dt, 0);
        op->buffer = mqd_ptr(p, buf, o[F_REQ_AM_BUF]);
        op->actual_local_rank = op->actual_tag = op->actual_length = -1;
        completed_receive(p, buf, op);
        describe_type(r, "receive", count, dt);
    } else {
        /* create_unexp_rreq: MPI_BYTE, count the message's size */
        ch4_unexpected(op, rank, tag, byte_length(p, count, dt, 0), ch4_arrival(p, buf, 1));
    }
    request_line(r, addr, (unsigned)mqd_uint(p, buf, o[F_REQ_HANDLE], 4));
    mqd_free(buf);
    return mqs_ok;
}

/* A list of MPIR_Request (ch3's, or 4.0.2 ch4's MPIDIG lists), through the
 * variable that points at its head. */
static int request_list(struct mqd_process *p, mqs_taddr_t head_ptr_sym, int queue,
                        struct mqd_ops *out)
{
    struct mpich_process *bp = mqd_process_backend(p);
    mqs_taddr_t head_var, node;
    int rc = mqd_read_ptr(p, head_ptr_sym, &head_var);
    if (rc != mqs_ok || (rc = mqd_read_ptr(p, head_var, &node)) != mqs_ok)
        return rc;
    struct mqd_walk walk;
    mqd_walk_init(&walk);
    while (rc == mqs_ok && node) {
        struct mqd_raw_op r;
        mqs_taddr_t next = 0;
        if ((rc = mqd_walk_visit(&walk, node)) != mqs_ok)
            break;
        rc = bp->gen == MPICH_GEN_CH4_MPIDIG ? mpidig_request(p, node, queue, &r, &next)
                                             : ch3_request(p, node, queue, &r, &next);
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
        if (raddr && ch4_datatype(p, req, count, op->buffer, &dt)) {
            op->desired_length = byte_length(p, count, dt, 0);
            describe_type(r, "receive", count, dt);
        } else {
            op->desired_length = -1;
            mqd_set_text(op->extra_text[0], "receive: %ld elements", count);
        }
        if (raddr)
            completed_receive(p, req, op);
        return;
    }
    /* ch4 (MPIDIG's create_unexp_rreq): the size is in the status; cc
     * stays 1 until a receive matches it: how far its data has come is in
     * its active-message part (ch4_arrival). */
    long source, stag, bytes;
    if (!raddr || !req_status(p, req, &source, &stag, &bytes))
        bytes = -1;
    enum ch4_arrival arrival = raddr ? ch4_arrival(p, req, 0) : ARRIVAL_UNKNOWN;
    ch4_unexpected(op, rank, tag, bytes, arrival);
    if (raddr)
        ch4_self_send(p, req, r);
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
    if (mpich__gen_is_ch3(bp->gen) || bp->gen == MPICH_GEN_CH4_MPIDIG || !recvs || !unexps)
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

int mqd_be_read_queue(struct mqd_process *p, int queue, struct mqd_ops *out)
{
    struct mpich_process *bp = mqd_process_backend(p);
    int rc;
    if (!mpich__gen_is_ch3(bp->gen) && bp->gen != MPICH_GEN_CH4_MPIDIG)
        rc = debugq_list(p, queue == mqs_pending_sends      ? bp->sendq
                            : queue == mqs_pending_receives ? bp->recvq
                                                            : bp->unexpq,
                         queue, out);
    else if (queue == mqs_pending_sends)
        rc = bp->gen == MPICH_GEN_CH3_DEBUGQ ? debugq_list(p, bp->sendq, queue, out)
                                            : ch3_sendq(p, out);
    else
        rc = request_list(p, queue == mqs_pending_receives ? bp->posted_ptr
                                                           : bp->unexpected_ptr,
                          queue, out);
    /* In MPI_Finalize (finalized_world): left behind for good. */
    for (int i = 0; rc == mqs_ok && bp->finalized && i < out->n; i++)
        mqd_add_text(&out->v[i].op, "left behind: MPI_Finalize has freed the communicator");
    return rc;
}
