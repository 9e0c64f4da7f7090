/*
 * args.c - an MPI call's own arguments, from its stopped frame (args.h):
 * the DWARF location expressions of its parameters, evaluated against the
 * registers and stack libdwfl unwound to.
 */
#define _GNU_SOURCE
#include "args.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * An MPI call's arguments at its stopped frame.  The frame is an outer one
 * (the call is waiting in something it called), so libdwfl knows only the
 * registers the callees' CFI restores: the callee-saved ones, which is
 * where an optimising compiler keeps what a function needs after a call.
 * A location that needs another register, or the value the register had
 * on entry (DW_OP_entry_value: gone unless the caller's call site says),
 * is "optimised out here": the argument is not known, never guessed.
 */
struct frame_ctx {
    Dwfl_Frame *frame;
    Dwfl_Module *mod;
    Dwarf_Addr at, bias; /* the frame's pc (the call), the module's bias */
    struct mqdh_mem *mem;
    int big_endian, addr_size;
    Dwarf_Die *subprogram;
    int have_cfa; /* cfa computed (every stack argument needs it) */
    Dwarf_Word cfa;
    const char *why; /* the first reason an evaluation failed */
};

static int frame_reg(struct frame_ctx *f, unsigned regno, Dwarf_Word *val)
{
    if (dwfl_frame_reg(f->frame, regno, val) != 0) {
        f->why = "optimised out here (in a register the call did not preserve)";
        return -1;
    }
    return 0;
}

static int frame_cfa(struct frame_ctx *f, Dwarf_Word *cfa);

/*
 * Evaluate a DWARF expression at f.  *is_value: the result is the value
 * itself (a register, DW_OP_stack_value), else the address it lives at.
 * The small set compilers emit for arguments; anything else fails.
 *
 * Longer than a screen on purpose: it is one stack machine, one branch per
 * operation (DWARF 5, section 2.5), and each branch is a line or three on
 * the same stack; split up, its pieces would pass the stack and its
 * pointer about and the whole set of operations would no longer read at a
 * glance.
 */
static int eval_expr(struct frame_ctx *f, const Dwarf_Op *ops, size_t n, Dwarf_Word *out,
                     int *is_value)
{
    Dwarf_Word st[8];
    int sp = 0;
    *is_value = 0;
    for (size_t i = 0; i < n; i++) {
        const Dwarf_Op *op = &ops[i];
        uint8_t a = op->atom;
        Dwarf_Word v;
        if (sp >= 7) {
            f->why = "a location expression too deep";
            return -1;
        }
        if ((a >= DW_OP_reg0 && a <= DW_OP_reg31) || a == DW_OP_regx) {
            if (n != 1) {
                f->why = "split across registers (DW_OP_piece)";
                return -1;
            }
            unsigned regno = a == DW_OP_regx ? (unsigned)op->number : (unsigned)(a - DW_OP_reg0);
            if (frame_reg(f, regno, out) != 0)
                return -1;
            *is_value = 1;
            return 0;
        }
        if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
            st[sp++] = a - DW_OP_lit0;
        } else if (a == DW_OP_const1u || a == DW_OP_const2u || a == DW_OP_const4u ||
                   a == DW_OP_const8u || a == DW_OP_constu || a == DW_OP_const1s ||
                   a == DW_OP_const2s || a == DW_OP_const4s || a == DW_OP_const8s ||
                   a == DW_OP_consts) {
            st[sp++] = op->number;
        } else if ((a >= DW_OP_breg0 && a <= DW_OP_breg31) || a == DW_OP_bregx) {
            int x = a == DW_OP_bregx;
            if (frame_reg(f, x ? (unsigned)op->number : (unsigned)(a - DW_OP_breg0), &v) != 0)
                return -1;
            st[sp++] = v + (Dwarf_Word)(Dwarf_Sword)(x ? op->number2 : op->number);
        } else if (a == DW_OP_fbreg) {
            Dwarf_Attribute fb;
            Dwarf_Op *fops;
            size_t fn;
            int fv;
            if (!f->subprogram || !dwarf_attr_integrate(f->subprogram, DW_AT_frame_base, &fb) ||
                dwarf_getlocation_addr(&fb, f->at - f->bias, &fops, &fn, 1) != 1 ||
                eval_expr(f, fops, fn, &v, &fv) != 0) {
                if (!f->why)
                    f->why = "no frame base";
                return -1;
            }
            st[sp++] = v + (Dwarf_Word)(Dwarf_Sword)op->number;
        } else if (a == DW_OP_call_frame_cfa) {
            if (frame_cfa(f, &v) != 0)
                return -1;
            st[sp++] = v;
        } else if (a == DW_OP_plus_uconst && sp >= 1) {
            st[sp - 1] += op->number;
        } else if ((a == DW_OP_plus || a == DW_OP_minus) && sp >= 2) {
            sp--;
            st[sp - 1] = a == DW_OP_plus ? st[sp - 1] + st[sp] : st[sp - 1] - st[sp];
        } else if ((a == DW_OP_deref || a == DW_OP_deref_size) && sp >= 1) {
            int size = a == DW_OP_deref ? f->addr_size : (int)op->number;
            if (!f->mem || size < 1 || size > 8 ||
                mqdh__mem_read_word(f->mem, st[sp - 1], size, f->big_endian, &st[sp - 1]) != 0) {
                f->why = "its stack could not be read";
                return -1;
            }
        } else if (a == DW_OP_stack_value && sp >= 1 && i == n - 1) {
            *out = st[sp - 1];
            *is_value = 1;
            return 0;
        } else if (a == DW_OP_entry_value || a == DW_OP_GNU_entry_value) {
            f->why = "optimised out here (only its value on entry is described)";
            return -1;
        } else {
            f->why = "a location expression mqd does not evaluate";
            return -1;
        }
    }
    if (sp != 1) {
        f->why = n ? "a malformed location expression" : "optimised out here";
        return -1;
    }
    *out = st[0];
    return 0;
}

/* The canonical frame address of f's frame, from the module's CFI. */
static int frame_cfa(struct frame_ctx *f, Dwarf_Word *cfa)
{
    if (f->have_cfa) {
        *cfa = f->cfa;
        return 0;
    }
    Dwarf_Addr cbias;
    Dwarf_CFI *cfi = dwfl_module_dwarf_cfi(f->mod, &cbias); /* the file's, bias 0 */
    Dwarf_Frame *fr = NULL;
    if (!cfi || dwarf_cfi_addrframe(cfi, f->at - cbias, &fr) != 0) {
        cfi = dwfl_module_eh_cfi(f->mod, &cbias);
        if (!cfi || dwarf_cfi_addrframe(cfi, f->at - cbias, &fr) != 0) {
            f->why = "no call frame information";
            return -1;
        }
    }
    Dwarf_Op *ops;
    size_t n;
    int is_value, rc = -1;
    /* The CFA rule is register + offset (or an expression), never fbreg. */
    if (dwarf_frame_cfa(fr, &ops, &n) == 0 && n > 0)
        rc = eval_expr(f, ops, n, cfa, &is_value);
    free(fr);
    if (rc != 0 && !f->why)
        f->why = "no call frame address";
    if (rc == 0) {
        f->cfa = *cfa;
        f->have_cfa = 1;
    }
    return rc;
}

/* The byte size of die's type (a parameter), or 0 if unknown. */
static int param_size(Dwarf_Die *die, int addr_size)
{
    Dwarf_Attribute ta;
    Dwarf_Die type, peeled;
    Dwarf_Word size;
    if (!dwarf_attr_integrate(die, DW_AT_type, &ta) || !dwarf_formref_die(&ta, &type))
        return 0;
    if (dwarf_peel_type(&type, &peeled) != 0)
        return 0;
    int tag = dwarf_tag(&peeled);
    if (tag == DW_TAG_pointer_type && !dwarf_hasattr(&peeled, DW_AT_byte_size))
        return addr_size;
    if (dwarf_aggregate_size(&peeled, &size) != 0 || size < 1 || size > 8)
        return 0;
    return (int)size;
}

static const struct {
    const char *name;
    unsigned bit;
} wanted_args[] = {
    {"source", MQDH_ARG_SOURCE}, {"dest", MQDH_ARG_DEST}, {"tag", MQDH_ARG_TAG},
    {"root", MQDH_ARG_ROOT},     {"comm", MQDH_ARG_COMM},
};

static void store_arg(struct mqdh__where *w, unsigned bit, Dwarf_Word v, int size)
{
    uint64_t u = size >= 8 ? v : v & ((UINT64_C(1) << (8 * size)) - 1);
    /* ints: sign-extended from their size */
    long s = size >= 8 ? (long)v : (long)((int64_t)(u << (64 - 8 * size)) >> (64 - 8 * size));
    w->args |= bit;
    switch (bit) {
    case MQDH_ARG_SOURCE:
        w->source = s;
        break;
    case MQDH_ARG_DEST:
        w->dest = s;
        break;
    case MQDH_ARG_TAG:
        w->tag = s;
        break;
    case MQDH_ARG_ROOT:
        w->root = s;
        break;
    case MQDH_ARG_COMM:
        w->comm = u; /* a handle: its bits, as wide as the type */
        break;
    }
}

/* The concrete function of cu (a top-level DW_TAG_subprogram) holding pc. */
static int containing_function(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *out)
{
    if (dwarf_child(cu, out) != 0)
        return -1;
    do
        if (dwarf_tag(out) == DW_TAG_subprogram && dwarf_haspc(out, pc) == 1)
            return 0;
    while (dwarf_siblingof(out, out) == 0);
    return -1;
}

/*
 * From the concrete function fn down through the lexical blocks and inlined
 * instances that hold pc, those whose name is the MPI call's (PMPI_X, and
 * MPICH's internal_X inlined into it), innermost first, into out[max].
 * Returns their number.  (Not dwarf_getscopes: from an inlined instance it
 * goes on in the abstract definition's scopes, so PMPI_Ssend is lost once
 * MPID_Wait is inlined into it.)
 */
static int entry_scopes(Dwarf_Die *fn, Dwarf_Addr pc, const struct mqdh_file *file, const char *call,
                        Dwarf_Die *out, int max)
{
    Dwarf_Die cur = *fn;
    int n = 0;
    for (int depth = 0; depth < 64; depth++) {
        int tag = dwarf_tag(&cur);
        char entry[64];
        if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) &&
            mqdh__mpi_entry(dwarf_diename(&cur), file, entry, sizeof entry) &&
            strcmp(entry, call) == 0) {
            if (n == max) /* keep the innermost */
                memmove(out, out + 1, (size_t)--n * sizeof *out);
            out[n++] = cur;
        }
        if (!mqdh__inner_scope(&cur, pc))
            break;
    }
    for (int i = 0; i < n / 2; i++) { /* outermost first -> innermost first */
        Dwarf_Die t = out[i];
        out[i] = out[n - 1 - i];
        out[n - 1 - i] = t;
    }
    return n;
}

/*
 * Read the wanted_args parameters of one scope of the call that are not
 * read yet; why[k] says why wanted_args[k] could not be.
 */
static void scope_args(struct frame_ctx *f, struct mqdh__where *w, Dwarf_Die *scope,
                       const char **why)
{
    Dwarf_Die child;
    if (dwarf_child(scope, &child) != 0)
        return;
    do {
        if (dwarf_tag(&child) != DW_TAG_formal_parameter)
            continue;
        Dwarf_Attribute na, la;
        const char *name = dwarf_formstring(dwarf_attr_integrate(&child, DW_AT_name, &na));
        unsigned bit = 0;
        size_t k = 0;
        for (size_t a = 0; name && a < sizeof wanted_args / sizeof wanted_args[0]; a++)
            if (strcmp(name, wanted_args[a].name) == 0)
                bit = wanted_args[a].bit, k = a;
        if (!bit || (w->args & bit))
            continue;
        Dwarf_Op *ops;
        size_t n;
        Dwarf_Word v;
        int is_value, size = param_size(&child, f->addr_size);
        f->why = NULL;
        if (!size)
            f->why = "its type's size is unknown";
        else if (!dwarf_attr_integrate(&child, DW_AT_location, &la) ||
                 dwarf_getlocation_addr(&la, f->at - f->bias, &ops, &n, 1) != 1)
            f->why = "optimised out here";
        else if (eval_expr(f, ops, n, &v, &is_value) == 0 &&
                 (is_value || (f->mem && mqdh__mem_read_word(f->mem, v, size, f->big_endian,
                                                            &v) == 0))) {
            store_arg(w, bit, v, size);
            continue;
        } else if (!f->why) {
            f->why = "its stack could not be read";
        }
        why[k] = f->why;
    } while (dwarf_siblingof(&child, &child) == 0);
}

/*
 * Read the arguments named in wanted_args of the MPI entry frame, at file
 * address at of file; the scopes they are described in are looked up once
 * per address (pc).
 */
void mqdh__read_args(struct mqdh__where *w, struct mqdh_mem *mem, Dwfl_Frame *frame,
                     struct mqdh_file *file, Dwarf_Addr at, struct mqdh__pc *pc)
{
    Dwfl_Module *mod = mqdh__file_module(file);
    struct frame_ctx f = {.frame = frame, .mod = mod, .at = at, .mem = mem};
    if (!pc->scoped) {
        Dwarf_Die *cu = mod ? dwfl_module_addrdie(mod, at, &pc->dbias) : NULL;
        pc->scoped = 1;
        pc->have_cu = cu != NULL;
        /* The entry point's own scopes: PMPI_Probe, and the internal_Probe
         * inlined into it, never a helper inlined further in (whose "comm"
         * may be an MPIR_Comm pointer).  An argument optimised out in one
         * may be described in the other.  The concrete function holds the
         * frame base. */
        if (cu && containing_function(cu, at - pc->dbias, &pc->outer) == 0)
            pc->nscopes = entry_scopes(&pc->outer, at - pc->dbias, file, w->call, pc->scopes, 4);
    }
    if (!pc->have_cu) {
        snprintf(w->args_why, sizeof w->args_why,
                 "the MPI library has no debug information for %s", w->call);
        return;
    }
    GElf_Ehdr eh;
    if (!gelf_getehdr(file->elf, &eh))
        return;
    f.bias = pc->dbias;
    f.big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
    f.addr_size = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
    if (pc->nscopes == 0) {
        snprintf(w->args_why, sizeof w->args_why, "no debug information for the function of %s",
                 w->call);
        return;
    }
    Dwarf_Die outer = pc->outer;
    f.subprogram = &outer;
    const char *why[sizeof wanted_args / sizeof wanted_args[0]] = {NULL};
    for (int i = 0; i < pc->nscopes; i++) {
        Dwarf_Die scope = pc->scopes[i];
        scope_args(&f, w, &scope, why);
    }
    /* The first the call has that no scope described. */
    for (size_t a = 0; a < sizeof wanted_args / sizeof wanted_args[0]; a++)
        if (why[a] && !(w->args & wanted_args[a].bit)) {
            snprintf(w->args_why, sizeof w->args_why, "%s's %s: %s", w->call,
                     wanted_args[a].name, why[a]);
            break;
        }
}
