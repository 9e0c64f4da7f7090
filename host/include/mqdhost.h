/*
 * mqdhost.h - the debugger side of the MPI message queue dumping interface.
 *
 * libmqdhost loads an MQD debug DLL (mqd's libmqd_mpich.so, MPICH's
 * libtvmpich.so, Open MPI's libompi_dbg_msgq.so, ...), attaches to MPI
 * processes with ptrace, serves the DLL's callbacks (memory, ELF symbols,
 * DWARF types, the target's type sizes and byte order, MPI-2 jobs and
 * process identities) and returns what the DLL reports: every communicator
 * of every process, and its three queues.  Every process is detached before
 * a call returns, on every path, and is left running exactly as before.
 *
 * Ownership: an `**out` result belongs to the caller and is released with
 * its *_free function, which accepts NULL.  Strings inside results are owned
 * by the result.
 *
 * Return values, one convention for the whole API: a function that returns
 * int returns MQDH_OK (0) on success and a positive MQDH_E_* code on
 * failure (mqdh_strerror words it), except the few documented as returning
 * a count or an index:
 *
 *   - a count (mqdh_dump_merge, mqdh_world_size, mqdh_thread_path) is
 *     >= 0, and a failure is the negated code, -MQDH_E_*;
 *   - an index (mqdh_process_by_global) is >= 0, or -1 when there is none
 *     (it cannot fail).
 *
 * No function returns -1 for an error, and the code names what failed:
 * invalid arguments are MQDH_E_USAGE, a failed write MQDH_E_WRITE.  Each
 * function's comment lists its codes.
 */
#ifndef MQDHOST_H
#define MQDHOST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the shared library exports; it is built with -fvisibility=hidden. */
#if defined(__GNUC__)
#define MQDH_API __attribute__((visibility("default")))
#else
#define MQDH_API
#endif

/* Error codes and their messages: one list (never renumber). */
#define MQDH_ERRORS(X)                                                                        \
    X(MQDH_OK, 0, "success")                                                                   \
    X(MQDH_E_NOMEM, 1, "out of memory")                                                        \
    X(MQDH_E_USAGE, 2, "invalid argument")                                                     \
    X(MQDH_E_DLL_LOAD, 3, "the debug DLL cannot be loaded")                                    \
    X(MQDH_E_DLL_SYMBOL, 4, "the debug DLL lacks a required entry point")                      \
    X(MQDH_E_DLL_VERSION, 5, "the debug DLL speaks an unsupported interface version")          \
    X(MQDH_E_DLL_WIDTH, 6, "the debug DLL's target address width differs from the host's")     \
    X(MQDH_E_DLL_UNTRUSTED, 7, "the debug DLL named by the target is not trusted")             \
    X(MQDH_E_NO_DLL, 8, "no debug DLL is named for this process")                              \
    X(MQDH_E_ATTACH, 9, "cannot attach to the process")                                        \
    X(MQDH_E_IMAGE, 10, "cannot read the process's executable and libraries")                  \
    X(MQDH_E_READ, 11, "cannot read the process's memory")                                     \
    X(MQDH_E_DLL, 12, "the debug DLL reported an error")                                       \
    X(MQDH_E_NO_QUEUES, 13, "the process has no message queues the DLL can show")              \
    X(MQDH_E_JOB, 14, "cannot find the processes of the job")                                  \
    X(MQDH_E_RESULT, 15, "an agent's result is not valid")                                     \
    X(MQDH_E_REMOTE, 16, "a host's agent gave no result")                                      \
    X(MQDH_E_DLL_CRASHED, 17, "the debug DLL crashed")                                         \
    X(MQDH_E_DLL_TIMEOUT, 18, "the debug DLL did not return in time")                          \
    X(MQDH_E_WRITE, 19, "the output cannot be written")                                        \
    X(MQDH_E_NO_OWN_DLL, 20, "mqd's own debug DLL is not installed beside the library")       \
    X(MQDH_E_UNTRUSTED, 21, "the file is not trusted")

enum mqdh_error {
#define MQDH_ENUM_(name, value, msg) name = value,
    MQDH_ERRORS(MQDH_ENUM_)
#undef MQDH_ENUM_
};

/* The message for an error code; never NULL. */
MQDH_API const char *mqdh_strerror(int code);

/* The state of one queue of one communicator. */
enum mqdh_queue_state {
    MQDH_QUEUE_OK,      /* ops/nops are the entries (possibly none) */
    MQDH_QUEUE_NO_INFO, /* the DLL has no information about this queue */
    MQDH_QUEUE_ERROR    /* the DLL failed; error says how */
};

/* An operation's state (the interface's mqs_status). */
enum mqdh_op_status {
    MQDH_OP_PENDING,  /* not yet matched */
    MQDH_OP_MATCHED,  /* matched, data still moving */
    MQDH_OP_COMPLETE, /* done, not yet waited for */
    MQDH_OP_UNKNOWN   /* the DLL gave a value the interface does not define */
};

/* One queue entry: the interface's mqs_pending_operation, typed. */
struct mqdh_op {
    enum mqdh_op_status status;
    long desired_local_rank, desired_global_rank;
    int tag_wild;
    long desired_tag, desired_length;
    int system_buffer;
    uint64_t buffer;
    long actual_local_rank, actual_global_rank, actual_tag, actual_length;
    char extra_text[5][64]; /* always NUL-terminated; for people to read */
    /*
     * What the interface's record cannot say, from the DLL's
     * mqd_get_operation_info (an mqd extension: mpi_interface.h).  A DLL
     * without it marks nothing collective and gives no request; its
     * extra_text lines showing "0x" are then taken for address lines.
     */
    int collective;        /* MPI's own traffic for a collective operation */
    /* A send not marked collective that may be a collective's all the same:
     * its MPI keeps no mark of its collectives' sends (MPICH 4.1+ ch4) and
     * its tag is one a nonblocking collective may have.  (MQDH_VERSION 4:
     * padding on x86-64, but 4 more bytes on i686.) */
    int maybe_collective;
    uint64_t request;      /* its request's address in the target; 0 if unknown */
    unsigned text_address; /* bit l set: extra_text[l] names this process's
                              addresses or handles (may differ between
                              processes in the same state) */
};

struct mqdh_queue {
    enum mqdh_queue_state state;
    int nops;
    struct mqdh_op *ops;
    char *error; /* NULL unless state is MQDH_QUEUE_ERROR */
};

/* The queues, indexed by the interface's mqs_op_class. */
enum { MQDH_SENDS, MQDH_RECEIVES, MQDH_UNEXPECTED, MQDH_NQUEUES };

struct mqdh_comm {
    uint64_t unique_id;
    long local_rank, size;
    char name[64]; /* always NUL-terminated */
    struct mqdh_queue queues[MQDH_NQUEUES];
    /*
     * The communicator's (local) group from the DLL's mqs_get_comm_group:
     * size global ranks (MPI-2: identities), local rank order; NULL when
     * the DLL has no such function, has no information, or gave a group in
     * which this process is not at its own rank (group_error says so).
     */
    long *group;
    char *group_error;
    /*
     * The handle the program holds for it (its MPI_Comm's value), from the
     * DLL's mqd_get_comm_handle (an mqd extension: mpi_interface.h), so
     * that a call's comm argument (mqdh_process.where_comm) names it.
     */
    int has_handle;
    uint64_t handle;
};

struct mqdh_stats {
    unsigned long callbacks; /* calls from the DLL into the host */
    unsigned long fetches;   /* of which mqs_fetch_data */
    unsigned long bytes;     /* read from the target */
    unsigned long syscalls;  /* spent reading the target */
    double seconds;          /* wall time for this process's dump */
};

/* Why a process was dumped with the DLL it was. */
enum mqdh_dll_source {
    MQDH_DLL_NONE,        /* no DLL was loaded */
    MQDH_DLL_OPTION,      /* the caller's choice (mqdh_options.dll) */
    MQDH_DLL_ENVIRONMENT, /* $MQD_DLL */
    MQDH_DLL_OWN,         /* mqd's own, for an MPI mqd ships a DLL for */
    MQDH_DLL_TARGET       /* the one the process names (MPIR_dll_name, ...) */
};

/* What a process's program says of processes outside its world
 * (mqdh_process.other_worlds). */
enum mqdh_other_worlds {
    MQDH_WORLDS_UNKNOWN, /* not looked at, or its objects' symbols could not be read */
    MQDH_WORLDS_NONE,    /* it calls none of the functions that reach them */
    MQDH_WORLDS_MAYBE    /* it calls one (spawn, connect, accept, join, get_parent) */
};

struct mqdh_process {
    pid_t pid;
    int rank;     /* in its MPI_COMM_WORLD; -1 if unknown */
    /*
     * Which MPI_COMM_WORLD: 0 the job's own, W > 0 that of the W-th
     * MPI_Comm_spawn (its processes have ranks from 0 again); -1 unknown.
     */
    int world;
    /*
     * The MPI-2 identity given to the DLL, which names the process by it as
     * a global rank: unique in the dump; the rank itself in world 0, and
     * numbers after world 0's in the others.  -1 if the DLL is not MPI-2.
     */
    int identity;
    char *host;   /* NULL if unknown */
    char *image;  /* the executable */
    char *dll;    /* the DLL used; NULL if none */
    enum mqdh_dll_source dll_source;
    /* Why that DLL, one line: "mqd's DLL for MPICH (MPIR_All_communicators)". */
    char *dll_why;
    char *error;  /* NULL if the dump succeeded */
    /*
     * Where it is: the innermost MPI call (MPI_ or PMPI_ frame) one of its
     * threads is in, the main thread first (NULL: none, or not unwound;
     * where_error then says why if unwinding failed), the function outside
     * the MPI library that made the call, and its source position
     * (where_file NULL and where_line 0 without line information).
     */
    char *where_call, *where_function, *where_file, *where_error;
    int where_line;
    /* The thread in that call.  Set with where_call NULL: a call was found
     * there but could not be kept (no memory): not known, not "not in MPI". */
    pid_t where_tid;
    int ncomms;
    /*
     * The DLL says its MPI has finalized (mqd_get_process_state): MPI_Finalize
     * has begun, or has returned, and the process sends and receives nothing
     * more of what its program asked for.  (MQDH_VERSION 4: padding on
     * x86-64, but 4 more bytes on i686.)
     */
    int mpi_finalized;
    struct mqdh_comm *comms;
    struct mqdh_stats stats;
    /*
     * The MPI call's own arguments, read from its stopped frame where the
     * MPI library's debug information says where they are at that point
     * (DWARF location expressions): MQDH_ARG_* bits in where_args say
     * which were read; where_args_why (NULL if none) why one the call has
     * was not.  A negative source or tag of a call that blocks is
     * MPI_ANY_SOURCE or MPI_ANY_TAG (MPI_PROC_NULL never blocks).
     * where_comm is the communicator's handle (mqdh_comm.handle).
     */
    unsigned where_args;
    long where_source, where_dest, where_tag, where_root;
    uint64_t where_comm;
    char *where_args_why;
    /*
     * Where those arguments were read, one line (NULL if none was): "the
     * MPI library's debug information", or the caller's call site when the
     * library has none ("the call site in main at ring.c:21").
     */
    char *where_args_from;
    /*
     * The communicator where_comm is by value, where the MPI makes its
     * predefined communicators the same in every process (MPICH's handles,
     * Open MPI's ompi_mpi_comm_world object): "MPI_COMM_WORLD" or
     * "MPI_COMM_SELF"; NULL if it is none of them or not known.  Lets the
     * analysis name a call's communicator when no DLL showed it.
     */
    char *where_comm_name;
    /*
     * The size of its MPI_COMM_WORLD as its launcher told it (PMI_SIZE,
     * OMPI_COMM_WORLD_SIZE in its environment); 0 if unknown.  With it the
     * analysis knows when every member of a world is in the dump even where
     * no DLL showed MPI_COMM_WORLD.
     */
    int world_size;
    /*
     * Whether its program may talk to processes outside its world, by what
     * it imports (MPI_Comm_spawn, _connect, _accept, _join, _get_parent, in
     * any binding, in any object but the MPI library's): a call whose
     * communicator is not known may then name one of those.
     */
    enum mqdh_other_worlds other_worlds;
};

#define MQDH_ARG_SOURCE 0x1u
#define MQDH_ARG_DEST 0x2u
#define MQDH_ARG_TAG 0x4u
#define MQDH_ARG_ROOT 0x8u
#define MQDH_ARG_COMM 0x10u

/* ---------------------------------------------------------------- stacks */

/* Whose code a frame is in. */
enum mqdh_frame_kind {
    MQDH_FRAME_USER,  /* the program's: its executable, or a library outside the system's
                       * directories */
    MQDH_FRAME_MPI,   /* the MPI library (libmpi*, libpmpi*, libmpich*, and Open MPI's
                       * libopen-pal, libopen-rte and mca_*.so) */
    MQDH_FRAME_SYSTEM /* a library in /lib, /lib64, /usr/lib, /usr/lib64 (libc, ...), the
                       * vDSO, or code in no object */
};

/* One frame of a thread's stack. */
struct mqdh_frame {
    uint64_t pc;      /* where it is: the instruction (the innermost frame), else the call */
    char *function;   /* NULL: no symbol holds pc; a compiler's clone is named as written
                       * ("f", not "f.constprop.0") */
    char *module;     /* the object's path; NULL if none */
    char *file;       /* the source file, NULL without line information */
    int line;         /* 0 without */
    /* 1: a function inlined where the next frame out calls it (the same
     * pc), from the DWARF's inlined subroutines. */
    int inlined;
    enum mqdh_frame_kind kind;
};

/* One thread of a process, unwound. */
struct mqdh_thread {
    pid_t tid;
    int nframes;
    struct mqdh_frame *frames; /* innermost first */
    /* The MPI call it is in ("MPI_Recv"; NULL: none), and the index in
     * frames of the MPI library's outermost frame (the entry point the
     * program called; -1 if it is in no MPI library code). */
    char *call;
    int entry;
    char *error; /* why its unwinding stopped short of its start; NULL */
};

/* A process's threads, the main thread first (none if it was not unwound:
 * mqdh_process.where_error says why). */
struct mqdh_stack {
    int nthreads;
    struct mqdh_thread *threads;
};

/* ---------------------------------------------------------------- CPU time */

/* The CPU time one thread had used (user + system) when it was stopped. */
struct mqdh_thread_cpu {
    pid_t tid;
    uint64_t ns;
};

/*
 * The CPU time a process had used when it was stopped for the dump, so
 * that two dumps some seconds apart tell which threads ran between them.
 * Read from /proc while the process was stopped: the whole process's from
 * /proc/PID/stat (utime + stime, in clock ticks); each thread's from
 * /proc/PID/task/TID/schedstat (nanoseconds) where the kernel keeps it,
 * else from that thread's stat.
 */
struct mqdh_cpu {
    int known;     /* 0: not read (not attached here, /proc unreadable, or
                    * mqdh_options.no_cpu) */
    uint64_t ns;   /* the whole process's, threads that ended included */
    int nthreads;
    struct mqdh_thread_cpu *threads; /* its threads at the look, ascending tid */
};

struct mqdh_index;

/*
 * The layout of the structures of this header, in the results the library
 * makes: MQDH_VERSION in their `version` member.  Every structure's size
 * and every member's offset are fixed for x86-64 and i686 and checked
 * (tests/abi_host.c).  Structures only grow at their end (mqdh_options,
 * whose caller says its size), and a change to one that is an element of
 * an array (mqdh_process, mqdh_comm, mqdh_op, mqdh_wait, ...) is a new
 * MQDH_VERSION, symbol version node (MQDHOST_N) and soname
 * (libmqdhost.so.N).  Version 4 (library 0.3): version 3's, but for
 * mqdh_op.maybe_collective and mqdh_process.mpi_finalized, which fit in
 * padding on x86-64 and made those structures longer on i686.  A function
 * added later comes in a node of its own (MQDHOST_4.1, ...).
 */
#define MQDH_VERSION 4

/*
 * What the operation behind a request is (mqdh_request.kind), as the DLL
 * decodes it: the values of mqd_get_request_info's MQD_REQ_* kinds (an
 * mqd extension, mpi_interface.h).
 */
enum mqdh_request_kind {
    MQDH_REQ_NULL,            /* MPI_REQUEST_NULL */
    MQDH_REQ_SEND,
    MQDH_REQ_RECV,
    MQDH_REQ_PERSISTENT_SEND,
    MQDH_REQ_PERSISTENT_RECV,
    MQDH_REQ_PERSISTENT_COLL,
    MQDH_REQ_COLLECTIVE,      /* a nonblocking collective (MPI_Ibarrier, ...) */
    MQDH_REQ_GENERALIZED,
    MQDH_REQ_PARTITIONED,
    MQDH_REQ_RMA,
    MQDH_REQ_OTHER
};

/* One request a blocked MPI_Wait* call was given. */
struct mqdh_request {
    uint64_t handle;   /* the program's MPI_Request (its bits) */
    int decoded;       /* the DLL said what it is; else nothing below is known */
    enum mqdh_request_kind kind;
    /* Done (complete, MPI_REQUEST_NULL, or a persistent request not
     * started): a wait on it returns. */
    int done;
    int comm;          /* its communicator: index into the process's comms; -1 not known */
    int peer_known;    /* peer_local (-1: MPI_ANY_SOURCE) and peer_global are the request's */
    int tag_known;     /* tag (-1: MPI_ANY_TAG) is */
    long peer_local, peer_global, tag;
    long sched_tag;    /* a nonblocking collective's schedule tag (MPICH: 287 + n - 1 for
                        * the n-th on its communicator); -1 if not known */
    /* A nonblocking collective's peer (peer_known) is the member its
     * schedule waits on next: the source of a receive if set, else the
     * destination of a send. */
    int sched_receives;
    uint64_t address;  /* the request object: mqdh_op.request of its queue entry */
    char text[64];     /* the DLL's line for it */
};

/*
 * The requests of a process's blocked MPI_Wait, MPI_Waitall, MPI_Waitany
 * or MPI_Waitsome (mqdh_dump.requests[i]): read where the program keeps
 * them and decoded by the DLL.  n -1 if they were not read (why says
 * why); why also says why some were not decoded.  n 0 for a process in no
 * such call.
 */
struct mqdh_requests {
    int n;
    struct mqdh_request *v;
    char *why;
    /*
     * For any process, in a wait or not: the schedule tag each of its
     * communicators' next nonblocking collective will take (nbc_ncomms
     * entries, parallel to its comms; -1 not known), from the DLL's
     * mqd_get_comm_nbc_tag; NULL if the DLL said none.  A member whose
     * next tag is at most a request's sched_tag has not started that
     * instance.
     */
    int nbc_ncomms;
    long *nbc_next_tag;
};

struct mqdh_dump {
    unsigned version; /* MQDH_VERSION */
    int nprocs;
    struct mqdh_process *procs;
    /* The library's look-up of processes by global rank (mqdh_dump_index):
     * set in every dump the library returns; NULL in one built by hand. */
    struct mqdh_index *index;
    /* How the dump was made: the threads that set up and read the
     * processes (mqdh_options.jobs), and the ELF objects read (each once,
     * however many processes map it). */
    int workers;
    unsigned files;
    /* Every thread of every process, unwound: stacks[i] is procs[i]'s
     * (nprocs of them, freed with the dump).  NULL in a dump without
     * stacks (read from an agent that sends none); a caller building a
     * dump by hand sets it NULL or to nprocs stacks of its own making. */
    struct mqdh_stack *stacks;
    /* The CPU time each process had used when it was looked at: cpu[i]
     * is procs[i]'s (nprocs of them, freed with the dump; known 0 for a
     * process not read).  NULL in a dump without (built by hand, or read
     * from an agent that sends none).  A parallel array rather than a
     * member of mqdh_process, which is an element of an array and keeps
     * its layout within MQDH_VERSION 3. */
    struct mqdh_cpu *cpu;
    /* The requests of each process's blocked MPI_Wait* call: requests[i]
     * is procs[i]'s (nprocs of them, freed with the dump; an agent's
     * result and a saved dump keep them).  NULL in a dump without (built by
     * hand, or from a DLL that reads none): MPI_Wait* then waits on what
     * its queues hold. */
    struct mqdh_requests *requests;
};

/*
 * A dump's progress (mqdh_options.progress): counts, each only growing
 * but `fetching` (the fetches under way, which falls as each ends).
 * This host's processes are stopped together, unwound one by one, set up
 * and read by the workers, and let go together; other hosts' ranks go to
 * agents, started at most fanout at once.
 */
struct mqdh_progress {
    size_t size;         /* sizeof(struct mqdh_progress) as the library knows it */
    int to_stop;         /* this host's processes to stop */
    int stopped;         /* stopped (the others could not be attached) */
    int unwound;         /* whose stacks were unwound (or tried: where_error) */
    int read;            /* whose queues were read (or tried: error) */
    int let_go;          /* let go again */
    int agents;          /* agents to start, for the ranks of other hosts */
    int agents_started;  /* started */
    int agents_answered; /* over: answered, out of time, or could not start */
    int fetching;        /* debug files being fetched through debuginfod now */
    int fetched;         /* fetches over (the file fetched or not) */
    /* The file whose debug information is being fetched (the latest one
     * to start, while fetching > 0), else NULL; valid during the call. */
    const char *fetch_name;
};

struct mqdh_cache;

struct mqdh_options {
    /*
     * sizeof(struct mqdh_options) as the caller knows it (MQDH_OPTIONS_INIT
     * sets it): the library reads no member beyond it.  Less than
     * sizeof(size_t), 0 included, is refused (MQDH_E_USAGE).
     */
    size_t size;
    /*
     * The DLL to use for every process: a path (relative to the current
     * directory; no library search).  NULL: $MQD_DLL; else, for a process
     * of an MPI that mqd ships a DLL for (MPICH, recognised by its
     * symbols), mqd's own DLL, found next to libmqdhost.so (or in ../lib
     * from it); else the target's MPIR_dll_name, else the target's
     * mpimsgq_dll_locations (Open MPI), under the trust rule
     * (trust_target_dll).  An explicit path (this or $MQD_DLL) is the
     * user's choice and loaded as given, except when the library runs as
     * root (geteuid() == 0): then it too must pass the trust rule, since a
     * file that another user owns or can write would run that user's code
     * as root; trust_target_dll loads it anyway.  Whichever DLL it is, its
     * path is resolved once, opened without following a symbolic link,
     * checked, and loaded from that descriptor: what is loaded is what was
     * checked.
     */
    const char *dll;
    /* Skip mqd's own DLL: use the one the target names (trust rule applies). */
    int target_dll;
    /*
     * Load a DLL that fails the trust rule: one the target names, or, when
     * running as root, the one given in dll or $MQD_DLL.  The trust rule: a
     * regular file owned by root or by the invoking user and writable by
     * neither group nor others, in a directory of which the same holds,
     * and every directory above it owned by root or the invoking user and
     * writable by neither group nor others, except that a root-owned
     * sticky directory (/tmp) may be above it.
     */
    int trust_target_dll;
    /* Print the DLL's mqs_dprints messages on stderr. */
    int verbose;
    /*
     * Worker threads that set up and read the processes at once (the
     * processes are stopped, unwound and let go by the calling thread,
     * which ptrace requires).  0 chooses: one per 64 processes, up to one
     * per online CPU, when every process uses mqd's own DLL, which is
     * reentrant, else 1, since the interface does not promise that a DLL
     * may be called from two threads at once.  The result is the same
     * whatever the number.
     */
    int jobs;
    /*
     * Ranks on other hosts.  A process is attached only on its own host
     * (hosts[i] of mqdh_dump_processes names this host, or is NULL); the
     * others are dumped by one agent per host - mqdump --agent, the same
     * program on that host - started through the remote command, all
     * hosts at once, and their results merged into this dump.  A host's
     * ranks whose agent gives no result carry its reason as their error.
     */
    int local_only;         /* start no agent: other hosts' ranks are not dumped */
    /*
     * How to run a command on a host: words split at blanks (no shell),
     * each "{host}" replaced by the host's name, the agent's command line
     * appended.  NULL: $MQD_REMOTE, else "ssh -o BatchMode=yes {host}".
     * Or one command for all the hosts: "{hosts}" replaced by their names
     * comma-joined, "{nhosts}" by their count, and the agents' outputs
     * told apart by the label the command puts before each line (pdsh's
     * "host: ", srun --label's "N: "); remote_timeout is then the whole
     * command's.
     */
    const char *remote;
    /* The agent on the other hosts.  NULL: $MQD_AGENT, else the mqdump
     * next to this library (../bin/mqdump): clusters share file systems. */
    const char *agent_path;
    int remote_timeout;     /* seconds an agent has, from its start; 0: 60 */
    int fanout;             /* agents running at once; 0: 256 */
    /*
     * This call is an agent's (mqdump --agent): its processes are one
     * host's share of a job other hosts' agents dump too.  Each must be
     * this user's (any user's for root), and the DLL is given no MPI-2
     * job, so that every host's dump names a peer alike (by its rank in
     * MPI_COMM_WORLD) where a job table would know only this host's
     * processes.  A dump that finds ranks on other hosts does the same.
     */
    int as_agent;
    /*
     * Seconds the DLL has for each process, in each of its two passes
     * (set-up, then reading the queues).  0: 30; negative: no limit.  A
     * process whose DLL calls take longer is given up with
     * MQDH_E_DLL_TIMEOUT, and one on which the DLL crashes (a fault in the
     * DLL's code) with MQDH_E_DLL_CRASHED; the DLL is then not called
     * again, and the processes left to it are not read.  Either way, the
     * rest of the dump goes on and every process is let go.  While a dump
     * runs, the library handles SIGSEGV, SIGBUS, SIGILL and SIGFPE (passing
     * on those that are not a DLL's) and uses the signal SIGRTMIN + 4.
     */
    int dll_timeout;
    /*
     * Whose processes these must be (mqdump --job: the user its launcher
     * runs as, mqdh_job_owner), so that a launcher's table, which is its
     * user's word, names only that user's processes: a dump run as root
     * for that user's job is never steered onto anyone else's.  With
     * owner_set, a process any of whose user ids (real, effective, saved,
     * file system) is not owner, or which is not dumpable (it runs a setuid or setgid program,
     * or made itself so: its user could not trace it), is not attached
     * and carries an error saying why; the rule is checked before any
     * process is attached, and again once they are stopped.  The agents
     * of other hosts apply it too (mqdump --agent --owner UID: the same
     * user ids across the cluster).  owner_pid, if not 0, is whose user
     * that is (the launcher), named in those errors.
     */
    int owner_set;
    uid_t owner;
    pid_t owner_pid;
    /*
     * Told at each step of the dump (NULL: nothing is told):
     * progress(progress_arg, p), p the dump's counts so far (struct
     * mqdh_progress, valid during the call).  Each count only grows (but
     * fetching, the fetches under way), and
     * the library calls it at most once a process (or agent, or fetch) and
     * step, never in a loop.  It is called from the thread that called
     * mqdh_dump_processes or from one of its workers (jobs), never two
     * calls at once; it must return soon and call no function of the
     * library (the dump holds the processes stopped).  Showing the counts,
     * and how often, is the caller's business.
     */
    void (*progress)(void *progress_arg, const struct mqdh_progress *p);
    void *progress_arg;
    /*
     * What this dump may keep for later dumps of the same processes, and
     * use of what earlier ones kept (mqdh_cache_new; NULL: nothing kept):
     * the ELF objects they map, opened, their symbols, DWARF and CFI
     * indexed, so that a later dump holds the processes stopped only for
     * as long as reading their own state takes.  A file is known again by
     * the device and inode its maps give.  One dump at a time uses a
     * cache: another that finds it in use reads its files afresh, as
     * without one.  Since MQDHOST_4.1 (a caller whose size ends before it
     * keeps nothing).
     */
    struct mqdh_cache *cache;
    /*
     * Leave out the CPU times (every mqdh_cpu unknown: known 0, no
     * threads): no /proc file is read for them, the process's stat and
     * each thread's, for a dump that will not be compared with another
     * (mqdh_watch_compare) or saved for that.  A caller whose size ends
     * before it, and a library older than it (which reads no member past
     * cache), get them all.
     */
    int no_cpu;
    /*
     * How many of the first processes are the launcher's MPIR_proctable, in
     * its order (pids[i] its entry i, ranks[i] == i): they are world 0, of
     * that many processes, and their environments are not read for it (one
     * /proc file each).  0: each process's environment says its world and
     * the world's size (PMI_SIZE, OMPI_COMM_WORLD_SIZE), as for the
     * processes after them (MPI_Comm_spawn's, which no table lists).  A
     * long, past the end of MQDHOST_4.1's options on x86-64 too: a caller
     * built before it passes a size that ends before it, and reads them all.
     */
    long table_ranks;
    /*
     * Leave out the source lines and inlined functions of the MPI
     * library's own frames (MQDH_FRAME_MPI): each keeps its function (the
     * symbol holding it) and module, with file NULL, line 0 and no inlined
     * frames.  The program's frames, the call, its arguments, the paths
     * mqdh_thread_path gives without MQDH_STACKS_FULL (which fold those
     * frames), mqdh_user_frame and the analysis are the same; only a
     * stack shown whole needs them (mqdump --stacks).  Where the MPI
     * library has its DWARF, its line tables are most of a small job's
     * dump: libdw decodes and sorts a unit's whole table for one line.  A
     * caller whose size ends before it, and a library older than it, get
     * them all.
     */
    int brief_mpi_frames;
};

#define MQDH_OPTIONS_INIT {.size = sizeof(struct mqdh_options)}

/*
 * A cache of the files dumps read (mqdh_options.cache), for a tool that
 * looks at one job again and again (mqdump --sentinel): *out, empty, to
 * be freed with mqdh_cache_free (which accepts NULL) once no dump uses
 * it.  It holds the files open, and their indexes, until then.  MQDH_OK,
 * MQDH_E_USAGE (out NULL) or MQDH_E_NOMEM.  Since MQDHOST_4.1.
 */
MQDH_API int mqdh_cache_new(struct mqdh_cache **out);
MQDH_API void mqdh_cache_free(struct mqdh_cache *c);

/* ---------------------------------------------------------------- agents' results */

/*
 * The result an agent writes on its standard output and the front end
 * reads: text, one record a line, versioned (MQDH_RESULT_VERSION, the
 * first line "mqd-result 1"), documented in docs/RESULT.md.  Nothing in
 * it is ever executed: strings are escaped, and control characters come
 * out as '?'.
 */
#define MQDH_RESULT_VERSION 1

/*
 * Write dump d as a result to f, flushed.  MQDH_OK; MQDH_E_USAGE (f or d
 * NULL); MQDH_E_NOMEM; or MQDH_E_WRITE when f could not be written (f's
 * error indicator is set; errno says why).  Before MQDH_E_WRITE existed
 * (library 0.2) a write error was MQDH_E_USAGE.
 */
MQDH_API int mqdh_result_write(FILE *f, const struct mqdh_dump *d);

/*
 * Read a result from buf[len] (need not be NUL-terminated).  MQDH_OK and
 * *out (free with mqdh_dump_free); else MQDH_E_RESULT (corrupt, truncated,
 * another version: err[errlen] says what and on which line), MQDH_E_NOMEM,
 * or MQDH_E_USAGE (out NULL, or buf NULL with len > 0), with *out NULL.
 * err may be NULL.
 */
MQDH_API int mqdh_result_read(const char *buf, size_t len, struct mqdh_dump **out, char *err,
                              size_t errlen);

/*
 * Which of names[0..n-1] is this host, for an agent started on every host
 * of a list at once (mqdump --agent-any): the index of the first name
 * that is this host's own (gethostname, short or qualified); failing
 * that, of the first whose look-up gives an address of this host
 * (localhost, loopback, an interface's), all names looked up in parallel
 * within 5 s together; else -1.  *late (may be NULL): how many look-ups
 * had no answer in that time.
 */
MQDH_API int mqdh_host_find(const char *const *names, int n, int *late);

/*
 * Put the processes of results from[0..nfrom-1] in their places in into:
 * each takes the place of into's process with the same host and pid
 * (into's rank, world, identity and host are kept: the caller knows them
 * from the launcher).  A process no place is found for is dropped; the
 * results are left empty (free them as usual).  into is indexed again.
 * Returns a count: how many processes were placed; or -MQDH_E_USAGE (into
 * NULL, nfrom < 0, or from NULL with nfrom > 0) or -MQDH_E_NOMEM.
 */
MQDH_API int mqdh_dump_merge(struct mqdh_dump *into, struct mqdh_dump *const *from, int nfrom);

/*
 * Dump processes pids[0..n-1].  ranks may be NULL; else ranks[i] is pid i's
 * rank in MPI_COMM_WORLD (-1: find it from the process environment).  hosts
 * may be NULL.  All processes are stopped together, read, and let go.
 *
 * A process listed more than once (the same pid on the same host: hosts
 * entries that are equal, ignoring case, or that all name this host as
 * NULL, "localhost" or its host name) is dumped once, as its first entry;
 * each later entry keeps its pid and host, has rank, world and identity
 * -1, and the error "process P is listed twice: dumped once, as entry K"
 * (K its first entry's index), which counts as MQDH_E_ATTACH.
 *
 * While it stops the processes, the calling thread blocks SIGCHLD and
 * takes the SIGCHLDs the kernel sends a tracer for each stop (waiting for
 * them instead of polling); if it took one and the program handles
 * SIGCHLD, it raises SIGCHLD once after (a handler that reaps with
 * WNOHANG finds its own children as before).
 *
 * Returns MQDH_OK when every process was dumped; otherwise *out still holds
 * every process, each with its own error, and the code of the first
 * failure.  *out is NULL only for MQDH_E_NOMEM and MQDH_E_USAGE (n < 0,
 * pids NULL with n > 0, or opt->size too small).
 */
MQDH_API int mqdh_dump_processes(const pid_t *pids, const int *ranks, const char *const *hosts, int n,
                        const struct mqdh_options *opt, struct mqdh_dump **out);

MQDH_API void mqdh_dump_free(struct mqdh_dump *d);

/* ---------------------------------------------------------------- showing strings */

/*
 * The strings of a dump, a job list and the library's messages are as
 * read: a target, a launcher, /proc and an agent choose them, and they may
 * hold any byte (a host name with a newline and a forged line after it, a
 * command line with a terminal's escape sequence).  Show them escaped.
 *
 * mqdh_escape writes s as text that does what it says: printable ASCII as
 * itself, but \\ for a backslash; \n \t \r \e; \xHH for any other control
 * byte, DEL, and a byte that is not part of valid UTF-8; valid UTF-8 as
 * itself, but \uHHHH for a code point a terminal or editor acts on (C1
 * controls, line and paragraph separators, bidirectional marks and
 * overrides).  Like snprintf: at most len - 1 bytes and a NUL into buf
 * (NULL with len 0: nothing), never part of an escape or of a character;
 * returns the length the whole of it takes.  s NULL is "".
 */
MQDH_API size_t mqdh_escape(char *buf, size_t len, const char *s);

/*
 * Escape every string of d in place (mqdh_escape): hosts, paths, errors,
 * names of calls, functions and files, communicator names and the DLL's
 * extra_text (the arrays cut at a whole character if they grow), for a view
 * that shows them to people.  A view whose format has its own escaping
 * (JSON) uses the dump as read.  MQDH_OK, or MQDH_E_NOMEM with the strings
 * that could not be escaped left as they were.
 */
MQDH_API int mqdh_dump_escape(struct mqdh_dump *d);

/*
 * Let go at once of every process the library holds stopped, for a signal
 * handler (SIGINT, SIGTERM, ...) of a program interrupted in the middle of
 * a dump, which must then exit: the interrupted call never returns sanely.
 * Async-signal-safe.
 */
MQDH_API void mqdh_release_all(void);

/* ---------------------------------------------------------------- analysis */

/* What a process is doing, as far as the wait-for analysis can tell. */
enum mqdh_activity {
    MQDH_ACT_UNKNOWN, /* not dumped, or not unwound: nothing is known */
    MQDH_ACT_RUNNING, /* not inside MPI */
    MQDH_ACT_IN_MPI,  /* in an MPI call that returns by itself (MPI_Test, ...) */
    MQDH_ACT_BLOCKED  /* in an MPI call that waits (MPI_Recv, MPI_Waitall, MPI_Barrier, ...) */
};

/* Why one process waits for another. */
enum mqdh_wait_kind {
    MQDH_WAIT_RECV,      /* a posted receive from it (or from any member: any_source) */
    MQDH_WAIT_SEND,      /* a send to it that waits for its receive */
    MQDH_WAIT_COLLECTIVE /* a collective it has not entered */
};

/*
 * One edge of the wait-for graph: process `from` cannot go on until process
 * `to` acts.  A process's edges with the same `group` are alternatives (an
 * OR: any one of them acting may free it); different groups are all needed
 * (an AND).  Indexes are into the dump's procs.
 */
struct mqdh_wait {
    int from, to, group;
    enum mqdh_wait_kind kind;
    int any_source;   /* a receive from MPI_ANY_SOURCE: one edge per member */
    int comm;         /* index into from's comms; -1: the MPI_COMM_WORLD of a process
                       * that shows none (in MPI_Finalize, or without queues); -2: not
                       * known (a call's comm not read, or not predefined: any other
                       * process may be the peer its rank names) */
    long peer_local;  /* the peer as from's operation names it; -1 ANY */
    long peer_global;
    long tag;         /* -1 with tag_wild; a collective wait: -1, or (MPI_Wait & co. on a
                       * nonblocking collective) the schedule tag of the instance that
                       * `to` started as another collective: neither completes */
    int tag_wild;
    /* Read from a call whose tag (tag_unknown) or peer (peer_unknown) was
     * not read: tag and peer_local then say nothing; the wait stands because
     * no value of them could make `to`'s call its partner (peer_unknown:
     * one edge per member, as any_source).  (In what was padding: the
     * layout of the members around them is unchanged.) */
    int tag_unknown;
    long bytes;
    /*
     * A collective wait on a member that is in the same rooted collective
     * (MPI_Bcast, MPI_Reduce, MPI_Gather, ...) but gives it another root:
     * MPI requires one root, so neither call can complete as made.  root
     * is from's, peer_root the member's (from the calls' arguments).
     */
    int roots_differ;
    int peer_unknown;
    long root, peer_root;
    int in_deadlock;  /* one of the edges that explain a deadlock */
    /*
     * Read from the calls alone: from's queues could not be read (its MPI
     * keeps none for debuggers), so the wait is the call it is blocked in
     * and that call's arguments, and `to` is blocked in a call that is no
     * partner of it.
     */
    int from_call;
    /* In words: mqdh_explain_wait. */
};

/*
 * A set of processes that can never go on: a cycle (AND model: each waits
 * for all its edges) or a knot (OR model: some wait for any one of several
 * processes, and every one of those is in the knot too); or an end
 * (MQDH_DEADLOCK_END): processes past MPI_Finalize, which wait for nobody
 * and will never act again, with the processes that wait on them directly.
 * Trimmed to the processes that cause it: those merely waiting on it are
 * `behind` it.
 */
enum { MQDH_DEADLOCK_END = 2 };
struct mqdh_deadlock {
    int knot; /* 0 a cycle, 1 a knot, MQDH_DEADLOCK_END an end */
    int nmembers;
    int *members; /* process indexes, ascending */
    int nwaits;
    int *waits;   /* indexes into the analysis's waits, by member */
};

/* What the analysis can say of the whole job. */
enum mqdh_verdict {
    MQDH_VERDICT_DEADLOCK, /* ndeadlocks > 0: each holds whatever was not seen */
    MQDH_VERDICT_NONE,     /* no deadlock: every process was seen, and every wait */
    MQDH_VERDICT_UNKNOWN   /* none found, but a process was not dumped or unwound, or a
                            * blocked process waits on what could not be seen (unseen) */
};

struct mqdh_analysis {
    unsigned version; /* MQDH_VERSION */
    int nprocs;
    enum mqdh_activity *activity; /* per process */
    int *stuck;                   /* per process: 1 if it can never go on */
    int nwaits;
    struct mqdh_wait *waits;      /* the whole wait-for graph */
    int ndeadlocks;
    struct mqdh_deadlock *deadlocks;
    int nbehind;
    int *behind;                  /* stuck, but only waiting on a deadlock */
    int nunseen;
    char **unseen;                /* what the analysis could not see, one line each */
    enum mqdh_verdict verdict;
    int nblind;                   /* processes whose wait or state could not be seen */
    /*
     * Processes whose waits were read from their calls alone (no queue of
     * theirs could be read): a deadlock among them rests on the calls, and
     * holds once the job has stopped moving (a message no queue showed
     * would by then have reached a process blocked in MPI).
     */
    int ncalls_only;
};

/*
 * Build the job's wait-for graph from a dump (its queues and where each
 * process is) and find what is provably deadlocked.  It only claims a
 * deadlock a process cannot leave whatever the parts it could not see hold;
 * those parts are listed in `unseen`.  Returns MQDH_OK, or MQDH_E_NOMEM or
 * MQDH_E_USAGE with *out NULL.
 */
MQDH_API int mqdh_analyze(const struct mqdh_dump *d, struct mqdh_analysis **out);
MQDH_API void mqdh_analysis_free(struct mqdh_analysis *a);

/*
 * Naming, shared by the analysis's explanations and every view of a dump:
 * how a wait reads in words, which process a global rank names, how a
 * process and a peer are called.
 *
 * The one-line explanation of wait w into buf[len] ("rank 3 waits in
 * MPI_Recv(source=4, ...) - rank 4 has no matching send pending").  relative: peers named
 * relative to the waiting process's rank ("rank-1": modulo the job's size),
 * and the waiting process left out, for views that fold ranks together.
 */
MQDH_API void mqdh_explain_wait(const struct mqdh_dump *d, const struct mqdh_wait *w,
                                int relative, char *buf, size_t len);

/*
 * An index: that in d->procs of the process a DLL's global rank g names,
 * the process with that MPI-2 identity, or with that rank for an MPI-1
 * DLL.  -1 if none (d NULL, g < 0, or not in the dump) or if that is
 * ambiguous (an MPI-1 DLL's rank, in a dump of more than one world).
 */
MQDH_API int mqdh_process_by_global(const struct mqdh_dump *d, long g);
/*
 * Index d's processes by global rank, so that mqdh_process_by_global (on
 * which the analysis and the views rely for every peer) takes O(log n)
 * rather than O(n).  The library does it for the dumps it returns; a
 * caller that builds or changes one (a merge, a test) calls it again.
 * MQDH_OK, MQDH_E_USAGE (d NULL), or MQDH_E_NOMEM (the look-up then scans,
 * as without one).
 */
MQDH_API int mqdh_dump_index(struct mqdh_dump *d);

/* How to name a process: "rank 3" (world 0), "world 1 rank 0" (spawned),
 * else "pid 4242", into buf[len]. */
MQDH_API void mqdh_process_label(const struct mqdh_process *p, char *buf, size_t len);

/* A count: how many of the dump's processes are in world `world` (0
 * counts those of unknown world too), the modulus of relative ranks; 0
 * for d NULL. */
MQDH_API int mqdh_world_size(const struct mqdh_dump *d, int world);

/*
 * A peer that an operation of process `self` (index in d->procs) names by
 * its rank `local` in the communicator and the DLL's global rank `global`,
 * into buf[len]: "ANY" (local < 0); "3" when that is the process's rank in
 * self's world; else with the process's label, "1 (rank 3)", "0 (world 1
 * rank 0)"; "1 (global 9)" for a process not in the dump.  relative: a peer
 * in self's world as "rank+1", "rank-1" (modulo its world's size).
 */
MQDH_API void mqdh_peer_text(const struct mqdh_dump *d, int self, long local, long global,
                             int relative, char *buf, size_t len);

/* ---------------------------------------------------------------- merged stacks */

/*
 * The thread of process i (index in d->procs) that the views show: the
 * one in its MPI call (where_tid), else its main thread; NULL if the dump
 * has no stack for it.
 */
MQDH_API const struct mqdh_thread *mqdh_shown_thread(const struct mqdh_dump *d, int i);

/* The innermost frame of the program's own code (MQDH_FRAME_USER) in that
 * thread, outside its MPI call if it is in one (a library the MPI library
 * calls is no part of the program, wherever it lies): where a process
 * outside MPI is at work, or the code that made the call; NULL if none. */
MQDH_API const struct mqdh_frame *mqdh_user_frame(const struct mqdh_dump *d, int i);

/* How mqdh_stack_tree and mqdh_thread_path merge. */
#define MQDH_STACKS_FULL 0x1u /* every frame: none folded into its library's entry point */

/* One frame of a path, as the merged tree shows it. */
struct mqdh_path_frame {
    const struct mqdh_frame *frame;
    /* The frame's, or, folded, the MPI call ("MPI_Waitall") or the system
     * library's function; "??" if unnamed.  file NULL and line 0 when
     * folded. */
    const char *function, *file;
    int line;
    int folded; /* the library's frames inside it are folded into it */
};

/* Paths longer than this are cut there (the tree takes this many frames
 * of a path). */
#define MQDH_PATH_MAX_FRAMES 512

/*
 * The frames of thread t the merged tree shows, outermost first, into
 * out[0 .. max-1]: from main (main_thread: t is the process's main
 * thread) or the thread's start, to the frame it is in, or, unless flags
 * has MQDH_STACKS_FULL, to the first frame of the MPI library or of a
 * system library, folded.  Returns a count: how many there are (more
 * than max: only max were written; 0 for t NULL).
 */
MQDH_API int mqdh_thread_path(const struct mqdh_thread *t, int main_thread, unsigned flags,
                              struct mqdh_path_frame *out, int max);

/*
 * One node of the merged call tree: a frame that the stacks of nprocs
 * processes pass through on the same path from their start.
 */
struct mqdh_stack_node {
    int parent; /* index in the tree's nodes; -1 for a root */
    int depth;  /* 0 for a root */
    /*
     * The frame, with the dump's strings (valid while the dump is).
     * function: "??" if unnamed; for a node folded, the MPI call the
     * program made ("MPI_Waitall") or the system library's function it
     * called.  file NULL, line 0 without line information (and for a
     * folded node).
     */
    const char *function, *module, *file;
    int line;
    int inlined; /* a function inlined into its parent */
    enum mqdh_frame_kind kind;
    int folded;  /* the library's frames inside it are folded into it */
    int nprocs;
    int *procs;  /* the processes through it: indexes into the dump's procs, ascending */
    int nthreads; /* the threads through it (more than nprocs where a process has several) */
};

struct mqdh_stack_tree {
    int nnodes;
    /* Depth first: each node's children after it, in the order of their
     * lowest process (the processes' order in the dump: ranks). */
    struct mqdh_stack_node *nodes;
    /* nodes[0 .. nshown-1] merge each process's shown thread
     * (mqdh_shown_thread): the main thread or the one in MPI; the nodes
     * after it, its other threads. */
    int nshown;
    int nprocs;   /* processes with a stack */
    int nothers;  /* threads in the second tree */
};

/*
 * Merge every stack of d into one prefix tree, STAT's: from main (the
 * main thread) or the thread's start function (the others), outward in.
 * Unless flags has MQDH_STACKS_FULL, the frames inside the MPI library's
 * entry point are folded into it, named by the call, and so are those
 * inside the first function of a system library the program called.
 * MQDH_OK and *out (free with mqdh_stack_tree_free; its strings are d's),
 * MQDH_E_USAGE (no stacks in d), or MQDH_E_NOMEM.
 */
MQDH_API int mqdh_stack_tree(const struct mqdh_dump *d, unsigned flags,
                             struct mqdh_stack_tree **out);
MQDH_API void mqdh_stack_tree_free(struct mqdh_stack_tree *t);

/*
 * The processes of a job from its launcher (e.g. hydra's mpiexec): its
 * MPIR_proctable, else the launcher's descendant processes that have an MPI
 * rank in their environment; then the processes its ranks spawned
 * (MPI_Comm_spawn), which no table lists, found among the launcher's
 * descendants, ranks in their own worlds.  On success *pids, *ranks and
 * *hosts (arrays of *n: the launched ranks in rank order, then the spawned
 * ones by world and rank; hosts entries may be NULL) belong to the caller:
 * free them with mqdh_job_free.  MQDH_OK; else MQDH_E_ATTACH or
 * MQDH_E_IMAGE (the launcher cannot be attached or read), MQDH_E_JOB (no
 * ranks found, or not as a job has them) or MQDH_E_NOMEM, with err[errlen]
 * saying why and the arrays NULL.
 */
MQDH_API int mqdh_job_ranks(pid_t launcher, pid_t **pids, int **ranks, char ***hosts, int *n, char *err,
                   size_t errlen);
MQDH_API void mqdh_job_free(pid_t *pids, int *ranks, char **hosts, int n);

/*
 * The user launcher runs as (its real user id): the only user whose
 * processes its table may name (mqdh_options.owner; mqdump --job reads it
 * before the table).  MQDH_OK, or MQDH_E_JOB with err[errlen] saying why
 * (no such process).
 */
MQDH_API int mqdh_job_owner(pid_t launcher, uid_t *uid, char *err, size_t errlen);

/* One MPI job seen on this node (mqdh_list_jobs). */
struct mqdh_job_info {
    pid_t launcher;  /* what to give mqdh_job_ranks / mqdump --job */
    int nranks;      /* processes with an MPI rank below it (spawned ones too) */
    uid_t uid;       /* the launcher's owner */
    char *launcher_cmd; /* its command line, spaces between arguments */
    char *program;   /* the executable of its lowest rank */
};

/*
 * The MPI jobs visible on this node: every process with an MPI rank in its
 * environment (PMI_RANK, PMI_ID, OMPI_COMM_WORLD_RANK, PMIX_RANK), grouped
 * under its launcher (the nearest ancestor that is mpiexec, mpirun,
 * srun, ... or, failing that, the parent of its process manager proxy).
 * Reads /proc only: stops nothing.  *out (of *n, by launcher pid) belongs to
 * the caller: mqdh_jobs_free.  MQDH_OK, or MQDH_E_NOMEM (also when /proc
 * cannot be listed) with *out NULL.
 */
MQDH_API int mqdh_list_jobs(struct mqdh_job_info **out, int *n);
MQDH_API void mqdh_jobs_free(struct mqdh_job_info *jobs, int n);

/*
 * Load and validate a DLL without dumping anything: every required entry
 * point present, mqs_version_compatibility() supported, mqs_dll_taddr_width()
 * equal to the host's.  Returns MQDH_OK and the DLL's version string in
 * version[versionlen] (and *mpi2, each if not NULL); else MQDH_E_DLL_LOAD,
 * MQDH_E_DLL_SYMBOL, MQDH_E_DLL_VERSION, MQDH_E_DLL_WIDTH,
 * MQDH_E_DLL_UNTRUSTED or MQDH_E_NOMEM, with the reason in err[errlen].
 * The path is loaded as mqdh_options.dll is: as given, but when running as
 * root a DLL that fails the trust rule is refused (MQDH_E_DLL_UNTRUSTED).
 */
MQDH_API int mqdh_dll_check(const char *path, char *version, size_t versionlen, int *mpi2, char *err,
                   size_t errlen);
/* The same; trust non-zero loads it even if it fails the trust rule (as
 * mqdh_options.trust_target_dll does). */
MQDH_API int mqdh_dll_check_trusting(const char *path, int trust, char *version,
                                     size_t versionlen, int *mpi2, char *err, size_t errlen);

/*
 * The path of mqd's own DLL for MPICH as this library finds it (next to
 * libmqdhost.so, else in ../lib from it), into buf[len]: the DLL a dump
 * uses for an MPICH process unless told otherwise.  MQDH_OK;
 * MQDH_E_NO_OWN_DLL if it is not there (or its path does not fit in len);
 * MQDH_E_USAGE for buf NULL with len > 0.  (Before MQDH_E_NO_OWN_DLL
 * existed, library 0.2, it returned 0 or -1.)
 */
MQDH_API int mqdh_own_dll(char *buf, size_t len);

/*
 * The trust rule the library applies to a DLL a target names, for a file
 * or directory a caller is about to load, run, read or write into as root
 * on another user's say (an environment variable kept by sudo -E, say):
 * as root (geteuid() == 0), path must be a regular file or a directory
 * that it and every directory above it are owned by root and writable by
 * neither group nor others (a sticky root-owned directory above it
 * allowed; for a directory, its own directory may be one too); anyone
 * else may use what they name.  use words the refusal, "as root, mqd will
 * not USE, since another user could change it" ("run it"; NULL "use it").
 * MQDH_OK; MQDH_E_UNTRUSTED with the reason in err (refused, or not
 * there); MQDH_E_USAGE for no path.
 */
MQDH_API int mqdh_path_trusted(const char *path, const char *use, char *err, size_t errlen);

/*
 * The program name as execvp would find it (a name with a '/' as it is,
 * else the first executable file of that name on $PATH, or on
 * /usr/local/bin:/usr/bin:/bin without one), into out[len], passing over,
 * as root, every file that fails mqdh_path_trusted: run out itself, never
 * the name through another search.  MQDH_OK; MQDH_E_UNTRUSTED (each one
 * found refused: the last reason in err); MQDH_E_USAGE (not found, or no
 * name).
 */
MQDH_API int mqdh_program_path(const char *name, char *out, size_t len, char *err,
                               size_t errlen);

/* ---------------------------------------------------------------- saved dumps */

/*
 * A dump kept in a file (mqdump --save, --load), to be shown again later by
 * any view, attached to a report or compared with another: one header line
 * that says what the file is, then the dump as an agent's result
 * (MQDH_RESULT_VERSION), stacks included.  docs/RESULT.md, "Saved dumps":
 *
 *   mqd-dump 1 DATE TOOL HOST COMMAND LAUNCHER
 *
 * MQDH_SAVED_VERSION is the header's format.  (Added beside MQDH_VERSION 3,
 * which stays: no structure above changed.)
 */
#define MQDH_SAVED_VERSION 1

/* What a saved dump says of itself.  Any string may be NULL (not known);
 * read back, its control characters come out as '?'. */
struct mqdh_saved {
    unsigned version; /* MQDH_SAVED_VERSION; read: the file's */
    int64_t time;     /* when it was made, seconds since the epoch; -1 unknown */
    char *tool;       /* what made it: "mqdump 0.2" */
    char *host;       /* the host it was made on */
    char *command;    /* the command line that made it */
    char *launcher;   /* the command line of the job's launcher (mpiexec ...) */
};

/*
 * Write dump d, saved, to f (flushed): the header from about (NULL: all
 * unknown; its version is ignored), then d as mqdh_result_write writes it.
 * MQDH_OK; MQDH_E_USAGE (f or d NULL); MQDH_E_NOMEM; MQDH_E_WRITE (f's
 * error indicator set, errno saying why).
 */
MQDH_API int mqdh_saved_write(FILE *f, const struct mqdh_dump *d, const struct mqdh_saved *about);

/*
 * Read a saved dump from buf[len] (need not be NUL-terminated), as hostile
 * as an agent's result.  MQDH_OK, *out (mqdh_dump_free) and, if about is
 * not NULL, *about (mqdh_saved_free); else MQDH_E_RESULT (not a saved
 * dump - an agent's result is refused too -, another format version,
 * corrupt or cut short: err[errlen] says what, and on which line of the
 * file), MQDH_E_NOMEM, or MQDH_E_USAGE (out NULL, or buf NULL with
 * len > 0), with *out (and *about) NULL.  err may be NULL.
 */
MQDH_API int mqdh_saved_read(const char *buf, size_t len, struct mqdh_dump **out,
                             struct mqdh_saved **about, char *err, size_t errlen);
MQDH_API void mqdh_saved_free(struct mqdh_saved *s);

/*
 * mqdh_job_ranks, and how the ranks were found into how[howlen] (how may
 * be NULL): "" when from the launcher's MPIR_proctable; else one line
 * saying they come from /proc - the launcher has no table (Open MPI 5's
 * prterun, unless the MPIR shim runs it; a node's prted daemon) or an
 * empty one -, which ranks, in which PMIx namespace, and what cannot be
 * seen from this node (ranks on other nodes: without a table, only their
 * own node's mqdump finds them).  Found in /proc, the launched ranks are
 * the launcher's descendants of its own user (every user id: no other
 * process's environment is read) with a rank in their environment
 * (PMI_RANK, PMI_ID, OMPI_COMM_WORLD_RANK, PMIX_RANK), all of one PMIx
 * namespace (PMIX_NAMESPACE; PRRTE's later ones, "BASE@N", are its
 * MPI_Comm_spawn children, added after them); a rank held twice, ranks
 * missing below the job's size (OMPI_COMM_WORLD_SIZE, PMI_SIZE) or below
 * the highest found, or two unrelated namespaces are MQDH_E_JOB, err
 * saying which - except under a node's daemon (prted, orted, proxy), whose
 * ranks are its node's share.
 */
MQDH_API int mqdh_job_ranks_how(pid_t launcher, pid_t **pids, int **ranks, char ***hosts,
                                int *n, char *how, size_t howlen, char *err, size_t errlen);

/* ---------------------------------------------------------------- two looks */

/*
 * What moved between two looks at the same processes (mqdump --watch S):
 * two dumps of the same list, in the same order (two calls of
 * mqdh_dump_processes), the processes running between them, compared
 * process by process: which stacks changed (at which frame, compared as
 * mqdh_thread_path folds them, so that MPI's progress loop spinning inside
 * one call is no change), which threads started or ended, which queue
 * entries appeared, went, or changed status or length, and the CPU time
 * each thread used inside the one MPI call it was in at both looks (MPI's
 * progress loop: no progress) or elsewhere.  What it finds is an
 * observation over time, beside the analysis of the second look: nothing
 * moved is how a hang is told from a slow job when no cycle can be shown.
 * A watch borrows nothing from the dumps (its strings are its own, as
 * read: escape them to show them).  Since library 0.3 (MQDHOST_4).
 */

/*
 * A frame in words, as every view writes it, into buf[len] (cut short if
 * it must be): "function at file:line" (the file's base name), else
 * "function (module)" (the module's), with " (inlined)" after the function
 * of an inlined frame; NULL function "??".  Since MQDHOST_4.
 */
MQDH_API void mqdh_frame_words(char *buf, size_t len, const char *function, const char *file,
                               int line, const char *module, int inlined);

/* Less CPU than this, in a thread outside MPI, is what the two looks
 * themselves cost it (stopping and resuming it): not counted as work. */
#define MQDH_WATCH_NOISE_SECONDS 0.0005

/* What changed in a process's queues. */
enum mqdh_change_what {
    MQDH_CHANGE_APPEARED,  /* an entry that was not there */
    MQDH_CHANGE_GONE,      /* an entry that is no longer there */
    MQDH_CHANGE_STATUS,    /* its status changed */
    MQDH_CHANGE_LENGTH,    /* its actual length changed (data moved) */
    MQDH_CHANGE_COMM_NEW,  /* a communicator that was not there */
    MQDH_CHANGE_COMM_GONE, /* a communicator that is no longer there */
};

/* One change in a process's queues between the two looks. */
struct mqdh_change {
    enum mqdh_change_what what;
    int queue;     /* MQDH_SENDS, ...; -1 for a communicator's change */
    char comm[64]; /* its communicator's name */
    struct mqdh_op op; /* the entry (the second look's, or the first's if gone) */
    enum mqdh_op_status status_before;
    long length_before;
    int count_before, count_after; /* entries in that queue at each look */
};

/* What one process did between the two looks (its index is the dumps'). */
struct mqdh_moves {
    int seen;        /* unwound at both looks: its stacks compared */
    const char *why; /* if not seen: why (static) */
    int queues;      /* its queues read at both looks, and compared */
    int moved;
    int maybe;       /* in a call that returns by itself at both looks, CPU spent */
    char *poll_call; /* that call */
    int cpu_known;
    double cpu_mpi, cpu_other; /* seconds: inside the one MPI call, elsewhere */
    pid_t cpu_tid;             /* the thread that used the most elsewhere; 0 none */
    char *cpu_before, *cpu_after; /* where it was at each look */
    int stack_changed;
    pid_t stack_tid;      /* the first thread whose stack changed */
    int stack_frame;      /* the first frame that differs, from the outermost */
    char *frame_before, *frame_after; /* that frame at each look; NULL: none */
    int threads_started, threads_ended;
    int nchanges;
    struct mqdh_change *changes;
};

/* Two looks compared, process by process. */
struct mqdh_watch {
    double seconds, elapsed; /* asked; from the first look's start to the second's */
    int nprocs;
    struct mqdh_moves *procs;
};


/*
 * Compare before and after, the second look taken `seconds` after the
 * first ended and `elapsed` after it began, into *out (free it with
 * mqdh_watch_free, which accepts NULL).  MQDH_OK; MQDH_E_USAGE (a NULL
 * argument, or dumps of different lengths); MQDH_E_NOMEM.
 */
MQDH_API int mqdh_watch_compare(const struct mqdh_dump *before, const struct mqdh_dump *after,
                                double seconds, double elapsed, struct mqdh_watch **out);
MQDH_API void mqdh_watch_free(struct mqdh_watch *w);

/* 1 if every process was seen at both looks and none moved: no stack, no
 * queue changed, no CPU spent outside MPI's progress loop; else 0 (and for
 * NULL). */
MQDH_API int mqdh_watch_nothing_moved(const struct mqdh_watch *w);

/* ---------------------------------------------------------------- a sentinel */

/*
 * A sentinel decides, look after look, when a job that nobody watches is
 * hung (mqdump --sentinel): the caller looks at the job every few seconds
 * (a dump of its processes, short with mqdh_options.cache), compares each
 * look with the one before (mqdh_watch_compare) and tells the sentinel.
 * A job is hung when nothing has moved for longer than its own past makes
 * likely: the quiet time (since the last look at which something moved)
 * reaches the threshold, which is the largest of
 *
 *   - the floor (6 looks: a job seen moving at every look);
 *   - factor (4) times the longest quiet time seen so far that ended in a
 *     move (a job that is quiet for minutes between its moves, and moves
 *     again, is learned to be so);
 *   - the quiet time that a job moving as this one did (the share of
 *     looks at which something moved, over the quiet times that ended)
 *     would show less than once in a thousand;
 *
 * but at most the caller's bound, if it gives one.  A look at which some
 * process could not be compared (not unwound, its CPU time not read) says
 * nothing either way: it does not end a quiet time (to learn from), and
 * the quiet time that can be a hang starts after it.
 * Something moved is the watch's own word (mqdh_moves.moved, .maybe): a
 * stack, a queue, a thread, CPU time outside MPI's progress loop.  What
 * the sentinel decides is an observation over time, not a proof; the
 * analysis of the last look says what it can prove.  Since MQDHOST_4.1.
 */
struct mqdh_sentinel;

/* How a sentinel decides; a member 0 takes its default. */
struct mqdh_sentinel_options {
    size_t size;     /* sizeof(struct mqdh_sentinel_options) as the caller knows it */
    double interval; /* the mean seconds between the caller's looks (default 10) */
    double floor;    /* the least quiet time that is a hang (default 6 intervals) */
    double bound;    /* quiet this long is a hang, whatever was learned (default: none) */
    double factor;   /* times the longest quiet time seen (default 4) */
};

#define MQDH_SENTINEL_OPTIONS_INIT {.size = sizeof(struct mqdh_sentinel_options)}

/* What a look says. */
enum mqdh_sentinel_says {
    MQDH_SENTINEL_FIRST,  /* the first look: nothing to compare it with */
    MQDH_SENTINEL_MOVED,  /* something moved since the look before */
    MQDH_SENTINEL_UNSURE, /* nothing seen moving, but a process was not compared */
    MQDH_SENTINEL_QUIET,  /* nothing moved, not for long enough to be a hang */
    MQDH_SENTINEL_HUNG    /* nothing moved for the threshold's time */
};

/* Which rule set the threshold (the largest, or the bound). */
enum mqdh_sentinel_rule {
    MQDH_SENTINEL_RULE_FLOOR,   /* the floor */
    MQDH_SENTINEL_RULE_LONGEST, /* factor x the longest quiet time seen */
    MQDH_SENTINEL_RULE_ODDS,    /* the quiet time a job moving as this one did shows < 1/1000 */
    MQDH_SENTINEL_RULE_BOUND    /* the caller's bound, below the others */
};

/* A sentinel's state after a look. */
struct mqdh_sentinel_state {
    enum mqdh_sentinel_says says;
    enum mqdh_sentinel_rule rule;
    int looks;            /* looks so far, this one included */
    int moves;            /* of which something moved at */
    double quiet;         /* seconds since the last look at which something moved
                           * (before any, the first look) or a process was not
                           * compared, whichever came later: every process seen,
                           * nothing moved */
    double longest_quiet; /* the longest quiet time that ended in a move */
    double moving_share;  /* of the looks of the quiet times that ended, the share at
                           * which something moved (the odds rule's, smoothed) */
    double threshold;     /* the quiet time that is a hang now, in seconds */
};

/*
 * A new sentinel, deciding by o (NULL: every default), into *out (free it
 * with mqdh_sentinel_free, which accepts NULL).  MQDH_OK; MQDH_E_USAGE
 * (out NULL, o->size too small, or a member negative, or a factor below
 * 1); MQDH_E_NOMEM.
 */
MQDH_API int mqdh_sentinel_new(const struct mqdh_sentinel_options *o, struct mqdh_sentinel **out);
MQDH_API void mqdh_sentinel_free(struct mqdh_sentinel *s);

/*
 * Tell s of a look taken at time t (seconds on a steady clock, any
 * origin, not before the look before): w compares it with the look before
 * (borrowed during the call), NULL for the first look or for one whose
 * processes are not the same list as the look before's (a process ended or
 * started: something moved).  What s now says, into *st.  MQDH_OK;
 * MQDH_E_USAGE (s or st NULL, or t before the last look's).
 */
MQDH_API int mqdh_sentinel_look(struct mqdh_sentinel *s, double t, const struct mqdh_watch *w,
                                struct mqdh_sentinel_state *st);

#ifdef __cplusplus
}
#endif

#endif /* MQDHOST_H */
