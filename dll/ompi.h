/*
 * ompi.h - private to the Open MPI backend of mqd's debug DLL
 * (libmqd_ompi.so, ompi_*.c): where Open MPI keeps its communicators and
 * pml ob1 its queues, and how to read them.  ompi_defs/ompi_defs.h has the
 * names; the vendor-neutral rest of the DLL is below (backend.h, target.h)
 * and never includes this file, nor does anything of the MPICH backend.
 *
 *   ompi_layout.c  field classes, offsets and sizes from the debug
 *                  information or a known layout (a build without DWARF,
 *                  shown to be that build by its classes' sizes), how much
 *                  of each structure to read (mqd_be_setup_image)
 *   ompi_ranks.c   groups and process names: global ranks, and the keys
 *                  that name processes across jobs (mqd_be_process_key)
 *   ompi_comms.c   a process's PML (mqd_be_setup_process), its
 *                  communicators (mqd_be_read_comms, ...) and the requests
 *                  behind its handles (mqd_be_read_request)
 *   ompi_queues.c  ob1's posted receives and unexpected fragments, the
 *                  sends from the request free list (mqd_be_read_queue)
 *
 * Naming: the backend implements backend.h's mqd_be_* hooks; functions
 * shared between its files and nothing else carry two underscores,
 * ompi__*; its types are struct ompi_*; everything else is static.
 * ompi_comms.c uses ompi_ranks.c and ompi_layout.c; ompi_ranks.c and
 * ompi_queues.c use ompi_layout.c; never the other way round.
 */
#ifndef MQD_DLL_OMPI_H
#define MQD_DLL_OMPI_H

#include "backend.h"
#include "ompi_defs/ompi_defs.h"

#define NELEMS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Classes of fields and sizes (ompi_defs.h). */
enum {
    CLASS_COMMON = 0x1, /* every process's: communicators, groups, requests */
    CLASS_OB1 = 0x2,    /* pml ob1's queues and the request free list */
    CLASS_OPTIONAL = 0x0,
    CLASS_ALL = 0x3
};

enum field_id {
#define F_ENUM_(id, cls, path) F_##id,
    OMPI_FIELDS(F_ENUM_)
#undef F_ENUM_
    F_COUNT
};

enum size_id {
#define S_ENUM_(id, cls, type) S_##id,
    OMPI_SIZES(S_ENUM_)
#undef S_ENUM_
    S_COUNT
};

/* A structure as read: len bytes of buffer, room for every field used (and
 * 8 bytes past the last), of which the first `read` come from the target
 * (never past the structure's end); the rest reads as 0. */
struct ompi_span {
    int len, read;
};

struct ompi_known_layout; /* a build's generated layout (ompi_layout.c) */

/* Per image: every offset and size, -1 where unknown. */
struct ompi_image {
    int off[F_COUNT];
    int size[S_COUNT];
    int classes; /* CLASS_* bits known in full */
    int from_dwarf;
    const struct ompi_known_layout *layout; /* no DWARF: the build's */
    char lacks[200];                        /* the first thing the DWARF lacks */
    /* How much of each structure to read. */
    struct ompi_span comm, group, list, ob1_comm, ob1_proc, request, frag, free_list,
        datatype;
    int match_hdr_len; /* OMPI_PML_OB1_MATCH_HDR_LEN: the end of hdr_seq */
};

/*
 * A communicator as the last read of the list found it, MPI's own ones
 * included: what the queues are read through (ob1's per-communicator
 * lists) and what an operation's communicator pointer names.
 */
struct ompi_comm_ref {
    mqs_taddr_t addr, pml; /* the ompi_communicator_t, its c_pml_comm */
    uint32_t cid;
    int internal; /* MPI's own (MPI_COMM_NULL, an intercommunicator's local one) */
    int size;       /* the peers its ob1 lists are per (remote group's) */
};

/* Per process. */
struct ompi_process {
    mqs_taddr_t comm_list, comm_world, comm_null, send_requests, local_proc, state;
    mqs_taddr_t request_null; /* MPI_REQUEST_NULL (0 if not found) */
    char pml[64]; /* the PML's component name ("ob1", "ucx", "cm") */
    /* This process's name and its MPI-2 key ("JOBID#VPID"); has_name 0
     * if the name could not be read (MPI-1 world ranks only). */
    int has_name;
    uint32_t jobid, vpid;
    char key[MQD_MAX_KEY];
    int finalized; /* the last read found MPI_Finalize begun */
    int ncomms;
    struct ompi_comm_ref *comms;
};

/* The image record of process p's image (borrowed). */
static inline struct ompi_image *ompi__image(struct mqd_process *p)
{
    return mqd_image_backend(mqd_process_image(p));
}

/* ---------------------------------------------------------------- ompi_layout.c */

/* Why pml (ucx, cm) shows no queue: the same words for every process. */
MQD_HIDDEN const char *ompi__pml_without_queues(const char *pml);

/* No usable DWARF types: take the known layout of this build into b, once
 * the process is shown to be that build (mqs_ok, or an error with
 * mqd_process_explain). */
MQD_HIDDEN int ompi__choose_layout(struct mqd_process *p, struct ompi_image *b);
/* With a known layout, ob1's classes (mca_pml_ob1.so, loaded once ob1 is
 * the PML) must be the build's too: mqs_ok, or an error with
 * mqd_process_explain.  Nothing to check with DWARF. */
MQD_HIDDEN int ompi__check_ob1_classes(struct mqd_process *p, const struct ompi_image *b);
/* Does b have all that classes cls need?  mqs_ok, or an error with
 * mqd_process_explain. */
MQD_HIDDEN int ompi__check_layout(struct mqd_process *p, struct ompi_image *b, int cls);
/* One structure at addr into buf (sp.len bytes). */
MQD_HIDDEN int ompi__read_span(struct mqd_process *p, mqs_taddr_t addr, unsigned char *buf,
                               struct ompi_span sp);
/* Integers of the fields the layout sizes (int 4, size_t and pointers the
 * target's): helpers over mqd_uint with the offsets of b. */
MQD_HIDDEN uint64_t ompi__u32(struct mqd_process *p, const unsigned char *buf, enum field_id f);
MQD_HIDDEN int64_t ompi__i32(struct mqd_process *p, const unsigned char *buf, enum field_id f);
MQD_HIDDEN uint64_t ompi__word(struct mqd_process *p, const unsigned char *buf, enum field_id f);

/* ---------------------------------------------------------------- ompi_ranks.c */

/* This process's name and key, from ompi_proc_local_proc (not an error if
 * it cannot be read: MPI-1 world ranks only). */
MQD_HIDDEN void ompi__read_own_name(struct mqd_process *p, struct ompi_process *bp);

/* What one read of the communicator list learns of processes (NULL if out
 * of memory; ompi__rank_cache_free accepts NULL). */
struct ompi_rank_cache;
MQD_HIDDEN struct ompi_rank_cache *ompi__rank_cache_new(struct mqd_process *p);
MQD_HIDDEN void ompi__rank_cache_free(struct ompi_rank_cache *cache);
/*
 * The members of group (an ompi_group_t at addr) as global ranks into
 * *out (mqd_malloc'ed, *n of them): the debugger's identities in an MPI-2
 * job (*final 1), else world ranks, -1 for processes of other jobs.
 */
MQD_HIDDEN int ompi__read_group(struct mqd_process *p, struct ompi_rank_cache *cache,
                                mqs_taddr_t group, long **out, long *n);

/* ---------------------------------------------------------------- ompi_comms.c */

/* The communicator the last read found at addr (NULL if none). */
MQD_HIDDEN const struct ompi_comm_ref *ompi__comm_at(const struct ompi_process *bp,
                                                     mqs_taddr_t addr);

#endif
