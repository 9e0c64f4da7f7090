/*
 * mpi_interface.h - the MPI Message Queue Dumping (MQD) interface.
 *
 * The contract between a debugger (the "host") and a message-queue debug
 * library (the "DLL") that an MPI vendor ships.  The debugger dlopen()s the
 * DLL into itself; the DLL walks the MPI library's communicator and queue
 * lists in a stopped target process, reading target memory and type
 * information only through the callbacks the debugger supplies.
 *
 * Written for mqd from "MPI Message Queue Dumping", J. Cownie, v1.06
 * (9 October 2000), including its MPI-2 job and process-identity extension.
 * Everything here is binary compatible with the mpi_interface.h that MPICH
 * and Open MPI ship: the same type sizes, struct layouts and field order,
 * enum values and callback-table order.  Real debuggers load real vendor DLLs
 * with that header, so any difference here is a bug; tests/test_interface.c
 * pins every size, offset and value.
 *
 * The MPI-1 part is always declared.  The MPI-2 part (jobs, identities,
 * spawned processes) is declared only when FOR_MPI2 is defined to a non-zero
 * value; it appends members to the basic and process callback tables, so a
 * DLL must not read those members unless the debugger has told it, by
 * calling mqs_setup_job(), that it was built with them.
 */
#ifndef MPI_INTERFACE_H_INCLUDED
#define MPI_INTERFACE_H_INCLUDED

#include <stddef.h> /* size_t */
#include <stdio.h>  /* FILENAME_MAX, for mqs_process_location */

#ifdef __cplusplus
extern "C" {
#endif

/*
 * MQS_FOR_MPI2_ is 1 when FOR_MPI2 is defined as non-zero or as nothing,
 * 0 when it is undefined or defined as 0 (the specification's MPI-1 case).
 */
#if defined(FOR_MPI2) && (0 - FOR_MPI2 - 1 != -1)
#define MQS_FOR_MPI2_ 1
#else
#define MQS_FOR_MPI2_ 0
#endif

/*
 * The version of the interface a DLL was compiled against, as returned by
 * mqs_version_compatibility().  2 is the MPI-1 interface; 3 adds the MPI-2
 * calls.  A DLL that implements the MPI-2 calls but also wants MPI-1-only
 * debuggers to load it answers 2 (they are upwards compatible).
 */
enum {
#if MQS_FOR_MPI2_
    MQS_INTERFACE_COMPATIBILITY = 3
#else
    MQS_INTERFACE_COMPATIBILITY = 2
#endif
};

/* ---------------------------------------------------------------------
 * Opaque types.  The debugger owns mqs_image, mqs_process, mqs_job and
 * mqs_type; the DLL owns whatever it hangs on them (the *_info types) and
 * casts them to its own concrete types.
 */
typedef struct _mqs_image_info mqs_image_info;
typedef struct _mqs_process_info mqs_process_info;
typedef struct mqs_image_ mqs_image;
typedef struct mqs_process_ mqs_process;
typedef struct mqs_type_ mqs_type;
#if MQS_FOR_MPI2_
typedef struct _mqs_job_info mqs_job_info;
typedef struct mqs_job_ mqs_job;
#endif

/*
 * Target addresses and words, wide enough for any target the debugger can
 * handle.  The DLL tells the debugger which width it was compiled with
 * through mqs_dll_taddr_width().
 */
#if !defined(FORCE_32BIT_MPI) && (defined(__sgi) || defined(__hpux) || defined(_AIX))
typedef unsigned long long mqs_taddr_t;
typedef long long mqs_tword_t;
#else
typedef unsigned long mqs_taddr_t;
typedef long mqs_tword_t;
#endif

/*
 * Sizes of the basic types in the target, filled in by the debugger's
 * mqs_get_type_sizes callback.  Open MPI's debuggers append two more ints
 * (bool_size, size_t_size): a host must pass a zeroed buffer of at least
 * seven ints, and a DLL must read only these five.
 */
typedef struct {
    int short_size;
    int int_size;
    int long_size;
    int long_long_size;
    int pointer_size;
} mqs_target_type_sizes;

/* Result codes.  DLL-specific codes start at mqs_first_user_code. */
enum {
    mqs_ok = 0,
    mqs_no_information,
    mqs_end_of_list,
    mqs_first_user_code = 100
};

/* The language of a name looked up through mqs_find_function/find_type. */
typedef enum {
    mqs_lang_c = 'c',
    mqs_lang_cplus = 'C',
    mqs_lang_f77 = 'f',
    mqs_lang_f90 = 'F'
} mqs_lang_code;

/* The three queues of a communicator, for mqs_setup_operation_iterator. */
typedef enum {
    mqs_pending_sends,
    mqs_pending_receives,
    mqs_unexpected_messages
} mqs_op_class;

/* An identity that names no process (MPI-2). */
enum {
    MQS_INVALID_PROCESS = -1
};

/* The state of a pending operation (mqs_pending_operation.status). */
enum mqs_status {
    mqs_st_pending,
    mqs_st_matched,
    mqs_st_complete
};

/* One communicator, as returned by mqs_get_communicator. */
typedef struct {
    mqs_taddr_t unique_id;  /* stable while the communicator exists */
    mqs_tword_t local_rank; /* this process's rank in it (MPI_Comm_rank) */
    mqs_tword_t size;       /* MPI_Comm_size */
    char name[64];          /* anything useful; always NUL-terminated */
} mqs_communicator;

/*
 * One queue entry, as returned by mqs_next_operation.  Ranks are -1 for
 * MPI_ANY_SOURCE; "global" ranks are indices in MPI_COMM_WORLD, or, for an
 * MPI-2 job, the identities the debugger assigned (its COMM_UNIVERSE).
 */
typedef struct {
    /* Valid for every operation. */
    int status;                      /* really enum mqs_status */
    mqs_tword_t desired_local_rank;  /* peer; -1 for any */
    mqs_tword_t desired_global_rank; /* the same peer in COMM_WORLD */
    int tag_wild;                    /* non-zero for MPI_ANY_TAG */
    mqs_tword_t desired_tag;         /* only meaningful if !tag_wild */
    mqs_tword_t desired_length;      /* size of the buffer, in bytes */
    int system_buffer;               /* non-zero if the buffer is MPI's */
    mqs_taddr_t buffer;              /* where the data is */

    /* Valid once status >= mqs_st_matched, or for a send. */
    mqs_tword_t actual_local_rank;
    mqs_tword_t actual_global_rank;
    mqs_tword_t actual_tag;
    mqs_tword_t actual_length;

    /*
     * Up to five lines the debugger shows verbatim, stopping at the first
     * empty one: a DLL that fills line i must empty line i+1 (if i < 4).
     */
    char extra_text[5][64];
} mqs_pending_operation;

#if MQS_FOR_MPI2_
/* A process created by MPI_Comm_spawn, as returned by next_new_process. */
typedef struct mqs_process_location {
    long pid;
    char image_name[FILENAME_MAX];
    char host_name[64];
} mqs_process_location;
#endif

/* ---------------------------------------------------------------------
 * Callbacks: functions the debugger supplies to the DLL.
 */

/* Storage from the debugger's heap.  malloc may return NULL; free takes NULL. */
typedef void *(*mqs_malloc_ft)(size_t);
typedef void (*mqs_free_ft)(void *);
/* Print a diagnostic line on the debugger's log. */
typedef void (*mqs_dprints_ft)(const char *);
/* Describe one of the debugger's own error codes (never NULL). */
typedef char *(*mqs_errorstring_ft)(int);

/* Hang DLL data on an image / process, and get it back (NULL if none). */
typedef void (*mqs_put_image_info_ft)(mqs_image *, mqs_image_info *);
typedef mqs_image_info *(*mqs_get_image_info_ft)(mqs_image *);
typedef void (*mqs_put_process_info_ft)(mqs_process *, mqs_process_info *);
typedef mqs_process_info *(*mqs_get_process_info_ft)(mqs_process *);

/* Image queries.  find_* return mqs_ok and fill the address, or an error. */
typedef void (*mqs_get_type_sizes_ft)(mqs_process *, mqs_target_type_sizes *);
typedef int (*mqs_find_function_ft)(mqs_image *, char *, mqs_lang_code, mqs_taddr_t *);
typedef int (*mqs_find_symbol_ft)(mqs_image *, char *, mqs_taddr_t *);
/* A struct, union or typedef by name; NULL if the image has no such type. */
typedef mqs_type *(*mqs_find_type_ft)(mqs_image *, char *, mqs_lang_code);
/* Byte offset of a field, or -1 if the type has no such field. */
typedef int (*mqs_field_offset_ft)(mqs_type *, char *);
/* Size of a type in bytes. */
typedef int (*mqs_sizeof_ft)(mqs_type *);

/* Process queries. */
typedef int (*mqs_get_global_rank_ft)(mqs_process *);
typedef mqs_image *(*mqs_get_image_ft)(mqs_process *);
/* Read exactly n bytes of target memory at addr; mqs_ok or an error code. */
typedef int (*mqs_fetch_data_ft)(mqs_process *, mqs_taddr_t, int, void *);
/* Convert an n-byte target-ordered integer to host order. */
typedef void (*mqs_target_to_host_ft)(mqs_process *, const void *, void *, int);

#if MQS_FOR_MPI2_
typedef mqs_process *(*mqs_get_process_ft)(mqs_job *, int);
typedef void (*mqs_put_job_info_ft)(mqs_job *, mqs_job_info *);
typedef mqs_job_info *(*mqs_get_job_info_ft)(mqs_job *);
typedef mqs_job *(*mqs_get_process_job_ft)(mqs_process *);
/*
 * The identity the debugger gave a process.  The specification and the
 * headers MPICH and Open MPI ship declare the parameter as mqs_job *, which
 * cannot name a process; the argument passed is the process.  Pointer
 * parameters share one calling convention, so the ABI is the same.
 */
typedef int (*mqs_get_process_identity_ft)(mqs_process *);
#endif

/* The callback tables, member order fixed by the ABI.  No member is NULL. */
typedef struct mqs_basic_callbacks {
    mqs_malloc_ft mqs_malloc_fp;
    mqs_free_ft mqs_free_fp;
    mqs_dprints_ft mqs_dprints_fp;
    mqs_errorstring_ft mqs_errorstring_fp;
    mqs_put_image_info_ft mqs_put_image_info_fp;
    mqs_get_image_info_ft mqs_get_image_info_fp;
    mqs_put_process_info_ft mqs_put_process_info_fp;
    mqs_get_process_info_ft mqs_get_process_info_fp;
#if MQS_FOR_MPI2_
    mqs_put_job_info_ft mqs_put_job_info_fp;
    mqs_get_job_info_ft mqs_get_job_info_fp;
#endif
} mqs_basic_callbacks;

#if MQS_FOR_MPI2_
typedef struct mqs_job_callbacks {
    mqs_get_process_ft mqs_get_process_fp;
} mqs_job_callbacks;
#endif

typedef struct mqs_image_callbacks {
    mqs_get_type_sizes_ft mqs_get_type_sizes_fp;
    mqs_find_function_ft mqs_find_function_fp;
    mqs_find_symbol_ft mqs_find_symbol_fp;
    mqs_find_type_ft mqs_find_type_fp;
    mqs_field_offset_ft mqs_field_offset_fp;
    mqs_sizeof_ft mqs_sizeof_fp;
} mqs_image_callbacks;

typedef struct mqs_process_callbacks {
    mqs_get_global_rank_ft mqs_get_global_rank_fp;
    mqs_get_image_ft mqs_get_image_fp;
    mqs_fetch_data_ft mqs_fetch_data_fp;
    mqs_target_to_host_ft mqs_target_to_host_fp;
#if MQS_FOR_MPI2_
    mqs_get_process_job_ft mqs_get_process_job_fp;
    mqs_get_process_identity_ft mqs_get_process_identity_fp;
#endif
} mqs_process_callbacks;

/* ---------------------------------------------------------------------
 * Entry points: functions the DLL exports, in the order a debugger calls
 * them.  Unless said otherwise they return mqs_ok or an error code that
 * mqs_dll_error_string() describes.
 */

/* Checked right after dlopen, before anything else. */
extern const char *mqs_version_string(void);
extern int mqs_version_compatibility(void);
/* Always sizeof(mqs_taddr_t) as the DLL was compiled. */
extern int mqs_dll_taddr_width(void);
/* A printable description of any code the DLL returned; never NULL. */
extern const char *mqs_dll_error_string(int);

/* Called once, when the DLL is loaded; the table outlives the DLL's use. */
extern void mqs_setup_basic_callbacks(const mqs_basic_callbacks *);

/* Per executable image. */
extern int mqs_setup_image(mqs_image *, const mqs_image_callbacks *);
/* *msg, if set, is a printf format taking the image name, shown to the user. */
extern int mqs_image_has_queues(mqs_image *, const char **msg);
extern void mqs_destroy_image_info(mqs_image_info *);

/* Per process. */
extern int mqs_setup_process(mqs_process *, const mqs_process_callbacks *);
extern int mqs_process_has_queues(mqs_process *, char **msg);
extern void mqs_destroy_process_info(mqs_process_info *);

/* Queue display: refresh, then iterate communicators and their queues. */
extern int mqs_update_communicator_list(mqs_process *);
extern int mqs_setup_communicator_iterator(mqs_process *);
extern int mqs_get_communicator(mqs_process *, mqs_communicator *);
extern int mqs_next_communicator(mqs_process *);
/*
 * The global ranks of the current communicator's members, in local-rank
 * order, into an array of its size.  Optional for a DLL.
 */
extern int mqs_get_comm_group(mqs_process *, int *);
/*
 * An mqd extension, not in the interface's other implementations (a
 * debugger looks it up and does without it): the handle the program holds
 * for the current communicator (the bits of its MPI_Comm, zero-extended),
 * so that a call's comm argument, read from its stack frame, names one of
 * the communicators shown.  mqs_ok, or mqs_no_information.
 */
extern int mqd_get_comm_handle(mqs_process *, mqs_taddr_t *);
/*
 * An mqd extension, as mqd_get_comm_handle: what the interface's
 * mqs_pending_operation cannot say of the operation the last
 * mqs_next_operation returned.  *flags: MQD_OP_* bits; *request: the
 * address of its request in the target (0 if it has none).  A debugger uses
 * these, never the words of extra_text, to tell MPI's own traffic from the
 * program's and a process's addresses from its state.  mqs_ok, or
 * mqs_no_information (no operation returned since the last
 * mqs_setup_operation_iterator, or at its end).
 */
enum {
    MQD_OP_COLLECTIVE = 0x1, /* MPI's own traffic for a collective operation */
    /* Not marked a collective's, but it may be one: the MPI keeps no mark
     * of its collectives' sends (MPICH 4.1 and later under ch4), and this
     * send has a tag its nonblocking collectives use. */
    MQD_OP_MAYBE_COLLECTIVE = 0x2
};
/*
 * The tags of an operation marked MQD_OP_COLLECTIVE, as mqd's DLLs give
 * them, whatever their MPI's own numbering: a nonblocking collective's
 * traffic has MQD_NBC_FIRST_TAG + n - 1 for the n-th nonblocking collective
 * begun on its communicator (MPICH's own: MPIR_Sched_next_tag counts from
 * MPIR_FIRST_NBC_TAG, 287; libmqd_ompi.so maps libnbc's -26 - n there), so
 * that the same tag on two members is the same instance and a higher one a
 * later instance; a blocking collective's traffic has a fixed tag below it.
 * The MPI's own tag, where it differs, is in extra_text.
 */
#define MQD_NBC_FIRST_TAG 287
/* extra_text[line] names addresses or handles of this process (a request,
 * a datatype without a name), which may differ between processes in the
 * same state. */
#define MQD_OP_TEXT_ADDRESS(line) (0x100u << (line))
extern int mqd_get_operation_info(mqs_process *, unsigned *flags, mqs_taddr_t *request);
/*
 * An mqd extension, as mqd_get_comm_handle: what the MPI library says of
 * the process as a whole, as the last mqs_update_communicator_list found
 * it.  *flags: MQD_PROC_* bits.  mqs_ok, or mqs_no_information.
 */
enum {
    /* MPI_Finalize has begun, or has returned: the process sends and
     * receives nothing more of what its program asked for (what MPI_Finalize
     * itself does aside). */
    MQD_PROC_FINALIZED = 0x1
};
extern int mqd_get_process_state(mqs_process *, unsigned *flags);
/*
 * An mqd extension, as mqd_get_comm_handle: the operation behind one of the
 * program's requests, the handle it holds (an MPI_Request's bits,
 * zero-extended: a blocked MPI_Wait's argument), as the process is now.
 * Call it after mqs_update_communicator_list, so that comm names one of
 * the communicators mqs_get_communicator gives.  mqs_ok with *info filled;
 * mqs_no_information if the library keeps nothing the DLL can read of it
 * (info->text may say why); another code if the handle names no request
 * or the process's memory is corrupt.
 */
enum {
    /* info->kind */
    MQD_REQ_NULL = 0,              /* MPI_REQUEST_NULL: nothing to wait for */
    MQD_REQ_SEND = 1,              /* a nonblocking send */
    MQD_REQ_RECV = 2,              /* a nonblocking receive */
    MQD_REQ_PERSISTENT_SEND = 3,
    MQD_REQ_PERSISTENT_RECV = 4,
    MQD_REQ_PERSISTENT_COLL = 5,
    MQD_REQ_COLLECTIVE = 6,        /* a nonblocking collective (MPI_Ibarrier, ...) */
    MQD_REQ_GENERALIZED = 7,       /* MPI_Grequest_start: completed by the program */
    MQD_REQ_PARTITIONED = 8,
    MQD_REQ_RMA = 9,               /* MPI_Rput and the like */
    MQD_REQ_OTHER = 10,
    /* info->state */
    MQD_REQ_PENDING = 0,
    MQD_REQ_COMPLETE = 1,          /* done: a wait on it returns */
    MQD_REQ_INACTIVE = 2,          /* a persistent request not started: a wait returns */
    /* info->known: which of the fields below the library keeps */
    MQD_REQ_KNOWN_COMM = 0x1,
    MQD_REQ_KNOWN_PEER = 0x2,
    MQD_REQ_KNOWN_TAG = 0x4,
    MQD_REQ_KNOWN_SCHED_TAG = 0x8,
    /* A nonblocking collective's peer is the source of the receive its
     * schedule waits on next (without it, the destination of a send). */
    MQD_REQ_SCHED_RECEIVES = 0x10
};
typedef struct {
    int kind;                   /* MQD_REQ_* kind */
    int state;                  /* MQD_REQ_PENDING, _COMPLETE or _INACTIVE */
    unsigned known;             /* MQD_REQ_KNOWN_* bits */
    int pad_;
    mqs_taddr_t request;        /* the request object in the target */
    mqs_taddr_t comm;           /* its communicator: a unique_id of mqs_communicator */
    mqs_tword_t peer_local;     /* a send's destination, a receive's source in comm; -1 any;
                                 * a nonblocking collective's: the member its schedule
                                 * waits on next (MQD_REQ_SCHED_RECEIVES) */
    mqs_tword_t peer_global;    /* the same as a global rank (an identity); -1 unknown */
    mqs_tword_t tag;            /* its tag; -1 any (MPI_ANY_TAG) */
    mqs_tword_t sched_tag;      /* a nonblocking collective's schedule's tag (MPICH:
                                 * the n-th on a communicator has 287 + n - 1) */
    char text[64];              /* a line describing it, always terminated */
} mqd_request_info;
extern int mqd_get_request_info(mqs_process *, mqs_taddr_t handle, mqd_request_info *info);
/*
 * An mqd extension, as mqd_get_comm_handle: the schedule tag the next
 * nonblocking collective on communicator comm (a unique_id of
 * mqs_communicator, after mqs_update_communicator_list) will take
 * (*next_tag; MPICH: 287 + the number started on it so far).  A member
 * whose next tag is at most another member's request's sched_tag has not
 * started that instance.  mqs_ok, or mqs_no_information.
 */
extern int mqd_get_comm_nbc_tag(mqs_process *, mqs_taddr_t comm, mqs_tword_t *next_tag);
/*
 * Select queue (an mqs_op_class) of the current communicator.  Returns
 * mqs_ok, mqs_end_of_list (known empty) or mqs_no_information (unknown).
 */
extern int mqs_setup_operation_iterator(mqs_process *, int);
/* mqs_ok with *op filled, or mqs_end_of_list with *op untouched. */
extern int mqs_next_operation(mqs_process *, mqs_pending_operation *);

#if MQS_FOR_MPI2_
extern int mqs_setup_job(mqs_job *, const mqs_job_callbacks *);
/* Called after every process of the job has been destroyed. */
extern int mqs_destroy_job_info(mqs_job_info *);
extern int mqs_set_process_identity(mqs_process *, int);
/* The function to break on to learn of spawned processes, into buf[len]. */
extern int mqs_spawn_breakpoint_name(mqs_process *, char *buf, int len);
extern int mqs_setup_new_process_iterator(mqs_process *);
/* Named so by the specification; some vendors export mqs_next_new_process. */
extern int next_new_process(mqs_process *, mqs_process_location *);
extern int mqs_next_new_process(mqs_process *, mqs_process_location *);
#endif

#ifdef __cplusplus
}
#endif

#endif /* MPI_INTERFACE_H_INCLUDED */
