/*
 * loader.h - load an MQD debug DLL, check it, and keep it.
 *
 * A DLL is loaded exactly as it was checked: its path is resolved once,
 * opened one directory at a time without following any symbolic link (each
 * directory and the file checked as it is opened, under the trust rule
 * below when it applies), and dlopen is given that very descriptor
 * (/proc/self/fd/N), so nothing can be swapped between the check and the
 * load.  A DLL is loaded once per file (device and inode) and process and
 * never unloaded (the specification: its static state is never
 * re-initialised), and mqs_setup_basic_callbacks is called once, with the
 * host's table, right after it passes the checks.  Thread-safe: the records
 * are shared by every session and never change once made.
 */
#ifndef MQDH__LOADER_H
#define MQDH__LOADER_H

#define FOR_MPI2 1
#include "mpi_interface.h"
#include "base/trust.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Processes a DLL may run out of time on before it is taken for stuck. */
#define MQDH__DLL_STUCK 2

struct mqdh__dll {
    struct mqdh__dll *next;
    char *path;        /* as the first caller named it, for messages */
    dev_t dev;         /* the file loaded: the key of the cache */
    ino_t ino;
    /* The descriptor dlopen was given, kept as long as the DLL is: while it
     * is open, no other file can take its number, so no later dlopen of
     * "/proc/self/fd/N" is answered with this DLL by name (glibc matches a
     * loaded object's name before it opens anything); and the name in the
     * link map (a debugger's view of this process) still names the file. */
    int fd;
    void *handle;
    int mpi2;          /* exports mqs_setup_job: use the MPI-2 protocol */
    /* Its code's addresses (guard.h tells a fault in it from the host's). */
    uintptr_t text_lo, text_hi;
    /* It crashed (guard.h), or ran out of time on MQDH__DLL_STUCK
     * processes: never called again.  The members that change after
     * loading. */
    _Atomic int crashed, timeouts;
    int compatibility; /* mqs_version_compatibility() */
    const char *version;

    const char *(*version_string)(void);
    int (*version_compatibility)(void);
    int (*dll_taddr_width)(void);
    const char *(*dll_error_string)(int);
    void (*setup_basic_callbacks)(const mqs_basic_callbacks *);
    int (*setup_image)(mqs_image *, const mqs_image_callbacks *);
    int (*image_has_queues)(mqs_image *, const char **);
    void (*destroy_image_info)(mqs_image_info *);
    int (*setup_process)(mqs_process *, const mqs_process_callbacks *);
    int (*process_has_queues)(mqs_process *, char **);
    void (*destroy_process_info)(mqs_process_info *);
    int (*update_communicator_list)(mqs_process *);
    int (*setup_communicator_iterator)(mqs_process *);
    int (*get_communicator)(mqs_process *, mqs_communicator *);
    int (*next_communicator)(mqs_process *);
    int (*setup_operation_iterator)(mqs_process *, int);
    int (*next_operation)(mqs_process *, mqs_pending_operation *);
    /* Optional. */
    int (*get_comm_group)(mqs_process *, int *);
    int (*get_comm_handle)(mqs_process *, mqs_taddr_t *); /* mqd's extensions */
    int (*get_operation_info)(mqs_process *, unsigned *, mqs_taddr_t *);
    int (*get_process_state)(mqs_process *, unsigned *);
    int (*get_request_info)(mqs_process *, mqs_taddr_t, mqd_request_info *);
    int (*get_comm_nbc_tag)(mqs_process *, mqs_taddr_t, mqs_tword_t *);
    int (*setup_job)(mqs_job *, const mqs_job_callbacks *);
    int (*destroy_job_info)(mqs_job_info *);
    int (*set_process_identity)(mqs_process *, int);
};

/* A DLL file opened (O_PATH) and checked, not yet loaded. */
struct mqdh__dll_file {
    int fd; /* -1: none */
    dev_t dev;
    ino_t ino;
};
#define MQDH__DLL_FILE_INIT {.fd = -1}

/*
 * Open the DLL at path (relative to the current directory if not absolute;
 * no library search) and check it under trust, into *f.  Returns MQDH_OK;
 * MQDH_E_DLL_UNTRUSTED if the trust rule refuses it or its path changed
 * while it was being opened; MQDH_E_DLL_LOAD if it is not there or not a
 * regular file; the reason in err, naming the path (and the owner's uid or
 * the mode that failed).  On success *f holds a descriptor: give it to
 * mqdh__dll_load_file or mqdh__dll_file_close.
 */
int mqdh__dll_open(const char *path, enum mqdh__dll_trust trust, struct mqdh__dll_file *f,
                  char *err, size_t errlen);

/* Close an opened DLL file that is not to be loaded; f may hold none. */
void mqdh__dll_file_close(struct mqdh__dll_file *f);

/*
 * Load the DLL file f (mqdh__dll_open), named path in messages, and check
 * it; the file already loaded is found by device and inode.  basic is the
 * host's callback table, handed to the DLL on first load.  Takes f's
 * descriptor whatever the result.  Returns an MQDH_ code, with the reason
 * in err.  The result is owned by the loader and lives as long as the
 * process.
 */
int mqdh__dll_load_file(struct mqdh__dll_file *f, const char *path,
                       const mqs_basic_callbacks *basic, struct mqdh__dll **out, char *err,
                       size_t errlen);

/* mqdh__dll_open then mqdh__dll_load_file. */
int mqdh__dll_load_as(const char *path, enum mqdh__dll_trust trust,
                     const mqs_basic_callbacks *basic, struct mqdh__dll **out, char *err,
                     size_t errlen);

/* The DLL the user gave (MQDH__DLL_TRUST_GIVEN), loaded and checked. */
int mqdh__dll_load(const char *path, const mqs_basic_callbacks *basic, struct mqdh__dll **out,
                  char *err, size_t errlen);

/* Whether dll may still be called: it has not crashed, nor run out of
 * time on MQDH__DLL_STUCK processes (guard.h). */
int mqdh__dll_usable(struct mqdh__dll *dll);

/* The DLL's message for one of its codes, never NULL. */
const char *mqdh__dll_strerror(const struct mqdh__dll *dll, int code);

#endif
