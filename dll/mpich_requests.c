/*
 * mpich_requests.c - what one MPICH request says: its datatype and length
 * in bytes, its completion counter and status, and the parts of ch4's
 * device union that keep what the queues do not (each request's datatype,
 * an unexpected message's progress, a one-process communicator's send).
 * The queue readers (mpich_queues.c) call these per entry.  See mpich.h.
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
    struct mpich_process *bp = mqd_process_backend(p);
    unsigned kind = MPICH_HANDLE_KIND(handle);
    if (kind == MPICH_HANDLE_KIND_BUILTIN)
        return (long)MPICH_BUILTIN_TYPE_SIZE(handle);
    const struct mpich_late *l = mpich__late(p, CLASS_DATATYPES);
    static const enum field_id need[] = {F_DT_SIZE};
    if (!l || mpich__lacks(l->off, need, NELEMS(need)))
        return -1;
    mqs_taddr_t addr = dt_ptr;
    if (!addr && kind == MPICH_HANDLE_KIND_DIRECT && bp->dt_direct &&
        MPICH_HANDLE_INDEX(handle) < 4096 && l->size[S_SZ_DATATYPE] > 0)
        addr = bp->dt_direct + (mqs_taddr_t)MPICH_HANDLE_INDEX(handle) *
                                   (mqs_taddr_t)l->size[S_SZ_DATATYPE];
    if (!addr)
        return -1;
    unsigned char buf[8];
    int as = l->size[S_SZ_AINT];
    if (mqd_read(p, addr + (mqs_taddr_t)l->off[F_DT_SIZE], buf, as) != mqs_ok)
        return -1;
    int64_t s = mqd_int(p, buf, 0, as);
    return s >= 0 && s < ((int64_t)1 << 40) ? (long)s : -1;
}

unsigned mpich__user_type(unsigned dt)
{
    return MPICH_DATATYPE_IS_INTERNAL(dt) && (dt & 0xffu) ? MPICH_DATATYPE_PREDEFINED(dt) : dt;
}

/* r's first line: what and count elements of datatype dt; a datatype
 * without a name goes by its handle, which (unless predefined: one of
 * 5.0's internal types) is this process's (an address line, as the
 * request's). */
void mpich__describe_type(struct mqd_raw_op *r, const char *what, long count, unsigned dt)
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
long mpich__byte_length(struct mqd_process *p, long count, unsigned dt, mqs_taddr_t dt_ptr)
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
int mpich__req_cc(struct mqd_process *p, mqs_taddr_t req, const unsigned char *buf, long *cc)
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
int mpich__req_status(struct mqd_process *p, const unsigned char *buf, long *source, long *tag,
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
void mpich__completed_receive(struct mqd_process *p, const unsigned char *buf,
                              mqs_pending_operation *op)
{
    long source, tag, bytes;
    if (op->status != mqs_st_complete || !mpich__req_status(p, buf, &source, &tag, &bytes))
        return;
    if (source < 0 || tag < 0) /* MPI_PROC_NULL, or never set */
        return;
    op->actual_local_rank = source;
    op->actual_tag = tag;
    op->actual_length = bytes;
}

/* The request behind r: its address, and a line naming it and its handle
 * (an address line: it differs between processes in the same state). */
void mpich__request_line(struct mqd_raw_op *r, mqs_taddr_t addr, unsigned handle)
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
int mpich__ch4_datatype(struct mqd_process *p, const unsigned char *buf, long count,
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
    *dt = mpich__user_type((unsigned)mqd_uint(p, buf, at, 4));
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
int mpich__ch4_sendq_type(struct mqd_process *p, const unsigned char *buf, long *count,
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
enum mpich_arrival mpich__ch4_arrival(struct mqd_process *p, const unsigned char *buf, int is_am)
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
void mpich__ch4_self_send(struct mqd_process *p, const unsigned char *buf, struct mqd_raw_op *r)
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
    op->desired_length = op->actual_length = mpich__byte_length(p, count, dt, 0);
    op->buffer = mqd_ptr(p, buf, o[F_REQ_SELF_BUF]);
    op->system_buffer = 0;
    mqd_set_text(op->extra_text[0], "unexpected: its own send, data in the send buffer");
}

/* A ch4 unexpected message from rank with tag, of bytes, as far as it has
 * come, into op. */
void mpich__ch4_unexpected(mqs_pending_operation *op, long rank, long tag, long bytes,
                           enum mpich_arrival arrival)
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
