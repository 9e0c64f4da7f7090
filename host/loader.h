/*
 * loader.h - load an MQD debug DLL, check it, and keep it.
 *
 * A DLL is loaded once per path and process and never unloaded (the
 * specification: its static state is never re-initialised), and
 * mqs_setup_basic_callbacks is called once, with the host's table, right
 * after it passes the checks.  Thread-safe: the records are shared by every
 * session and never change once made.
 */
#ifndef MQDH_LOADER_H
#define MQDH_LOADER_H

#define FOR_MPI2 1
#include "mpi_interface.h"

#include <stddef.h>
#include <stdint.h>

/* Processes a DLL may run out of time on before it is taken for stuck. */
#define MQDH_DLL_STUCK 2

struct mqdh_dll {
    struct mqdh_dll *next;
    char *path;
    void *handle;
    int mpi2;          /* exports mqs_setup_job: use the MPI-2 protocol */
    /* Its code's addresses (guard.h tells a fault in it from the host's). */
    uintptr_t text_lo, text_hi;
    /* It crashed (guard.h), or ran out of time on MQDH_DLL_STUCK
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
    int (*setup_job)(mqs_job *, const mqs_job_callbacks *);
    int (*destroy_job_info)(mqs_job_info *);
    int (*set_process_identity)(mqs_process *, int);
};

/*
 * The DLL at path, loaded and checked (cached by path).  basic is the host's
 * callback table, handed to the DLL on first load.  Returns an MQDH_ code,
 * with the reason in err.  The result is owned by the loader and lives as
 * long as the process.
 */
int mqdh_dll_load(const char *path, const mqs_basic_callbacks *basic, struct mqdh_dll **out,
                  char *err, size_t errlen);

/*
 * The trust rule for a DLL the target names: a regular file, in a directory,
 * both owned by root or the invoking user and writable by neither group nor
 * others.  Returns 0, or -EPERM (or the -errno of a file that cannot be
 * looked at) with the reason in err.
 */
int mqdh_dll_trusted(const char *path, char *err, size_t errlen);

/* Whether dll may still be called: it has not crashed, nor run out of
 * time on MQDH_DLL_STUCK processes (guard.h). */
int mqdh_dll_usable(struct mqdh_dll *dll);

/* The DLL's message for one of its codes, never NULL. */
const char *mqdh_dll_strerror(const struct mqdh_dll *dll, int code);

#endif
