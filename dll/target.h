/*
 * target.h - the bottom of mqd's debug DLL: what every part of it, a
 * backend included, may use of the debugger and of the target.
 *
 * The DLL is three layers, each including only the one below it:
 *
 *   entry.c     every mqs_* entry point (and mqd_get_*): argument and
 *               state checks, the communicator cache, the iterators,
 *               global ranks; calls the backend through backend.h.
 *   backend.h   the interface a backend implements (mqd_be_* hooks) and
 *               the records it fills; records.c frees and grows them.
 *               MPICH's backend: mpich.h and mpich_*.c.
 *   target.h    this file: the debugger's memory and printing, reading
 *               the target, bounded list walks, explanations, and the
 *               MPI-2 identities of processes (target.c, job.c).
 *
 * Nothing here touches target memory except through mqs_fetch_data, calls
 * malloc or printf, or blocks.  Every name outside the mqs_* entry points
 * is hidden; the names here (mqd_*) are the porting interface that
 * docs/PORTING.md documents, and keep their names.
 */
#ifndef MQD_DLL_TARGET_H
#define MQD_DLL_TARGET_H

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

/* Error codes: one table (entry.c) with a message for each. */
#define MQD_ERRORS(X)                                                                          \
    X(MQD_ERR_NOMEM, "out of memory: the debugger's mqs_malloc failed")                        \
    X(MQD_ERR_READ, "cannot read the process's memory (mqs_fetch_data failed)")                \
    X(MQD_ERR_NO_SYMBOL, "a symbol the DLL needs is missing from the process")                 \
    X(MQD_ERR_NO_TYPE, "a type or field the DLL needs is missing from the debug information")  \
    X(MQD_ERR_NO_DEBUG_QUEUES,                                                                  \
      "this MPI keeps no message queues for debuggers")                                         \
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

/* ---------------------------------------------------------------- objects */

/* The DLL's records of an image and a process (handles.h): opaque here. */
struct mqd_image;
struct mqd_process;

/* ---------------------------------------------------------------- the debugger */

/* Memory from the debugger's mqs_malloc/mqs_free; NULL before it has
 * given its callbacks.  mqd_free accepts NULL. */
MQD_HIDDEN void *mqd_malloc(size_t n);
MQD_HIDDEN void mqd_free(void *p);
MQD_HIDDEN void *mqd_calloc(size_t n, size_t size);
/* A line for the debugger's log (mqs_dprints), if it keeps one. */
MQD_HIDDEN void mqd_debug(const char *msg);

/* The image's callbacks (borrowed), and the backend's record of it. */
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
/* The process's rank in MPI_COMM_WORLD as the debugger knows it (-1 unknown). */
MQD_HIDDEN long mqd_process_global_rank(const struct mqd_process *p);
/* MPI-2: the identity the debugger gave the process the backend names key
 * (mqd_be_process_key of that process), or -1 if none has that key (job.c). */
MQD_HIDDEN long mqd_job_identity(struct mqd_process *p, const char *key);
/* The same for the key "WORLD#RANK" (rank in decimal) without making it:
 * 1 and *identity (-1 none), or 0 if the caller must make the key and ask
 * mqd_job_identity (a world no key names, a rank past MQD_MAX_COMM_SIZE). */
MQD_HIDDEN int mqd_job_identity_in(struct mqd_process *p, const char *world, long rank,
                                   long *identity);
/* The same for ranks 0 to n-1 of world at once, into out[0..n-1]: 1, or 0
 * (out unspecified) if the caller must ask rank by rank.  Every rank of a
 * world names all of it: an array copied where n look-ups would be. */
MQD_HIDDEN int mqd_job_identities_in(struct mqd_process *p, const char *world, long n,
                                     long *out);

/* ---------------------------------------------------------------- the target */

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
 * mqd_walk_visit with each node's successor.  It fails with MQD_ERR_CYCLE
 * when a node comes back and MQD_ERR_TOO_LONG past MQD_MAX_LIST nodes.
 */
struct mqd_walk {
    int n, cap;
    mqs_taddr_t *seen; /* open-addressing set */
};
MQD_HIDDEN void mqd_walk_init(struct mqd_walk *w);
MQD_HIDDEN int mqd_walk_visit(struct mqd_walk *w, mqs_taddr_t node);
MQD_HIDDEN void mqd_walk_fini(struct mqd_walk *w);

/* ---------------------------------------------------------------- types */

/*
 * A type by name, as every kind of debugger can resolve it (NULL if none
 * does).  Hosts differ: one that indexes DWARF finds a struct by its tag
 * ("MPIDI_VC") and by its typedef ("MPIDI_VC_t"); one that evaluates C
 * type names as gdb does knows the typedef or "struct MPIDI_VC", never the
 * bare tag; an MPI's own stub debugger knows only the names its DLL asks
 * for.  So the name as written, then "struct NAME", then the other half
 * of C's "typedef struct X {...} X_t" convention (X_t for X, X and
 * struct X for X_t).
 */
MQD_HIDDEN mqs_type *mqd_find_type(mqs_image *image, const mqs_image_callbacks *cb,
                                   const char *name);
/*
 * The offset of a field path, each step "TYPE:FIELD" and steps joined by
 * '/' ("MPIR_Request:dev/MPIDI_Request:user_count"): one mqd_find_type and
 * mqs_field_offset per step, so that any debugger resolves it, not only
 * those that understand dotted names.  -1 if a step is unknown, or the
 * total exceeds MQD_MAX_OFFSET.
 */
MQD_HIDDEN int mqd_path_offset(mqs_image *image, const mqs_image_callbacks *cb, const char *path);

/*
 * The same through any source of types: step(ctx, "T", "f") the offset of
 * field f in type T, step(ctx, "T", NULL) T's size, -1 if none (a known
 * layout's table, where no DWARF is reachable).  mqd_debugger_step is the
 * debugger's, its ctx a struct mqd_debugger_types.
 */
typedef int (*mqd_step_fn)(const void *ctx, const char *type, const char *field);
MQD_HIDDEN int mqd_path_offset_by(mqd_step_fn step, const void *ctx, const char *path);
/*
 * The types one probe of an image looked up, found or not, by name: a
 * field table names the same few types again and again (MPICH's, its
 * request type some 25 times), and each look-up is up to four of the
 * debugger's (mqd_find_type).  A full memo looks up afresh.
 */
struct mqd_type_memo {
    int n;
    int last; /* the entry found last: paths name one type field after field */
    struct {
        unsigned hash; /* of name (a cheap first test) */
        char name[64];
        mqs_type *type;
    } v[48];
};
/* mqd_find_type through memo (NULL: none). */
MQD_HIDDEN mqs_type *mqd_find_type_memo(mqs_image *image, const mqs_image_callbacks *cb,
                                        struct mqd_type_memo *memo, const char *name);
struct mqd_debugger_types {
    mqs_image *image;
    const mqs_image_callbacks *cb;
    struct mqd_type_memo *memo; /* may be NULL */
};
MQD_HIDDEN int mqd_debugger_step(const void *ctx, const char *type, const char *field);
/* mqd_path_offset, its types looked up through memo. */
MQD_HIDDEN int mqd_path_offset_memo(mqs_image *image, const mqs_image_callbacks *cb,
                                    struct mqd_type_memo *memo, const char *path);

/* ---------------------------------------------------------------- text */

/* Copy at most 63 bytes of s into the interface's 64-byte fields. */
MQD_HIDDEN void mqd_set_text(char dst[64], const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Add line to op's extra_text after those it has, if one is free. */
MQD_HIDDEN void mqd_add_text(mqs_pending_operation *op, const char *line);

#endif
