/*
 * core.h - the vendor-neutral half of an MQD debug DLL.
 *
 * The core implements every mqs_* entry point of the interface: callback
 * bookkeeping, the error table, reading target memory (whole structures,
 * integers of any size and byte order), bounded and cycle-checked list
 * walks, the communicator cache (re-read only when the backend says the
 * list changed), communicator and operation iterators, and translation of
 * local ranks to global ones through each communicator's rank table.
 *
 * A backend (mpich.c) knows one MPI implementation: it finds the symbols
 * and types at setup, reads the communicator list into struct mqd_comm
 * records and each queue into struct mqd_raw_op records.  To port mqd to
 * another MPI, replace the backend; see docs/PORTING.md.
 *
 * Nothing here touches target memory except through mqs_fetch_data, calls
 * malloc or printf, or blocks.  Every name outside the mqs_* entry points
 * is hidden.
 */
#ifndef MQD_DLL_CORE_H
#define MQD_DLL_CORE_H

#define FOR_MPI2 1
#include "mpi_interface.h"

#include <stddef.h>
#include <stdint.h>

#define MQD_HIDDEN __attribute__((visibility("hidden")))
#define MQD_EXPORT __attribute__((visibility("default")))

/* Bounds on what a real target holds; beyond them the target is corrupt. */
enum {
    MQD_MAX_LIST = 1 << 20,  /* entries in one list */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    /* Fuzzing (make fuzz): the same checks, a smaller bound, so that an
     * input's time goes to finding paths rather than walking 16M members. */
    MQD_MAX_COMM_SIZE = 1 << 12,
#else
    MQD_MAX_COMM_SIZE = 1 << 24,
#endif
    MQD_MAX_OFFSET = 1 << 20, /* of a field in a structure */
    MQD_MAX_NAME = 64,       /* the interface's name length */
    MQD_MAX_KEY = 96,        /* a backend's name for a process (MPI-2 identities) */
};

/* Error codes: one table (core.c) with a message for each. */
#define MQD_ERRORS(X)                                                                          \
    X(MQD_ERR_NOMEM, "out of memory: the debugger's mqs_malloc failed")                        \
    X(MQD_ERR_READ, "cannot read the process's memory (mqs_fetch_data failed)")                \
    X(MQD_ERR_NO_SYMBOL, "a symbol the DLL needs is missing from the process")                 \
    X(MQD_ERR_NO_TYPE, "a type or field the DLL needs is missing from the debug information")  \
    X(MQD_ERR_NO_DEBUG_QUEUES,                                                                  \
      "this MPI keeps no message queues for debuggers (MPICH: configure --enable-debuginfo)")   \
    X(MQD_ERR_CYCLE, "a list in the process's memory loops back on itself: memory is corrupt") \
    X(MQD_ERR_TOO_LONG, "a list in the process's memory is longer than any real one: memory "  \
                        "is corrupt")                                                           \
    X(MQD_ERR_BAD_VALUE, "a count, size or rank in the process's memory is out of range: "     \
                         "memory is corrupt")                                                   \
    X(MQD_ERR_NOT_SET_UP, "the debugger called the DLL before setting up the image or process") \
    X(MQD_ERR_NO_COMM, "no current communicator: iterate communicators first")                  \
    X(MQD_ERR_BAD_QUEUE, "no such queue (mqs_setup_operation_iterator)")                        \
    X(MQD_ERR_BUF_SMALL, "the buffer given is too small")                                       \
    X(MQD_ERR_NOT_MPI2, "the debugger did not call mqs_setup_job: MPI-2 calls are unavailable") \
    X(MQD_ERR_BAD_LAYOUT, "the debug information describes structures the DLL cannot use")    \
    X(MQD_ERR_LAYOUT_MISFIT, "with no debug types, the DLL used the known layout of this "     \
                             "MPI's version, and the process's memory does not fit it: "       \
                             "install the MPI library's debug information")             \
    X(MQD_ERR_MISSING_CALLBACK, "the debugger's callback table lacks a function the DLL "     \
                                "cannot do without")

enum mqd_error {
    MQD_ERR_FIRST_ = mqs_first_user_code - 1,
#define MQD_ENUM_(name, msg) name,
    MQD_ERRORS(MQD_ENUM_)
#undef MQD_ENUM_
    MQD_ERR_LAST_
};

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
};

/* One queue entry as a backend reads it.  Peers are local ranks (-1 any). */
struct mqd_raw_op {
    uint64_t context; /* matched against mqd_comm's send or receive context */
    int recv_keyed;   /* a send entered under its communicator's receive context */
    int internal;     /* MPI's own traffic, known by other means than the context */
    uint64_t request; /* its request's address in the target; 0 if none */
    unsigned text_address; /* MQD_OP_TEXT_ADDRESS bits: lines of op.extra_text */
    mqs_pending_operation op; /* global ranks are filled in by the core */
};

/* Growable arrays in the debugger's heap. */
struct mqd_ops {
    int n, cap;
    struct mqd_raw_op *v;
};

/* ---------------------------------------------------------------- objects */

struct mqd_image;   /* image info: core.c */
struct mqd_process; /* process info: core.c */

/* What the backend may use of the debugger and of the target. */
MQD_HIDDEN void *mqd_malloc(size_t n);
MQD_HIDDEN void mqd_free(void *p);
MQD_HIDDEN void *mqd_calloc(size_t n, size_t size);
MQD_HIDDEN void mqd_debug(const char *msg);

MQD_HIDDEN const mqs_image_callbacks *mqd_image_cb(const struct mqd_image *im);
MQD_HIDDEN void *mqd_image_backend(const struct mqd_image *im);
/* A specific explanation for image_has_queues (kept on the image). */
MQD_HIDDEN void mqd_image_explain(struct mqd_image *im, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

MQD_HIDDEN struct mqd_image *mqd_process_image(const struct mqd_process *p);
MQD_HIDDEN void *mqd_process_backend(const struct mqd_process *p);
/* The debugger's image object of this process (for symbol lookups). */
MQD_HIDDEN mqs_image *mqd_process_mqs_image(const struct mqd_process *p);
MQD_HIDDEN void mqd_process_explain(struct mqd_process *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
MQD_HIDDEN const mqs_target_type_sizes *mqd_sizes(const struct mqd_process *p);
/* MPI-2: the identity the debugger gave the process the backend names key
 * (mqd_be_process_key of that process), or -1 if none has that key. */
MQD_HIDDEN long mqd_job_identity(struct mqd_process *p, const char *key);
/* The process's rank in MPI_COMM_WORLD as the debugger knows it (-1 unknown). */
MQD_HIDDEN long mqd_process_global_rank(const struct mqd_process *p);

/* Read size bytes at addr (mqs_ok or MQD_ERR_READ). */
MQD_HIDDEN int mqd_read(struct mqd_process *p, mqs_taddr_t addr, void *buf, int size);
/* Integers of size 1, 2, 4 or 8 at buf+off, in target order, to host. */
MQD_HIDDEN uint64_t mqd_uint(struct mqd_process *p, const void *buf, int off, int size);
MQD_HIDDEN int64_t mqd_int(struct mqd_process *p, const void *buf, int off, int size);
/* A target pointer at buf+off. */
MQD_HIDDEN mqs_taddr_t mqd_ptr(struct mqd_process *p, const void *buf, int off);
/* The target pointer stored at addr (mqs_ok or MQD_ERR_READ). */
MQD_HIDDEN int mqd_read_ptr(struct mqd_process *p, mqs_taddr_t addr, mqs_taddr_t *out);
/* The string at addr into out (len > 0 bytes, always terminated, cut if
 * longer); reads never cross a page beyond the terminator. */
MQD_HIDDEN int mqd_read_cstring(struct mqd_process *p, mqs_taddr_t addr, char *out, int len);

/*
 * Walking a linked list in the target: start with the head, then call
 * mqd_walk_next with each node's successor.  It fails with MQD_ERR_CYCLE
 * when a node comes back and MQD_ERR_TOO_LONG past MQD_MAX_LIST nodes.
 */
struct mqd_walk {
    int n, cap;
    mqs_taddr_t *seen; /* open-addressing set */
};
MQD_HIDDEN void mqd_walk_init(struct mqd_walk *w);
MQD_HIDDEN int mqd_walk_visit(struct mqd_walk *w, mqs_taddr_t node);
MQD_HIDDEN void mqd_walk_fini(struct mqd_walk *w);

MQD_HIDDEN int mqd_ops_push(struct mqd_ops *ops, const struct mqd_raw_op *op);
MQD_HIDDEN void mqd_ops_reverse(struct mqd_ops *ops);
MQD_HIDDEN void mqd_ops_free(struct mqd_ops *ops);

/* Copy at most 63 bytes of s into the interface's 64-byte fields. */
MQD_HIDDEN void mqd_set_text(char dst[64], const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Add line to op's extra_text after those it has, if one is free. */
MQD_HIDDEN void mqd_add_text(mqs_pending_operation *op, const char *line);

/* ---------------------------------------------------------------- backend */

/* The MPI implementation's half, one per DLL (mpich.c). */
MQD_HIDDEN const char *mqd_be_version(void);
/* Find types and offsets: mqs_ok, or an error with mqd_image_explain. */
MQD_HIDDEN int mqd_be_setup_image(mqs_image *image, struct mqd_image *im, void **backend);
MQD_HIDDEN void mqd_be_destroy_image(void *backend);
/* Find symbols, choose the generation. */
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
/* The function on which a debugger should stop after a spawn. */
MQD_HIDDEN const char *mqd_be_spawn_breakpoint(void);

MQD_HIDDEN void mqd_comms_free(struct mqd_comm *comms, int n);

#endif
