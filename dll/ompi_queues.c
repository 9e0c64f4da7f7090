/*
 * ompi_queues.c - pml ob1's three queues (mqd_be_read_queue): the posted
 * receives of each communicator's matching lists in the order ob1 matches
 * them, its unexpected fragments, and the sends, which ob1 keeps in no
 * list: every send request of the PML's request free list that is active
 * and not complete.  MPI's collective traffic (negative tags) is marked,
 * each nonblocking collective by its instance.  See ompi.h.
 */
#include "ompi.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- collectives */

/*
 * Open MPI's collectives send and receive on the user's communicator with
 * negative tags (ompi_defs.h: coll_tags.h), where MPICH's run on a context
 * of their own.  r is one: marked internal, and its tag given as mqd's
 * interface gives a collective's (mpi_interface.h, MQD_NBC_FIRST_TAG):
 * a nonblocking collective's by its instance on the communicator,
 * libnbc's tags -27, -28, ... as MQD_NBC_FIRST_TAG, MQD_NBC_FIRST_TAG + 1,
 * ..., so that two members' same tag is the same instance and a higher
 * one a later; a blocking one's
 * fixed tag by its magnitude (10 to 26); anything else as it is.  The
 * library's own tag goes in extra_text line `line`.
 */
static long collective_tag(struct mqd_raw_op *r, long tag, int line)
{
    long shown = tag;
    r->internal = 1;
    if (tag <= OMPI_NBC_TAG_BASE && tag >= OMPI_NBC_TAG_END) {
        shown = MQD_NBC_FIRST_TAG + (OMPI_NBC_TAG_BASE - tag);
        mqd_set_text(r->op.extra_text[line], "libnbc's tag %ld: nonblocking collective %ld "
                     "here", tag, OMPI_NBC_TAG_BASE - tag + 1);
    } else if (tag <= OMPI_COLL_TAG_FIRST && tag >= OMPI_COLL_TAG_LAST) {
        shown = -tag;
        mqd_set_text(r->op.extra_text[line], "a blocking collective's tag %ld", tag);
    } else {
        mqd_set_text(r->op.extra_text[line], "MPI's own tag %ld", tag);
    }
    return shown;
}

/* ---------------------------------------------------------------- datatypes */

/* Datatypes seen in one read of a queue, by address. */
struct dt_cache {
    int n;
    mqs_taddr_t addr[16];
    long size[16];
    char name[16][MQD_MAX_NAME];
};

/* The size and name ("" if none) of the ompi_datatype_t at addr. */
static int datatype(struct mqd_process *p, struct dt_cache *c, mqs_taddr_t addr, long *size,
                    const char **name)
{
    const struct ompi_image *b = ompi__image(p);
    for (int i = 0; i < c->n; i++) {
        if (c->addr[i] == addr) {
            *size = c->size[i];
            *name = c->name[i];
            return mqs_ok;
        }
    }
    unsigned char buf[1024];
    if (!addr || b->datatype.len > (int)sizeof buf)
        return MQD_ERR_BAD_VALUE;
    int rc = ompi__read_span(p, addr, buf, b->datatype);
    if (rc != mqs_ok)
        return rc;
    int slot = c->n < 16 ? c->n++ : 15;
    uint64_t s = ompi__word(p, buf, F_DT_SIZE);
    c->addr[slot] = addr;
    c->size[slot] = s < ((uint64_t)1 << 40) ? (long)s : -1;
    memcpy(c->name[slot], buf + b->off[F_DT_NAME], MQD_MAX_NAME - 1);
    c->name[slot][MQD_MAX_NAME - 1] = '\0';
    for (char *t = c->name[slot]; *t; t++)
        if ((unsigned char)*t < 0x20 || (unsigned char)*t >= 0x7f)
            *t = '?';
    *size = c->size[slot];
    *name = c->name[slot];
    return mqs_ok;
}

/* r's first line, what and count elements of the datatype at dt, and its
 * length: count times the datatype's size (-1 if unknown). */
static long describe(struct mqd_process *p, struct dt_cache *c, struct mqd_raw_op *r,
                     const char *what, uint64_t count, mqs_taddr_t dt)
{
    long size;
    const char *name;
    if (count > ((uint64_t)1 << 40) || datatype(p, c, dt, &size, &name) != mqs_ok) {
        mqd_set_text(r->op.extra_text[0], "%s: %llu elements", what, (unsigned long long)count);
        return -1;
    }
    if (name[0]) {
        mqd_set_text(r->op.extra_text[0], "%s: %llu x %s", what, (unsigned long long)count,
                     name);
    } else {
        mqd_set_text(r->op.extra_text[0], "%s: %llu x datatype 0x%llx", what,
                     (unsigned long long)count, (unsigned long long)dt);
        r->text_address |= MQD_OP_TEXT_ADDRESS(0);
    }
    if (size < 0 || (size && count > ((uint64_t)1 << 50) / (uint64_t)size))
        return -1;
    return (long)count * size;
}

/* ---------------------------------------------------------------- sorting */

/* Operations and the order ob1 keeps them in (a request's req_sequence). */
struct keyed {
    int n, cap;
    uint64_t *key;
    struct mqd_raw_op *op;
};

static int keyed_push(struct keyed *k, uint64_t key, const struct mqd_raw_op *op)
{
    if (k->n == k->cap) {
        int cap = k->cap ? k->cap * 2 : 16;
        uint64_t *nk = mqd_malloc((size_t)cap * sizeof *nk);
        struct mqd_raw_op *no = mqd_malloc((size_t)cap * sizeof *no);
        if (!nk || !no) {
            mqd_free(nk);
            mqd_free(no);
            return MQD_ERR_NOMEM;
        }
        if (k->n) {
            memcpy(nk, k->key, (size_t)k->n * sizeof *nk);
            memcpy(no, k->op, (size_t)k->n * sizeof *no);
        }
        mqd_free(k->key);
        mqd_free(k->op);
        k->key = nk;
        k->op = no;
        k->cap = cap;
    }
    k->key[k->n] = key;
    k->op[k->n++] = *op;
    return mqs_ok;
}

static void keyed_swap(struct keyed *k, int a, int b)
{
    uint64_t t = k->key[a];
    struct mqd_raw_op o = k->op[a];
    k->key[a] = k->key[b];
    k->op[a] = k->op[b];
    k->key[b] = t;
    k->op[b] = o;
}

static void sift_down(struct keyed *k, int at, int n)
{
    for (int child; (child = 2 * at + 1) < n; at = child) {
        if (child + 1 < n && k->key[child + 1] > k->key[child])
            child++;
        if (k->key[at] >= k->key[child])
            return;
        keyed_swap(k, at, child);
    }
}

/* By key (heapsort: no allocation, n log n however long a hostile list),
 * then appended to out; k emptied. */
static int keyed_flush(struct keyed *k, struct mqd_ops *out)
{
    for (int i = k->n / 2 - 1; i >= 0; i--)
        sift_down(k, i, k->n);
    for (int end = k->n - 1; end > 0; end--) {
        keyed_swap(k, 0, end);
        sift_down(k, 0, end);
    }
    int rc = mqs_ok;
    for (int i = 0; i < k->n && rc == mqs_ok; i++)
        rc = mqd_ops_push(out, &k->op[i]);
    k->n = 0;
    return rc;
}

static void keyed_free(struct keyed *k)
{
    mqd_free(k->key);
    mqd_free(k->op);
    memset(k, 0, sizeof *k);
}

/* ---------------------------------------------------------------- lists */

/* What a list's visitor is given: the node's address and bytes. */
typedef int (*visit_fn)(struct mqd_process *p, mqs_taddr_t node, const unsigned char *buf,
                        void *ctx);

/*
 * Every item of the opal_list_t at list (opal/class/opal_list.h: a ring
 * through its sentinel), each read as sp into buf and handed to visit;
 * bounded and cycle-checked.  The list item is at each node's start.
 */
static int walk_list(struct mqd_process *p, mqs_taddr_t list, struct ompi_span sp,
                     unsigned char *buf, visit_fn visit, void *ctx)
{
    const struct ompi_image *b = ompi__image(p);
    mqs_taddr_t sentinel = list + (mqs_taddr_t)b->off[F_LIST_SENTINEL], node;
    int rc = mqd_read_ptr(p, sentinel + (mqs_taddr_t)b->off[F_ITEM_NEXT], &node);
    struct mqd_walk walk;
    mqd_walk_init(&walk);
    while (rc == mqs_ok && node != sentinel) {
        if (!node) {
            rc = MQD_ERR_BAD_VALUE;
            break;
        }
        if ((rc = mqd_walk_visit(&walk, node)) != mqs_ok ||
            (rc = ompi__read_span(p, node, buf, sp)) != mqs_ok ||
            (rc = visit(p, node, buf, ctx)) != mqs_ok)
            break;
        node = ompi__word(p, buf, F_ITEM_NEXT);
    }
    mqd_walk_fini(&walk);
    return rc;
}

/* ---------------------------------------------------------------- requests */

/* What visiting a list of one communicator needs. */
struct visit_ctx {
    const struct ompi_comm_ref *ref;
    struct dt_cache *dt;
    struct keyed *found;
    long peer; /* a peer's list: its rank; -1 for the wild receives */
};

/* The request line of r (an address line: it differs between processes). */
static void request_line(struct mqd_raw_op *r, mqs_taddr_t addr)
{
    r->request = addr;
    r->text_address |= MQD_OP_TEXT_ADDRESS(1);
    mqd_set_text(r->op.extra_text[1], "request 0x%llx", (unsigned long long)addr);
}

/* A posted receive of ob1's matching lists (pml_ob1_recvreq.c,
 * append_recv_req_to_queue): unmatched, so pending.  Probes wait in the
 * same lists (MCA_PML_REQUEST_PROBE, pml_ob1_iprobe.c): not receives. */
static int visit_receive(struct mqd_process *p, mqs_taddr_t node, const unsigned char *buf,
                         void *arg)
{
    const struct ompi_image *b = ompi__image(p);
    struct visit_ctx *v = arg;
    const unsigned char *base = buf + b->off[F_RECV_BASE];
    if (mqd_uint(p, base, b->off[F_REQ_PML_TYPE], 4) != OMPI_PML_REQUEST_RECV)
        return mqs_ok;
    struct mqd_raw_op r;
    memset(&r, 0, sizeof r);
    long peer = (long)mqd_int(p, base, b->off[F_REQ_PEER], 4);
    long tag = (long)mqd_int(p, base, b->off[F_REQ_TAG], 4);
    r.context = v->ref->cid;
    r.internal = v->ref->internal;
    r.op.status = mqs_st_pending;
    r.op.desired_local_rank = peer == OMPI_ANY_SOURCE ? -1 : peer;
    r.op.tag_wild = tag == OMPI_ANY_TAG;
    r.op.desired_tag = r.op.tag_wild ? -1 : tag;
    r.op.buffer = mqd_ptr(p, base, b->off[F_REQ_ADDR]);
    r.op.actual_local_rank = r.op.actual_tag = r.op.actual_length = -1;
    if (peer < -1 || peer >= v->ref->size || (v->peer >= 0 && peer != v->peer))
        return MQD_ERR_BAD_VALUE;
    r.op.desired_length = describe(p, v->dt, &r, "receive",
                                   mqd_uint(p, base, b->off[F_REQ_COUNT],
                                            mqd_sizes(p)->pointer_size),
                                   mqd_ptr(p, base, b->off[F_REQ_DATATYPE]));
    request_line(&r, node);
    if (tag < OMPI_ANY_TAG)
        r.op.desired_tag = collective_tag(&r, tag, 2);
    return keyed_push(v->found, mqd_uint(p, base, b->off[F_REQ_SEQUENCE], 8), &r);
}

/* ---------------------------------------------------------------- fragments */

/* The bytes of a first fragment's data that arrived with it: its single
 * segment (MCA_PML_OB1_RECV_FRAG_INIT copies them all into segments[0],
 * pml_ob1_recvfrag.h:63-92) past a header of hdr bytes. */
static long data_here(struct mqd_process *p, const unsigned char *buf, int hdr)
{
    const struct ompi_image *b = ompi__image(p);
    uint64_t len = mqd_uint(p, buf, b->off[F_FRAG_SEGMENTS] + b->off[F_SEG_LEN], 8);
    return hdr > 0 && len >= (uint64_t)hdr && len < ((uint64_t)1 << 40) ? (long)(len - (uint64_t)hdr)
                                                                         : -1;
}

/*
 * One unexpected fragment (pml_ob1_recvfrag.c: append_frag_to_list):
 * the first of a message, with its match header.  A MATCH fragment holds
 * the whole message (complete: its length what came past the header,
 * pml_ob1_recvfrag.c:421, OMPI_PML_OB1_MATCH_HDR_LEN); a RNDV one its
 * envelope and as much as the eager limit allowed (complete if that is
 * hdr_msg_length, as a synchronous send's short message is: ob1 sends it
 * as a rendezvous, pml_ob1_sendreq.c, mca_pml_ob1_send_request_start_btl);
 * an RGET one only its envelope (the receiver fetches the data).
 */
static int visit_fragment(struct mqd_process *p, mqs_taddr_t node, const unsigned char *buf,
                          void *arg)
{
    const struct ompi_image *b = ompi__image(p);
    struct visit_ctx *v = arg;
    struct mqd_raw_op r;
    memset(&r, 0, sizeof r);
    unsigned type = (unsigned)mqd_uint(p, buf, b->off[F_FRAG_HDR_TYPE], 1);
    long src = (long)mqd_int(p, buf, b->off[F_FRAG_HDR_SRC], 4);
    long tag = (long)mqd_int(p, buf, b->off[F_FRAG_HDR_TAG], 4);
    uint64_t total = mqd_uint(p, buf, b->off[F_FRAG_MSG_LENGTH], 8);
    long here = -1, length = -1;
    if (src != v->peer)
        return MQD_ERR_BAD_VALUE;
    r.op.status = mqs_st_pending;
    if (type == OMPI_OB1_HDR_MATCH) {
        length = here = data_here(p, buf, b->match_hdr_len);
        r.op.status = mqs_st_complete;
        mqd_set_text(r.op.extra_text[0], "unexpected eager message (data here)");
    } else if (type == OMPI_OB1_HDR_RNDV || type == OMPI_OB1_HDR_RGET) {
        length = total < ((uint64_t)1 << 50) ? (long)total : -1;
        here = type == OMPI_OB1_HDR_RNDV ? data_here(p, buf, b->size[S_SZ_RNDV_HDR]) : 0;
        r.op.status = length >= 0 && here >= length ? mqs_st_complete : mqs_st_pending;
        mqd_set_text(r.op.extra_text[0], r.op.status == mqs_st_complete
                                             ? "unexpected synchronous message (data here)"
                                             : "unexpected rendezvous message (envelope only)");
    } else {
        mqd_set_text(r.op.extra_text[0], "unexpected message (header type 0x%x)", type);
    }
    r.context = v->ref->cid;
    r.internal = v->ref->internal;
    r.op.desired_local_rank = r.op.actual_local_rank = src;
    r.op.desired_tag = r.op.actual_tag = tag < 0 ? collective_tag(&r, tag, 2) : tag;
    r.op.desired_length = r.op.actual_length = length;
    r.op.system_buffer = 1;
    r.op.buffer = mqd_ptr(p, buf, b->off[F_FRAG_SEGMENTS] + b->off[F_SEG_ADDR]);
    r.text_address |= MQD_OP_TEXT_ADDRESS(1);
    mqd_set_text(r.op.extra_text[1], "fragment 0x%llx", (unsigned long long)node);
    /* By sender, each sender's in the order it sent them (hdr_seq). */
    return keyed_push(v->found, (uint64_t)src << 32 | mqd_uint(p, buf, b->off[F_FRAG_HDR_SEQ], 2),
                      &r);
}

/* ---------------------------------------------------------------- communicators */

/* Each peer's ob1 record of the communicator ref (its bytes in buf), the
 * peer's list at `list` of it walked with visit.  The records' pointers
 * are read a chunk at a time (a peer never talked to has none). */
static int per_peer(struct mqd_process *p, const unsigned char *buf, enum field_id list,
                    struct ompi_span sp, visit_fn visit, struct visit_ctx *v)
{
    enum { CHUNK = 256 };
    const struct ompi_image *b = ompi__image(p);
    int ps = mqd_sizes(p)->pointer_size;
    uint64_t n = ompi__word(p, buf, F_OB1_NUM_PROCS);
    mqs_taddr_t procs = ompi__word(p, buf, F_OB1_PROCS);
    unsigned char *item = mqd_malloc((size_t)sp.len), ptrs[CHUNK * 8];
    int rc = item ? mqs_ok : MQD_ERR_NOMEM;
    if (n > (uint64_t)MQD_MAX_COMM_SIZE || (n && !procs) || n > (uint64_t)v->ref->size)
        rc = MQD_ERR_BAD_VALUE;
    for (uint64_t first = 0; rc == mqs_ok && first < n; first += CHUNK) {
        int k = n - first < CHUNK ? (int)(n - first) : CHUNK;
        rc = mqd_read(p, procs + first * (mqs_taddr_t)ps, ptrs, k * ps);
        for (int i = 0; rc == mqs_ok && i < k; i++) {
            mqs_taddr_t proc = mqd_ptr(p, ptrs, i * ps);
            if (!proc)
                continue;
            v->peer = (long)(first + (uint64_t)i);
            rc = walk_list(p, proc + (mqs_taddr_t)b->off[list], sp, item, visit, v);
        }
    }
    mqd_free(item);
    return rc;
}

/* Queue (receives or unexpected) of one communicator into found, in ob1's
 * order for each list. */
static int comm_queue(struct mqd_process *p, const struct ompi_comm_ref *ref, int queue,
                      struct dt_cache *dt, struct keyed *found)
{
    const struct ompi_image *b = ompi__image(p);
    unsigned char buf[512];
    struct visit_ctx v = {ref, dt, found, -1};
    if (!ref->pml)
        return mqs_ok; /* MPI_COMM_NULL, or not added to the PML */
    if (b->ob1_comm.len > (int)sizeof buf)
        return MQD_ERR_BAD_LAYOUT;
    int rc = ompi__read_span(p, ref->pml, buf, b->ob1_comm);
    if (rc != mqs_ok)
        return rc;
    if (queue == mqs_unexpected_messages)
        return per_peer(p, buf, F_OB1P_UNEXPECTED, b->frag, visit_fragment, &v);
    unsigned char *req = mqd_malloc((size_t)b->request.len);
    if (!req)
        return MQD_ERR_NOMEM;
    rc = walk_list(p, ref->pml + (mqs_taddr_t)b->off[F_OB1_WILD], b->request, req,
                   visit_receive, &v);
    mqd_free(req);
    return rc == mqs_ok ? per_peer(p, buf, F_OB1P_SPECIFIC, b->request, visit_receive, &v)
                        : rc;
}

/* Receives or unexpected messages of every communicator, MPI's own too. */
static int comm_queues(struct mqd_process *p, int queue, struct mqd_ops *out)
{
    const struct ompi_process *bp = mqd_process_backend(p);
    struct dt_cache dt = {0};
    struct keyed found = {0};
    int rc = mqs_ok;
    for (int i = 0; i < bp->ncomms && rc == mqs_ok; i++) {
        /* Each list in order: one communicator's receives by their
         * req_sequence (ob1 matches wild and specific ones in that
         * order), its fragments by sender and hdr_seq. */
        if ((rc = comm_queue(p, &bp->comms[i], queue, &dt, &found)) == mqs_ok)
            rc = keyed_flush(&found, out);
    }
    keyed_free(&found);
    return rc;
}

/* ---------------------------------------------------------------- sends */

/* A send request of the free list (its bytes in buf) that is in progress:
 * active (OMPI_REQUEST_ACTIVE), a PML send, and not complete for MPI
 * (req_complete is REQUEST_COMPLETED, 1, once it is: ompi/request/
 * request.h:156-178; before, 0, or the sync object of a waiter). */
static int send_in_progress(struct mqd_process *p, const unsigned char *base)
{
    const struct ompi_image *b = ompi__image(p);
    return mqd_uint(p, base, b->off[F_REQ_STATE], 4) == OMPI_REQUEST_ACTIVE &&
           mqd_uint(p, base, b->off[F_REQ_TYPE], 4) == OMPI_REQUEST_PML &&
           mqd_uint(p, base, b->off[F_REQ_PML_TYPE], 4) == OMPI_PML_REQUEST_SEND &&
           mqd_ptr(p, base, b->off[F_REQ_COMPLETE]) != OMPI_REQUEST_COMPLETED;
}

static const char *send_kind(struct mqd_process *p, const unsigned char *buf,
                             const unsigned char *base)
{
    const struct ompi_image *b = ompi__image(p);
    unsigned mode = (unsigned)mqd_uint(p, buf, b->off[F_SEND_SEND] + b->off[F_SEND_MODE], 4);
    int persistent = mqd_uint(p, base, b->off[F_REQ_PERSISTENT], 1) != 0;
    if (mode == OMPI_SEND_SYNCHRONOUS)
        return persistent ? "persistent synchronous send" : "synchronous send";
    if (mode == OMPI_SEND_BUFFERED)
        return persistent ? "persistent buffered send" : "buffered send";
    if (mode == OMPI_SEND_READY)
        return persistent ? "persistent ready send" : "ready send";
    return persistent ? "persistent send" : "send";
}

/* One element of the send request free list (its bytes in buf). */
static int one_send(struct mqd_process *p, mqs_taddr_t node, const unsigned char *buf,
                    struct dt_cache *dt, struct keyed *found)
{
    const struct ompi_image *b = ompi__image(p);
    const unsigned char *base = buf + b->off[F_SEND_BASE];
    if (!send_in_progress(p, base))
        return mqs_ok;
    const struct ompi_comm_ref *ref =
        ompi__comm_at(mqd_process_backend(p), mqd_ptr(p, base, b->off[F_REQ_COMM]));
    if (!ref)
        return mqs_ok; /* a communicator no longer in the table */
    struct mqd_raw_op r;
    memset(&r, 0, sizeof r);
    long peer = (long)mqd_int(p, base, b->off[F_REQ_PEER], 4);
    long tag = (long)mqd_int(p, base, b->off[F_REQ_TAG], 4);
    if (peer < 0 || peer >= ref->size)
        return MQD_ERR_BAD_VALUE;
    r.context = ref->cid;
    r.internal = ref->internal;
    r.op.status = mqs_st_pending;
    r.op.desired_local_rank = r.op.actual_local_rank = peer;
    r.op.buffer = mqd_ptr(p, base, b->off[F_REQ_ADDR]);
    long length = describe(p, dt, &r, send_kind(p, buf, base),
                           mqd_uint(p, base, b->off[F_REQ_COUNT], mqd_sizes(p)->pointer_size),
                           mqd_ptr(p, base, b->off[F_REQ_DATATYPE]));
    /* The packed size, what goes on the wire (pml_base_sendreq.h:45). */
    uint64_t packed = mqd_uint(p, buf, b->off[F_SEND_SEND] + b->off[F_SEND_BYTES],
                               mqd_sizes(p)->pointer_size);
    r.op.desired_length = r.op.actual_length =
        packed < ((uint64_t)1 << 50) ? (long)packed : length;
    request_line(&r, node);
    r.op.desired_tag = r.op.actual_tag = tag < 0 ? collective_tag(&r, tag, 2) : tag;
    uint64_t key = (uint64_t)ref->cid << 40 |
                   (mqd_uint(p, base, b->off[F_REQ_SEQUENCE], 8) & (((uint64_t)1 << 40) - 1));
    return keyed_push(found, key, &r);
}

/* The PML's send request free list (opal/class/opal_free_list.h): what
 * its chunks hold. */
struct free_list {
    uint64_t allocated, per_alloc, stride, nchunks;
    mqs_taddr_t cls, sentinel; /* the objects' class; fl_allocations' sentinel */
    uint64_t align;
};

static int read_free_list(struct mqd_process *p, mqs_taddr_t at, struct free_list *fl)
{
    const struct ompi_image *b = ompi__image(p);
    unsigned char buf[1024];
    if (b->free_list.len > (int)sizeof buf)
        return MQD_ERR_BAD_LAYOUT;
    int rc = ompi__read_span(p, at, buf, b->free_list);
    if (rc != mqs_ok)
        return rc;
    int lists = b->off[F_FL_ALLOCATIONS];
    uint64_t size = ompi__word(p, buf, F_FL_FRAG_SIZE);
    fl->allocated = ompi__word(p, buf, F_FL_NUM_ALLOCATED);
    fl->per_alloc = ompi__word(p, buf, F_FL_NUM_PER_ALLOC);
    fl->align = ompi__word(p, buf, F_FL_FRAG_ALIGNMENT);
    fl->cls = ompi__word(p, buf, F_FL_FRAG_CLASS);
    fl->nchunks = mqd_uint(p, buf, lists + b->off[F_LIST_LENGTH], mqd_sizes(p)->pointer_size);
    fl->sentinel = at + (mqs_taddr_t)(lists + b->off[F_LIST_SENTINEL]);
    if (!fl->align)
        fl->align = 1;
    if (fl->allocated > MQD_MAX_LIST || fl->nchunks > fl->allocated || !fl->cls ||
        size < (uint64_t)b->request.read || size > MQD_MAX_OFFSET ||
        (fl->align & (fl->align - 1)) || fl->align > 4096)
        return MQD_ERR_BAD_VALUE;
    /* OPAL_ALIGN(fl_frag_size, fl_frag_alignment): opal_free_list_grow_st,
     * opal/class/opal_free_list.c:181. */
    fl->stride = (size + fl->align - 1) & ~(fl->align - 1);
    return mqs_ok;
}

/*
 * The send requests of one chunk of the free list, at most n: its
 * elements follow the chunk's own opal_free_list_item_t, aligned
 * (opal_free_list.c:243-246).  The chunk's count is not kept: the first
 * chunk holds what the list was made with, the others fl_num_per_alloc
 * each (the last fewer if fl_max_to_alloc cut it), so each element must
 * also be an object of the list's class; the first that is not ends it.
 */
static int chunk_sends(struct mqd_process *p, const struct free_list *fl, mqs_taddr_t chunk,
                       uint64_t n, unsigned char *buf, struct dt_cache *dt, struct keyed *found)
{
    const struct ompi_image *b = ompi__image(p);
    mqs_taddr_t first = chunk + (mqs_taddr_t)b->size[S_SZ_FL_ITEM];
    first = (first + fl->align - 1) & ~(mqs_taddr_t)(fl->align - 1);
    for (uint64_t i = 0; i < n; i++) {
        mqs_taddr_t at = first + i * fl->stride;
        if (ompi__read_span(p, at, buf, b->request) != mqs_ok ||
            ompi__word(p, buf, F_OBJ_CLASS) != fl->cls)
            return mqs_ok;
        int rc = one_send(p, at, buf, dt, found);
        if (rc != mqs_ok)
            return rc;
    }
    return mqs_ok;
}

/* Every send in progress, from the request free list's chunks. */
static int read_sends(struct mqd_process *p, struct mqd_ops *out)
{
    const struct ompi_image *b = ompi__image(p);
    const struct ompi_process *bp = mqd_process_backend(p);
    struct free_list fl;
    struct dt_cache dt = {0};
    struct keyed found = {0};
    struct mqd_walk walk;
    mqs_taddr_t chunk = 0;
    if (!bp->send_requests)
        return MQD_ERR_NO_SYMBOL;
    int rc = read_free_list(p, bp->send_requests, &fl);
    unsigned char *buf = rc == mqs_ok ? mqd_malloc((size_t)b->request.len) : NULL;
    if (rc == mqs_ok && !buf)
        rc = MQD_ERR_NOMEM;
    if (rc == mqs_ok)
        rc = mqd_read_ptr(p, fl.sentinel + (mqs_taddr_t)b->off[F_ITEM_NEXT], &chunk);
    mqd_walk_init(&walk);
    uint64_t left = fl.allocated;
    for (uint64_t k = 0; rc == mqs_ok && chunk != fl.sentinel && left; k++) {
        uint64_t n = fl.per_alloc, first = fl.allocated - (fl.nchunks - 1) * fl.per_alloc;
        if (k == 0 && fl.nchunks && (fl.nchunks - 1) * fl.per_alloc < fl.allocated)
            n = first;
        n = n < left ? n : left;
        if (!chunk) {
            rc = MQD_ERR_BAD_VALUE;
            break;
        }
        if ((rc = mqd_walk_visit(&walk, chunk)) != mqs_ok ||
            (rc = chunk_sends(p, &fl, chunk, n, buf, &dt, &found)) != mqs_ok)
            break;
        left -= n;
        rc = mqd_read_ptr(p, chunk + (mqs_taddr_t)b->off[F_ITEM_NEXT], &chunk);
    }
    mqd_walk_fini(&walk);
    mqd_free(buf);
    if (rc == mqs_ok)
        rc = keyed_flush(&found, out);
    keyed_free(&found);
    return rc;
}

/* ---------------------------------------------------------------- the hooks */

int mqd_be_read_queue(struct mqd_process *p, int queue, struct mqd_ops *out)
{
    return queue == mqs_pending_sends ? read_sends(p, out) : comm_queues(p, queue, out);
}

/* Every send says whose it is (its tag, its communicator): nothing to
 * learn from the receive side. */
void mqd_be_refine_sends(struct mqd_process *p, struct mqd_ops *sends,
                         const struct mqd_ops *recvs, const struct mqd_ops *unexps)
{
    (void)p;
    (void)sends;
    (void)recvs;
    (void)unexps;
}
