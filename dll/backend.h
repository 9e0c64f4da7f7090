/*
 * backend.h - the interface between mqd's debug DLL and the one MPI
 * implementation it knows (its backend): the records a backend fills and
 * the mqd_be_* hooks it implements.
 *
 * The entry points (entry.c) call the hooks; a backend calls only the
 * services of target.h and the record helpers below (records.c).  A
 * backend finds the symbols and types at setup, reads the communicator
 * list into struct mqd_comm records and each queue into struct
 * mqd_raw_op records.  To port mqd to another MPI, replace the backend
 * (MPICH's: mpich.h and mpich_*.c); see docs/PORTING.md.
 */
#ifndef MQD_DLL_BACKEND_H
#define MQD_DLL_BACKEND_H

#include "target.h"

/* ---------------------------------------------------------------- records */

/* A communicator as the core keeps it: a copy, never a pointer into the
 * target, so a communicator freed in the target cannot hurt. */
struct mqd_comm {
    mqs_taddr_t addr;     /* where it lives in the target (unique_id) */
    long local_rank, size; /* this process's rank and the local group's size */
    char name[MQD_MAX_NAME];
    int internal;          /* created by MPI itself, not by the user */
    uint64_t send_context, recv_context; /* backend's matching keys */
    int remote_size;       /* peers of operations are ranks in the remote group */
    long *peer_global;     /* remote_size entries: peer rank -> global rank (-1 unknown);
                            * MPI-2: the debugger's identity of the peer */
    long *local_global;    /* size entries: local group rank -> global rank; NULL when
                            * the backend cannot tell (mqs_get_comm_group: no information) */
    int inter;             /* an intercommunicator: peers are in the remote group */
    int globals_final;     /* backend: the two tables hold identities already */
    int has_handle;        /* handle is the program's MPI_Comm for it */
    uint64_t handle;
    int world;             /* this process's MPI_COMM_WORLD */
    long nbc_next_tag;     /* the schedule tag its next nonblocking collective takes
                            * (mqd_get_comm_nbc_tag); -1 unknown */
};

/* One queue entry as a backend reads it.  Peers are local ranks (-1 any). */
struct mqd_raw_op {
    uint64_t context; /* matched against mqd_comm's send or receive context */
    int recv_keyed;   /* a send entered under its communicator's receive context */
    int internal;     /* MPI's own traffic, known by other means than the context */
    int maybe_internal; /* not internal by what the library keeps, but may be
                         * (MQD_OP_MAYBE_COLLECTIVE) */
    uint64_t request; /* its request's address in the target; 0 if none */
    unsigned text_address; /* MQD_OP_TEXT_ADDRESS bits: lines of op.extra_text */
    mqs_pending_operation op; /* global ranks are filled in by the core */
};

/*
 * The operation behind one of the program's requests, as a backend reads it
 * (mqd_be_read_request).  kind, state and known are the interface's
 * MQD_REQ_* values; the communicator is comm_addr (an mqd_comm's addr) or,
 * if that is 0, the one whose receive context (or its collective traffic)
 * has context; peer is a local rank of it (-1 any).  The core checks that
 * the envelope agrees with the communicator before it says anything of it.
 */
struct mqd_raw_request {
    int kind, state;
    unsigned known;
    mqs_taddr_t addr;
    mqs_taddr_t comm_addr;
    uint64_t context;
    int has_context;
    long peer, tag, sched_tag;
    char text[MQD_MAX_NAME];
};

/* Growable arrays in the debugger's heap. */
struct mqd_ops {
    int n, cap;
    struct mqd_raw_op *v;
};

/* Append a copy of op (mqs_ok or MQD_ERR_NOMEM, ops unchanged). */
MQD_HIDDEN int mqd_ops_push(struct mqd_ops *ops, const struct mqd_raw_op *op);
MQD_HIDDEN void mqd_ops_reverse(struct mqd_ops *ops);
/* Free the entries and empty ops. */
MQD_HIDDEN void mqd_ops_free(struct mqd_ops *ops);
/* Free n communicators and their tables (comms may be NULL). */
MQD_HIDDEN void mqd_comms_free(struct mqd_comm *comms, int n);

/* ---------------------------------------------------------------- hooks */

/* The MPI implementation's half, one per DLL (MPICH's: mpich_*.c). */
MQD_HIDDEN const char *mqd_be_version(void);
/* Find types and offsets: mqs_ok, or an error with mqd_image_explain.
 * *backend (the backend's record of the image) is freed by
 * mqd_be_destroy_image, which accepts NULL. */
MQD_HIDDEN int mqd_be_setup_image(mqs_image *image, struct mqd_image *im, void **backend);
MQD_HIDDEN void mqd_be_destroy_image(void *backend);
/* Find symbols, choose the generation: mqs_ok, or an error with
 * mqd_process_explain.  *backend is freed by mqd_be_destroy_process,
 * which accepts NULL. */
MQD_HIDDEN int mqd_be_setup_process(mqs_process *process, struct mqd_process *p,
                                    void **backend);
MQD_HIDDEN void mqd_be_destroy_process(void *backend);
/* Has the communicator list changed since *stamp?  Updates *stamp. */
MQD_HIDDEN int mqd_be_comms_changed(struct mqd_process *p, uint64_t *stamp, int *changed);
/*
 * Read every communicator (*comms in the debugger's heap, *n of them),
 * oldest first, MPI-internal ones included (marked
 * internal) and the world marked.  The core then drops the internal ones,
 * gives an intracommunicator's peer table as its group's, and makes
 * peers beyond the world unknown unless the backend gave identities
 * (globals_final).
 */
MQD_HIDDEN int mqd_be_read_comms(struct mqd_process *p, struct mqd_comm **comms, int *n);
/* Read one whole queue (every communicator's entries, in matching order). */
MQD_HIDDEN int mqd_be_read_queue(struct mqd_process *p, int queue, struct mqd_ops *out);
/*
 * What the receive side tells of the sends, once the three queues are read
 * (the core reads the sends last and calls this once per stop): mark
 * internal, or maybe_internal, sends the library keeps no mark of.
 * recvs and unexps are NULL where they could not be read.
 */
MQD_HIDDEN void mqd_be_refine_sends(struct mqd_process *p, struct mqd_ops *sends,
                                    const struct mqd_ops *recvs, const struct mqd_ops *unexps);
/*
 * Does op (from queue) belong to comm?  0 no, 1 yes, 2 yes as part of a
 * collective operation (MPI-internal traffic on the user's communicator).
 */
MQD_HIDDEN int mqd_be_op_in_comm(const struct mqd_comm *comm, int queue,
                                 const struct mqd_raw_op *op);
/*
 * MPI-2: the MPI library's own name of process p, unique in the job (for
 * MPICH its world's PMI name and its rank there); "" if unknown.  The
 * core files it under the identity the debugger gives p; with no key, the
 * backend's global ranks must be world ranks (the core keeps them only if
 * the debugger numbered p by its world rank).
 */
MQD_HIDDEN int mqd_be_process_key(struct mqd_process *p, char *key, int len);
/*
 * The request behind the program's handle (an MPI_Request's bits) into *r:
 * mqs_ok, mqs_no_information (r->text may say why), or an error (no such
 * request: MQD_ERR_BAD_VALUE).  Called after mqd_be_read_comms.
 */
MQD_HIDDEN int mqd_be_read_request(struct mqd_process *p, uint64_t handle,
                                   struct mqd_raw_request *r);
/* MQD_PROC_* bits for p as the last mqd_be_read_comms found it. */
MQD_HIDDEN unsigned mqd_be_process_flags(struct mqd_process *p);
/* The function on which a debugger should stop after a spawn. */
MQD_HIDDEN const char *mqd_be_spawn_breakpoint(void);

#endif
