/*
 * mpich_handles.c - MPICH's objects behind their handles: the object
 * allocators' pools (src/include/mpir_objects.h:437-459,
 * src/include/mpir_handlemem.h), the objects of a pool in use, and the
 * request behind a program's MPI_Request (mqd_be_read_request), as MPICH
 * 4.0.2 keeps it.  See mpich.h.
 */
#include "mpich.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- pools */

int mpich__read_pool(struct mqd_process *p, mqs_taddr_t at, struct mpich_pool *out)
{
    const struct mpich_image *b = mpich__image(p);
    const int *o = b->off;
    static const enum field_id ids[] = {F_OBJ_INDIRECT, F_OBJ_INDIRECT_SIZE, F_OBJ_KIND,
                                        F_OBJ_SIZE, F_OBJ_DIRECT, F_OBJ_DIRECT_SIZE};
    unsigned char buf[256];
    int len = b->size[S_SZ_OBJ_ALLOC];
    memset(out, 0, sizeof *out);
    if (len <= 0 || len > (int)sizeof buf || !mpich__fields_fit(b->off, ids, NELEMS(ids), 4, len))
        return MQD_ERR_BAD_LAYOUT;
    int rc = mqd_read(p, at, buf, len);
    if (rc != mqs_ok)
        return rc;
    /* MPIR_Handle_direct_init and MPIR_Handle_indirect_init
     * (mpir_handlemem.h:122-215): direct_size objects at direct, then
     * indirect_size blocks of HANDLE_NUM_INDICES (requests: their own). */
    out->indirect = mqd_ptr(p, buf, o[F_OBJ_INDIRECT]);
    out->nblocks = (long)mqd_int(p, buf, o[F_OBJ_INDIRECT_SIZE], 4);
    out->kind = (unsigned)mqd_uint(p, buf, o[F_OBJ_KIND], 4);
    out->size = (long)mqd_int(p, buf, o[F_OBJ_SIZE], 4);
    out->direct = mqd_ptr(p, buf, o[F_OBJ_DIRECT]);
    out->ndirect = (long)mqd_int(p, buf, o[F_OBJ_DIRECT_SIZE], 4);
    if (out->nblocks < 0 || out->nblocks > 8192 || out->ndirect < 0 || out->ndirect > 4096 ||
        out->size <= 0 || out->size > MQD_MAX_OFFSET)
        return MQD_ERR_BAD_VALUE;
    return mqs_ok;
}

int mpich__pool_block(struct mqd_process *p, const struct mpich_pool *pool, long block,
                      mqs_taddr_t *out)
{
    int ps = mqd_sizes(p)->pointer_size;
    *out = 0;
    if (block < 0 || block >= pool->nblocks || !pool->indirect)
        return MQD_ERR_BAD_VALUE;
    int rc = mqd_read_ptr(p, pool->indirect + (mqs_taddr_t)block * (mqs_taddr_t)ps, out);
    if (rc == mqs_ok && !*out)
        rc = MQD_ERR_BAD_VALUE;
    return rc;
}

/* ---------------------------------------------------------------- requests */

/* The request object of handle h (not builtin, not null) into *addr. */
static int request_object(struct mqd_process *p, unsigned h, mqs_taddr_t *addr)
{
    const struct mpich_image *b = mpich__image(p);
    const struct mpich_process *bp = mqd_process_backend(p);
    struct mpich_pool pool;
    unsigned kind = MPICH_HANDLE_KIND(h), npool = MPICH_REQUEST_POOL(h);
    if (!bp->request_mem)
        return mqs_no_information;
    int rc = mpich__read_pool(p, bp->request_mem + (mqs_taddr_t)npool *
                                                       (mqs_taddr_t)b->size[S_SZ_OBJ_ALLOC],
                              &pool);
    if (rc != mqs_ok)
        return rc;
    if (pool.size != b->size[S_SZ_REQUEST] || pool.kind != MPICH_OBJECT_REQUEST)
        return MQD_ERR_BAD_VALUE;
    /* MPIR_Request_get_ptr (mpir_request.h:279-305) */
    if (kind == MPICH_HANDLE_KIND_DIRECT) {
        long i = (long)MPICH_HANDLE_INDEX(h);
        if (npool != 0 || i >= pool.ndirect || !pool.direct)
            return MQD_ERR_BAD_VALUE;
        *addr = pool.direct + (mqs_taddr_t)i * (mqs_taddr_t)pool.size;
        return mqs_ok;
    }
    mqs_taddr_t block;
    if ((rc = mpich__pool_block(p, &pool, (long)MPICH_REQUEST_BLOCK(h), &block)) != mqs_ok)
        return rc;
    *addr = block + (mqs_taddr_t)MPICH_REQUEST_INDEX(h) * (mqs_taddr_t)pool.size;
    return mqs_ok;
}

/* A kind of MPIR_Request_kind_t as this process numbers it, as 4.0.2
 * does (mpich_defs.h: 4.1 on has ENQUEUE at 9, those after one up). */
static unsigned kind_402(const struct mpich_process *bp, unsigned kind)
{
    if (!bp->kinds_41 || kind < MPICH_REQ_ENQUEUE_41)
        return kind;
    return kind == MPICH_REQ_ENQUEUE_41 ? MPICH_REQ_ENQUEUE : kind - 1;
}

/* A kind of MPIR_Request_kind_t (4.0.2's numbers) as the interface says it. */
static int request_kind(unsigned kind)
{
    switch (kind) {
    case MPICH_REQ_SEND: return MQD_REQ_SEND;
    case MPICH_REQ_RECV: return MQD_REQ_RECV;
    case MPICH_REQ_PREQUEST_SEND: return MQD_REQ_PERSISTENT_SEND;
    case MPICH_REQ_PREQUEST_RECV: return MQD_REQ_PERSISTENT_RECV;
    case MPICH_REQ_PREQUEST_COLL: return MQD_REQ_PERSISTENT_COLL;
    case MPICH_REQ_PART_SEND:
    case MPICH_REQ_PART_RECV:
    case MPICH_REQ_PART: return MQD_REQ_PARTITIONED;
    case MPICH_REQ_GREQUEST: return MQD_REQ_GENERALIZED;
    case MPICH_REQ_COLL: return MQD_REQ_COLLECTIVE;
    case MPICH_REQ_RMA: return MQD_REQ_RMA;
    }
    return MQD_REQ_OTHER;
}

/*
 * A builtin request (mpir_request.c:40-48): MPICH's pre-completed one of
 * each kind (MPIR_REQUEST_COMPLETE + kind), or a receive from
 * MPI_PROC_NULL (MPIR_REQUEST_NULL_RECV): done, a wait returns.
 */
static int builtin_request(const struct mpich_process *bp, unsigned h,
                           struct mqd_raw_request *r)
{
    unsigned i = MPICH_HANDLE_INDEX(h);
    if (i > 0x10)
        return MQD_ERR_BAD_VALUE;
    r->kind = i == 0x10 ? MQD_REQ_RECV : request_kind(kind_402(bp, i));
    r->state = MQD_REQ_COMPLETE;
    mqd_set_text(r->text, "completed at once (MPICH's builtin request 0x%x)", h);
    return mqs_ok;
}

/* ch3's requests (4.0.2 and older): rank, tag and context in dev.match
 * for sends and receives alike (src/mpid/ch3/include/mpidimpl.h,
 * MPIDI_Request_create_sreq and MPID_Irecv set match.parts). */
static void ch3_envelope(struct mqd_process *p, const unsigned char *buf,
                         struct mqd_raw_request *r)
{
    const struct mpich_image *b = mpich__image(p);
    const int *o = b->off;
    if (o[F_REQ_MATCH_RANK] < 0 || o[F_REQ_MATCH_TAG] < 0 || o[F_REQ_MATCH_CTX] < 0)
        return;
    long rank = (long)mqd_int(p, buf, o[F_REQ_MATCH_RANK], b->size[S_SZ_RANK]);
    r->peer = rank == MPICH_ANY_SOURCE ? -1 : rank;
    r->tag = (long)mqd_int(p, buf, o[F_REQ_MATCH_TAG], 4);
    r->context = mqd_uint(p, buf, o[F_REQ_MATCH_CTX], mpich__match_ctx_size(b));
    r->has_context = 1;
    r->known |= MQD_REQ_KNOWN_PEER | MQD_REQ_KNOWN_TAG;
}

/*
 * 4.0.2 ch4: an active-message request (MPIDIG_request_create gives it its
 * MPIDIG_req_ext_t, mpidig_request.h:12-35; MPID_Request_create_hook,
 * mpidpost.h:12-21, leaves every other request's NULL) of shared memory or
 * the netmod's active messages: a receive keeps its envelope in
 * MPIDIG_REQUEST(req, u.recv) (MPIDIG_prepare_recv_req, mpidig_recv.h:
 * 12-27; also the one MPI_ANY_SOURCE returns, ch4_recv.h:17-44; 4.3 on
 * the source and tag in its status, mpidig_recv.h:19-21), a send
 * its destination in u.send.dest and no tag (shared memory only: dev.
 * is_local 1, ch4_send.h:39-46).  A persistent request keeps its envelope
 * in MPIDI_PREQUEST (mpidpre.h:212-220).  The netmod's own requests (UCX,
 * OFI) keep none; what is read of the union must agree with the request's
 * communicator, which the core checks (mqd_get_request_info).
 */
static void ch4_envelope(struct mqd_process *p, const unsigned char *buf, unsigned kind,
                         struct mqd_raw_request *r)
{
    const struct mpich_image *b = mpich__image(p);
    const int *o = b->off;
    int cs = b->size[S_SZ_CONTEXT_ID];
    int local = o[F_REQ_DEV_LOCAL] >= 0 && mqd_int(p, buf, o[F_REQ_DEV_LOCAL], 4) == 1;
    int am = o[F_REQ_AM_EXT] >= 0 && mqd_ptr(p, buf, o[F_REQ_AM_EXT]) != 0;
    enum field_id src, tag; /* 4.3 on: a receive's in its status */
    int envelope = mpich__mpidig_envelope(o, &src, &tag);
    long rank = -3;
    if ((kind == MPICH_REQ_PREQUEST_SEND || kind == MPICH_REQ_PREQUEST_RECV) &&
        o[F_REQ_PREQ_RANK] >= 0 && o[F_REQ_PREQ_TAG] >= 0 &&
        (o[F_REQ_PREQ_CTX] >= 0 || r->comm_addr)) {
        rank = (long)mqd_int(p, buf, o[F_REQ_PREQ_RANK], 4);
        r->tag = (long)mqd_int(p, buf, o[F_REQ_PREQ_TAG], 4);
        /* 4.1 on keeps a context offset instead (mpidpre.h:243-251,
         * 5.0.1): its communicator is the request's own. */
        r->has_context = o[F_REQ_PREQ_CTX] >= 0;
        if (r->has_context)
            r->context = mqd_uint(p, buf, o[F_REQ_PREQ_CTX], cs);
        r->known |= MQD_REQ_KNOWN_TAG;
    } else if (kind == MPICH_REQ_RECV && am && envelope && o[F_REQ_AM_CTX] >= 0) {
        rank = (long)mqd_int(p, buf, o[src], 4);
        r->tag = (long)mqd_int(p, buf, o[tag], 4);
        r->context = mqd_uint(p, buf, o[F_REQ_AM_CTX], cs);
        r->has_context = 1;
        r->known |= MQD_REQ_KNOWN_TAG;
    } else if (kind == MPICH_REQ_SEND && am && local && o[F_REQ_AM_DEST] >= 0) {
        rank = (long)mqd_int(p, buf, o[F_REQ_AM_DEST], 4);
    }
    if (rank == -3)
        return;
    r->peer = rank == MPICH_ANY_SOURCE ? -1 : rank;
    r->known |= MQD_REQ_KNOWN_PEER;
}

/*
 * The member a nonblocking collective's schedule at sched (its bytes in
 * buf) waits for next: the first entry from idx on (the first not yet
 * complete, mpidu_sched.c MPIDU_Sched_continue) that is not complete, a
 * receive from src (MQD_REQ_SCHED_RECEIVES) or a send to dest
 * (mpidu_sched.h:22-40, 99-118);
 * nothing said if none is, or the layout lacks them.
 */
static int sched_peer(struct mqd_process *p, const struct mpich_late *l,
                      const unsigned char *buf, struct mqd_raw_request *r)
{
    const int *o = l->off;
    int esz = l->size[S_SZ_SCHED_ENTRY];
    static const enum field_id ids[] = {F_SENTRY_TYPE, F_SENTRY_STATUS, F_SENTRY_RECV_SRC,
                                        F_SENTRY_SEND_DEST};
    static const enum field_id in_sched[] = {F_SCHED_ENTRIES, F_SCHED_NENTRIES, F_SCHED_IDX};
    if (!mpich__fields_fit(o, in_sched, NELEMS(in_sched), 8, 128) || esz <= 0 || esz > 256 ||
        !mpich__fields_fit(o, ids, NELEMS(ids), 4, esz))
        return mqs_ok;
    mqs_taddr_t entries = mqd_ptr(p, buf, o[F_SCHED_ENTRIES]);
    long n = (long)mqd_int(p, buf, o[F_SCHED_NENTRIES], 4);
    long idx = (long)mqd_int(p, buf, o[F_SCHED_IDX], l->size[S_SZ_AINT]);
    unsigned char e[256];
    if (!entries || n < 0 || n > MPICH_SCHED_MAX_ENTRIES || idx < 0 || idx > n)
        return n < 0 || n > MPICH_SCHED_MAX_ENTRIES ? MQD_ERR_BAD_VALUE : mqs_ok;
    for (long k = idx; k < n && k < idx + 64; k++) {
        int rc = mqd_read(p, entries + (mqs_taddr_t)k * (mqs_taddr_t)esz, e, esz);
        if (rc != mqs_ok)
            return rc;
        long type = (long)mqd_int(p, e, o[F_SENTRY_TYPE], 4);
        if (mqd_int(p, e, o[F_SENTRY_STATUS], 4) == MPICH_SCHED_COMPLETE)
            continue;
        if (type == MPICH_SCHED_RECV || type == MPICH_SCHED_PT2PT_RECV) {
            r->peer = (long)mqd_int(p, e, o[F_SENTRY_RECV_SRC], 4);
            r->known |= MQD_REQ_SCHED_RECEIVES;
        } else if (type == MPICH_SCHED_SEND || type == MPICH_SCHED_PT2PT_SEND)
            r->peer = (long)mqd_int(p, e, o[F_SENTRY_SEND_DEST], 4);
        else
            continue; /* a reduction, a copy, a callback: its own process's */
        r->known |= MQD_REQ_KNOWN_PEER;
        break;
    }
    return mqs_ok;
}

/* A nonblocking collective's schedule tag, and the member it waits for
 * next (sched_peer): its schedule is the one on the list of pending
 * schedules whose req is this request (MPIDU_Sched_start,
 * mpidu_sched.c:546-589).  Not found (the list unknown or empty, or the
 * schedule done): nothing said.  The schedules' layout is looked up only
 * once the list has one. */
static int sched_tag(struct mqd_process *p, mqs_taddr_t req, struct mqd_raw_request *r)
{
    const struct mpich_process *bp = mqd_process_backend(p);
    static const enum field_id ids[] = {F_SCHED_TAG, F_SCHED_REQ, F_SCHED_NEXT};
    static const enum field_id all[] = {F_SCHED_TAG,     F_SCHED_REQ,    F_SCHED_NEXT,
                                        F_SCHED_ENTRIES, F_SCHED_NENTRIES, F_SCHED_IDX};
    unsigned char buf[128];
    mqs_taddr_t node = 0;
    int head = mpich__image(p)->off[F_SCHEDS_HEAD];
    int rc = bp->schedules && head >= 0
                 ? mqd_read_ptr(p, bp->schedules + (mqs_taddr_t)head, &node)
                 : mqs_ok;
    if (rc != mqs_ok || !node)
        return rc;
    const struct mpich_late *l = mpich__late(p, CLASS_SCHEDS);
    if (!l)
        return MQD_ERR_NOMEM;
    const int *o = l->off;
    if (!mpich__fields_fit(o, ids, NELEMS(ids), mqd_sizes(p)->pointer_size, (int)sizeof buf))
        return mqs_ok;
    struct mqd_walk walk;
    mqd_walk_init(&walk);
    int len = 0; /* past the last field read, in buf (not past the schedule's end) */
    for (int i = 0; i < NELEMS(all); i++)
        if (o[all[i]] >= 0 && o[all[i]] + 8 > len && o[all[i]] + 8 <= (int)sizeof buf)
            len = o[all[i]] + 8;
    if (l->size[S_SZ_SCHED] > 0 && l->size[S_SZ_SCHED] < len)
        len = l->size[S_SZ_SCHED];
    memset(buf, 0, sizeof buf);
    while (rc == mqs_ok && node) {
        if ((rc = mqd_walk_visit(&walk, node)) != mqs_ok ||
            (rc = mqd_read(p, node, buf, len)) != mqs_ok)
            break;
        if (mqd_ptr(p, buf, o[F_SCHED_REQ]) == req) {
            r->sched_tag = (long)mqd_int(p, buf, o[F_SCHED_TAG], 4);
            r->known |= MQD_REQ_KNOWN_SCHED_TAG;
            rc = sched_peer(p, l, buf, r);
            break;
        }
        node = mqd_ptr(p, buf, o[F_SCHED_NEXT]);
    }
    mqd_walk_fini(&walk);
    return rc;
}

/* The request object at addr, of handle h, into r. */
static int read_request(struct mqd_process *p, mqs_taddr_t addr, unsigned h,
                        struct mqd_raw_request *r)
{
    const struct mpich_image *b = mpich__image(p);
    const struct mpich_process *bp = mqd_process_backend(p);
    const int *o = b->off;
    unsigned char *buf = mqd_malloc((size_t)b->req_span.len);
    if (!buf)
        return MQD_ERR_NOMEM;
    long cc = 0;
    int rc = mpich__read_span(p, addr, buf, b->req_span);
    if (rc == mqs_ok)
        rc = mpich__req_cc(p, addr, buf, &cc);
    /* An object in use is the handle's (mpir_handlemem.h: the handle is
     * kept when freed, so a freed one also has a reference count of 0). */
    if (rc == mqs_ok && ((unsigned)mqd_uint(p, buf, o[F_REQ_HANDLE], 4) != h ||
                         (o[F_REQ_REFCOUNT] >= 0 && mqd_int(p, buf, o[F_REQ_REFCOUNT], 4) <= 0)))
        rc = MQD_ERR_BAD_VALUE;
    if (rc == mqs_ok) {
        unsigned kind = kind_402(bp, (unsigned)mqd_uint(p, buf, o[F_REQ_KIND], 4));
        r->addr = addr;
        r->kind = request_kind(kind);
        r->state = cc == 0 ? MQD_REQ_COMPLETE : MQD_REQ_PENDING;
        r->comm_addr = o[F_REQ_COMM] >= 0 ? mqd_ptr(p, buf, o[F_REQ_COMM]) : 0;
        int p2p = kind == MPICH_REQ_SEND || kind == MPICH_REQ_RECV ||
                  kind == MPICH_REQ_PREQUEST_SEND || kind == MPICH_REQ_PREQUEST_RECV;
        if (p2p && mpich__gen_is_ch3(bp->gen))
            ch3_envelope(p, buf, r);
        else if (p2p)
            ch4_envelope(p, buf, kind, r);
        if (kind == MPICH_REQ_COLL && cc != 0)
            rc = sched_tag(p, addr, r);
    }
    mqd_free(buf);
    return rc;
}

int mqd_be_read_request(struct mqd_process *p, uint64_t handle, struct mqd_raw_request *r)
{
    const struct mpich_process *bp = mqd_process_backend(p);
    unsigned h = (unsigned)handle;
    memset(r, 0, sizeof *r);
    r->peer = r->tag = r->sched_tag = -1;
    if (handle > 0xffffffffu || (h != MPICH_REQUEST_NULL &&
                                 MPICH_HANDLE_OBJECT(h) != MPICH_OBJECT_REQUEST))
        return MQD_ERR_BAD_VALUE;
    if (h == MPICH_REQUEST_NULL) {
        r->kind = MQD_REQ_NULL;
        r->state = MQD_REQ_COMPLETE;
        return mqs_ok;
    }
    if (MPICH_HANDLE_KIND(h) == MPICH_HANDLE_KIND_BUILTIN)
        return builtin_request(bp, h, r);
    mqs_taddr_t addr;
    int rc = request_object(p, h, &addr);
    if (rc == mqs_no_information)
        mqd_set_text(r->text, "the request pools (" MPICH_SYM_REQUEST_MEM ") are not found");
    if (rc != mqs_ok)
        return rc;
    return read_request(p, addr, h, r);
}
