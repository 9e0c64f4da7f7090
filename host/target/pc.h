/*
 * pc.h - what a code address of a file says (pc.c): the symbol holding it,
 * its source line, the functions inlined there, the call site of a call
 * there, and whether a function's name is an MPI call.  It is the same for
 * every rank that runs the file, so it is looked up once per session
 * (mqdh__file_memo); for where.c, args.c and callsite.c.
 */
#ifndef MQDH__PC_H
#define MQDH__PC_H

#include "target/files.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stddef.h>

/* One frame at an address: a function inlined there, or the one holding
 * it. */
struct mqdh__pcframe {
    const char *function, *file; /* the file's own strings (ELF and DWARF) */
    int line;
};

/* What a caller's DWARF says of one of its calls (mqdh__pc_call_site). */
enum mqdh__site_state {
    MQDH__SITE_UNSEEN,   /* not looked up yet */
    MQDH__SITE_FOUND,    /* die is the call site */
    MQDH__SITE_NO_DWARF, /* the file has no DWARF for the caller */
    MQDH__SITE_NONE      /* it has, but no call site returns to this address */
};

/*
 * The call a frame's caller made, as the caller's DWARF describes it
 * (DWARF 5 section 3.4, and GCC's DW_TAG_GNU_call_site before it): the
 * DW_TAG_call_site whose return address is the frame's, under the
 * concrete function holding it (whose frame base its values may use).
 */
struct mqdh__site {
    enum mqdh__site_state state;
    int unoptimised;  /* the caller's CU says GCC -O0, which describes no call sites */
    int fn_sites;     /* call sites the caller's function has (0: it describes none) */
    Dwarf_Die die, fn;
    Dwarf_Addr dbias; /* the DWARF's bias in the file's module */
};

/* A code address of a file, looked up: its symbol, its source line, its
 * frames, for an MPI call's frame the DWARF scopes its arguments are
 * described in (args.c), and for a caller's frame the call site it is in
 * (mqdh__pc_call_site). */
struct mqdh__pc {
    const char *name; /* the symbol holding it, or NULL */
    int line;         /* -1: not looked up yet */
    const char *src;  /* its source file, or NULL */
    int scoped;       /* the scopes below were looked up */
    int have_cu;      /* the file has DWARF for it */
    int nscopes;      /* the MPI call's scopes, innermost first */
    Dwarf_Die outer, scopes[4];
    Dwarf_Addr dbias; /* the DWARF's bias in the file's module */
    struct mqdh__site site;
    /* The frames the address is in (mqdh__pc_expand): the functions inlined
     * there, innermost first, then the function holding it.  expanded: 0
     * not yet, 1 without lines (the holding function alone), 2 with. */
    int expanded, nfr;
    struct mqdh__pcframe fr[];
};

/* The pc of file address addr of f, made the first time and then f's
 * (freed with f); NULL without memory. */
struct mqdh__pc *mqdh__pc_of(struct mqdh__file *f, Dwarf_Addr addr);

/* pc's source file (NULL if none) and *line (0 if none), looked up once. */
const char *mqdh__pc_line(struct mqdh__file *f, Dwarf_Addr addr, struct mqdh__pc *pc, int *line);

/*
 * pc's frames (mqdh__pc.fr): the functions inlined at addr, innermost
 * first, then the function holding it; looked up once.  lines: with
 * source lines and inlined functions (from the line table and the DWARF);
 * a pc expanded without them is expanded again when they are asked for.
 * Returns the pc, moved (f's memo follows it), or pc unexpanded without
 * memory.
 */
struct mqdh__pc *mqdh__pc_expand(struct mqdh__file *f, Dwarf_Addr addr, struct mqdh__pc *pc,
                                 int lines);

/*
 * The call site of the call instruction at file address addr of f (pc its
 * lookup; the call returns to addr + 1), looked up once: pc's site, whose
 * state says whether it was found.
 */
const struct mqdh__site *mqdh__pc_call_site(struct mqdh__file *f, Dwarf_Addr addr,
                                            struct mqdh__pc *pc);

/* The function site calls (its DW_AT_call_origin, GCC's
 * DW_AT_abstract_origin before DWARF 5: a declaration, maybe in the
 * caller's CU) into *callee: 0, or -1 if it names none (an indirect call). */
int mqdh__site_callee(const struct mqdh__site *site, Dwarf_Die *callee);

/* The name DWARF gives die (through its abstract origin or
 * specification), or NULL. */
const char *mqdh__die_name(Dwarf_Die *die);

/* The parameter of site passed in register regno (DW_AT_location
 * DW_OP_regN or DW_OP_regx) into *param: 0, or -1 if it has none. */
int mqdh__site_reg_param(const struct mqdh__site *site, unsigned regno, Dwarf_Die *param);

/* The value a call site's parameter had at the call (DW_AT_call_value,
 * GCC's DW_AT_GNU_call_site_value) into *attr: attr, or NULL if the call
 * site does not say (its value was not kept). */
Dwarf_Attribute *mqdh__site_value(Dwarf_Die *param, Dwarf_Attribute *attr);

/* Into *cur, its child that holds pc and is a scope of its code (a lexical
 * block, an inlined subroutine): 1, or 0 if none is. */
int mqdh__inner_scope(Dwarf_Die *cur, Dwarf_Addr pc);

/* Whether f is the MPI library: libmpi*, libpmpi* (libmpich* too). */
int mqdh__is_mpi_library(const struct mqdh__file *f);

/*
 * The user's MPI call a function `name` is, as "MPI_Recv", into buf[len]:
 * 1, or 0 if it is none.  in_mpi_library: the function is the MPI
 * library's (for MPICH's internal_NAME).
 */
int mqdh__entry_call(const char *name, int in_mpi_library, char *buf, size_t len);

/* mqdh__entry_call for a function of file f. */
int mqdh__mpi_entry(const char *name, const struct mqdh__file *f, char *buf, size_t len);

#endif
