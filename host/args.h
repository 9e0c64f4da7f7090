/*
 * args.h - an MPI call's own arguments, read from its stopped frame where
 * the MPI library's DWARF says they are at that point (args.c), for
 * where.c.
 */
#ifndef MQDH_ARGS_H
#define MQDH_ARGS_H

#include "memory.h"
#include "pc.h"
#include "where.h"

#include <elfutils/libdwfl.h>

/*
 * Read the call's source, dest, tag, root and comm (those it has) from
 * frame, the MPI entry point w->call's, at file address at of file (pc
 * its lookup): into w (w->args says which were read, w->args_why why one
 * was not).  mem reads the stack (NULL: only arguments held in registers).
 */
void mqdh__read_args(struct mqdh__where *w, struct mqdh_mem *mem, Dwfl_Frame *frame,
                     struct mqdh_file *file, Dwarf_Addr at, struct mqdh__pc *pc);

#endif
