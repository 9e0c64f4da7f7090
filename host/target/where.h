/*
 * where.h - the MPI call a stopped process is in, and who made it.
 */
#ifndef MQDH__WHERE_H
#define MQDH__WHERE_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/image.h"
#include "target/memory.h"
#include "mqdhost.h"

/* Frames kept per thread (inlined ones included), threads per process:
 * a loop or a corrupt stack ends there (threads: MQDH__MAX_THREADS). */
enum { MQDH__MAX_FRAMES = 512 };

/* The requests of one MPI_Wait* call that are read, at most. */
enum { MQDH__MAX_REQUESTS = 64 };

/* The handles of the requests an MPI_Wait* call was given, as read from
 * the program (n of them; -1: not read, why says why; 0: not such a call). */
struct mqdh__request_handles {
    int n;
    uint64_t h[MQDH__MAX_REQUESTS];
    char why[400];
};

struct mqdh__where {
    pid_t tid;          /* the thread in MPI; 0 if none is */
    char call[64];      /* "MPI_Waitall" (from MPI_ or PMPI_ frames) */
    char function[128]; /* the caller outside the MPI library, "??" if unnamed */
    char file[512];     /* its source file, "" without line information */
    int line;
    /*
     * The call's own arguments, read from its stopped frame where the MPI
     * library's DWARF says where they are at that point, else from the
     * call site in the caller (callsite.h): MQDH_ARG_* bits say which were;
     * args_why says why one the call has was not ("" if none), args_from
     * where they were read ("" if none was), comm_name the predefined
     * communicator comm is by value ("" if none).
     */
    unsigned args;
    long source, dest, tag, root;
    uint64_t comm;
    /* MPI_Wait*'s (MQDH__ARG_COUNT, MQDH__ARG_REQUEST): how many requests,
     * and where the program keeps them (MPI_Request *); then their
     * handles, read from there. */
    long count;
    uint64_t request;
    struct mqdh__request_handles handles;
    char args_why[384];
    char args_from[320];
    char comm_name[32];
};

/*
 * Unwind the threads of the process of im (ptrace-stopped by us) and fill
 * w with the innermost MPI entry point one of them is in, the main thread
 * first, and its arguments (mem reads the stack; NULL: only arguments held
 * in registers; im's symbols tell the MPI's handles apart), and stack with
 * every thread's frames (the main thread first, to main; the caller frees
 * them with mqdh__stack_clear, dump.h).  brief: the MPI library's frames
 * without their lines and inlined functions (mqdh_options.brief_mpi_frames).
 * Returns 0 (w->call "" if no thread is in MPI), or -1 with the reason in
 * err if the process cannot be unwound (stack then empty).
 */
int mqdh__where(struct mqdh__image *im, struct mqdh__mem *mem, struct mqdh__where *w,
                struct mqdh_stack *stack, int brief, char *err, size_t errlen);

#endif
