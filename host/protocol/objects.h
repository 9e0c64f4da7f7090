/*
 * objects.h - one dump: everything it needs, owned in one place.
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
 * The session orchestrates; what it makes is a dump (dump.h), the model
 * every other file reads and changes without coming back here.
 *
 * Names, each for one thing:
 *
 *   struct target      one process being dumped, as the session holds it:
 *                      its attachment, memory, ELF image, DLL and result.
 *                      The DLL sees it as its mqs_process.
 *   struct dll_image   what the DLL sees as an mqs_image: one per
 *                      program (the processes that map the same files,
 *                      under the same DLL; images.h), with the DLL's
 *                      mqs_image_info.  The interface's image is an
 *                      executable, shared by its processes; what differs
 *                      between them under ASLR, their symbols' addresses,
 *                      is answered for the process the DLL is serving.
 *   target.elf         the process's address space read as ELF objects,
 *                      symbols and DWARF types (struct mqdh__image,
 *                      image.h): what the symbol and type callbacks read.
 *   struct mqdh_process  the target's record in the dump (target.out).
 *   struct session     what the DLL sees as its mqs_job.
 *
 * callbacks.c turns the DLL's handles back into these.  ("proc" is
 * /proc, proc.h, and nothing else.)  Each file of the protocol declares
 * what it does with them in a header of its own (callbacks.h, choose.h,
 * protocol.h, identity.h).
 */
#ifndef MQDH__OBJECTS_H
#define MQDH__OBJECTS_H

#include "mqdhost.h"

#include "target/attach.h"
#include "target/image.h"
#include "protocol/loader.h"
#include "target/memory.h"
#include "target/where.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>

struct session;
struct target;

/* A DLL path a session opened and loaded, once (choose.c). */
struct mqdh__chosen {
    char *path;
    int trust;  /* enum mqdh__dll_trust it was opened under */
    int opened; /* it opened and passed the trust rule */
    int rc;     /* MQDH_OK: loaded into dll; else why says what failed */
    struct mqdh__dll *dll;
    char why[1024];
};

/* mqs_image: a program's executable and libraries, as the DLL sees them
 * (images.h says who shares one, and when). */
struct dll_image {
    struct target *owner; /* the process it was set up for */
    mqs_image_info *info; /* the DLL's (mqs_put_image_info) */
    /* What makes it the program's: the DLL, and the files its processes
     * map, in search order (image.h), with their hash. */
    struct mqdh__dll *dll;
    struct mqdh__file **files;
    int nfiles;
    uint64_t hash;
    /* Written by the process that has it alone (busy), read by those
     * that share it once it is learned; busy and learned change under
     * the session's images_lock. */
    int busy;        /* a process is being set up on it, alone */
    int learned;     /* a process was set up on it (or none can be): shared */
    int set_up;      /* mqs_setup_image, and mqs_image_has_queues, answered: */
    int setup_rc;    /* what mqs_setup_image returned */
    int queues_rc;   /* what mqs_image_has_queues returned */
    const char *msg; /* and its message (the DLL's, kept with its info) */
    /* The DLL's symbol look-ups, answered for every process of the image
     * (mqdh__images_symbol), under the session's files_lock. */
    struct image_symbol *syms;
    int nsyms;
};

/* One process being dumped; the DLL's mqs_process. */
struct target {
    struct mqdh_process *out; /* its record: the session's dump's */
    struct mqdh_stack *stack; /* its threads, unwound: the dump's too */
    struct mqdh_requests *requests; /* its MPI_Wait*'s requests: the dump's too */
    struct dll_image *image;    /* its program's (images.h), or own_image */
    struct dll_image own_image; /* its alone, when it shares none */
    struct mqdh__image elf; /* its ELF objects, symbols and types (image.h) */
    int elf_open;          /* elf is open: close it */
    struct mqdh__attach *att; /* the session's atts[i] */
    struct mqdh__mem mem;
    struct mqdh__dll *dll;
    mqs_process_info *info; /* the DLL's (mqs_put_process_info) */
    struct session *session;
    int prepared; /* mqdh__proto_prepare done: mqdh__proto_setup may go on */
    int setup_run; /* mqdh__proto_setup has run on it (workers.c) */
    int image_set_up, process_set_up;
    int ready; /* set up (and named): its queues can be read */
    /* Its DLL crashed or ran out of time on it: its DLL state is left as
     * it is (never destroyed), the DLL perhaps mid-way through it. */
    int abandoned;
    /* The requests of its MPI_Wait* call, read where it is (locate): the
     * DLL says what they are once its queues are read. */
    struct mqdh__request_handles handles;
};

/* mqs_job: every process dumped together. */
struct session {
    int n;
    struct target *targets;
    /* The attachments, apart: all that is written before the processes
     * stop, when every page touched waits its turn behind the ranks. */
    struct mqdh__attach *atts;
    const struct mqdh_options *opt; /* the caller's, completed: never NULL */
    mqs_job_info *info;
    struct mqdh__dll *job_dll;     /* the MPI-2 DLL mqs_setup_job was called for */
    struct mqdh__files *files;     /* the ELF objects the processes map, each read once */
    int files_kept; /* files are a cache's (mqdh_options.cache): the session leaves them open */
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
    /* mqd's own DLLs, for MPICH (mqdh_own_dll) and for Open MPI
     * (libmqd_ompi.so beside it), each looked up once per session (a
     * dozen system calls): state 0 not yet, 1 found in path, -1 not
     * installed. */
    struct {
        int state;
        char path[PATH_MAX];
    } own[2];
    /* The programs' images (images.h), under images_lock. */
    struct dll_image **images;
    int nimages, images_cap;
    pthread_mutex_t images_lock;
    /* Each DLL path opened and loaded, once for every process (choose.c). */
    struct mqdh__chosen *chosen;
    int nchosen, chosen_cap;
};

#endif
