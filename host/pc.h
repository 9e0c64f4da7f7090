/*
 * pc.h - what a code address of a file says (pc.c): the symbol holding it,
 * its source line, the functions inlined there, and whether a function's
 * name is an MPI call.  It is the same for every rank that runs the file,
 * so it is looked up once per session (mqdh__file_memo); for where.c and
 * args.c.
 */
#ifndef MQDH_PC_H
#define MQDH_PC_H

#include "files.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stddef.h>

/* One frame at an address: a function inlined there, or the one holding
 * it. */
struct mqdh__pcframe {
    const char *function, *file; /* the file's own strings (ELF and DWARF) */
    int line;
};

/* A code address of a file, looked up: its symbol, its source line, its
 * frames, and, for an MPI call's frame, the DWARF scopes its arguments
 * are described in (args.c). */
struct mqdh__pc {
    const char *name; /* the symbol holding it, or NULL */
    int line;         /* -1: not looked up yet */
    const char *src;  /* its source file, or NULL */
    int scoped;       /* the scopes below were looked up */
    int have_cu;      /* the file has DWARF for it */
    int nscopes;      /* the MPI call's scopes, innermost first */
    Dwarf_Die outer, scopes[4];
    Dwarf_Addr dbias; /* the DWARF's bias in the file's module */
    /* The frames the address is in (mqdh__pc_expand): the functions inlined
     * there, innermost first, then the function holding it. */
    int expanded, nfr;
    struct mqdh__pcframe fr[];
};

/* The pc of file address addr of f, made the first time and then f's
 * (freed with f); NULL without memory. */
struct mqdh__pc *mqdh__pc_of(struct mqdh_file *f, Dwarf_Addr addr);

/* pc's source file (NULL if none) and *line (0 if none), looked up once. */
const char *mqdh__pc_line(struct mqdh_file *f, Dwarf_Addr addr, struct mqdh__pc *pc, int *line);

/*
 * pc's frames (mqdh__pc.fr): the functions inlined at addr, innermost
 * first, then the function holding it; looked up once.  lines: with
 * source lines and inlined functions (from the line table and the DWARF).
 * Returns the pc, moved (f's memo follows it), or pc unexpanded without
 * memory.
 */
struct mqdh__pc *mqdh__pc_expand(struct mqdh_file *f, Dwarf_Addr addr, struct mqdh__pc *pc,
                                 int lines);

/* Into *cur, its child that holds pc and is a scope of its code (a lexical
 * block, an inlined subroutine): 1, or 0 if none is. */
int mqdh__inner_scope(Dwarf_Die *cur, Dwarf_Addr pc);

/* Whether f is the MPI library: libmpi*, libpmpi* (libmpich* too). */
int mqdh__is_mpi_library(const struct mqdh_file *f);

/*
 * The user's MPI call a function `name` is, as "MPI_Recv", into buf[len]:
 * 1, or 0 if it is none.  in_mpi_library: the function is the MPI
 * library's (for MPICH's internal_NAME).
 */
int mqdh__entry_call(const char *name, int in_mpi_library, char *buf, size_t len);

/* mqdh__entry_call for a function of file f. */
int mqdh__mpi_entry(const char *name, const struct mqdh_file *f, char *buf, size_t len);

#endif
