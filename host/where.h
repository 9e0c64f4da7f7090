/*
 * where.h - the MPI call a stopped process is in, and who made it.
 */
#ifndef MQDH_WHERE_H
#define MQDH_WHERE_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <sys/types.h>

struct mqdh_where {
    pid_t tid;          /* the thread in MPI; 0 if none is */
    char call[64];      /* "MPI_Waitall" (from MPI_ or PMPI_ frames) */
    char function[128]; /* the caller outside the MPI library, "??" if unnamed */
    char file[512];     /* its source file, "" without line information */
    int line;
};

/*
 * Unwind the threads of pid (ptrace-stopped by us; dwfl reported from its
 * maps) and fill w with the innermost MPI entry point one of them is in,
 * the main thread first.  Returns 0 (w->call "" if no thread is in MPI),
 * or -1 with the reason in err if the process cannot be unwound.
 */
int mqdh_where(Dwfl *dwfl, pid_t pid, struct mqdh_where *w, char *err, size_t errlen);

#endif
