/*
 * handles.h - private to the DLL's vendor-neutral files (entry.c,
 * target.c, job.c; never a backend): the records behind the handles the
 * debugger keeps for the DLL (mqs_put_image_info, mqs_put_process_info,
 * mqs_put_job_info), and the debugger's callback table.
 *
 * Naming: what a backend may call is target.h's mqd_*, what it implements
 * backend.h's mqd_be_*.  Functions shared between the vendor-neutral files
 * and nothing else carry two underscores, mqd__*, so that no backend
 * mistakes them for the porting interface.
 */
#ifndef MQD_DLL_HANDLES_H
#define MQD_DLL_HANDLES_H

#include "backend.h"

/* An image (mqs_setup_image): hung on the debugger's image even when the
 * backend fails, so that mqs_image_has_queues can say why. */
struct mqd_image {
    const mqs_image_callbacks *cb;
    void *backend;
    int setup_rc; /* why backend is NULL */
    char explain[256];
};

/* A process (mqs_setup_process), as the services of target.h see it.  The
 * entry points keep it as the first member of their own record
 * (entry.c), with the communicator cache and the iterators. */
struct mqd_process {
    mqs_process *process;
    const mqs_process_callbacks *cb;
    struct mqd_image *image;
    void *backend;
    mqs_target_type_sizes sizes;
    int byte_order; /* how its mqs_target_to_host converts (target.c): 0 not seen yet */
    struct mqd_job *job; /* its MPI-2 job, once found (mqd__job_of) */
    int setup_rc; /* why backend is NULL */
    char explain[256];
};

/*
 * The only mutable global state (target.c): the debugger's basic
 * callbacks (the ABI hands them over once, at load) and whether it speaks
 * MPI-2, which says whether the MPI-2 members of its callback tables
 * exist at all.
 */
/* The table, or NULL before the debugger gave a usable one (borrowed). */
MQD_HIDDEN const mqs_basic_callbacks *mqd__basic(void);
/* A new table (NULL: none usable); the debugger is MPI-1 until it calls
 * mqs_setup_job. */
MQD_HIDDEN void mqd__set_basic(const mqs_basic_callbacks *cb);
MQD_HIDDEN int mqd__mpi2(void);
MQD_HIDDEN void mqd__set_mpi2(void);

/*
 * MPI-2 (job.c): the job's table from the MPI library's own name of a
 * process (a backend's key) to the identity the debugger gave it.
 */
struct mqd_job;
/* A new, empty table for the debugger's job (callbacks borrowed); NULL if
 * out of memory.  Freed by mqd__job_free, which accepts NULL. */
MQD_HIDDEN struct mqd_job *mqd__job_new(const mqs_job_callbacks *cb);
MQD_HIDDEN void mqd__job_free(struct mqd_job *job);
/* The job of a process, once the debugger has set one up (MPI-2); else NULL. */
MQD_HIDDEN struct mqd_job *mqd__job_of(struct mqd_process *p);
/* File key under identity (replacing the identity an entry had). */
MQD_HIDDEN int mqd__job_register(struct mqd_job *job, const char *key, int identity);
/* Moves whenever an entry is added or changed. */
MQD_HIDDEN unsigned mqd__job_generation(const struct mqd_job *job);

/*
 * A process as the entry points keep it: the record the services read
 * (first, so that the debugger's handle is one pointer for both), and
 * what the debugger's walks need between calls.
 */
struct process_state {
    struct mqd_process base;
    int identity; /* MPI-2: given by the debugger; -1 until then */

    /* Communicators: re-read only when the backend says the list moved,
     * or (MPI-2) when the job's identity table has changed since. */
    uint64_t stamp;
    unsigned job_generation;
    int have_comms;
    struct mqd_comm *comms;
    int ncomms;
    int comm_pos; /* the iterator; -1 before setup */

    /* Queues: read whole, once per stop, then shown per communicator. */
    int queue_read[3], queue_rc[3];
    struct mqd_ops queues[3];
    int op_queue, op_pos, op_state; /* op_state: 0 none, 1 iterating */
    /* What mqd_get_operation_info says of the last operation returned. */
    int op_returned;
    unsigned op_flags;
    uint64_t op_request;
};

/* The process of a call that needs one set up with its backend; NULL if
 * there is none (MQD_ERR_NOT_SET_UP). */
MQD_HIDDEN struct process_state *mqd__ready(mqs_process *process);
/* A peer's global rank (an identity under MPI-2) in c; -1 if unknown. */
MQD_HIDDEN long mqd__to_global(const struct mqd_comm *c, long peer);

#endif
