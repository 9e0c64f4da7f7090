/*
 * unwind.h - a stopped process's threads, as libdwfl unwinds them.
 *
 * libdwfl's own reader (dwfl_linux_proc_attach) reads /proc/PID/status,
 * lists /proc/PID/task, opens /proc/PID/exe, and reads the stack a page
 * at a time past any cache: a dozen system calls per process that the
 * host knows the answers to already.  Here the threads are the ones the
 * attachment stopped (attach.h), each one's registers one PTRACE_GETREGS,
 * and the stack is read through the process's page cache (memory.h), the
 * pages the DLL reads too, filled first with what the program's other
 * processes were seen to read (pages.h).  On hosts other than x86-64 libdwfl's reader
 * is used as before.
 */
#ifndef MQDH__UNWIND_H
#define MQDH__UNWIND_H

#include "target/image.h"
#include "target/memory.h"

/*
 * Make im's libdwfl ready to unwind its process's threads (im->att: the
 * threads stopped by this thread; NULL: libdwfl lists them itself),
 * reading memory through mem.  0; -1 with libdwfl's error
 * (dwfl_errmsg(-1)); or an errno code from /proc (libdwfl's reader).
 */
int mqdh__unwind_attach(struct mqdh__image *im, struct mqdh__mem *mem);

#endif
