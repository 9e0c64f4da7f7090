/*
 * mpich.h - private to the MPICH backend of mqd's debug DLL (mpich_*.c):
 * where MPICH keeps its communicators and queues, and how to read them.
 * mpich_defs/mpich_defs.h has the names; the vendor-neutral rest of the
 * DLL is below (backend.h, target.h) and never includes this file.
 *
 *   mpich_layout.c  field classes and the generations that need them,
 *                   offsets and sizes from the debug information or a
 *                   known layout, how much of each structure to read
 *                   (mqd_be_setup_image)
 *   mpich_ranks.c   ranks and groups: connection tables, groups, rank
 *                   maps, worlds, and the keys that name processes
 *                   across jobs (mqd_be_process_key)
 *   mpich_comms.c   a process's generation (mqd_be_setup_process) and
 *                   its communicators (mqd_be_read_comms, ...)
 *   mpich_requests.c what one request says: datatype and length, completion
 *                   counter and status, ch4's device parts
 *   mpich_queues.c  the three queues (mqd_be_read_queue), each entry read
 *                   through its request
 *
 * Naming: the backend implements backend.h's mqd_be_* hooks; functions
 * shared between its files and nothing else carry two underscores,
 * mpich__*; its types are struct mpich_*; everything else is static.
 * mpich_comms.c uses mpich_ranks.c and mpich_layout.c, mpich_queues.c
 * uses mpich_requests.c, and mpich_ranks.c and mpich_requests.c use
 * mpich_layout.c, never the other way round.
 */
#ifndef MQD_DLL_MPICH_H
#define MQD_DLL_MPICH_H

#include "backend.h"
#include "mpich_defs/mpich_defs.h"

#include <stdatomic.h>

#define NELEMS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/*
 * Classes of fields and sizes (the CLASS column of mpich_defs.h's
 * MPICH_FIELDS and MPICH_SIZES): a generation needs some classes in full
 * and reads some others when they are there (mpich_layout.c).
 */
enum {
    CLASS_COMMON = 0x01,         /* every generation's */
    CLASS_CH3 = 0x02,            /* ch3's device: connection tables, requests' match */
    CLASS_SENDQ = 0x04,          /* MPIR_Sendq, 4.0.2 */
    CLASS_DEBUGQ = 0x08,         /* MPIR_Debugq, 4.0.3+ */
    CLASS_GROUP_LPIDS = 0x10,    /* 4.x groups: an lrank_to_lpid table */
    CLASS_GROUP_PMAP = 0x20,     /* 5.0 groups: an MPIR_Pmap */
    CLASS_CH4_RANK_MAPS = 0x40,  /* ch4 rank maps: optional, used when all there */
    CLASS_CH3_OPTIONAL = 0x80,   /* ch3's MPIDI_Process and match parts: optional */
    CLASS_WORLDS = 0x100,        /* 5.0 worlds: optional */
    CLASS_CH4_REQ = 0x200,       /* ch4 requests' datatypes and progress: optional */
    CLASS_MPIDIG = 0x400,        /* 4.0.2 ch4's MPIDIG receive lists */
    /* An MPIDIG receive's own context id: 4.0.2 ch4 needs it for its
     * lists, 4.1+ reads it to tell a collective's receives (the debug
     * queues enter them under the plain context). */
    CLASS_MPIDIG_RECV = CLASS_MPIDIG | CLASS_CH4_REQ,
    CLASS_COMM_LIST = 0x800,     /* MPIR_All_communicators: built with debugger support */
    CLASS_STOCK = 0x1000,        /* 4.0.2 ch4 without it: list heads, object pools */
    CLASS_REQUESTS = 0x2000,     /* the request behind a handle: optional */
    CLASS_POOLS = 0x4000,        /* the object allocators: STOCK's comms, requests */
    CLASS_CH4_REQUESTS = 0x8000, /* REQUESTS's fields of ch4's requests: optional */
    CLASS_SCHEDS = 0x10000,      /* REQUESTS's schedules: looked up when one is pending */
    CLASS_VCS = 0x20000,         /* ch3's VC tables and VCs: looked up when read */
    CLASS_DATATYPES = 0x40000,   /* datatype objects: looked up when one is read */
    CLASS_MPIDIG_URECV = 0x80000, /* MPIDIG's receive envelope, 4.0.2 to 4.2 */
    CLASS_STOCK_OPTIONAL = 0x100000, /* STOCK's, 4.1 on: optional (not OPTIONAL: ch4's) */
    CLASS_PGS = 0x200000,        /* ch3's process groups: looked up when read */
    /* Looked up when a process needs them (mpich__late). */
    CLASS_LATE = CLASS_SCHEDS | CLASS_VCS | CLASS_DATATYPES | CLASS_PGS,
    CLASS_OPTIONAL = 0x00,       /* optional, any generation (looked up with COMMON) */
    CLASS_ALL = 0x3fffff
};

enum field_id {
#define F_ENUM_(id, cls, path) F_##id,
    MPICH_FIELDS(F_ENUM_)
#undef F_ENUM_
    F_COUNT
};

enum size_id {
#define S_ENUM_(id, cls, type) S_##id,
    MPICH_SIZES(S_ENUM_)
#undef S_ENUM_
    S_COUNT
};

/* A structure as read: len bytes of buffer, room for every field used
 * (and 8 bytes past the last), of which the first read come from the
 * target (never past the structure's end: the next page may be unmapped).
 * Type answers that put a field past its structure's end (a corrupt
 * libmpi.so, a debugger's wrong sizes) leave len > read: such a field
 * reads as 0, never from outside the buffer. */
struct mpich_span {
    int len, read;
};

struct mpich_known_layout; /* a build's generated layout (mpich_layout.c) */
struct mpich_stock_build;  /* a distribution's build (mpich_stock.c) */

/* Per image: every offset and size, -1 where the debug info has none. */
struct mpich_image {
    int off[F_COUNT];
    int size[S_COUNT];
    /* How much of each structure to read: past the last field used. */
    struct mpich_span comm_span, req_span, sendq_span, debugq_span;
    /* No usable DWARF (from_dwarf 0): the first process chooses a known
     * layout; lacks says what the DWARF missed. */
    int from_dwarf;
    int classes; /* CLASS_* bits the debug information has in full */
    int probed;  /* CLASS_* bits looked up (optional fields: with the first) */
    const struct mpich_known_layout *layout;
    char lacks[256];
    /* The library keeps no debugger list of communicators (no
     * MPIR_All_communicators): a build without debugger support, read as
     * MPICH_GEN_CH4_STOCK where its own lists can be found; layout_build
     * the known build whose layout b holds (no DWARF), else NULL. */
    int stock;
    const struct mpich_stock_build *layout_build;
    /* The layout with the CLASS_LATE classes processes needed so far
     * (mpich__late), the newest first. */
    _Atomic(struct mpich_late *) late;
    /* MPII_Version_device and MPII_Version_string ("" if unknown), read
     * by the first process (named: done): constants of the library file,
     * the same in every process of the image, as its symbols are. */
    int named;
    char device[64];
    char version[32];
};

/* An image's offsets and sizes, with those of the CLASS_LATE classes
 * looked up (mpich__late); older: the one it replaced. */
struct mpich_late {
    int off[F_COUNT];
    int size[S_COUNT];
    int classes;
    struct mpich_late *older;
};

/* The id string of a ch3 process group or a world's PMI name, with room
 * left for "#RANK" in a key. */
enum { PG_ID_MAX = MQD_MAX_KEY - 12 };

/* Per process: the symbols, and the generation they show. */
struct mpich_process {
    enum mpich_generation gen;
    mqs_taddr_t comm_list, sendq, posted_ptr, unexpected_ptr, recvq, unexpq, dt_direct;
    /* ch3 process groups (0 if unknown): this process's, its rank and id
     * string there, and the key that names it in an MPI-2 job
     * ("PG-ID#RANK"). */
    mqs_taddr_t my_pg;
    long my_pg_rank;
    char my_pg_id[PG_ID_MAX];
    char key[MQD_MAX_KEY];
    /* ch3's MPIDI_Process and MPIR_debug_state (0 if absent), for a
     * process in MPI_Finalize; finalized: the last read of the
     * communicators found them freed and gave the world that the queues
     * still hold (ch3's from its process group, ch4's from MPIR_Process). */
    mqs_taddr_t ch3_process, debug_state;
    int finalized;
    /* 5.0's MPIR_Worlds, and MPIR_Process (0 if absent). */
    mqs_taddr_t worlds, mpir_process;
    /* 4.x ch4: the PMI name of this process's world ("" if unknown); the
     * key is then "NAMESPACE#RANK" and rank maps' table 0 is that world. */
    char ns[PG_ID_MAX];
    /* What every build has, exported or hidden (0 if not found): ch4's
     * MPIDI_global, the communicator and request pools, the pending
     * schedules (mpich_defs.h); stock_build, the known build whose
     * addresses these are when the library's own symbols do not say
     * (mpich_stock.c), else NULL. */
    mqs_taddr_t ch4_global, comm_mem, request_mem, schedules;
    /* MPIR_world_model_state (0 if not found by name): past MPI_Finalize. */
    mqs_taddr_t world_model;
    const struct mpich_stock_build *stock_build;
    /* MPICH_GEN_CH4_STOCK has no sequence number to tell its communicators
     * changed: each read is a new one. */
    uint64_t reads;
    /* Request kinds numbered as 4.1 on does (mpich_defs.h): from the
     * version string, or 5.0's generations where it is not known. */
    int kinds_41;
    /* MPI_TAG_UB (MPIR_Process.attrs.tag_ub; 0 if unknown): a tag beyond it
     * is MPI's own (MPIR_TAG_COLL_BIT, src/include/mpir_tags.h). */
    long tag_ub;
};

/* The image record of process p's image (borrowed). */
static inline struct mpich_image *mpich__image(struct mqd_process *p)
{
    return mqd_image_backend(mqd_process_image(p));
}

/* ---------------------------------------------------------------- mpich_layout.c */

/* ch3's generations read its own lists, tables and process groups. */
MQD_HIDDEN int mpich__gen_is_ch3(enum mpich_generation gen);
/* 4.x ch4's (4.0.2's and 4.0.3 to 4.3's) name their members through
 * groups of lupids, rank maps and the PMI name. */
MQD_HIDDEN int mpich__gen_is_ch4_4x(enum mpich_generation gen);
/* The fields an MPIDIG receive is matched on, its source's and its tag's:
 * u.recv's (4.0.2 to 4.2), else its status's (4.3 on; mpich_defs.h).  0 if
 * off has neither pair. */
MQD_HIDDEN int mpich__mpidig_envelope(const int *off, enum field_id *src, enum field_id *tag);
/* 5.0's name them through process maps and worlds. */
MQD_HIDDEN int mpich__gen_is_5x(enum mpich_generation gen);
/* Those without debugger support read ch4's own lists and pools. */
MQD_HIDDEN int mpich__gen_is_stock(enum mpich_generation gen);
/* Look up the fields and sizes of classes cls not looked up yet. */
MQD_HIDDEN void mpich__probe(mqs_image *image, const mqs_image_callbacks *cb,
                             struct mpich_image *b, int cls);
/* Whether offsets off lack one of fields ids: 1, after telling the
 * debugger (mqs_dprints) the first one's path, or 0. */
MQD_HIDDEN int mpich__lacks(const int *off, const enum field_id *ids, int n);
/* The first field of class cls (CLASS_* bits) b has no offset for, by its
 * path in mpich_defs.h; NULL if it has them all. */
MQD_HIDDEN const char *mpich__class_lacks(const struct mpich_image *b, int cls);
/* The image's layout with the fields of CLASS_LATE classes cls (looked up
 * by the first process that reads them); NULL without memory. */
MQD_HIDDEN const struct mpich_late *mpich__late(struct mqd_process *p, int cls);
/* Look up all that generation gen reads (and 5.0's worlds, if the library
 * has them). */
MQD_HIDDEN void mpich__probe_generation(mqs_image *image, const mqs_image_callbacks *cb,
                                        struct mpich_image *b, enum mpich_generation gen,
                                        int worlds);
/* No usable DWARF types: take the known layout of this process's MPICH
 * build into b (mqs_ok, or an error with mqd_process_explain). */
MQD_HIDDEN int mpich__choose_layout(struct mqd_process *p, struct mpich_image *b);
/* Every offset and size of b from a table: step(ctx, "T", "f") the offset
 * of field f in type T, step(ctx, "T", NULL) T's size, -1 if none. */
MQD_HIDDEN void mpich__layout_from(struct mpich_image *b, mqd_step_fn step, const void *ctx);
/* Does b have all that generation gen needs, for a target of p's sizes?
 * mqs_ok (then contexts without a type are int), or an error with
 * mqd_process_explain. */
MQD_HIDDEN int mpich__check_layout(struct mqd_process *p, struct mpich_image *b,
                                   enum mpich_generation gen);
/* Whether fields ids (at offsets off), of width bytes each, all lie in len
 * bytes. */
MQD_HIDDEN int mpich__fields_fit(const int *off, const enum field_id *ids, int n,
                                 int width, int len);
/* One structure at addr into buf (sp.len bytes), as struct mpich_span says. */
MQD_HIDDEN int mpich__read_span(struct mqd_process *p, mqs_taddr_t addr, unsigned char *buf,
                                struct mpich_span sp);
/* Bytes of ch3's match context. */
MQD_HIDDEN int mpich__match_ctx_size(const struct mpich_image *b);

/* ---------------------------------------------------------------- mpich_ranks.c */

/* Where this process's own MPI-2 key is kept, found with the symbols. */
struct mpich_key_symbols {
    mqs_taddr_t ch3_process; /* ch3: MPIDI_Process (0 if none) */
    mqs_taddr_t pmi_name;    /* ch3, 4.x ch4: the PMI name's static (0 if none) */
    int pmix;                /* pmi_name is PMIx's pmix_proc_t, the name inline */
};
MQD_HIDDEN void mpich__find_key_symbols(mqs_image *image, const mqs_image_callbacks *cb,
                                        enum mpich_generation gen,
                                        struct mpich_key_symbols *ks);
/* This process's key into bp->key (and ch3's group into bp->my_pg and
 * bp->ch3_process); without one, MPI-1 global ranks only (not an error). */
MQD_HIDDEN void mpich__read_own_key(struct mqd_process *p, struct mpich_process *bp,
                                    const struct mpich_key_symbols *ks);
/* The identity the debugger gave process rank of world (or ch3 process
 * group) ns; -1 if none. */
MQD_HIDDEN long mpich__identity_of(struct mqd_process *p, const char *ns, long rank);
/* The same for ranks 0 to n-1 of ns, into out[0..n-1]. */
MQD_HIDDEN void mpich__identities_of(struct mqd_process *p, const char *ns, long n, long *out);
/* The id string of ch3 process group pg ("kvs_...") into out: mqs_ok,
 * MQD_ERR_BAD_LAYOUT if the debug information lacks MPIDI_PG_t's. */
MQD_HIDDEN int mpich__read_pg_id(struct mqd_process *p, mqs_taddr_t pg, char *out, int len);
/* 5.0: lpid to a global rank (mpich_keys.c); ns0 caches world 0's name. */
MQD_HIDDEN long mpich__lpid_global(struct mqd_process *p, int64_t lpid, int use_job, char *ns0,
                                   size_t nslen);
/* The PMI namespace of world idx (5.0's MPIR_Worlds) into out. */
MQD_HIDDEN int mpich__world_namespace(struct mqd_process *p, long idx, char *out, int len);

/* What one read of the communicator list learns of processes, for the
 * next communicator's members (NULL if out of memory; freed by
 * mpich__rank_cache_free, which accepts NULL). */
struct mpich_rank_cache;
MQD_HIDDEN struct mpich_rank_cache *mpich__rank_cache_new(struct mqd_process *p);
MQD_HIDDEN void mpich__rank_cache_free(struct mpich_rank_cache *cache);
/*
 * The members of communicator c (read from buf, its MPIR_Comm at addr) as
 * global ranks: c->peer_global, an intercommunicator's c->local_global,
 * c->globals_final.  c's sizes, rank, handle and inter are set.
 */
MQD_HIDDEN int mpich__read_members(struct mqd_process *p, struct mpich_rank_cache *cache,
                                   mqs_taddr_t addr, const unsigned char *buf,
                                   struct mqd_comm *c);

/* ---------------------------------------------------------------- mpich_stock.c */

/* A stock process (MPICH_GEN_CH4_STOCK, its library's version and device
 * strings as read): its globals into bp (by name where its debug symbols
 * and DWARF are found, else from the known build it is shown to be), and
 * b's layout from that build if the DWARF lacks it.  mqs_ok, or an error
 * with mqd_process_explain. */
MQD_HIDDEN int mpich__stock_find(struct mqd_process *p, struct mpich_process *bp,
                                 struct mpich_image *b, const char *version, const char *device);
/* The known build bp was found as ("Debian 12's mpich ..."), or NULL. */
MQD_HIDDEN const char *mpich__stock_name(const struct mpich_process *bp);
/* The communicators in use (MPI_COMM_WORLD first, then MPI_COMM_SELF and
 * the pool's), their addresses into *out (*n, freed by the caller with
 * mqd_free); *world_gone 1 (and none) once MPI_Finalize has freed the
 * world. */
MQD_HIDDEN int mpich__stock_comms(struct mqd_process *p, mqs_taddr_t **out, int *n,
                                  int *world_gone);
/* The head variables of ch4's posted (queue receives) or unexpected lists,
 * one per VCI, into heads (room for MPICH_CH4_MAX_VCIS), *n of them. */
MQD_HIDDEN int mpich__stock_heads(struct mqd_process *p, int queue, mqs_taddr_t *heads, int *n);

/* ---------------------------------------------------------------- mpich_handles.c */

/* An object allocator (MPIR_Object_alloc_t) as read: ndirect objects of
 * size bytes at direct, then nblocks blocks whose addresses are at
 * indirect; kind the objects' (MPICH_OBJECT_*). */
struct mpich_pool {
    mqs_taddr_t direct, indirect;
    long ndirect, nblocks, size;
    unsigned kind;
};
/* The allocator at address at into *out (sizes checked). */
MQD_HIDDEN int mpich__read_pool(struct mqd_process *p, mqs_taddr_t at, struct mpich_pool *out);
/* The address of block number block of pool (never 0) into *out. */
MQD_HIDDEN int mpich__pool_block(struct mqd_process *p, const struct mpich_pool *pool,
                                 long block, mqs_taddr_t *out);

/* ---------------------------------------------------------------- mpich_requests.c */

/* Datatype handle dt as the program gave it: 5.0 swaps a predefined type
 * for an internal one that keeps its index and size (mpich_defs.h). */
MQD_HIDDEN unsigned mpich__user_type(unsigned dt);
/* r's first line: what, and count elements of datatype dt (by name, else
 * by handle, an address line unless predefined). */
MQD_HIDDEN void mpich__describe_type(struct mqd_raw_op *r, const char *what, long count,
                                     unsigned dt);
/* count elements of datatype dt (its object at dt_ptr, 0 if not known) in
 * bytes; -1 if unknown. */
MQD_HIDDEN long mpich__byte_length(struct mqd_process *p, long count, unsigned dt,
                                   mqs_taddr_t dt_ptr);
/* The completion counter of the request at req (its bytes in buf), through
 * cc_ptr where that points elsewhere (a started persistent request). */
MQD_HIDDEN int mpich__req_cc(struct mqd_process *p, mqs_taddr_t req, const unsigned char *buf,
                             long *cc);
/* What a request's status says (source, tag, bytes): 1, or 0 if the
 * layout lacks it. */
MQD_HIDDEN int mpich__req_status(struct mqd_process *p, const unsigned char *buf, long *source,
                                 long *tag, long *bytes);
/* A completed receive (op->status complete): what it matched, from the
 * status in buf. */
MQD_HIDDEN void mpich__completed_receive(struct mqd_process *p, const unsigned char *buf,
                                         mqs_pending_operation *op);
/* r's request at addr, and the address line naming it and its handle. */
MQD_HIDDEN void mpich__request_line(struct mqd_raw_op *r, mqs_taddr_t addr, unsigned handle);
/* ch4: the datatype of the request in buf from the part of its device
 * union that keeps it (a debug queue entry's count and buffer tell
 * ch4_self.c's); 1, or 0 if none is kept. */
MQD_HIDDEN int mpich__ch4_datatype(struct mqd_process *p, const unsigned char *buf, long count,
                                   mqs_taddr_t user_buf, unsigned *dt);
/* 4.0.2 ch4, a send of MPIR_Sendq: its count, datatype and buffer where
 * the request keeps them; 1, or 0. */
MQD_HIDDEN int mpich__ch4_sendq_type(struct mqd_process *p, const unsigned char *buf,
                                     long *count, unsigned *dt, mqs_taddr_t *user_buf);
/* How far an unexpected message has come. */
enum mpich_arrival {
    ARRIVAL_UNKNOWN, /* not an active-message request: not recorded */
    ARRIVAL_EAGER,   /* all its data is in MPICH's buffer */
    ARRIVAL_COMING,  /* eager, its data still being copied in */
    ARRIVAL_RNDV     /* rendezvous: the envelope only, the data at the sender */
};
/* ch4: an unexpected message's arrival, from its active-message part
 * (is_am: the request is known to be one, else dev.type must say so). */
MQD_HIDDEN enum mpich_arrival mpich__ch4_arrival(struct mqd_process *p,
                                                 const unsigned char *buf, int is_am);
/* ch4: an unexpected entry that is ch4_self.c's own send request (buf):
 * r's length, buffer, text and status say so; else r is unchanged. */
MQD_HIDDEN void mpich__ch4_self_send(struct mqd_process *p, const unsigned char *buf,
                                     struct mqd_raw_op *r);
/* A ch4 unexpected message from rank with tag, of bytes, as far as it has
 * come, into op. */
MQD_HIDDEN void mpich__ch4_unexpected(mqs_pending_operation *op, long rank, long tag,
                                      long bytes, enum mpich_arrival arrival);

#endif
