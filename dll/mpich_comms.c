/*
 * mpich_comms.c - a process's MPICH generation, chosen from its symbols,
 * its device and its debug information (mqd_be_setup_process), and its
 * communicators: the list MPIR_All_communicators, each MPIR_Comm read
 * whole, MPI-internal ones marked, and ch3's world kept past
 * MPI_Finalize.  See mpich.h.
 */
#include "mpich.h"

#include <stdio.h>
#include <string.h>

const char *mqd_be_version(void)
{
    return "mqd message queue DLL for MPICH (4.0.2 to 5.0, ch3 and ch4) 0.2";
}

const char *mqd_be_spawn_breakpoint(void)
{
    return MPICH_SPAWN_BREAKPOINT;
}

/* ---------------------------------------------------------------- process */

/* What a process's symbols (and its device string) say. */
struct process_symbols {
    int have_list, have_sendq; /* the communicator list and the send queue */
    int debugq;                /* 4.0.3+'s receive and unexpected debug queues */
    int ch3_lists;             /* ch3's posted and unexpected list heads */
    int worlds;                /* 5.0's MPIR_Worlds */
    char device[64];           /* MPII_Version_device ("" if unknown) */
    char version[32];          /* MPII_Version_string ("" if unknown) */
};

/* The library's version strings into s: read by the image's first
 * process, copied by the others (struct mpich_image). */
static void version_strings(struct mqd_process *p, mqs_image *image,
                            const mqs_image_callbacks *cb, struct mpich_image *b,
                            struct process_symbols *s)
{
    if (!b->named) {
        mqs_taddr_t at;
        if (cb->mqs_find_symbol_fp(image, (char *)MPICH_SYM_DEVICE, &at) != mqs_ok ||
            mqd_read_cstring(p, at, b->device, sizeof b->device) != mqs_ok)
            b->device[0] = '\0';
        if (cb->mqs_find_symbol_fp(image, (char *)MPICH_SYM_VERSION, &at) != mqs_ok ||
            mqd_read_cstring(p, at, b->version, sizeof b->version) != mqs_ok)
            b->version[0] = '\0';
        b->named = 1;
    }
    memcpy(s->device, b->device, sizeof s->device);
    memcpy(s->version, b->version, sizeof s->version);
}

/* The symbols of process p, through its own image (shared libraries move
 * under ASLR), into bp and *s. */
static void find_symbols(struct mqd_process *p, mqs_image *image, const mqs_image_callbacks *cb,
                         struct mpich_process *bp, struct process_symbols *s)
{
#define SYM_(name, dst) (cb->mqs_find_symbol_fp(image, (char *)(name), (dst)) == mqs_ok)
    s->have_list = SYM_(MPICH_SYM_COMM_LIST, &bp->comm_list);
    s->have_sendq = SYM_(MPICH_SYM_SENDQ, &bp->sendq);
    if (!SYM_(MPICH_SYM_DATATYPE_DIRECT, &bp->dt_direct))
        bp->dt_direct = 0;
    s->debugq = SYM_(MPICH_SYM_RECVQ, &bp->recvq) && SYM_(MPICH_SYM_UNEXPQ, &bp->unexpq);
    s->ch3_lists = SYM_(MPICH_SYM_POSTED_PTR, &bp->posted_ptr) &&
                   SYM_(MPICH_SYM_UNEXPECTED_PTR, &bp->unexpected_ptr);
    version_strings(p, image, cb, mpich__image(p), s);
    s->worlds = SYM_(MPICH_SYM_WORLDS, &bp->worlds);
    if (!s->worlds)
        bp->worlds = 0;
    if (!SYM_(MPICH_SYM_PROCESS, &bp->mpir_process))
        bp->mpir_process = 0;
    if (!SYM_(MPICH_SYM_DEBUG_STATE, &bp->debug_state))
        bp->debug_state = 0;
    /* The request behind a handle (mpich_handles.c): found by name where
     * the library's symbols have them (a stock build's come with it). */
    if (!SYM_(MPICH_SYM_REQUEST_MEM, &bp->request_mem))
        bp->request_mem = 0;
    if (!SYM_(MPICH_SYM_SCHEDULES, &bp->schedules))
        bp->schedules = 0;
#undef SYM_
}

/*
 * The generation.  ch4 exports MPID_Recvq_posted_head_ptr too, so the
 * device decides (MPII_Version_device, "ch3:nemesis", "ch4:ofi"); a
 * library without that string is ch3 if its DWARF has ch3's types (or,
 * before the debug queues, unless it has 4.0.2 ch4's and not ch3's).
 * 4.0.3+ ch3 keeps receives in its own lists (see mpich_defs.h); 4.0.2
 * ch4's symbols point at MPIDIG's lists.
 */
static enum mpich_generation choose_generation(mqs_image *image, const mqs_image_callbacks *cb,
                                               struct mpich_image *b,
                                               const struct process_symbols *s)
{
    if (b->stock && strncmp(s->device, "ch4", 3) != 0)
        return MPICH_GEN_NONE; /* ch3's own lists are statics no build names */
    if (b->stock) /* MPIR_Worlds is 5.0's (src/include/mpir_lpid.h) */
        return s->worlds ? MPICH_GEN_CH4_STOCK_5X : MPICH_GEN_CH4_STOCK;
    if (!s->device[0])
        mpich__probe(image, cb, b, CLASS_CH3);
    int ch3 = s->device[0] ? strncmp(s->device, "ch3", 3) == 0 : (b->classes & CLASS_CH3) != 0;
    if (s->debugq && !(b->classes & (CLASS_GROUP_PMAP | CLASS_GROUP_LPIDS)))
        mpich__probe(image, cb, b, CLASS_GROUP_PMAP | CLASS_GROUP_LPIDS);
    if (s->debugq && ch3 && s->ch3_lists)
        return MPICH_GEN_CH3_DEBUGQ;
    if (s->debugq)
        return (b->classes & CLASS_GROUP_PMAP) || !(b->classes & CLASS_GROUP_LPIDS)
                   ? MPICH_GEN_CH4_5X
                   : MPICH_GEN_CH4_4X;
    if (s->ch3_lists && !s->device[0])
        mpich__probe(image, cb, b, CLASS_MPIDIG);
    if (s->ch3_lists)
        return ch3 || (!s->device[0] && !(b->classes & CLASS_MPIDIG)) ? MPICH_GEN_CH3_SENDQ
                                                                   : MPICH_GEN_CH4_MPIDIG;
    return MPICH_GEN_NONE;
}

/* Whether MPICH version (MPII_Version_string, "" if unknown) numbers its
 * request kinds as 4.1 and later do (mpich_defs.h): unknown, as 5.0's
 * generations do. */
static int kinds_41(const char *version, enum mpich_generation gen)
{
    int major = 0, minor = 0;
    if (sscanf(version, "%d.%d", &major, &minor) != 2)
        return mpich__gen_is_5x(gen);
    return major > 4 || (major == 4 && minor >= 1);
}

/* mqs_ok if the symbols show queues a debugger can read in generation
 * gen, else why not (mqd_process_explain). */
static int queues_found(struct mqd_process *p, const struct process_symbols *s,
                        enum mpich_generation gen)
{
    const char *why = NULL;
    if (mpich__gen_is_stock(gen))
        return mqs_ok;
    if (!s->have_list && mpich__image(p)->stock) {
        mqd_process_explain(p, "this MPICH (%s, %s) was configured without --enable-debuginfo "
                               "(it has " MPICH_SYM_DEVICE " but no " MPICH_SYM_COMM_LIST
                               "), and mqd reads the own lists only of ch4 builds: use one "
                               "built with it (Spack: mpich+debug)",
                            s->version[0] ? s->version : "?", s->device[0] ? s->device : "?");
        return MQD_ERR_NO_DEBUG_QUEUES;
    }
    if (!s->have_list || !s->have_sendq)
        why = "no " MPICH_SYM_COMM_LIST " or " MPICH_SYM_SENDQ;
    else if (gen == MPICH_GEN_NONE)
        why = "neither " MPICH_SYM_RECVQ "/" MPICH_SYM_UNEXPQ " (MPICH 4.0.3 and later) nor "
              MPICH_SYM_POSTED_PTR " (ch3, MPICH 4.0.2)";
    if (!why)
        return mqs_ok;
    mqd_process_explain(p, "%s: this MPICH keeps no message queues for debuggers "
                           "(configure it with --enable-debuginfo)", why);
    return MQD_ERR_NO_DEBUG_QUEUES;
}

/* MPI_TAG_UB, where the process has it (struct mpich_process). */
static void read_tag_ub(struct mqd_process *p, const struct mpich_image *b,
                        struct mpich_process *bp)
{
    unsigned char ub[4];
    if (bp->mpir_process && b->off[F_PROC_TAG_UB] >= 0 &&
        mqd_read(p, bp->mpir_process + (mqs_taddr_t)b->off[F_PROC_TAG_UB], ub, 4) == mqs_ok &&
        mqd_int(p, ub, 0, 4) > 0)
        bp->tag_ub = (long)mqd_int(p, ub, 0, 4);
}

int mqd_be_setup_process(mqs_process *process, struct mqd_process *p, void **backend)
{
    struct mqd_image *im = mqd_process_image(p);
    const mqs_image_callbacks *cb = mqd_image_cb(im);
    /* What a process learns of its image is kept in it, written only
     * while the image has no process set up: mqd's host sets up its
     * first process alone (host/protocol/images.h), and those after it,
     * perhaps on several threads at once, only read it. */
    struct mpich_image *b = mqd_image_backend(im);
    (void)process;
    *backend = NULL;
    struct mpich_process *bp = mqd_calloc(1, sizeof *bp);
    if (!bp)
        return MQD_ERR_NOMEM;
    mqs_image *image = mqd_process_mqs_image(p); /* the process's own (ASLR) */
    struct process_symbols sym;
    struct mpich_key_symbols keys;
    find_symbols(p, image, cb, bp, &sym);
    bp->gen = choose_generation(image, cb, b, &sym);
    int rc = queues_found(p, &sym, bp->gen);
    if (rc != mqs_ok)
        goto out;
    /* All this generation reads, if the image's symbols announced another;
     * a stock build's globals and, without DWARF, its known layout. */
    bp->kinds_41 = kinds_41(sym.version, bp->gen);
    if (mpich__gen_is_stock(bp->gen) &&
        (rc = mpich__stock_find(p, bp, b, sym.version, sym.device)) != mqs_ok)
        goto out;
    mpich__probe_generation(image, cb, b, bp->gen, bp->worlds != 0);
    mpich__find_key_symbols(image, cb, bp->gen, &keys); /* read once the layout is known */
    if (!b->from_dwarf && !b->layout_build && (rc = mpich__choose_layout(p, b)) != mqs_ok)
        goto out;
    if ((rc = mpich__check_layout(p, b, bp->gen)) != mqs_ok)
        goto out;
    *backend = bp; /* from here on, p's backend (the keys' readers use it) */
    read_tag_ub(p, b, bp);
    mpich__read_own_key(p, bp, &keys);
out:
    if (rc != mqs_ok)
        mqd_free(bp);
    return rc;
}

void mqd_be_destroy_process(void *backend)
{
    mqd_free(backend);
}

/* ---------------------------------------------------------------- communicators */

int mqd_be_comms_changed(struct mqd_process *p, uint64_t *stamp, int *changed)
{
    const struct mpich_image *b = mpich__image(p);
    struct mpich_process *bp = mqd_process_backend(p);
    unsigned char buf[8];
    if (mpich__gen_is_stock(bp->gen)) { /* no sequence number: read them again */
        *changed = 1;
        *stamp = ++bp->reads;
        return mqs_ok;
    }
    int rc = mqd_read(p, bp->comm_list + (mqs_taddr_t)b->off[F_COMML_SEQ], buf, 4);
    if (rc != mqs_ok)
        return rc;
    uint64_t seq = mqd_uint(p, buf, 0, 4) + 1; /* +1: never 0, the initial stamp */
    *changed = seq != *stamp;
    *stamp = seq;
    return mqs_ok;
}

static int comm_is_internal(unsigned handle, uint64_t ctx)
{
    return handle == MPICH_ICOMM_WORLD_HANDLE || (ctx & MPICH_CONTEXT_SUBCOMM_MASK) ||
           (ctx & MPICH_CONTEXT_LOCALCOMM_MASK);
}

/*
 * The fixed part of the MPIR_Comm at addr (read into buf) into c: handle,
 * contexts, sizes, rank, and whether it is MPI's own; *next its successor,
 * *inter whether it is an intercommunicator.  A user's communicator with
 * sizes or rank out of range is corrupt memory.
 */
static int comm_header(struct mqd_process *p, mqs_taddr_t addr, const unsigned char *buf,
                       struct mqd_comm *c, mqs_taddr_t *next, int *inter)
{
    const struct mpich_image *b = mpich__image(p);
    const int *o = b->off;
    int cs = b->size[S_SZ_CONTEXT_ID];
    memset(c, 0, sizeof *c);
    c->addr = addr;
    unsigned handle = (unsigned)mqd_uint(p, buf, o[F_COMM_HANDLE], 4);
    c->handle = handle;
    c->has_handle = 1;
    *next = o[F_COMM_NEXT] >= 0 ? mqd_ptr(p, buf, o[F_COMM_NEXT]) : 0; /* a stock build: -1 */
    c->send_context = mqd_uint(p, buf, o[F_COMM_CTX], cs);
    c->recv_context = mqd_uint(p, buf, o[F_COMM_RCTX], cs);
    *inter = mqd_uint(p, buf, o[F_COMM_KIND], 4) == 1;
    c->local_rank = (long)mqd_int(p, buf, o[F_COMM_RANK], 4);
    c->size = (long)mqd_int(p, buf, o[F_COMM_LSIZE], 4);
    c->remote_size = (int)mqd_int(p, buf, o[F_COMM_RSIZE], 4);
    if (!*inter)
        c->remote_size = (int)c->size;
    c->internal = comm_is_internal(handle, c->recv_context);
    /* The tag its next nonblocking collective takes: MPII_Comm_init starts
     * it at MPIR_FIRST_NBC_TAG (commutil.c:249), MPIDU_Sched_next_tag
     * hands it out and counts on (mpidu_sched.c:164-165), wrapping to the
     * first at MPI_TAG_UB (:191-192); mpir_comm.h:200. */
    long nbc = o[F_COMM_NEXT_SCHED_TAG] >= 0
                   ? (long)mqd_int(p, buf, o[F_COMM_NEXT_SCHED_TAG], 4)
                   : -1;
    c->nbc_next_tag = nbc >= MPICH_FIRST_NBC_TAG ? nbc : -1;
    /* MPII_Comm_init puts a communicator on the list with local_size -1,
     * before its size, rank and context are set: not there yet. */
    if (c->size == -1 && !c->internal) {
        char msg[96];
        snprintf(msg, sizeof msg, "communicator 0x%llx is being built: skipped",
                 (unsigned long long)addr);
        mqd_debug(msg);
        c->internal = 1;
    }
    if (c->internal) /* not shown: only its link matters */
        return mqs_ok;
    if (c->size <= 0 || c->size > MQD_MAX_COMM_SIZE || c->remote_size <= 0 ||
        c->remote_size > MQD_MAX_COMM_SIZE || c->local_rank < 0 || c->local_rank >= c->size) {
        char msg[160];
        snprintf(msg, sizeof msg, "communicator 0x%llx: size %ld, remote size %d, rank %ld",
                 (unsigned long long)addr, c->size, c->remote_size, c->local_rank);
        mqd_debug(msg);
        return MQD_ERR_BAD_VALUE;
    }
    return mqs_ok;
}

/* c's name from MPIR_Comm.name (name: MQD_MAX_NAME bytes of it), in full up
 * to 63 bytes, terminated; a descriptive one if none. */
static void comm_name(struct mqd_comm *c, const unsigned char *name, int inter)
{
    memcpy(c->name, name, MQD_MAX_NAME - 1);
    c->name[MQD_MAX_NAME - 1] = '\0';
    for (char *s = c->name; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
            *s = '?';
    /* An unnamed one by its context ids, which (unlike its handle) every
     * member has the same (MPICH agrees on them collectively; the two
     * sides of an intercommunicator swap send and receive): the debugger
     * can tell it is one communicator across processes.  Disjoint groups
     * of one MPI_Comm_split share them: the group tells those apart. */
    if (!c->name[0] && inter) {
        uint64_t lo = c->send_context < c->recv_context ? c->send_context : c->recv_context;
        uint64_t hi = c->send_context ^ c->recv_context ^ lo;
        mqd_set_text(c->name, "unnamed intercommunicator, contexts 0x%llx/0x%llx",
                     (unsigned long long)lo, (unsigned long long)hi);
    } else if (!c->name[0]) {
        mqd_set_text(c->name, "unnamed communicator, context 0x%llx",
                     (unsigned long long)c->recv_context);
    }
}

/* Read one communicator at addr into c; *next gets its successor.  On
 * failure c may hold tables (the caller frees them). */
static int read_comm(struct mqd_process *p, struct mpich_rank_cache *cache, mqs_taddr_t addr,
                     struct mqd_comm *c, mqs_taddr_t *next)
{
    const struct mpich_image *b = mpich__image(p);
    unsigned char *buf = mqd_malloc((size_t)b->comm_span.len);
    if (!buf)
        return MQD_ERR_NOMEM;
    int inter = 0;
    int rc = mpich__read_span(p, addr, buf, b->comm_span);
    if (rc == mqs_ok)
        rc = comm_header(p, addr, buf, c, next, &inter);
    if (rc == mqs_ok && !c->internal) {
        comm_name(c, buf + b->off[F_COMM_NAME], inter);
        c->inter = inter;
        rc = mpich__read_members(p, cache, addr, buf, c);
    }
    mqd_free(buf);
    return rc;
}

/*
 * The MPI_COMM_WORLD of a process in MPI_Finalize, whose communicators are
 * freed: size processes, this one rank, named in an MPI-2 job by the
 * world (or ch3 process group) ns ("" if unknown), at addr (what stands
 * for it), into *out.
 */
static int left_world(struct mqd_process *p, mqs_taddr_t addr, long size, long rank,
                      const char *ns, struct mqd_comm **out)
{
    struct mpich_process *bp = mqd_process_backend(p);
    if (size <= 0 || size > MQD_MAX_COMM_SIZE || rank < 0 || rank >= size)
        return MQD_ERR_BAD_VALUE;
    struct mqd_comm *c = mqd_calloc(1, sizeof *c);
    long *globals = mqd_malloc((size_t)size * sizeof *globals);
    long *local = mqd_malloc((size_t)size * sizeof *local);
    if (!c || !globals || !local) {
        mqd_free(c);
        mqd_free(globals);
        mqd_free(local);
        return MQD_ERR_NOMEM;
    }
    int use_job = ns[0] && mqd_job_identity(p, bp->key) >= 0;
    if (use_job)
        mpich__identities_of(p, ns, size, globals);
    for (long r = 0; !use_job && r < size; r++)
        globals[r] = r;
    memcpy(local, globals, (size_t)size * sizeof *local);
    c->addr = addr;
    c->world = 1;
    c->local_rank = rank;
    c->size = c->remote_size = size;
    snprintf(c->name, sizeof c->name, "MPI_COMM_WORLD");
    c->send_context = c->recv_context = 0;
    c->peer_global = globals;
    c->local_global = local;
    c->globals_final = 1;
    c->has_handle = 1;
    c->handle = MPICH_COMM_WORLD_HANDLE;
    *out = c;
    return mqs_ok;
}

/* ch3: the world from this process's group (finalized_world); *made 0 if
 * MPIDI_PG_Finalize has freed it. */
static int ch3_left_world(struct mqd_process *p, struct mqd_comm **out, int *made)
{
    const struct mpich_image *b = mpich__image(p);
    struct mpich_process *bp = mqd_process_backend(p);
    const struct mpich_late *l = mpich__late(p, CLASS_PGS);
    unsigned char v[4];
    mqs_taddr_t pg;
    int rc;
    if (!l)
        return MQD_ERR_NOMEM;
    if (l->off[F_PG_SIZE] < 0 || l->off[F_PG_ID] < 0)
        return mqs_ok; /* the debug information cannot place the group */
    if ((rc = mqd_read_ptr(p, bp->ch3_process + (mqs_taddr_t)b->off[F_PROC_MY_PG], &pg)) !=
            mqs_ok ||
        !pg)
        return rc; /* MPIDI_PG_Finalize has run: nothing is left */
    if ((rc = mqd_read(p, pg + (mqs_taddr_t)l->off[F_PG_SIZE], v, 4)) != mqs_ok)
        return rc;
    long size = (long)mqd_int(p, v, 0, 4);
    if ((rc = mqd_read(p, bp->ch3_process + (mqs_taddr_t)b->off[F_PROC_MY_PG_RANK], v, 4)) !=
        mqs_ok)
        return rc;
    long rank = (long)mqd_int(p, v, 0, 4);
    char id[PG_ID_MAX];
    if (size <= 0 || size > MQD_MAX_COMM_SIZE || rank < 0 || rank >= size)
        return MQD_ERR_BAD_VALUE;
    if ((rc = mpich__read_pg_id(p, pg, id, sizeof id)) != mqs_ok)
        return rc;
    /* the world is gone: its process group stands for it */
    rc = left_world(p, pg, size, rank, id, out);
    *made = rc == mqs_ok;
    return rc;
}

/* ch4: the world from MPIR_Process's rank and size (finalized_world),
 * named by this process's key's world ("NAMESPACE#RANK"). */
static int ch4_left_world(struct mqd_process *p, struct mqd_comm **out, int *made)
{
    const struct mpich_image *b = mpich__image(p);
    struct mpich_process *bp = mqd_process_backend(p);
    unsigned char v[4];
    long rank, size;
    int rc;
    if (!bp->mpir_process || b->off[F_PROC_RANK] < 0 || b->off[F_PROC_SIZE] < 0)
        return mqs_ok;
    if ((rc = mqd_read(p, bp->mpir_process + (mqs_taddr_t)b->off[F_PROC_RANK], v, 4)) != mqs_ok)
        return rc;
    rank = (long)mqd_int(p, v, 0, 4);
    if ((rc = mqd_read(p, bp->mpir_process + (mqs_taddr_t)b->off[F_PROC_SIZE], v, 4)) != mqs_ok)
        return rc;
    size = (long)mqd_int(p, v, 0, 4);
    char ns[MQD_MAX_KEY];
    snprintf(ns, sizeof ns, "%s", bp->key);
    char *hash = strrchr(ns, '#');
    if (hash)
        *hash = '\0';
    else
        ns[0] = '\0';
    /* MPIR_Process stands for the world that is gone */
    rc = left_world(p, bp->mpir_process, size, rank, ns, out);
    *made = rc == mqs_ok;
    return rc;
}

/*
 * A process in MPI_Finalize: MPII_Finalize has freed the communicators
 * (MPIR_finalize_builtin_comms) and then marked the debugger state aborting
 * (MPIR_Debugger_set_aborting(NULL), src/mpi/init/mpir_init.c) before
 * MPID_Finalize.  ch3's then waits in MPIDI_CH3U_VC_WaitForClose for its
 * peers to close their connections (src/mpid/ch3/src/mpid_finalize.c),
 * with its receive queues and its process group intact until
 * MPIDI_PG_Finalize.  4.0's ch4 waits for the ranks on its node in
 * MPIDU_Init_shm_finalize's barrier (src/mpid/common/shm/mpidu_init_shm.c);
 * 4.1 and later only in the PMI barrier some OFI providers need
 * (verbs;ofi_rxm, psm2, psm3: MPIDI_OFI_mpi_finalize_hook, src/mpid/ch4/
 * netmod/ofi/ofi_init.c); its queues are intact until MPII_Finalize's last
 * callbacks, and MPIR_Process still holds its world rank and size.
 * Elsewhere ch4 leaves MPI_Finalize without waiting.  What the queues
 * still hold is MPI_COMM_WORLD's (context 0) and its collectives' (1):
 * give that world, rank for rank.
 * *made is 0 when the process is not in that state or (ch3) its group is
 * gone (no communicators, no error).
 */
static int finalized_world(struct mqd_process *p, struct mqd_comm **out, int *made)
{
    struct mpich_process *bp = mqd_process_backend(p);
    int ch3 = mpich__gen_is_ch3(bp->gen);
    unsigned char v[4];
    *made = 0;
    if (!bp->debug_state || (ch3 && !bp->ch3_process))
        return mqs_ok;
    int rc = mqd_read(p, bp->debug_state, v, 4);
    if (rc != mqs_ok || mqd_int(p, v, 0, 4) != MPICH_DEBUG_ABORTING)
        return rc;
    return ch3 ? ch3_left_world(p, out, made) : ch4_left_world(p, out, made);
}

/* Room for one more communicator in *all (*cap of them). */
static int grow_comms(struct mqd_comm **all, int n, int *cap)
{
    if (n < *cap)
        return mqs_ok;
    int nc = *cap ? *cap * 2 : 4;
    struct mqd_comm *na = mqd_calloc((size_t)nc, sizeof *na);
    if (!na)
        return MQD_ERR_NOMEM;
    if (n)
        memcpy(na, *all, (size_t)n * sizeof *na);
    mqd_free(*all);
    *all = na;
    *cap = nc;
    return mqs_ok;
}

/* Every communicator on the list from node, newest first, into *all (*n
 * of them, *world the index of MPI_COMM_WORLD's, if there). */
static int walk_comms(struct mqd_process *p, mqs_taddr_t node, struct mqd_comm **all, int *n,
                      int *world)
{
    struct mpich_rank_cache *cache = mpich__rank_cache_new(p);
    struct mqd_walk walk;
    mqd_walk_init(&walk);
    int cap = 0, rc = mqs_ok;
    while (rc == mqs_ok && node) {
        if (!cache) {
            rc = MQD_ERR_NOMEM;
            break;
        }
        if ((rc = mqd_walk_visit(&walk, node)) != mqs_ok ||
            (rc = grow_comms(all, *n, &cap)) != mqs_ok)
            break;
        struct mqd_comm *c = &(*all)[*n];
        mqs_taddr_t next;
        if ((rc = read_comm(p, cache, node, c, &next)) != mqs_ok) {
            /* Free what read_comm allocated before failing. */
            mqd_free(c->peer_global);
            mqd_free(c->local_global);
            break;
        }
        if (c->handle == MPICH_COMM_WORLD_HANDLE)
            *world = *n;
        (*n)++;
        node = next;
    }
    mqd_walk_fini(&walk);
    mpich__rank_cache_free(cache);
    return rc;
}

unsigned mqd_be_process_flags(struct mqd_process *p)
{
    const struct mpich_process *bp = mqd_process_backend(p);
    return bp->finalized ? MQD_PROC_FINALIZED : 0u;
}

/*
 * A build without debugger support: the communicators in use in their pools
 * (mpich__stock_comms), MPI_COMM_WORLD first, into *all (*n of them,
 * *world its index); once MPI_Finalize has freed the world, the world that
 * MPIR_Process still holds (ch4_left_world, bp->finalized).
 */
static int stock_comms(struct mqd_process *p, struct mqd_comm **all, int *n, int *world)
{
    struct mpich_process *bp = mqd_process_backend(p);
    mqs_taddr_t *addrs = NULL;
    int naddrs = 0, gone = 0, cap = 0;
    int rc = mpich__stock_comms(p, &addrs, &naddrs, &gone);
    if (rc == mqs_ok && gone) {
        rc = ch4_left_world(p, all, &bp->finalized);
        *n = bp->finalized;
        return rc;
    }
    struct mpich_rank_cache *cache = mpich__rank_cache_new(p);
    if (!cache && rc == mqs_ok)
        rc = MQD_ERR_NOMEM;
    for (int i = 0; rc == mqs_ok && i < naddrs; i++) {
        mqs_taddr_t next;
        if ((rc = grow_comms(all, *n, &cap)) != mqs_ok)
            break;
        struct mqd_comm *c = &(*all)[*n];
        if ((rc = read_comm(p, cache, addrs[i], c, &next)) != mqs_ok) {
            mqd_free(c->peer_global);
            mqd_free(c->local_global);
            break;
        }
        if (c->handle == MPICH_COMM_WORLD_HANDLE)
            *world = *n;
        (*n)++;
    }
    mpich__rank_cache_free(cache);
    mqd_free(addrs);
    return rc;
}

/* The debugger's list (MPIR_All_communicators), oldest first, into *all
 * (*n, *world as stock_comms); ch3 and ch4's world past MPI_Finalize. */
static int listed_comms(struct mqd_process *p, struct mqd_comm **all, int *n, int *world)
{
    const struct mpich_image *b = mpich__image(p);
    struct mpich_process *bp = mqd_process_backend(p);
    mqs_taddr_t node;
    int rc = mqd_read_ptr(p, bp->comm_list + (mqs_taddr_t)b->off[F_COMML_HEAD], &node);
    if (rc != mqs_ok)
        return rc;
    if (!node) {
        rc = finalized_world(p, all, &bp->finalized);
        *n = bp->finalized;
        return rc;
    }
    rc = walk_comms(p, node, all, n, world);
    /* Oldest first: MPICH adds each new communicator at the head. */
    for (int i = 0; rc == mqs_ok && i < *n / 2; i++) {
        struct mqd_comm t = (*all)[i];
        (*all)[i] = (*all)[*n - 1 - i];
        (*all)[*n - 1 - i] = t;
    }
    if (rc == mqs_ok && *world >= 0)
        *world = *n - 1 - *world;
    return rc;
}

int mqd_be_read_comms(struct mqd_process *p, struct mqd_comm **out, int *nout)
{
    const struct mpich_image *b = mpich__image(p);
    struct mpich_process *bp = mqd_process_backend(p);
    struct mqd_comm *all = NULL;
    int n = 0, world = -1;
    *out = NULL;
    *nout = 0;
    bp->finalized = 0;
    int rc = mpich__gen_is_stock(bp->gen) ? stock_comms(p, &all, &n, &world)
                                            : listed_comms(p, &all, &n, &world);
    /* A known layout (no DWARF) must read cleanly and show MPI_COMM_WORLD
     * by its name, with this process at the rank the debugger knows; else
     * the layout does not fit (rather than "memory is corrupt"). */
    if ((b->layout || b->layout_build) && !bp->finalized && rc != MQD_ERR_NOMEM &&
        (rc != mqs_ok || n > 0)) {
        long known = mqd_process_global_rank(p);
        if (rc != mqs_ok || world < 0 || strcmp(all[world].name, "MPI_COMM_WORLD") != 0 ||
            (known >= 0 && all[world].local_rank != known))
            rc = MQD_ERR_LAYOUT_MISFIT;
    }
    if (rc != mqs_ok) {
        mqd_comms_free(all, n);
        return rc;
    }
    if (world >= 0)
        all[world].world = 1;
    *out = all;
    *nout = n;
    return mqs_ok;
}

int mqd_be_op_in_comm(const struct mqd_comm *comm, int queue, const struct mqd_raw_op *op)
{
    uint64_t key = queue == mqs_pending_sends && !op->recv_keyed ? comm->send_context
                                                                  : comm->recv_context;
    if (op->context == key)
        return op->internal ? 2 : 1;
    /* MPI's own traffic for a collective on this communicator: its
     * collective context, or that of a node-level sub-communicator MPICH
     * made of it (MPIR_Barrier_intra_smp and friends run on those). */
    uint64_t internal = MPICH_CONTEXT_COLL_BIT | MPICH_CONTEXT_SUBCOMM_MASK;
    if (!(key & (internal | MPICH_CONTEXT_LOCALCOMM_MASK)) && op->context != key &&
        (op->context & ~(uint64_t)internal) == key)
        return 2;
    return 0;
}
