/*
 * ompi_comms.c - a process's PML, chosen at MPI_Init (mqd_be_setup_process:
 * only ob1 keeps queues a debugger can read), and its communicators: the
 * table ompi_mpi_communicators, each ompi_communicator_t read whole,
 * MPI-internal ones marked (MPI_COMM_NULL, an intercommunicator's local
 * communicator), and their groups as global ranks.  See ompi.h.
 */
#include "ompi.h"

#include <stdio.h>
#include <string.h>

const char *mqd_be_version(void)
{
    return "mqd message queue DLL for Open MPI (4.1, pml ob1) 0.2";
}

const char *mqd_be_spawn_breakpoint(void)
{
    return OMPI_SPAWN_BREAKPOINT;
}

/* ---------------------------------------------------------------- process */

/* The symbols of process p, through its own image (shared libraries move
 * under ASLR); 0 for those it lacks.  mqs_ok, or why the list is missing. */
static int find_symbols(struct mqd_process *p, struct ompi_process *bp, mqs_taddr_t *pml)
{
    mqs_image *image = mqd_process_mqs_image(p);
    const mqs_image_callbacks *cb = mqd_image_cb(mqd_process_image(p));
    const struct {
        const char *name;
        mqs_taddr_t *at;
    } syms[] = {{OMPI_SYM_COMM_LIST, &bp->comm_list},      {OMPI_SYM_COMM_WORLD, &bp->comm_world},
                {OMPI_SYM_COMM_NULL, &bp->comm_null},      {OMPI_SYM_SEND_REQUESTS, &bp->send_requests},
                {OMPI_SYM_LOCAL_PROC, &bp->local_proc},    {OMPI_SYM_STATE, &bp->state},
                {OMPI_SYM_REQUEST_NULL, &bp->request_null}, {OMPI_SYM_PML_COMPONENT, pml}};
    for (int i = 0; i < NELEMS(syms); i++)
        if (cb->mqs_find_symbol_fp(image, (char *)syms[i].name, syms[i].at) != mqs_ok)
            *syms[i].at = 0;
    if (!bp->comm_list || !bp->comm_world || !*pml) {
        mqd_process_explain(p, "no symbol " OMPI_SYM_COMM_LIST ", " OMPI_SYM_COMM_WORLD " or "
                               OMPI_SYM_PML_COMPONENT ": not an Open MPI process");
        return MQD_ERR_NO_SYMBOL;
    }
    return mqs_ok;
}

/* MPI_Init's progress (ompi_mpi_state), or -1 if unknown. */
static int mpi_state(struct mqd_process *p, const struct ompi_process *bp)
{
    unsigned char v[4];
    if (!bp->state || mqd_read(p, bp->state, v, 4) != mqs_ok)
        return -1;
    return (int)mqd_int(p, v, 0, 4);
}

/*
 * The PML MPI_Init chose (the selected component's name, mca_pml_base_
 * select, ompi/mca/pml/base/pml_base_select.c) into bp->pml: mqs_ok if
 * ob1, whose queues the DLL reads; else why not, the same words for every
 * process of a job (a debugger shows them once).  ucx and cm match in the
 * transport's library (UCX's tag matching, an MTL's: OFI, PSM2), which
 * keeps no list a debugger can read.
 */
static int check_pml(struct mqd_process *p, struct ompi_process *bp, mqs_taddr_t pml)
{
    const struct ompi_image *b = ompi__image(p);
    int rc = mqd_read_cstring(p, pml + (mqs_taddr_t)b->off[F_PML_NAME], bp->pml,
                              sizeof bp->pml);
    if (rc != mqs_ok)
        return rc;
    for (char *s = bp->pml; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
            *s = '?';
    if (strcmp(bp->pml, "ob1") == 0)
        return mqs_ok;
    if (!bp->pml[0]) {
        mqd_process_explain(p, "MPI_Init has not chosen a PML yet (ompi_mpi_state %d): no "
                               "queues until it has", mpi_state(p, bp));
    } else if (strcmp(bp->pml, "ucx") == 0 || strcmp(bp->pml, "cm") == 0) {
        mqd_process_explain(p, "%s", ompi__pml_without_queues(bp->pml));
    } else {
        mqd_process_explain(p, "this Open MPI runs pml %s, whose queues the DLL does not "
                               "know: no queue to show (run with --mca pml ob1 to see them)",
                            bp->pml);
    }
    return MQD_ERR_NO_DEBUG_QUEUES;
}

/*
 * The Open MPI generations this DLL reads: 4.0 and 4.1 (their
 * communicators, requests and ob1 lists as ompi_defs.h describes them).
 * Open MPI 5 names a communicator through a pointer and keys ob1 on a
 * local index with extended context ids (docs/DLL.md): its DWARF would
 * resolve the same field names to other things, so it is refused, by its
 * version string and by the field 5.0 added, never read.
 */
static int supported_version(struct mqd_process *p)
{
    mqs_image *image = mqd_process_mqs_image(p);
    const mqs_image_callbacks *cb = mqd_image_cb(mqd_process_image(p));
    mqs_taddr_t vaddr;
    char version[32] = "";
    if (cb->mqs_find_symbol_fp(image, (char *)OMPI_SYM_VERSION, &vaddr) == mqs_ok &&
        mqd_read_cstring(p, vaddr, version, sizeof version) != mqs_ok)
        version[0] = '\0';
    for (char *s = version; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
            *s = '?';
    int v5 = mqd_path_offset(image, cb, OMPI_FIELD_5_ONLY) >= 0;
    if (!v5 && (!version[0] || strncmp(version, "4.", 2) == 0))
        return mqs_ok;
    mqd_process_explain(p, "Open MPI %s is not one this DLL reads (4.0 and 4.1: Open MPI 5 "
                           "keeps its communicators otherwise): use --target-dll",
                        version[0] ? version : "5");
    return MQD_ERR_BAD_LAYOUT;
}

int mqd_be_setup_process(mqs_process *process, struct mqd_process *p, void **backend)
{
    struct ompi_image *b = ompi__image(p);
    mqs_taddr_t pml = 0;
    (void)process;
    *backend = NULL;
    struct ompi_process *bp = mqd_calloc(1, sizeof *bp);
    if (!bp)
        return MQD_ERR_NOMEM;
    int rc = find_symbols(p, bp, &pml);
    if (rc == mqs_ok)
        rc = supported_version(p);
    if (rc == mqs_ok && !b->from_dwarf)
        rc = ompi__choose_layout(p, b);
    if (rc == mqs_ok)
        rc = ompi__check_layout(p, b, CLASS_COMMON);
    if (rc == mqs_ok)
        rc = check_pml(p, bp, pml);
    if (rc == mqs_ok)
        rc = ompi__check_ob1_classes(p, b);
    if (rc == mqs_ok)
        rc = ompi__check_layout(p, b, CLASS_OB1);
    if (rc != mqs_ok) {
        mqd_free(bp);
        return rc;
    }
    *backend = bp; /* from here on, p's backend */
    ompi__read_own_name(p, bp);
    return mqs_ok;
}

void mqd_be_destroy_process(void *backend)
{
    struct ompi_process *bp = backend;
    if (bp)
        mqd_free(bp->comms);
    mqd_free(bp);
}

unsigned mqd_be_process_flags(struct mqd_process *p)
{
    const struct ompi_process *bp = mqd_process_backend(p);
    return bp->finalized ? MQD_PROC_FINALIZED : 0u;
}

/* ---------------------------------------------------------------- the table */

/* The table's slots (ompi_mpi_communicators, an opal_pointer_array_t):
 * *slots in the debugger's heap, *n of them (NULL ones included). */
static int read_slots(struct mqd_process *p, mqs_taddr_t **slots, int *n)
{
    const struct ompi_image *b = ompi__image(p);
    const struct ompi_process *bp = mqd_process_backend(p);
    int ps = mqd_sizes(p)->pointer_size;
    unsigned char head[512];
    *slots = NULL;
    *n = 0;
    struct ompi_span sp = {0, 0};
    const int need[] = {b->off[F_PA_SIZE], b->off[F_PA_ADDR]};
    for (int i = 0; i < 2; i++)
        sp.len = need[i] + 8 > sp.len ? need[i] + 8 : sp.len;
    sp.read = b->size[S_SZ_PTR_ARRAY] > 0 && b->size[S_SZ_PTR_ARRAY] < sp.len
                  ? b->size[S_SZ_PTR_ARRAY] : sp.len;
    if (sp.len > (int)sizeof head)
        return MQD_ERR_BAD_LAYOUT;
    int rc = ompi__read_span(p, bp->comm_list, head, sp);
    if (rc != mqs_ok)
        return rc;
    long size = (long)ompi__i32(p, head, F_PA_SIZE);
    mqs_taddr_t addr = ompi__word(p, head, F_PA_ADDR);
    if (size < 0 || size > MQD_MAX_LIST || (size > 0 && !addr))
        return MQD_ERR_BAD_VALUE;
    if (size == 0)
        return mqs_ok;
    mqs_taddr_t *v = mqd_calloc((size_t)size, sizeof *v);
    unsigned char *raw = mqd_malloc((size_t)size * (size_t)ps);
    if (!v || !raw)
        rc = MQD_ERR_NOMEM;
    else
        rc = mqd_read(p, addr, raw, (int)(size * ps));
    for (long i = 0; rc == mqs_ok && i < size; i++)
        v[i] = mqd_ptr(p, raw, (int)(i * ps));
    mqd_free(raw);
    if (rc != mqs_ok) {
        mqd_free(v);
        return rc;
    }
    *slots = v;
    *n = (int)size;
    return mqs_ok;
}

/* FNV-1a over n bytes, continuing from h. */
static uint64_t fnv(uint64_t h, const unsigned char *s, int n)
{
    for (int i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ull;
    return h;
}

/*
 * A stamp of the table and every communicator's bytes the DLL reads: Open
 * MPI keeps no sequence number, and a freed communicator's slot and memory
 * are both reused for the next (opal_pointer_array_add takes the lowest
 * free slot), so a stamp of the slots alone would miss a change.  Groups
 * never change once made (ompi/group/group.h), so they are not read here;
 * ompi_mpi_state is (mqd_be_process_flags: MPI_Finalize begun).
 */
int mqd_be_comms_changed(struct mqd_process *p, uint64_t *stamp, int *changed)
{
    const struct ompi_image *b = ompi__image(p);
    mqs_taddr_t *slots;
    int n, rc = read_slots(p, &slots, &n);
    if (rc != mqs_ok)
        return rc;
    unsigned char *buf = mqd_malloc((size_t)b->comm.len);
    /* MPI_Finalize's progress too: mqd_be_process_flags says it. */
    int state = mpi_state(p, mqd_process_backend(p));
    uint64_t h = fnv(0xcbf29ce484222325ull, (const unsigned char *)&n, sizeof n);
    h = fnv(h, (const unsigned char *)&state, sizeof state);
    if (!buf)
        rc = MQD_ERR_NOMEM;
    for (int i = 0; rc == mqs_ok && i < n; i++) {
        h = fnv(h, (const unsigned char *)&slots[i], sizeof slots[i]);
        if (slots[i] && (rc = ompi__read_span(p, slots[i], buf, b->comm)) == mqs_ok)
            h = fnv(h, buf, b->comm.read);
    }
    mqd_free(buf);
    mqd_free(slots);
    if (rc != mqs_ok)
        return rc;
    h |= 1; /* never 0, the initial stamp */
    *changed = h != *stamp;
    *stamp = h;
    return mqs_ok;
}

/* ---------------------------------------------------------------- communicators */

/* One communicator read: what the core gets (c), what the queues need
 * (ref), and what marking MPI's own needs (local_comm). */
struct comm_read {
    struct mqd_comm c;
    struct ompi_comm_ref ref;
    mqs_taddr_t lgroup, rgroup, local_comm;
    unsigned flags;
};

/* c's name: the user's (c_name, when MPI_Comm_set_name set it, or a
 * predefined one's), else one that says it is unnamed, by its context id,
 * which every member has the same (ompi_comm_nextcid agrees on it). */
static void comm_name(struct comm_read *r, const unsigned char *name)
{
    struct mqd_comm *c = &r->c;
    if (r->flags & OMPI_COMM_NAMEISSET) {
        memcpy(c->name, name, MQD_MAX_NAME - 1);
        c->name[MQD_MAX_NAME - 1] = '\0';
        for (char *s = c->name; *s; s++)
            if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
                *s = '?';
    }
    if (!c->name[0])
        mqd_set_text(c->name, "unnamed %scommunicator, context 0x%x", c->inter ? "inter" : "",
                     (unsigned)r->ref.cid);
    /* libnbc keeps its next tag in its own module's data, not in the
     * communicator (ompi/mca/coll/libnbc/nbc_internal.h): unknown here. */
    c->nbc_next_tag = -1;
}

/* The fixed part of the communicator at addr (its bytes in buf) into r. */
static void comm_header(struct mqd_process *p, mqs_taddr_t addr, const unsigned char *buf,
                        struct comm_read *r)
{
    const struct ompi_image *b = ompi__image(p);
    const struct ompi_process *bp = mqd_process_backend(p);
    memset(r, 0, sizeof *r);
    r->flags = (unsigned)ompi__u32(p, buf, F_COMM_FLAGS);
    r->ref.addr = addr;
    r->ref.cid = (uint32_t)ompi__u32(p, buf, F_COMM_CID);
    r->ref.pml = ompi__word(p, buf, F_COMM_PML);
    r->lgroup = ompi__word(p, buf, F_COMM_LGROUP);
    r->rgroup = ompi__word(p, buf, F_COMM_RGROUP);
    r->local_comm = ompi__word(p, buf, F_COMM_LOCAL_COMM);
    r->c.addr = addr;
    r->c.local_rank = (long)ompi__i32(p, buf, F_COMM_RANK);
    r->c.send_context = r->c.recv_context = r->ref.cid;
    r->c.inter = (r->flags & OMPI_COMM_INTER) != 0;
    r->c.world = addr == bp->comm_world;
    r->c.has_handle = 1; /* an MPI_Comm is its ompi_communicator_t's address */
    r->c.handle = addr;
    r->ref.internal = r->c.internal = addr == bp->comm_null;
    comm_name(r, buf + b->off[F_COMM_NAME]);
}

/* The members of a user's communicator (r read by comm_header): its
 * groups as global ranks, its sizes, its rank checked. */
static int comm_members(struct mqd_process *p, struct ompi_rank_cache *cache,
                        struct comm_read *r)
{
    struct mqd_comm *c = &r->c;
    long nl, nr;
    int rc = ompi__read_group(p, cache, r->lgroup, c->inter ? &c->local_global : &c->peer_global,
                              &nl);
    if (rc != mqs_ok)
        return rc;
    c->size = nl;
    c->remote_size = (int)nl;
    if (c->inter) {
        if ((rc = ompi__read_group(p, cache, r->rgroup, &c->peer_global, &nr)) != mqs_ok)
            return rc;
        c->remote_size = (int)nr;
    }
    c->globals_final = 1; /* identities or world ranks, -1 for other jobs */
    r->ref.size = c->remote_size;
    /*
     * An intercommunicator with a peer the DLL cannot name (another job's
     * process the debugger has not dumped) gives no group: a debugger takes
     * a communicator's group (mqs_get_comm_group, the local one) to name
     * the peers it has no global rank for, and the interface cannot tell it
     * that an intercommunicator's peers are the remote group's.
     */
    for (long k = 0; c->inter && c->local_global && k < c->remote_size; k++) {
        if (c->peer_global[k] < 0) {
            mqd_free(c->local_global);
            c->local_global = NULL;
        }
    }
    if (c->size <= 0 || c->remote_size <= 0 || c->local_rank < 0 || c->local_rank >= c->size) {
        char msg[160];
        snprintf(msg, sizeof msg, "communicator 0x%llx: size %ld, remote size %d, rank %ld",
                 (unsigned long long)r->ref.addr, c->size, c->remote_size, c->local_rank);
        mqd_debug(msg);
        return MQD_ERR_BAD_VALUE;
    }
    return mqs_ok;
}

/* Read the communicator at addr into r (buf: room for its span). */
static int read_comm(struct mqd_process *p, struct ompi_rank_cache *cache, mqs_taddr_t addr,
                     unsigned char *buf, struct comm_read *r)
{
    int rc = ompi__read_span(p, addr, buf, ompi__image(p)->comm);
    if (rc != mqs_ok)
        return rc;
    comm_header(p, addr, buf, r);
    return r->c.internal ? mqs_ok : comm_members(p, cache, r);
}

/*
 * An intercommunicator's local communicator (c_local_comm: a duplicate of
 * the local group's communicator made with it, ompi/communicator/comm.c:
 * 201-205) is MPI's own.  Its traffic is the local half of the
 * intercommunicator's collectives (coll/inter runs MPI_Barrier on it,
 * then across), between members of the local group, whose ranks the
 * intercommunicator's peers (the remote group's) cannot name: it is not
 * shown, as MPICH's DLL does not show its own local communicator's.
 */
static void mark_local_comms(struct comm_read *all, int n)
{
    for (int i = 0; i < n; i++) {
        if (!all[i].c.inter || !all[i].local_comm)
            continue;
        for (int k = 0; k < n; k++) {
            if (all[k].ref.addr != all[i].local_comm || all[k].c.inter)
                continue;
            all[k].c.internal = all[k].ref.internal = 1;
        }
    }
}

/* Every communicator of the table's slots into *all (*n of them). */
static int read_all(struct mqd_process *p, const mqs_taddr_t *slots, int nslots,
                    struct comm_read **all, int *n)
{
    struct ompi_rank_cache *cache = ompi__rank_cache_new(p);
    unsigned char *buf = mqd_malloc((size_t)ompi__image(p)->comm.len);
    struct comm_read *v = mqd_calloc((size_t)(nslots ? nslots : 1), sizeof *v);
    int rc = cache && buf && v ? mqs_ok : MQD_ERR_NOMEM, k = 0;
    for (int i = 0; rc == mqs_ok && i < nslots; i++) {
        if (!slots[i])
            continue;
        rc = read_comm(p, cache, slots[i], buf, &v[k]);
        k++; /* even on failure: its tables are freed with the rest */
    }
    ompi__rank_cache_free(cache);
    mqd_free(buf);
    *all = v;
    *n = k;
    if (rc == mqs_ok)
        mark_local_comms(v, k);
    return rc;
}

/* Keep the refs of all (for the queues) and hand the communicators to
 * the core (*out, the tables moved there); frees all. */
static int keep(struct ompi_process *bp, struct comm_read *all, int n, struct mqd_comm **out)
{
    struct ompi_comm_ref *refs = mqd_calloc((size_t)(n ? n : 1), sizeof *refs);
    struct mqd_comm *comms = mqd_calloc((size_t)(n ? n : 1), sizeof *comms);
    if (!refs || !comms) {
        mqd_free(refs);
        mqd_free(comms);
        return MQD_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        refs[i] = all[i].ref;
        comms[i] = all[i].c;
        comms[i].internal |= all[i].ref.internal;
    }
    mqd_free(bp->comms);
    bp->comms = refs;
    bp->ncomms = n;
    *out = comms;
    return mqs_ok;
}

int mqd_be_read_comms(struct mqd_process *p, struct mqd_comm **out, int *nout)
{
    struct ompi_process *bp = mqd_process_backend(p);
    const struct ompi_image *b = ompi__image(p);
    mqs_taddr_t *slots;
    struct comm_read *all = NULL;
    int nslots, n = 0;
    *out = NULL;
    *nout = 0;
    mqd_free(bp->comms);
    bp->comms = NULL;
    bp->ncomms = 0;
    bp->finalized = mpi_state(p, bp) >= OMPI_STATE_FINALIZE_STARTED;
    int rc = read_slots(p, &slots, &nslots);
    if (rc != mqs_ok)
        return rc;
    rc = read_all(p, slots, nslots, &all, &n);
    mqd_free(slots);
    /* A known layout (no DWARF) must show MPI_COMM_WORLD as MPI_COMM_WORLD
     * with context id 0, this process at the rank the debugger knows. */
    if (b->layout && rc != MQD_ERR_NOMEM) {
        long known = mqd_process_global_rank(p);
        int world = -1;
        for (int i = 0; i < n; i++)
            world = all[i].c.world ? i : world;
        if (rc != mqs_ok || (n > 0 && (world < 0 || all[world].ref.cid != OMPI_CID_WORLD ||
                                       strcmp(all[world].c.name, "MPI_COMM_WORLD") != 0 ||
                                       (known >= 0 && all[world].c.local_rank != known))))
            rc = MQD_ERR_LAYOUT_MISFIT;
    }
    if (rc == mqs_ok)
        rc = keep(bp, all, n, out);
    if (rc == mqs_ok)
        *nout = n;
    for (int i = 0; i < n && rc != mqs_ok; i++) {
        mqd_free(all[i].c.peer_global);
        mqd_free(all[i].c.local_global);
    }
    mqd_free(all);
    return rc;
}

const struct ompi_comm_ref *ompi__comm_at(const struct ompi_process *bp, mqs_taddr_t addr)
{
    for (int i = 0; i < bp->ncomms; i++)
        if (bp->comms[i].addr == addr)
            return &bp->comms[i];
    return NULL;
}

/* An operation's context is the context id of the communicator it was
 * found on (each is the communicator's index in ompi_mpi_communicators,
 * unique in a process: ompi_comm_lookup); internal: a collective's. */
int mqd_be_op_in_comm(const struct mqd_comm *comm, int queue, const struct mqd_raw_op *op)
{
    (void)queue;
    if (op->context != comm->recv_context)
        return 0;
    return op->internal ? 2 : 1;
}

/* The interface's kind of a request of Open MPI's type type (not a
 * point-to-point one's). */
static int request_kind(unsigned type, int persistent)
{
    switch (type) {
    case OMPI_REQUEST_GEN: return MQD_REQ_GENERALIZED;
    case OMPI_REQUEST_WIN: return MQD_REQ_RMA;
    case OMPI_REQUEST_COLL: return persistent ? MQD_REQ_PERSISTENT_COLL : MQD_REQ_COLLECTIVE;
    case OMPI_REQUEST_NULL: return MQD_REQ_NULL;
    default: return MQD_REQ_OTHER; /* I/O, a no-op, a communicator's duplication */
    }
}

/* A point-to-point request's kind and envelope (its mca_pml_base_request_t,
 * buf; ob1's, whose requests begin with it: pml_ob1_recvreq.h:42,
 * pml_ob1_sendreq.h:46), or MQD_ERR_BAD_VALUE.  Its peer is a rank of its
 * communicator, MPI_ANY_SOURCE -1 or MPI_PROC_NULL -2 (said as unknown:
 * nothing to wait for); its tag MPI_ANY_TAG -1 or the program's, a
 * collective's own below. */
static int pml_request(struct mqd_process *p, const unsigned char *buf, int persistent,
                       struct mqd_raw_request *r)
{
    const struct ompi_image *b = ompi__image(p);
    unsigned type = (unsigned)mqd_uint(p, buf, b->off[F_REQ_PML_TYPE], 4);
    if (type > OMPI_PML_REQUEST_LAST)
        return MQD_ERR_BAD_VALUE;
    if (type != OMPI_PML_REQUEST_SEND && type != OMPI_PML_REQUEST_RECV) {
        r->kind = MQD_REQ_OTHER; /* a probe's */
        return mqs_ok;
    }
    int send = type == OMPI_PML_REQUEST_SEND;
    r->kind = send ? (persistent ? MQD_REQ_PERSISTENT_SEND : MQD_REQ_SEND)
                   : (persistent ? MQD_REQ_PERSISTENT_RECV : MQD_REQ_RECV);
    r->comm_addr = mqd_ptr(p, buf, b->off[F_REQ_COMM]);
    long peer = (long)mqd_int(p, buf, b->off[F_REQ_PEER], 4);
    long tag = (long)mqd_int(p, buf, b->off[F_REQ_TAG], 4);
    if (peer >= -1) {
        r->known |= MQD_REQ_KNOWN_PEER;
        r->peer = peer;
    }
    if (tag >= -1) {
        r->known |= MQD_REQ_KNOWN_TAG;
        r->tag = tag;
    }
    return mqs_ok;
}

/*
 * The request behind a handle: Open MPI's MPI_Request is the address of
 * an ompi_request_t (MPI_REQUEST_NULL that of ompi_request_null), whose
 * type says its kind and req_complete whether it is done (ompi/request/
 * request.h:156-178); a point-to-point one's mca_pml_base_request_t has
 * its peer, tag and communicator, read under ob1 only (another PML's
 * requests are its own).
 */
int mqd_be_read_request(struct mqd_process *p, uint64_t handle, struct mqd_raw_request *r)
{
    const struct ompi_image *b = ompi__image(p);
    const struct ompi_process *bp = mqd_process_backend(p);
    memset(r, 0, sizeof *r);
    r->peer = r->tag = r->sched_tag = -1;
    if (bp->request_null && handle == bp->request_null) {
        r->kind = MQD_REQ_NULL;
        r->state = MQD_REQ_COMPLETE;
        return mqs_ok;
    }
    if (!handle)
        return MQD_ERR_BAD_VALUE;
    int ob1 = strcmp(bp->pml, "ob1") == 0;
    struct ompi_span sp = b->request; /* the ompi_request_t alone first */
    if (b->size[S_SZ_REQUEST] > 0 && b->size[S_SZ_REQUEST] < sp.read)
        sp.read = b->size[S_SZ_REQUEST];
    unsigned char *buf = mqd_malloc((size_t)sp.len);
    if (!buf)
        return MQD_ERR_NOMEM;
    int rc = ompi__read_span(p, handle, buf, sp);
    unsigned type = 0, state = 0;
    int persistent = 0;
    if (rc == mqs_ok) {
        type = (unsigned)mqd_uint(p, buf, b->off[F_REQ_TYPE], 4);
        state = (unsigned)mqd_uint(p, buf, b->off[F_REQ_STATE], 4);
        persistent = mqd_uint(p, buf, b->off[F_REQ_PERSISTENT], 1) != 0;
        if (type >= OMPI_REQUEST_MAX || state > OMPI_REQUEST_CANCELLED ||
            state == OMPI_REQUEST_INVALID)
            rc = MQD_ERR_BAD_VALUE; /* not a live request */
    }
    if (rc == mqs_ok) {
        r->addr = handle;
        r->kind = request_kind(type, persistent);
        r->state = persistent && state == OMPI_REQUEST_INACTIVE ? MQD_REQ_INACTIVE
                   : mqd_ptr(p, buf, b->off[F_REQ_COMPLETE]) == OMPI_REQUEST_COMPLETED
                       ? MQD_REQ_COMPLETE
                       : MQD_REQ_PENDING;
    }
    if (rc == mqs_ok && type == OMPI_REQUEST_PML) {
        if (!ob1)
            mqd_set_text(r->text, "the requests of pml %s are not read", bp->pml);
        else if (sp.read < b->request.read) /* the whole ob1 request */
            rc = ompi__read_span(p, handle, buf, b->request);
        if (rc == mqs_ok && ob1)
            rc = pml_request(p, buf, persistent, r);
    }
    mqd_free(buf);
    return rc;
}
