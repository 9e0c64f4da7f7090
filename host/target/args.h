/*
 * args.h - DWARF expressions evaluated in the frames libdwfl unwound, and
 * with them an MPI call's own arguments read from its stopped frame where
 * the MPI library's DWARF says they are at that point (args.c); for
 * where.c and callsite.c.
 */
#ifndef MQDH__ARGS_H
#define MQDH__ARGS_H

#include "base/mpicalls.h"
#include "target/memory.h"
#include "target/pc.h"
#include "target/where.h"

#include <elfutils/libdwfl.h>
#include <stdint.h>

/* The arguments read, MQDH_ARG_* bit 1 << k for the k-th: their names
 * (the last two, count and request, MQDH__ARG_COUNT and MQDH__ARG_REQUEST,
 * are the host's own: MPI_Wait*'s, read for the requests behind them);
 * MQDH__NARGS of them (base/mpicalls.h). */
#define MQDH__ARG_COUNT 0x20u
#define MQDH__ARG_REQUEST 0x40u
extern const char *const mqdh__arg_names[MQDH__NARGS];

/* Registers kept of a frame, in DWARF's numbering: x86-64's 0-16,
 * aarch64's x0-x30 and sp (31). */
enum { MQDH__FRAME_REGS = 33 };

/*
 * One physical frame as the unwinder left it: what an expression
 * evaluated in it reads.  Taken during the walk and evaluated after it,
 * because libdwfl frees each frame once it has unwound the next, and a
 * value may need the frame further out (DW_OP_entry_value).
 */
struct mqdh__frame {
    struct mqdh__file *file; /* the object its code is in (NULL: none known) */
    int machine;            /* the process's ELF e_machine */
    Dwarf_Addr at;          /* its pc, an address of file: an outer frame's call */
    Dwarf_Addr load_bias;   /* the process's address = file's address + load_bias */
    int at_call;            /* at is a call instruction, returning to at + 1 */
    uint64_t have;          /* bit r: regs[r] was restored */
    Dwarf_Word regs[MQDH__FRAME_REGS];
};

/*
 * Keep frame (in file at its address at, the file loaded at load_bias;
 * at_call: not the innermost or a signal frame) in fr.  inner is the frame
 * walked just before it (NULL for the innermost), kept the same way: the
 * registers it leaves as they were are this frame's too.
 */
void mqdh__frame_take(struct mqdh__frame *fr, Dwfl_Frame *frame, struct mqdh__file *file,
                      Dwarf_Addr at, Dwarf_Addr load_bias, int at_call,
                      const struct mqdh__frame *inner);

/*
 * An evaluation in one frame: the frame, the frame that called it (whose
 * call site gives the values the frame's registers had on entry; NULL if
 * not known), the process's memory (NULL: no stack reads), the concrete
 * function the frame is in (its frame base, and whose entry values those
 * are) and the DWARF's bias in the file's module.  why says why the last
 * evaluation failed; used_outer is set once a value came from the outer
 * frame's call site.
 */
struct mqdh__eval {
    const struct mqdh__frame *fr, *outer;
    struct mqdh__mem *mem;
    Dwarf_Die *subprogram;
    Dwarf_Addr dbias;
    int site;       /* evaluating a call site's value: a register's reason says so */
    const char *why;
    int used_outer;
    /* the evaluator's own */
    int big_endian, addr_size, have_cfa;
    int depth; /* expressions being evaluated, one inside another (frame base, CFA) */
    Dwarf_Word cfa;
    Dwarf_Attribute *attr; /* whose expression is evaluated (DW_OP_entry_value's block) */
};

/* Set e up for fr (see struct mqdh__eval); -1 if fr's file has no ELF
 * header. */
int mqdh__eval_init(struct mqdh__eval *e, const struct mqdh__frame *fr,
                    const struct mqdh__frame *outer, struct mqdh__mem *mem, Dwarf_Die *subprogram,
                    Dwarf_Addr dbias);

/*
 * Evaluate attr (a location or a value expression, or the entry of a
 * location list for e's pc) in e: 0 with the result in *out, *is_value
 * saying whether it is the value itself (a register, DW_OP_stack_value)
 * or the address it lives at, or -1 with e->why.
 */
int mqdh__eval(struct mqdh__eval *e, Dwarf_Attribute *attr, Dwarf_Word *out, int *is_value);

/* The byte size of die's type (a parameter), or 0 if unknown. */
int mqdh__param_size(Dwarf_Die *die, int addr_size);

/* Store v, an argument of size bytes (ints sign-extended, a comm handle's
 * bits as they are), as argument bit of w. */
void mqdh__store_arg(struct mqdh__where *w, unsigned bit, Dwarf_Word v, int size);

/* What the MPI library's DWARF said of the call's arguments. */
struct mqdh__lib_args {
    enum {
        MQDH__LIB_NO_FRAME,    /* the call left no frame of its own (a tail call) */
        MQDH__LIB_NO_DWARF,    /* the library has no DWARF there */
        MQDH__LIB_NO_FUNCTION, /* no DWARF scope of the call's function */
        MQDH__LIB_SCOPES       /* its scopes were read */
    } state;
    /* MQDH__LIB_SCOPES: why argument k was not read (NULL: read, or not
     * one of the function's parameters) */
    const char *why[MQDH__NARGS];
    unsigned via_outer; /* the arguments whose value came from the outer frame's call site */
};

/*
 * Read the call's source, dest, tag, root and comm (those it has) from fr,
 * the frame of the MPI entry point w->call (outer: the frame that called
 * it, NULL if not known): into w (w->args says which were read, w->args_why
 * why one was not) and lib.  mem reads the stack (NULL: only arguments
 * held in registers).
 */
void mqdh__read_args(struct mqdh__where *w, struct mqdh__mem *mem, const struct mqdh__frame *fr,
                     const struct mqdh__frame *outer, struct mqdh__lib_args *lib);

#endif
