/*
 * session.h - one dump: everything it needs, owned in one place.
 *
 * A session is made by mqdh_dump_processes and lives for one call: the
 * processes (attachments, images, memory readers, the DLL's per-process
 * and per-image information), the MPI-2 job the DLL hangs its translation
 * table on, the DWARF indexes shared by every image, the caller's options.
 * Nothing of one session is reachable from another, so two sessions may
 * run at once in two threads.  What is shared is shared by nature and
 * documented where it lives: a DLL is process-wide (loader.c), and the
 * attachments a signal handler must release are registered (attach.c).
 *
 * The object the DLL sees as mqs_process is a struct hproc, its mqs_image
 * a struct himage, its mqs_job the struct session itself (callbacks.c
 * turns them back).
 */
#ifndef MQDH_SESSION_H
#define MQDH_SESSION_H

#include "mqdhost.h"

#include "attach.h"
#include "image.h"
#include "loader.h"
#include "memory.h"

#include <limits.h>
#include <pthread.h>

struct session;

/* mqs_image: the process's objects, as the DLL sees them. */
struct himage {
    struct hproc *proc;
    mqs_image_info *info;
};

/* mqs_process. */
struct hproc {
    struct mqdh_process *out; /* the result: the session's dump */
    struct mqdh_stack *stack; /* its threads, unwound: the dump's too */
    struct himage image;
    struct mqdh_image img;
    int have_img;
    struct mqdh__attach *att; /* the session's atts[i] */
    struct mqdh_mem mem;
    struct mqdh_dll *dll;
    mqs_process_info *info;
    struct session *session;
    int prepared; /* mqdh__proto_prepare done: mqdh__proto_setup may go on */
    int image_set_up, process_set_up;
    int ready; /* set up (and named): its queues can be read */
    /* Its DLL crashed or ran out of time on it: its DLL state is left as
     * it is (never destroyed), the DLL perhaps mid-way through it. */
    int abandoned;
};

/* mqs_job: every process dumped together. */
struct session {
    int n;
    struct hproc *procs;
    /* The attachments, apart: all that is written before the processes
     * stop, when every page touched waits its turn behind the ranks. */
    struct mqdh__attach *atts;
    const struct mqdh_options *opt; /* the caller's, completed: never NULL */
    mqs_job_info *info;
    struct mqdh_dll *job_dll;     /* the MPI-2 DLL mqs_setup_job was called for */
    struct mqdh_files *files;     /* the ELF objects the processes map, each read once */
    /*
     * Several workers set up and read processes at once (session.c).
     * files_lock guards the files (libdw and libelf are not thread-safe):
     * the symbol and type callbacks take it.  job_lock guards the DLL's
     * job, which mqs_set_process_identity writes.  Never files_lock, then
     * job_lock.
     */
    pthread_mutex_t files_lock, job_lock;
    int workers; /* how many */
    double dll_timeout; /* seconds per process and pass; 0: none */
    /* No MPI-2 job for the DLL: part of the job is on other hosts
     * (mqdh_options.as_agent). */
    int no_job;
    /* mqd's own DLL (mqdh_own_dll), looked up once per session: 0 not yet,
     * 1 found in own_dll, -1 not installed. */
    int own_state;
    char own_dll[PATH_MAX];
};

/* ---------------------------------------------------------------- callbacks.c */

/*
 * The host's side of the interface.  The basic table is handed to a DLL
 * once, when it is loaded; the others with mqs_setup_image, _process and
 * _job.  Host error codes a callback returns (never mqs_ok) are
 * mqdh_cb_errors; mqs_errorstring turns them into words.
 */
enum mqdh_cb_error { MQDH_CB_ERR_READ = 1001, MQDH_CB_ERR_NOSYM, MQDH_CB_ERR_BADARG };

extern const mqs_basic_callbacks mqdh__basic_callbacks;
extern const mqs_image_callbacks mqdh__image_callbacks;
extern const mqs_process_callbacks mqdh__process_callbacks;
extern const mqs_job_callbacks mqdh__job_callbacks;

/*
 * The session this thread runs DLL calls for (NULL: none), for the one
 * callback the interface gives no handle, mqs_dprints.  Per thread.
 */
void mqdh__callbacks_bind(const struct session *s);

/* ---------------------------------------------------------------- choose.c */

/* Choose, load and set up (mqs_setup_basic_callbacks) p's DLL, in the
 * order mqdh_options documents.  MQDH_OK, or an MQDH_ code with p's error
 * set. */
int mqdh__choose_dll(struct hproc *p);

/*
 * The first of rel[0..n-1], paths relative to the directory of this
 * library's file (libmqdhost.so, or the program it is linked into), that
 * exists and allows access `mode` (access(2)), resolved, into buf[len]:
 * how mqd finds its own DLL and its agent in the build tree and an
 * installed tree alike.  0, or -1 if none does.
 */
int mqdh__beside_library(const char *const *rel, int n, int mode, char *buf, size_t len);

/* ---------------------------------------------------------------- protocol.c */

/* The first error of a process is the one that matters: later ones are
 * dropped. */
void mqdh__proc_error(struct hproc *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* On the thread that attached, one process after another: the image,
 * where the process is (unwinding needs ptrace), the DLL, the MPI-2 job.
 * Sets p->prepared.  MQDH_OK or an MQDH_ code (p's error set). */
int mqdh__proto_prepare(struct hproc *p);

/* On any thread, once prepared: mqs_setup_image ... the identity.  Sets
 * p->ready.  MQDH_OK or an MQDH_ code (p's error set). */
int mqdh__proto_setup(struct hproc *p);

/* The communicators, their queues and groups, once every process of the
 * session is set up and named; on any thread.  MQDH_OK or an MQDH_ code. */
int mqdh__proto_read(struct hproc *p);

/* ---------------------------------------------------------------- identity.c */

/*
 * Each process's rank (ranks[i] if given and >= 0, else from its
 * environment), its world, and the identity the DLL names it by.
 * MQDH_OK or MQDH_E_NOMEM.
 */
int mqdh__name_processes(struct mqdh_process *procs, const int *ranks, const int *remote, int n);

/* ---------------------------------------------------------------- session.c */

/* Free what one process of a dump owns, and zero it (mqdh_dump_free's
 * work for one process; the merge replaces processes with it). */
void mqdh__process_clear(struct mqdh_process *p);

/* ---------------------------------------------------------------- result.c */

/* mqdh_dump_merge, marking placed[i] for each process of into replaced
 * (placed may be NULL). */
int mqdh__merge_marked(struct mqdh_dump *into, struct mqdh_dump *const *from, int nfrom,
                      unsigned char *placed);

/* ---------------------------------------------------------------- remote.c */

/*
 * Other hosts' ranks, through one agent per host (mqdh_options).
 * mqdh__remote_start starts the agents for procs[i] with remote[i] set
 * (their host and pid filled in; ranks[i] their rank, -1 or ranks NULL
 * for the agent to read it there), at most opt->fanout at once, before the
 * local processes are stopped; mqdh__remote_finish starts the rest, waits
 * for each agent within its time, merges every result into d, and gives
 * each process no result came for its host's reason.  It returns MQDH_OK,
 * or MQDH_E_REMOTE if some process got no result.
 */
struct mqdh_remote;
int mqdh__remote_start(const struct mqdh_options *opt, const struct mqdh_process *procs,
                      const int *ranks, const int *remote, int n, struct mqdh_remote **out);
int mqdh__remote_finish(struct mqdh_remote *r, struct mqdh_dump *d);
/* Stop every agent running (async-signal-safe): mqdh_release_all. */
void mqdh__remote_kill_all(void);

#endif
