/*
 * dynmem.h - the ELF objects a stopped process maps, described from its
 * memory, so that their files are opened only when their symbols, DWARF
 * or CFI are needed.
 *
 * A process maps 26 objects under an MPICH built with hwloc, over 100
 * under Open MPI (its components).  Each was opened, mapped, described
 * and closed once per dump (five system calls, and its section headers
 * read) to learn what the dynamic loader already laid out in memory: its
 * load extent (program headers), its DT_SONAME and DT_NEEDED (the search
 * order), the names it can define (.gnu.hash) and what it imports (the
 * calls that reach other worlds).  Read from the first process of a
 * program that maps it, in four process_vm_readv calls for all of its
 * objects at once: program headers, dynamic sections, string tables and
 * hash headers, hash tables and imported symbols.
 *
 * What the memory holds is the loader's: a dynamic section's addresses
 * are relocated in place (glibc, x86-64) or not; both are taken, an
 * ambiguous one is not.  Anything that does not parse leaves the file as
 * it was: it is opened when needed, as before.  The file, once opened,
 * must agree with the memory's load extent, or it is not the one mapped.
 */
#ifndef MQDH__DYNMEM_H
#define MQDH__DYNMEM_H

#include "target/files.h"

#include <stdint.h>
#include <sys/types.h>

/* An object to describe: the file, mapped from its offset 0 at [low,
 * first_end) (its first mapping) in the process. */
struct mqdh__dynmem_req {
    struct mqdh__file *f;
    uint64_t low, first_end;
};

/*
 * Describe from pid's memory (pid stopped) each reqs[i].f not yet
 * described: its load extent and usable (files.h), then, as far as they
 * read, its DT_SONAME and DT_NEEDED, its .gnu.hash and whether it imports
 * a call that reaches other worlds.  A 64-bit object of the host's byte
 * order only; what cannot be told is left to the file.  Returns how many
 * process_vm_readv calls it made.
 */
int mqdh__dynmem_describe(pid_t pid, const struct mqdh__dynmem_req *reqs, int n);

#endif
