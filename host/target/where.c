/*
 * where.c - where a stopped rank is: unwind every thread with libdwfl and
 * find the MPI call it is in and the user's code that made it.
 *
 * The process must be ptrace-stopped by us (attach.c); libdwfl reads its
 * registers and stack through ptrace and memory, and unwinds with CFI.
 * What each code address says is pc.c's; the call's arguments are read
 * once the walk has passed the frames they are in: from the MPI library's
 * DWARF (args.c), else from the caller's call site (callsite.c).
 */
#define _GNU_SOURCE
#include "target/where.h"

#include "target/args.h"
#include "target/attach.h"
#include "target/callsite.h"
#include "base/dump.h"
#include "target/pc.h"
#include "target/unwind.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct walk {
    struct mqdh__where *w;
    struct mqdh__image *im;
    struct mqdh__mem *mem;
    int depth;
    int found;   /* the MPI entry point is met */
    int called;  /* and the user's code that called it */
    const struct mqdh__image_module *mpi;   /* the object the MPI entry point is in */
    const struct mqdh__image_module *inner; /* the object of the frame walked before */
    struct mqdh_thread *t; /* the frames kept */
    int cap, nomem;
    int main_thread; /* stop at main: what calls it is the C library's start */
    int brief;       /* the MPI library's frames without lines (mqdh__where) */
    /*
     * The frames the call's arguments are read in (args.h), kept as the
     * walk passes them: the MPI entry point's and the one that called it
     * (the values it had on entry), the program's caller's and the one
     * that called it.
     */
    struct mqdh__frame entry[2], caller[2], prev; /* prev: the frame walked last */
    int nentry, ncaller, have_prev;
    int entry_outer_is_caller; /* entry[1] is caller[0] */
};

/* Physical frames walked per thread: a loop or a corrupt stack ends there. */
enum { MAX_PHYSICAL = 256 };

/*
 * x86-64: the function a call instruction ending at ret (a return address
 * in the caller's module) called, through the target's memory: "call
 * rel32" to a PLT stub ("jmp *slot(%rip)", after an endbr64 and a bnd
 * prefix in .plt.sec), or "call *slot(%rip)" (-fno-plt).  The slot is the
 * GOT entry the dynamic linker filled in, so the answer is the function in
 * the MPI library the program called, wherever it tail-called to.  0 if
 * the instructions are not these, or cannot be read.
 */
static Dwarf_Addr called_function(struct walk *k, struct mqdh__file *caller, Dwarf_Addr ret)
{
    unsigned char code[16];
    uint64_t slot = 0, target = 0;
    GElf_Ehdr eh;
    if (!k->mem || !mqdh__file_elf(caller) || !gelf_getehdr(caller->elf, &eh) ||
        eh.e_machine != EM_X86_64 || ret < 6 || mqdh__mem_read(k->mem, ret - 6, code, 6) != 0)
        return 0;
    int32_t d;
    if (code[0] == 0xff && code[1] == 0x15) { /* call *d(%rip) */
        memcpy(&d, code + 2, 4);
        slot = ret + (uint64_t)(int64_t)d;
    } else if (code[1] == 0xe8) { /* call rel32 */
        memcpy(&d, code + 2, 4);
        uint64_t stub = ret + (uint64_t)(int64_t)d;
        if (mqdh__mem_read(k->mem, stub, code, sizeof code) != 0)
            return 0;
        int at = 0;
        if (code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa)
            at = 4; /* endbr64 */
        if (code[at] == 0xf2)
            at++; /* bnd */
        if (code[at] != 0xff || code[at + 1] != 0x25)
            return 0;
        memcpy(&d, code + at + 2, 4);
        slot = stub + (uint64_t)(at + 6) + (uint64_t)(int64_t)d;
    } else {
        return 0;
    }
    if (mqdh__mem_read(k->mem, slot, &target, 8) != 0)
        return 0;
    return target;
}

/* The image's object holding process address addr, and the pc there
 * (either may come back NULL). */
static const struct mqdh__image_module *object_at(const struct walk *k, Dwfl *dwfl,
                                                 Dwarf_Addr addr, struct mqdh__pc **pc)
{
    const struct mqdh__image_module *m = mqdh__image_module_of(k->im, dwfl_addrmodule(dwfl, addr));
    *pc = m ? mqdh__pc_of(m->file, addr - m->bias) : NULL;
    return m;
}

/* Whose code file f is (mqdh_frame_kind). */
static enum mqdh_frame_kind file_kind(const struct mqdh__file *f)
{
    static const char *const system_dirs[] = {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/"};
    if (!f || f->path[0] != '/')
        return MQDH_FRAME_SYSTEM; /* the vDSO, or nothing */
    if (mqdh__is_mpi_library(f))
        return MQDH_FRAME_MPI;
    for (size_t i = 0; i < sizeof system_dirs / sizeof system_dirs[0]; i++)
        if (strncmp(f->path, system_dirs[i], strlen(system_dirs[i])) == 0)
            return MQDH_FRAME_SYSTEM;
    return MQDH_FRAME_USER;
}

/* A copy of a function's name as the program wrote it: a compiler's clone
 * (".constprop.0", ".isra.0", ".part.0", ".cold") is the function the user
 * wrote, and so is a symbol's version ("@@GLIBC_2.34"): no C or C++ name
 * has a dot or an at sign.  NULL stays NULL. */
static size_t written_len(const char *name)
{
    return strcspn(name, ".@");
}

static char *written_name(const char *name)
{
    return name ? strndup(name, written_len(name)) : NULL;
}

/* Keep the frames of one physical frame at process address at (in obj,
 * file address looked up as here; either may be NULL), of that kind. */
static void keep_frames(struct walk *k, Dwarf_Addr at, const struct mqdh__image_module *obj,
                        const struct mqdh__pc *here, enum mqdh_frame_kind kind)
{
    struct mqdh_thread *t = k->t;
    int n = here && here->expanded ? here->nfr : 1;
    if (t->nframes + n > MQDH__MAX_FRAMES) {
        k->nomem |= 2; /* cut short */
        return;
    }
    if (t->nframes + n > k->cap) {
        int cap = k->cap ? k->cap * 2 : 32;
        while (cap < t->nframes + n)
            cap *= 2;
        struct mqdh_frame *fr = realloc(t->frames, (size_t)cap * sizeof *fr);
        if (!fr) {
            k->nomem |= 1;
            return;
        }
        t->frames = fr;
        k->cap = cap;
    }
    const struct mqdh__file *file = obj ? obj->file : NULL;
    char *module = file ? strdup(file->path) : NULL;
    for (int i = 0; i < n; i++) {
        struct mqdh_frame *f = &t->frames[t->nframes++];
        memset(f, 0, sizeof *f);
        f->pc = at;
        f->kind = kind;
        f->inlined = i < n - 1;
        const char *fn = here && here->expanded ? here->fr[i].function : here ? here->name : NULL;
        const char *src = here && here->expanded ? here->fr[i].file : NULL;
        f->function = written_name(fn);
        f->file = src ? strdup(src) : NULL;
        f->line = src ? here->fr[i].line : 0;
        f->module = i == 0 ? module : module ? strdup(module) : NULL;
        if ((fn && !f->function) || (src && !f->file) || (file && !f->module))
            k->nomem |= 1;
    }
}

/*
 * No MPI frame met, and the frame at return address pc (in obj; the frame
 * walked before it was in `in`, the MPI library) called into the MPI
 * library: the entry point tail-called out of its own frame into code
 * with no name that says so (a libmpi without .symtab hides MPICH's static
 * internal_NAME; Open MPI's MPI_Finalize jumps to ompi_mpi_finalize).  The call instruction names what was called: if that is
 * an MPI entry point, it is the call.
 */
static void tail_called(struct walk *k, Dwfl *dwfl, const struct mqdh__image_module *obj,
                        const struct mqdh__image_module *in, Dwarf_Addr pc)
{
    char entry[sizeof k->w->call];
    Dwarf_Addr fn = called_function(k, obj->file, pc);
    struct mqdh__pc *called = NULL;
    const struct mqdh__image_module *fobj = fn ? object_at(k, dwfl, fn, &called) : NULL;
    const char *fname = fobj == in && called ? called->name : NULL;
    if (mqdh__mpi_entry(fname, in->file, entry, sizeof entry)) {
        snprintf(k->w->call, sizeof k->w->call, "%s", entry);
        snprintf(k->w->args_why, sizeof k->w->args_why,
                 "%s left no frame of its own (it tail-called into the MPI library's "
                 "internals)", entry);
        /* no frame to read its arguments in: its caller's call site may
         * still describe them */
        k->mpi = in;
        k->found = 1;
    }
}

/* The user's code that made the MPI call: the frame at file address at of
 * obj (here its pc), the innermost of its frames (a function inlined
 * there is the caller). */
static void note_caller(struct walk *k, const struct mqdh__image_module *obj, Dwarf_Addr at,
                        struct mqdh__pc *here)
{
    const char *fname = here && here->expanded ? here->fr[0].function : here ? here->name : NULL;
    int lineno = 0;
    const char *src = NULL;
    if (here && here->expanded) {
        src = here->fr[0].file;
        lineno = here->fr[0].line;
    } else if (here) {
        src = mqdh__pc_line(obj->file, at, here, &lineno);
    }
    snprintf(k->w->function, sizeof k->w->function, "%.*s",
             fname ? (int)written_len(fname) : 2, fname ? fname : "??");
    if (src) {
        snprintf(k->w->file, sizeof k->w->file, "%s", src);
        k->w->line = lineno;
    }
    k->called = 1;
}

/*
 * One physical frame, outward from the innermost: keep it (and the
 * functions inlined there); until the MPI call is found, look for its
 * entry point; then for the user's code that called it.  Past main (the
 * main thread), nothing more.
 */
static int frame_cb(Dwfl_Frame *frame, void *arg)
{
    struct walk *k = arg;
    Dwarf_Addr pc;
    bool activation;
    if (++k->depth > MAX_PHYSICAL) {
        k->nomem |= 2;
        return DWARF_CB_ABORT;
    }
    if (!dwfl_frame_pc(frame, &pc, &activation))
        return DWARF_CB_ABORT;
    Dwarf_Addr at = activation ? pc : pc - 1; /* a return address: the call */
    Dwfl *dwfl = dwfl_thread_dwfl(dwfl_frame_thread(frame));
    struct mqdh__pc *here;
    const struct mqdh__image_module *obj = object_at(k, dwfl, at, &here);
    struct mqdh__file *file = obj ? obj->file : NULL;
    enum mqdh_frame_kind kind = file_kind(file);
    /* Its inlined frames (with lines where the user's code or, unless
     * brief, the MPI library's is), then every frame kept. */
    if (here)
        here = mqdh__pc_expand(file, at - obj->bias, here,
                               kind == MQDH_FRAME_USER || (kind == MQDH_FRAME_MPI && !k->brief));
    keep_frames(k, at, obj, here, kind);
    const char *name = here ? here->name : NULL;
    /* main: the frames outside it (__libc_start_main, _start) say nothing,
     * and each costs reads of the stack. */
    int at_main = k->main_thread && name && strcmp(name, "main") == 0;
    char entry[sizeof k->w->call];
    const struct mqdh__image_module *in = k->inner;
    k->inner = obj;
    /* Every frame up to the caller's caller is kept as the unwinder left
     * it, each from the one before (args.h); those the arguments are read
     * in are copies. */
    if (k->ncaller < 2) {
        struct mqdh__frame cur;
        mqdh__frame_take(&cur, frame, file, obj ? at - obj->bias : at, obj ? obj->bias : 0,
                         !activation, k->have_prev ? &k->prev : NULL);
        k->prev = cur;
        k->have_prev = 1;
    }
    if (k->called) {
        if (k->ncaller == 1)
            k->caller[k->ncaller++] = k->prev;
        return at_main ? DWARF_CB_ABORT : DWARF_CB_OK; /* only kept */
    }
    int entry_outer = k->nentry == 1; /* this frame called the entry point's */
    if (entry_outer)
        k->entry[k->nentry++] = k->prev;
    if (!k->found && !activation && obj && in && in != obj && mqdh__is_mpi_library(in->file))
        tail_called(k, dwfl, obj, in, pc);
    if (mqdh__mpi_entry(name, file, entry, sizeof entry)) {
        /* the innermost MPI entry point wins; keep looking outward */
        if (!k->found) {
            snprintf(k->w->call, sizeof k->w->call, "%s", entry);
            k->mpi = obj;
            k->found = 1;
            k->entry[k->nentry++] = k->prev;
        }
        return DWARF_CB_OK;
    }
    if (k->found && obj && obj != k->mpi) {
        note_caller(k, obj, at - obj->bias, here);
        k->entry_outer_is_caller = entry_outer;
        k->caller[k->ncaller++] = k->prev;
    }
    return at_main ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/*
 * MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Waitsome: the handles of the
 * requests the call was given, read where the program keeps them (its
 * request argument: one for MPI_Wait, count for the others), each an
 * MPI_Request of its MPI (mqdh__request_size: MPICH's ints, Open MPI's
 * pointers); at most MQDH__MAX_REQUESTS.  The call has not
 * changed them: MPI sets a handle to MPI_REQUEST_NULL only as the call
 * returns.  w->handles.n -1 with its why if not read.
 */
static void read_requests(struct walk *k)
{
    struct mqdh__where *w = k->w;
    const struct mqdh__mpi_call *c = mqdh__mpi_call(w->call);
    if (!c || !(c->flags & MQDH__MPI_REQUESTS))
        return;
    int counted = c->at[MQDH__AT_COUNT] >= 0; /* else one request (MPI_Wait) */
    long n = counted ? w->count : 1;
    const char *why = NULL;
    w->handles.n = -1;
    int size = mqdh__request_size(k->im);
    if (!size)
        why = "its MPI's requests are not known to mqd";
    else if (!(w->args & MQDH__ARG_REQUEST) || (counted && !(w->args & MQDH__ARG_COUNT)))
        why = w->args_why[0] ? w->args_why : "its arguments were not read";
    else if (n < 0 || n > MQDH__MAX_REQUESTS)
        why = "it waits on more requests than mqd reads";
    else if (!k->mem)
        why = "its memory cannot be read";
    for (long i = 0; !why && i < n; i++) {
        uint64_t v;
        if (mqdh__mem_read_word(k->mem, w->request + (uint64_t)size * (uint64_t)i, size,
                                k->im->big_endian, &v) != 0)
            why = "the program's requests could not be read";
        w->handles.h[i] = v;
    }
    if (why) {
        snprintf(w->handles.why, sizeof w->handles.why, "%s", why);
        return;
    }
    w->handles.n = (int)n;
}

/*
 * The call's arguments, once the walk has passed the frames they are read
 * in: the MPI library's DWARF first, then the caller's call site; and the
 * predefined communicator its comm argument is.
 */
static void read_call_args(struct walk *k)
{
    struct mqdh__where *w = k->w;
    struct mqdh__lib_args lib = {.state = MQDH__LIB_NO_FRAME};
    if (k->nentry)
        mqdh__read_args(w, k->mem, &k->entry[0], k->nentry > 1 ? &k->entry[1] : NULL, &lib);
    mqdh__callsite_args(w, k->im, k->mem, k->ncaller ? &k->caller[0] : NULL,
                        k->ncaller > 1 ? &k->caller[1] : NULL, &lib, k->entry_outer_is_caller);
    read_requests(k);
    const char *comm = w->args & MQDH_ARG_COMM ? mqdh__comm_name(k->im, w->comm) : NULL;
    if (comm)
        snprintf(w->comm_name, sizeof w->comm_name, "%s", comm);
    /* A peer that is MPI_PROC_NULL: the call returns at once, and the stop
     * found it on its way.  Negative stays MPI_ANY_SOURCE (mqdhost.h). */
    long null = (w->args & (MQDH_ARG_SOURCE | MQDH_ARG_DEST)) ? mqdh__proc_null(k->im) : 0;
    if (null && (((w->args & MQDH_ARG_SOURCE) && w->source == null) ||
                 ((w->args & MQDH_ARG_DEST) && w->dest == null))) {
        w->args &= ~(MQDH_ARG_SOURCE | MQDH_ARG_DEST);
        snprintf(w->args_why, sizeof w->args_why,
                 "%s's peer is MPI_PROC_NULL: the call returns at once", w->call);
    }
}

/*
 * The thread's MPI library entry: the outermost frame of the MPI library,
 * and the call the program made there (that frame's, if it is an entry
 * point; else the innermost one found, w->call).
 */
static int thread_entry(struct mqdh_thread *t, const struct mqdh__where *w)
{
    t->entry = -1;
    for (int i = t->nframes - 1; i >= 0 && t->entry < 0; i--)
        if (t->frames[i].kind == MQDH_FRAME_MPI)
            t->entry = i;
    char call[sizeof w->call];
    /* The entry frame is the MPI library's. */
    if (t->entry < 0 || !mqdh__entry_call(t->frames[t->entry].function, 1, call, sizeof call))
        snprintf(call, sizeof call, "%s", w->call);
    if (call[0] && !(t->call = strdup(call)))
        return -1;
    return 0;
}

/*
 * Walk one thread (thread, or tid through dwfl) into w, and its frames
 * into t: 1 if it is in an MPI call (w filled, w->tid set), else 0 with w
 * cleared; -1 out of memory (t then empty); -2 when not even its registers
 * could be read (the thread is gone: its process was killed mid-dump).
 * Then no other thread of the process may be walked: libdwfl (elfutils
 * 0.188, linux-pid-attach.c) leaves the failed thread marked attached,
 * and asserts on the next one (pid_set_initial_registers: "tid_attached ==
 * 0"), which aborts mqdump.
 */
static int walk_thread(struct mqdh__image *im, Dwfl_Thread *thread, pid_t tid,
                       struct mqdh__mem *mem, struct mqdh__where *w, struct mqdh_thread *t,
                       int brief)
{
    struct walk k = {.w = w, .im = im, .mem = mem, .t = t, .main_thread = tid == im->pid,
                     .brief = brief};
    memset(w, 0, sizeof *w);
    memset(t, 0, sizeof *t);
    t->tid = tid;
    int rc = thread ? dwfl_thread_getframes(thread, frame_cb, &k)
                    : dwfl_getthread_frames(im->dwfl, tid, frame_cb, &k);
    if (rc > 0)
        rc = 0; /* stopped at main: not a failure */
    const char *why = k.nomem & 1   ? "out of memory"
                      : k.nomem & 2 ? "more than 256 frames: cut short"
                      : rc < 0 && t->nframes ? dwfl_errmsg(-1)
                      : rc < 0 ? "no frame could be read"
                               : NULL;
    if ((why && !(t->error = strdup(why))) || (k.nomem & 1) || thread_entry(t, w) != 0) {
        mqdh__thread_clear(t);
        return -1;
    }
    if (rc < 0 && !t->nframes) {
        memset(w, 0, sizeof *w);
        return -2;
    }
    if (!k.found) {
        memset(w, 0, sizeof *w);
        return 0;
    }
    read_call_args(&k);
    w->tid = tid;
    return 1;
}

struct threads {
    struct mqdh__image *im;
    struct mqdh__where *w;
    struct mqdh__mem *mem;
    struct mqdh_stack *stack;
    int found, nomem, brief;
};

static int thread_cb(Dwfl_Thread *thread, void *arg)
{
    struct threads *th = arg;
    pid_t tid = dwfl_thread_tid(thread);
    if (tid == th->im->pid)
        return DWARF_CB_OK;
    struct mqdh_stack *st = th->stack;
    if (st->nthreads >= MQDH__MAX_THREADS)
        return DWARF_CB_ABORT;
    struct mqdh_thread *grown = realloc(st->threads, (size_t)(st->nthreads + 1) * sizeof *grown);
    if (!grown) {
        th->nomem = 1;
        return DWARF_CB_ABORT;
    }
    st->threads = grown;
    struct mqdh__where w;
    int in = walk_thread(th->im, thread, tid, th->mem, &w, &st->threads[st->nthreads], th->brief);
    if (in == -1) {
        th->nomem = 1;
        return DWARF_CB_ABORT;
    }
    st->nthreads++;
    if (in == -2) /* gone: walk no other thread (walk_thread) */
        return DWARF_CB_ABORT;
    if (in && !th->found) {
        *th->w = w;
        th->found = 1;
    }
    return DWARF_CB_OK;
}

int mqdh__where(struct mqdh__image *im, struct mqdh__mem *mem, struct mqdh__where *w,
                struct mqdh_stack *stack, int brief, char *err, size_t errlen)
{
    memset(w, 0, sizeof *w);
    if (stack)
        memset(stack, 0, sizeof *stack);
    /* The threads are already ptrace-stopped (attach.c): libdwfl only reads. */
    int rc = mqdh__unwind_attach(im, mem);
    if (rc != 0) {
        snprintf(err, errlen, "cannot unwind process %d: %s", (int)im->pid,
                 rc > 0 ? strerror(rc) : dwfl_errmsg(-1));
        return -1;
    }
    /* The main thread first: that is where an MPI program usually waits;
     * without stacks, the others, until one is in MPI, only if it is in no
     * MPI call. */
    if (!stack) {
        if (walk_thread(im, NULL, im->pid, mem, w, NULL, brief) == 0) {
            struct threads th = {im, w, mem, NULL, 0, 0, brief};
            dwfl_getthreads(im->dwfl, thread_cb, &th);
        }
        return 0;
    }
    struct threads th = {im, w, mem, stack, 0, 0, brief};
    if (!(stack->threads = calloc(1, sizeof *stack->threads))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int in = walk_thread(im, NULL, im->pid, mem, w, &stack->threads[0], brief);
    if (in >= 0 || in == -2)
        stack->nthreads = 1;
    if (in >= 0) {
        th.found = in;
        dwfl_getthreads(im->dwfl, thread_cb, &th);
    }
    if (in == -1 || th.nomem) {
        mqdh__stack_clear(stack);
        memset(w, 0, sizeof *w);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}
