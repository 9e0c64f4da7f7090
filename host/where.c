/*
 * where.c - where a stopped rank is: unwind every thread with libdwfl and
 * find the MPI call it is in and the user's code that made it.
 *
 * The process must be ptrace-stopped by us (attach.c); libdwfl reads its
 * registers and stack through ptrace and memory, and unwinds with CFI.
 */
#define _GNU_SOURCE
#include "where.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct walk {
    struct mqdh_where *w;
    int depth;
    int found;   /* frames seen since the MPI entry point (1: it, 2+: callers) */
    Dwfl_Module *mpi_module;
};

/*
 * The user's MPI call a frame is in, as "MPI_Recv", into buf; 0 if none.
 * "PMPI_Recv" and "MPI_Recv" are both the user's MPI_Recv.  So is MPICH's
 * "internal_Recv" inside the MPI library: its generated bindings
 * (src/binding/c, MPICH 4.x) put each call's body in a static
 * internal_NAME that PMPI_NAME tail-calls, so for MPI_Waitany (4.0.2) and
 * for every call (4.1 and later) no MPI_ frame is left on the stack.
 */
static int mpi_entry(const char *name, Dwfl_Module *mod, char *buf, size_t len)
{
    if (!name)
        return 0;
    if (strncmp(name, "PMPI_", 5) == 0 || strncmp(name, "MPI_", 4) == 0) {
        snprintf(buf, len, "%s", name[0] == 'P' ? name + 1 : name);
        return 1;
    }
    if (strncmp(name, "internal_", 9) == 0 && name[9] >= 'A' && name[9] <= 'Z') {
        const char *file = NULL;
        dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &file, NULL);
        const char *base = file ? strrchr(file, '/') : NULL;
        base = base ? base + 1 : file;
        if (base && (strncmp(base, "libmpi", 6) == 0 || strncmp(base, "libpmpi", 7) == 0)) {
            snprintf(buf, len, "MPI_%s", name + 9);
            return 1;
        }
    }
    return 0;
}

static int frame_cb(Dwfl_Frame *frame, void *arg)
{
    struct walk *k = arg;
    Dwarf_Addr pc;
    bool activation;
    if (++k->depth > 256 || !dwfl_frame_pc(frame, &pc, &activation))
        return DWARF_CB_ABORT;
    Dwarf_Addr at = activation ? pc : pc - 1; /* a return address: the call */
    Dwfl *dwfl = dwfl_thread_dwfl(dwfl_frame_thread(frame));
    Dwfl_Module *mod = dwfl_addrmodule(dwfl, at);
    const char *name = mod ? dwfl_module_addrname(mod, at) : NULL;
    char entry[sizeof k->w->call];
    if (mpi_entry(name, mod, entry, sizeof entry)) {
        /* the innermost MPI entry point wins; keep looking outward */
        if (!k->found) {
            snprintf(k->w->call, sizeof k->w->call, "%s", entry);
            k->mpi_module = mod;
            k->found = 1;
        }
        return DWARF_CB_OK;
    }
    if (k->found && mod != k->mpi_module) { /* the user's code that called it */
        snprintf(k->w->function, sizeof k->w->function, "%s", name ? name : "??");
        Dwfl_Line *line = dwfl_module_getsrc(mod, at);
        int lineno = 0;
        const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
        if (file) {
            snprintf(k->w->file, sizeof k->w->file, "%s", file);
            k->w->line = lineno;
        }
        return DWARF_CB_ABORT;
    }
    return DWARF_CB_OK;
}

/* Walk one thread (thread, or tid through dwfl) into w: 1 if it is in an
 * MPI call (w filled, w->tid set), else 0 with w cleared. */
static int walk_thread(Dwfl *dwfl, Dwfl_Thread *thread, pid_t tid, struct mqdh_where *w)
{
    struct walk k = {w, 0, 0, NULL};
    memset(w, 0, sizeof *w);
    if (thread)
        dwfl_thread_getframes(thread, frame_cb, &k);
    else
        dwfl_getthread_frames(dwfl, tid, frame_cb, &k);
    if (!k.found) {
        memset(w, 0, sizeof *w);
        return 0;
    }
    w->tid = tid;
    return 1;
}

struct threads {
    struct mqdh_where *w;
    pid_t main;
};

static int thread_cb(Dwfl_Thread *thread, void *arg)
{
    struct threads *th = arg;
    pid_t tid = dwfl_thread_tid(thread);
    if (tid != th->main && walk_thread(NULL, thread, tid, th->w))
        return DWARF_CB_ABORT;
    return DWARF_CB_OK;
}

int mqdh_where(Dwfl *dwfl, pid_t pid, struct mqdh_where *w, char *err, size_t errlen)
{
    memset(w, 0, sizeof *w);
    /* The threads are already ptrace-stopped (attach.c): libdwfl only reads. */
    int rc = dwfl_linux_proc_attach(dwfl, pid, true);
    if (rc != 0) {
        snprintf(err, errlen, "cannot unwind process %d: %s", (int)pid,
                 rc > 0 ? strerror(rc) : dwfl_errmsg(-1));
        return -1;
    }
    /* The main thread first: that is where an MPI program usually waits;
     * the others, until one is in MPI, only if it is in no MPI call. */
    if (!walk_thread(dwfl, NULL, pid, w)) {
        struct threads th = {w, pid};
        dwfl_getthreads(dwfl, thread_cb, &th);
    }
    return 0;
}
