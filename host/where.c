/*
 * where.c - where a stopped rank is: unwind every thread with libdwfl and
 * find the MPI call it is in and the user's code that made it.
 *
 * The process must be ptrace-stopped by us (attach.c); libdwfl reads its
 * registers and stack through ptrace and memory, and unwinds with CFI.
 */
#define _GNU_SOURCE
#include "where.h"

#include "attach.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct walk {
    struct mqdh__where *w;
    const struct mqdh_image *im;
    struct mqdh_mem *mem;
    int depth;
    int found;   /* the MPI entry point is met */
    int called;  /* and the user's code that called it */
    const struct mqdh_image_module *mpi;   /* the object the MPI entry point is in */
    const struct mqdh_image_module *inner; /* the object of the frame walked before */
    struct mqdh_thread *t; /* the frames kept */
    int cap, nomem;
    int main_thread; /* stop at main: what calls it is the C library's start */
};

/* Frames kept per thread, inlined ones included: a loop or a corrupt stack
 * ends there. */
enum { MAX_PHYSICAL = 256, MAX_INLINED = 32 };

static int mpi_entry(const char *name, const struct mqdh_file *f, char *buf, size_t len);

/*
 * What a code address of a file says, the same for every rank that runs
 * it, so looked up once per session (mqdh__file_memo): its symbol, its
 * source line, and, for an MPI call's frame, the DWARF scopes its
 * arguments are described in.
 */
struct pcframe {
    const char *function, *file; /* the file's own strings (ELF and DWARF) */
    int line;
};

struct pc {
    const char *name; /* the symbol holding it, or NULL */
    int line;         /* -1: not looked up yet */
    const char *src;  /* its source file, or NULL */
    int scoped;       /* the scopes below were looked up */
    int have_cu;      /* the file has DWARF for it */
    int nscopes;      /* the MPI call's scopes, innermost first */
    Dwarf_Die outer, scopes[4];
    Dwarf_Addr dbias; /* the DWARF's bias in the file's module */
    /* The frames the address is in (pc_expand): the functions inlined
     * there, innermost first, then the function holding it. */
    int expanded, nfr;
    struct pcframe fr[];
};

/* The pc of file address addr of f; NULL without memory. */
static struct pc *pc_of(struct mqdh_file *f, Dwarf_Addr addr)
{
    void **slot = f ? mqdh__file_memo(f, addr) : NULL;
    if (!slot)
        return NULL;
    if (!*slot) {
        struct pc *pc = calloc(1, sizeof *pc);
        if (!pc)
            return NULL;
        Dwfl_Module *m = mqdh__file_module(f);
        pc->name = m ? dwfl_module_addrname(m, addr) : NULL;
        pc->line = -1;
        *slot = pc;
    }
    return *slot;
}

/* pc's source file and line (looked up once). */
static const char *pc_line(struct mqdh_file *f, Dwarf_Addr addr, struct pc *pc, int *line)
{
    if (pc->line < 0) {
        Dwfl_Module *m = mqdh__file_module(f);
        Dwfl_Line *l = m ? dwfl_module_getsrc(m, addr) : NULL;
        pc->line = 0;
        pc->src = l ? dwfl_lineinfo(l, NULL, &pc->line, NULL, NULL, NULL) : NULL;
    }
    *line = pc->line;
    return pc->src;
}

/* The name DWARF gives die (an inlined subroutine's, from its abstract
 * origin), or NULL. */
static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

/*
 * The concrete function holding pc among the children of die (a CU, a
 * namespace, a class), looked for as deep as C++ nests them.
 */
static int function_in(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *out, int depth)
{
    Dwarf_Die child;
    if (depth > 4 || dwarf_child(die, &child) != 0)
        return -1;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_subprogram && dwarf_haspc(&child, pc) == 1) {
            *out = child;
            return 0;
        }
        if ((tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
             tag == DW_TAG_structure_type) &&
            function_in(&child, pc, out, depth + 1) == 0)
            return 0;
    } while (dwarf_siblingof(&child, &child) == 0);
    return -1;
}

/* Into *cur, its child that holds pc and is a scope of its code (a lexical
 * block, an inlined subroutine): 1, or 0 if none is. */
static int inner_scope(Dwarf_Die *cur, Dwarf_Addr pc)
{
    Dwarf_Die child;
    if (dwarf_child(cur, &child) != 0)
        return 0;
    do {
        int t = dwarf_tag(&child);
        if ((t == DW_TAG_lexical_block || t == DW_TAG_inlined_subroutine) &&
            dwarf_haspc(&child, pc) == 1) {
            *cur = child;
            return 1;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

/*
 * The inlined subroutines of fn that hold pc, outermost first, into
 * out[max]; their number.  Walked down from the concrete function (not
 * dwarf_getscopes, which goes on from an inlined instance into its
 * abstract definition's scopes).
 */
static int inlined_at(Dwarf_Die *fn, Dwarf_Addr pc, Dwarf_Die *out, int max)
{
    Dwarf_Die cur = *fn;
    int n = 0;
    for (int depth = 0; depth < 64 && n < max && inner_scope(&cur, pc); depth++)
        if (dwarf_tag(&cur) == DW_TAG_inlined_subroutine)
            out[n++] = cur;
    return n;
}

/* Where inlined subroutine die was called from: its DW_AT_call_file (an
 * index into cu's file table) and DW_AT_call_line. */
static void call_site(Dwarf_Die *die, Dwarf_Die *cu, const char **file, int *line)
{
    Dwarf_Attribute a;
    Dwarf_Word idx = 0, ln = 0;
    Dwarf_Files *files;
    size_t nfiles;
    *file = NULL;
    *line = 0;
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &ln) == 0 && ln < 0x7fffffff)
        *line = (int)ln;
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &idx) == 0 &&
        dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && idx < nfiles)
        *file = dwarf_filesrc(files, idx, NULL, NULL);
}

/*
 * The frames at file address addr of f: the functions inlined there (from
 * the DWARF), innermost first, each at the line the next one out calls it
 * from, then the function holding it; looked up once.  lines: read the
 * line table and the DWARF (not for the system's libraries, whose
 * separate debug files would cost more than their lines are worth in a
 * hung job's stacks).  Returns the pc (moved: the memo slot is updated),
 * or pc itself, unexpanded, without memory.
 */
static struct pc *pc_expand(struct mqdh_file *f, Dwarf_Addr addr, struct pc *pc, int lines)
{
    if (pc->expanded)
        return pc;
    int line = 0, ninl = 0;
    const char *src = lines ? pc_line(f, addr, pc, &line) : NULL;
    Dwarf_Die inl[MAX_INLINED], fn, cu_mem, *cu = NULL;
    Dwfl_Module *m = lines ? mqdh__file_module(f) : NULL;
    Dwarf_Addr dbias;
    if (m && (cu = dwfl_module_addrdie(m, addr, &dbias)) != NULL) {
        cu_mem = *cu;
        cu = &cu_mem;
        if (function_in(cu, addr - dbias, &fn, 0) == 0)
            ninl = inlined_at(&fn, addr - dbias, inl, MAX_INLINED);
    }
    void **slot = mqdh__file_memo(f, addr);
    struct pc *n = slot ? realloc(pc, sizeof *pc + (size_t)(ninl + 1) * sizeof pc->fr[0]) : NULL;
    if (!n)
        return pc;
    *slot = n;
    int k = 0;
    for (int j = ninl - 1; j >= 0; j--) {
        n->fr[k++] = (struct pcframe){die_name(&inl[j]), src, line};
        call_site(&inl[j], cu, &src, &line);
    }
    n->fr[k++] = (struct pcframe){n->name, src, line};
    n->nfr = k;
    n->expanded = 1;
    return n;
}

/* ---------------------------------------------------------------- arguments */

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
            mpi_entry(dwarf_diename(&cur), file, entry, sizeof entry) &&
            strcmp(entry, call) == 0) {
            if (n == max) /* keep the innermost */
                memmove(out, out + 1, (size_t)--n * sizeof *out);
            out[n++] = cur;
        }
        if (!inner_scope(&cur, pc))
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
static void read_args(struct walk *k, Dwfl_Frame *frame, struct mqdh_file *file, Dwarf_Addr at,
                      struct pc *pc)
{
    struct mqdh__where *w = k->w;
    Dwfl_Module *mod = mqdh__file_module(file);
    struct frame_ctx f = {.frame = frame, .mod = mod, .at = at, .mem = k->mem};
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

/* Whether f is the MPI library: libmpi*, libpmpi* (libmpich* too). */
static int is_mpi_library(const struct mqdh_file *f)
{
    const char *base = f ? strrchr(f->path, '/') : NULL;
    base = base ? base + 1 : NULL;
    return base && (strncmp(base, "libmpi", 6) == 0 || strncmp(base, "libpmpi", 7) == 0);
}

/*
 * The user's MPI call a frame is in, as "MPI_Recv", into buf; 0 if none.
 * "PMPI_Recv" and "MPI_Recv" are both the user's MPI_Recv.  So is MPICH's
 * "internal_Recv" inside the MPI library: its generated bindings
 * (src/binding/c, MPICH 4.x) put each call's body in a static
 * internal_NAME that PMPI_NAME tail-calls, so for MPI_Waitany (4.0.2) and
 * for every call (4.1 and later) no MPI_ frame is left on the stack.  A
 * compiler's clone of one ("internal_Recv.constprop.0", ".isra.0",
 * ".part.0", ".cold") is the same call.
 */
static int entry_call(const char *name, int in_mpi_library, char *buf, size_t len)
{
    const char *call;
    if (!name)
        return 0;
    if (strncmp(name, "PMPI_", 5) == 0 || strncmp(name, "MPI_", 4) == 0)
        call = name[0] == 'P' ? name + 5 : name + 4;
    else if (strncmp(name, "internal_", 9) == 0 && name[9] >= 'A' && name[9] <= 'Z' &&
             in_mpi_library)
        call = name + 9;
    else
        return 0;
    int n = (int)strcspn(call, ".");
    if (n == 0)
        return 0;
    snprintf(buf, len, "MPI_%.*s", n, call);
    return 1;
}

/* entry_call for a frame in file f. */
static int mpi_entry(const char *name, const struct mqdh_file *f, char *buf, size_t len)
{
    return entry_call(name, is_mpi_library(f), buf, len);
}

/*
 * x86-64: the function a call instruction ending at ret (a return address
 * in the caller's module) called, through the target's memory: "call
 * rel32" to a PLT stub ("jmp *slot(%rip)", after an endbr64 and a bnd
 * prefix in .plt.sec), or "call *slot(%rip)" (-fno-plt).  The slot is the
 * GOT entry the dynamic linker filled in, so the answer is the function in
 * the MPI library the program called, wherever it tail-called to.  0 if
 * the instructions are not these, or cannot be read.
 */
static Dwarf_Addr called_function(struct walk *k, const struct mqdh_file *caller, Dwarf_Addr ret)
{
    unsigned char code[16];
    uint64_t slot = 0, target = 0;
    GElf_Ehdr eh;
    if (!k->mem || !caller->elf || !gelf_getehdr(caller->elf, &eh) ||
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
static const struct mqdh_image_module *object_at(const struct walk *k, Dwfl *dwfl,
                                                 Dwarf_Addr addr, struct pc **pc)
{
    const struct mqdh_image_module *m = mqdh__image_module_of(k->im, dwfl_addrmodule(dwfl, addr));
    *pc = m ? pc_of(m->file, addr - m->bias) : NULL;
    return m;
}

/* Whose code file f is (mqdh_frame_kind). */
static enum mqdh_frame_kind file_kind(const struct mqdh_file *f)
{
    static const char *const system_dirs[] = {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/"};
    if (!f || f->path[0] != '/')
        return MQDH_FRAME_SYSTEM; /* the vDSO, or nothing */
    if (is_mpi_library(f))
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
static void keep_frames(struct walk *k, Dwarf_Addr at, const struct mqdh_image_module *obj,
                        const struct pc *here, enum mqdh_frame_kind kind)
{
    struct mqdh_thread *t = k->t;
    int n = here && here->expanded ? here->nfr : 1;
    if (t->nframes + n > MQDH_MAX_FRAMES) {
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
    const struct mqdh_file *file = obj ? obj->file : NULL;
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
    struct pc *here;
    const struct mqdh_image_module *obj = object_at(k, dwfl, at, &here);
    struct mqdh_file *file = obj ? obj->file : NULL;
    enum mqdh_frame_kind kind = file_kind(file);
    /* Its inlined frames (with lines where the user's code or the MPI
     * library's is), then every frame kept. */
    if (here)
        here = pc_expand(file, at - obj->bias, here, kind != MQDH_FRAME_SYSTEM);
    keep_frames(k, at, obj, here, kind);
    const char *name = here ? here->name : NULL;
    /* main: the frames outside it (__libc_start_main, _start) say nothing,
     * and each costs reads of the stack. */
    int at_main = k->main_thread && name && strcmp(name, "main") == 0;
    char entry[sizeof k->w->call];
    const struct mqdh_image_module *in = k->inner;
    k->inner = obj;
    if (k->called)
        return at_main ? DWARF_CB_ABORT : DWARF_CB_OK; /* only kept */
    /*
     * No MPI frame met, and this frame called into the MPI library: the
     * entry point tail-called out of its own frame into code with no name
     * that says so (a libmpi without .symtab hides MPICH's static
     * internal_NAME).  The call instruction names what was called.
     */
    if (!k->found && !activation && obj && in && in != obj && is_mpi_library(in->file)) {
        Dwarf_Addr fn = called_function(k, file, pc);
        struct pc *called = NULL;
        const struct mqdh_image_module *fobj = fn ? object_at(k, dwfl, fn, &called) : NULL;
        const char *fname = fobj == in && called ? called->name : NULL;
        if (mpi_entry(fname, in->file, entry, sizeof entry)) {
            snprintf(k->w->call, sizeof k->w->call, "%s", entry);
            snprintf(k->w->args_why, sizeof k->w->args_why,
                     "%s left no frame of its own (a tail call into a library without "
                     "symbols)", entry);
            k->mpi = in;
            k->found = 1;
        }
    }
    if (mpi_entry(name, file, entry, sizeof entry)) {
        /* the innermost MPI entry point wins; keep looking outward */
        if (!k->found) {
            snprintf(k->w->call, sizeof k->w->call, "%s", entry);
            k->mpi = obj;
            k->found = 1;
            read_args(k, frame, file, at - obj->bias, here);
        }
        return DWARF_CB_OK;
    }
    if (k->found && obj != k->mpi) { /* the user's code that called it */
        /* The innermost of its frames: a function inlined there is the
         * caller. */
        const char *fname = here && here->expanded ? here->fr[0].function : name;
        int lineno = 0;
        const char *src = NULL;
        if (here && here->expanded) {
            src = here->fr[0].file;
            lineno = here->fr[0].line;
        } else if (here) {
            src = pc_line(file, at - obj->bias, here, &lineno);
        }
        snprintf(k->w->function, sizeof k->w->function, "%.*s",
                 fname ? (int)written_len(fname) : 2, fname ? fname : "??");
        if (src) {
            snprintf(k->w->file, sizeof k->w->file, "%s", src);
            k->w->line = lineno;
        }
        k->called = 1;
        return at_main ? DWARF_CB_ABORT : DWARF_CB_OK;
    }
    return at_main ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* Free what thread t holds, and zero it. */
static void thread_clear(struct mqdh_thread *t)
{
    for (int i = 0; i < t->nframes; i++) {
        free(t->frames[i].function);
        free(t->frames[i].module);
        free(t->frames[i].file);
    }
    free(t->frames);
    free(t->call);
    free(t->error);
    memset(t, 0, sizeof *t);
}

void mqdh__stack_clear(struct mqdh_stack *st)
{
    for (int i = 0; st && i < st->nthreads; i++)
        thread_clear(&st->threads[i]);
    if (st) {
        free(st->threads);
        memset(st, 0, sizeof *st);
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
    if (t->entry < 0 || !entry_call(t->frames[t->entry].function, 1, call, sizeof call))
        snprintf(call, sizeof call, "%s", w->call);
    if (call[0] && !(t->call = strdup(call)))
        return -1;
    return 0;
}

/*
 * Walk one thread (thread, or tid through dwfl) into w, and its frames
 * into t: 1 if it is in an MPI call (w filled, w->tid set), else 0 with w
 * cleared; -1 out of memory (t then empty).
 */
static int walk_thread(const struct mqdh_image *im, Dwfl_Thread *thread, pid_t tid,
                       struct mqdh_mem *mem, struct mqdh__where *w, struct mqdh_thread *t)
{
    struct walk k = {.w = w, .im = im, .mem = mem, .t = t, .main_thread = tid == im->pid};
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
        thread_clear(t);
        return -1;
    }
    if (!k.found) {
        memset(w, 0, sizeof *w);
        return 0;
    }
    w->tid = tid;
    return 1;
}

struct threads {
    const struct mqdh_image *im;
    struct mqdh__where *w;
    struct mqdh_mem *mem;
    struct mqdh_stack *stack;
    int found, nomem;
};

static int thread_cb(Dwfl_Thread *thread, void *arg)
{
    struct threads *th = arg;
    pid_t tid = dwfl_thread_tid(thread);
    if (tid == th->im->pid)
        return DWARF_CB_OK;
    struct mqdh_stack *st = th->stack;
    if (st->nthreads >= MQDH_MAX_THREADS)
        return DWARF_CB_ABORT;
    struct mqdh_thread *grown = realloc(st->threads, (size_t)(st->nthreads + 1) * sizeof *grown);
    if (!grown) {
        th->nomem = 1;
        return DWARF_CB_ABORT;
    }
    st->threads = grown;
    struct mqdh__where w;
    int in = walk_thread(th->im, thread, tid, th->mem, &w, &st->threads[st->nthreads]);
    if (in < 0) {
        th->nomem = 1;
        return DWARF_CB_ABORT;
    }
    st->nthreads++;
    if (in && !th->found) {
        *th->w = w;
        th->found = 1;
    }
    return DWARF_CB_OK;
}

int mqdh__where(const struct mqdh_image *im, struct mqdh_mem *mem, struct mqdh__where *w,
               struct mqdh_stack *stack, char *err, size_t errlen)
{
    memset(w, 0, sizeof *w);
    if (stack)
        memset(stack, 0, sizeof *stack);
    /* The threads are already ptrace-stopped (attach.c): libdwfl only reads. */
    int rc = dwfl_linux_proc_attach(im->dwfl, im->pid, true);
    if (rc != 0) {
        snprintf(err, errlen, "cannot unwind process %d: %s", (int)im->pid,
                 rc > 0 ? strerror(rc) : dwfl_errmsg(-1));
        return -1;
    }
    /* The main thread first: that is where an MPI program usually waits;
     * without stacks, the others, until one is in MPI, only if it is in no
     * MPI call. */
    if (!stack) {
        if (!walk_thread(im, NULL, im->pid, mem, w, NULL)) {
            struct threads th = {im, w, mem, NULL, 0, 0};
            dwfl_getthreads(im->dwfl, thread_cb, &th);
        }
        return 0;
    }
    struct threads th = {im, w, mem, stack, 0, 0};
    if (!(stack->threads = calloc(1, sizeof *stack->threads))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int in = walk_thread(im, NULL, im->pid, mem, w, &stack->threads[0]);
    if (in >= 0) {
        stack->nthreads = 1;
        th.found = in;
        dwfl_getthreads(im->dwfl, thread_cb, &th);
    }
    if (in < 0 || th.nomem) {
        mqdh__stack_clear(stack);
        memset(w, 0, sizeof *w);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}
