/* unwind.c - a stopped process's threads, as libdwfl unwinds them; see unwind.h. */
#define _GNU_SOURCE
#include "target/unwind.h"
#include "target/attach.h"

#include <elf.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>

#if defined(__x86_64__)

/* The attachment's threads one after another; *thread_argp: the index
 * past the last one given (NULL at first). */
static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
    (void)dwfl;
    const struct mqdh__attach *a = ((struct mqdh__image *)arg)->att;
    for (intptr_t k = (intptr_t)*thread_argp; k < a->nthreads; k++) {
        if (a->threads[k].tid > 0) {
            *thread_argp = (void *)(k + 1);
            return a->threads[k].tid;
        }
    }
    return 0;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
    (void)dwfl;
    const struct mqdh__attach *a = ((struct mqdh__image *)arg)->att;
    for (intptr_t k = 0; k < a->nthreads; k++) {
        if (a->threads[k].tid == tid && tid > 0) {
            *thread_argp = (void *)(k + 1);
            return true;
        }
    }
    return false;
}

/* A word of the target (its own width and byte order), through the page
 * cache: a stack page read once serves every frame and the DLL. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
    (void)dwfl;
    const struct mqdh__image *im = arg;
    uint64_t v;
    if (mqdh__mem_read_word(im->mem, addr, im->elf_class == ELFCLASS32 ? 4 : 8, im->big_endian,
                            &v) != 0)
        return false;
    *result = v;
    return true;
}

/* The thread's registers as DWARF numbers them (the x86-64 and i386 psABIs,
 * as elfutils' backends take them from the same ptrace call); the last one
 * is the return address column, the pc. */
static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
    (void)thread_arg;
    struct user_regs_struct r;
    if (ptrace(PTRACE_GETREGS, dwfl_thread_tid(thread), NULL, &r) != 0)
        return false;
    if (r.cs == 0x23) { /* a 32-bit process's code segment */
        Dwarf_Word i386[9] = {r.rax, r.rcx, r.rdx, r.rbx, r.rsp, r.rbp, r.rsi, r.rdi, r.rip};
        return dwfl_thread_state_registers(thread, 0, 9, i386);
    }
    Dwarf_Word x86_64[17] = {r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi, r.rbp, r.rsp, r.r8,
                             r.r9,  r.r10, r.r11, r.r12, r.r13, r.r14, r.r15, r.rip};
    return dwfl_thread_state_registers(thread, 0, 17, x86_64);
}

static const Dwfl_Thread_Callbacks callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

int mqdh__unwind_attach(struct mqdh__image *im, struct mqdh__mem *mem)
{
    if (!im->att || !mem)
        return dwfl_linux_proc_attach(im->dwfl, im->pid, true);
    /* The process's first reads: what its program's processes read, at
     * once (pages.h); the stack among them. */
    if (im->files)
        mqdh__pages_fetch(&im->files->pages, im, mem, MQDH__PAGES_FIRST);
    im->mem = mem;
    return dwfl_attach_state(im->dwfl, NULL, im->pid, &callbacks, im) ? 0 : -1;
}

#else

int mqdh__unwind_attach(struct mqdh__image *im, struct mqdh__mem *mem)
{
    (void)mem;
    return dwfl_linux_proc_attach(im->dwfl, im->pid, true);
}

#endif
