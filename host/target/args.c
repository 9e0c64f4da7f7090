/*
 * args.c - DWARF expressions evaluated in unwound frames, and an MPI
 * call's own arguments from its stopped frame (args.h): the location
 * expressions of its parameters, evaluated against the registers and
 * stack libdwfl unwound to.
 */
#define _GNU_SOURCE
#include "target/args.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * An expression is evaluated in one frame.  An MPI call's stopped frame is
 * an outer one (the call is waiting in something it called), and so is
 * its caller's, so libdwfl knows only the registers the callees' CFI
 * restores: the callee-saved ones, which is where an optimising compiler
 * keeps what a function needs after a call.  A value that needs another
 * register is "optimised out here": not known, never guessed.  A value
 * described as the one a register had on entry (DW_OP_entry_value) is
 * the one the call site of the frame further out gave it, where that
 * call site says (DWARF 5 section 2.5.1.7; gdb resolves it the same way,
 * one level out).
 */

const char *const mqdh__arg_names[MQDH__NARGS] = {"source", "dest", "tag", "root",
                                                  "comm",   "count", "request"};

/* The argument a parameter named name is (mqdh__arg_names' index), or -1:
 * MPICH's bindings name MPI_Waitall's requests array_of_requests and
 * MPI_Waitsome's count incount. */
static int arg_of_name(const char *name)
{
    if (strcmp(name, "array_of_requests") == 0)
        name = "request";
    else if (strcmp(name, "incount") == 0)
        name = "count";
    for (int a = 0; a < MQDH__NARGS; a++)
        if (strcmp(name, mqdh__arg_names[a]) == 0)
            return a;
    return -1;
}

/*
 * The registers a call preserves, which alone an outer frame can have
 * (x86-64 psABI 3.2.1: rbx, rbp, rsp, r12-r15, and the return address;
 * AAPCS64 6.1.1: x19-x29, x30 the return address, sp), in DWARF's
 * numbering; 0 for a machine mqd does not know (libdwfl's word stands).
 */
static uint64_t preserved(int machine)
{
    switch (machine) {
    case EM_X86_64:
        return UINT64_C(0x1f0c8);
    case EM_AARCH64:
        return UINT64_C(0xfff80000);
    default:
        return 0;
    }
}

/*
 * Whether inner's code leaves x86-64's rbx (DWARF 3) as it was: its CFI
 * gives rbx no rule there, which the psABI makes "the same value".
 * elfutils (0.188 here) writes that default on register 0
 * (backends/x86_64_cfi.c: "DW_CFA_same_value, ULEB128_7 (0), / * %rbx"),
 * so libdwfl carries rax out where it should rbx, and loses rbx in every
 * frame whose callee did not save it: the register GCC keeps a value the
 * call site describes in first (DW_OP_breg3).
 */
static int keeps_rbx(const struct mqdh__frame *inner)
{
    Dwfl_Module *mod = inner->file ? mqdh__file_module(inner->file) : NULL;
    Dwarf_Addr bias;
    Dwarf_CFI *cfi = mod ? dwfl_module_eh_cfi(mod, &bias) : NULL;
    Dwarf_Frame *fr = NULL;
    Dwarf_Op mem[3], *ops;
    size_t n;
    if (!cfi || dwarf_cfi_addrframe(cfi, inner->at - bias, &fr) != 0) {
        cfi = mod ? dwfl_module_dwarf_cfi(mod, &bias) : NULL;
        if (!cfi || dwarf_cfi_addrframe(cfi, inner->at - bias, &fr) != 0)
            return 0;
    }
    int keeps = dwarf_frame_register(fr, 3, mem, &ops, &n) == 0 && n == 0;
    free(fr);
    return keeps;
}

void mqdh__frame_take(struct mqdh__frame *fr, Dwfl_Frame *frame, struct mqdh__file *file,
                      Dwarf_Addr at, Dwarf_Addr load_bias, int at_call,
                      const struct mqdh__frame *inner)
{
    GElf_Ehdr eh;
    memset(fr, 0, sizeof *fr);
    fr->file = file;
    fr->at = at;
    fr->load_bias = load_bias;
    fr->at_call = at_call;
    fr->machine = file && mqdh__file_elf(file) && gelf_getehdr(file->elf, &eh) ? eh.e_machine
                  : inner                                           ? inner->machine
                                                                    : EM_NONE;
    for (unsigned r = 0; r < MQDH__FRAME_REGS; r++)
        if (dwfl_frame_reg(frame, r, &fr->regs[r]) == 0)
            fr->have |= UINT64_C(1) << r;
    if (!at_call || !preserved(fr->machine))
        return;
    fr->have &= preserved(fr->machine);
    if (fr->machine == EM_X86_64 && !(fr->have & 8) && inner && (inner->have & 8) &&
        keeps_rbx(inner)) {
        fr->regs[3] = inner->regs[3];
        fr->have |= 8;
    }
}

int mqdh__eval_init(struct mqdh__eval *e, const struct mqdh__frame *fr,
                    const struct mqdh__frame *outer, struct mqdh__mem *mem, Dwarf_Die *subprogram,
                    Dwarf_Addr dbias)
{
    GElf_Ehdr eh;
    memset(e, 0, sizeof *e);
    e->fr = fr;
    e->outer = outer;
    e->mem = mem;
    e->subprogram = subprogram;
    e->dbias = dbias;
    if (!fr->file || !mqdh__file_elf(fr->file) || !gelf_getehdr(fr->file->elf, &eh))
        return -1;
    e->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
    e->addr_size = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
    return 0;
}

static int frame_reg(struct mqdh__eval *e, unsigned regno, Dwarf_Word *val)
{
    if (regno >= MQDH__FRAME_REGS || !(e->fr->have & (UINT64_C(1) << regno))) {
        e->why = e->site ? "its value at the call is in a register the unwinder could not "
                           "restore"
                         : "optimised out here (in a register the call did not preserve)";
        return -1;
    }
    *val = e->fr->regs[regno];
    return 0;
}

/* Whether op names a register alone (DW_OP_regN, DW_OP_regx): its number
 * into *regno. */
static int register_op(const Dwarf_Op *op, unsigned *regno)
{
    if (op->atom >= DW_OP_reg0 && op->atom <= DW_OP_reg31)
        *regno = (unsigned)(op->atom - DW_OP_reg0);
    else if (op->atom == DW_OP_regx && op->number < MQDH__FRAME_REGS)
        *regno = (unsigned)op->number;
    else
        return 0;
    return 1;
}

/* The arithmetic operations on the top two entries x (below) and y, as
 * GCC writes constants with them (MPICH's MPI_COMM_WORLD is "lit17 lit26
 * shl"): 1 with the result in *r, or 0 if a is none of them. */
static int binary_op(uint8_t a, Dwarf_Word x, Dwarf_Word y, Dwarf_Word *r)
{
    unsigned sh = y < 63 ? (unsigned)y : 63;
    switch (a) {
    case DW_OP_plus:
        *r = x + y;
        return 1;
    case DW_OP_minus:
        *r = x - y;
        return 1;
    case DW_OP_mul:
        *r = x * y;
        return 1;
    case DW_OP_and:
        *r = x & y;
        return 1;
    case DW_OP_or:
        *r = x | y;
        return 1;
    case DW_OP_xor:
        *r = x ^ y;
        return 1;
    case DW_OP_shl:
        *r = y < 64 ? x << sh : 0;
        return 1;
    case DW_OP_shr:
        *r = y < 64 ? x >> sh : 0;
        return 1;
    case DW_OP_shra:
        *r = (Dwarf_Word)((Dwarf_Sword)x >> sh);
        return 1;
    default:
        return 0;
    }
}

static int frame_cfa(struct mqdh__eval *e, Dwarf_Word *cfa);
static int eval_expr(struct mqdh__eval *e, const Dwarf_Op *ops, size_t n, Dwarf_Word *out,
                     int *is_value);
static int entry_value(struct mqdh__eval *e, const Dwarf_Op *op, Dwarf_Word *v);

/*
 * An operation that pushes a value (DWARF 5, section 2.5.1.1-2: literals,
 * constants, addresses, registers plus offsets, the frame base, the CFA,
 * an entry value): the value into *v.  1 pushed, 0 not such an operation,
 * -1 failed (e->why says why).
 */
static int push_op(struct mqdh__eval *e, const Dwarf_Op *op, Dwarf_Word *v)
{
    uint8_t a = op->atom;
    if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
        *v = a - DW_OP_lit0;
    } else if (a == DW_OP_const1u || a == DW_OP_const2u || a == DW_OP_const4u ||
               a == DW_OP_const8u || a == DW_OP_constu || a == DW_OP_const1s ||
               a == DW_OP_const2s || a == DW_OP_const4s || a == DW_OP_const8s ||
               a == DW_OP_consts) {
        *v = op->number;
    } else if (a == DW_OP_addr) { /* a global's: where its file is loaded */
        *v = op->number + e->dbias + e->fr->load_bias;
    } else if ((a >= DW_OP_breg0 && a <= DW_OP_breg31) || a == DW_OP_bregx) {
        int x = a == DW_OP_bregx;
        if (frame_reg(e, x ? (unsigned)op->number : (unsigned)(a - DW_OP_breg0), v) != 0)
            return -1;
        *v += (Dwarf_Word)(Dwarf_Sword)(x ? op->number2 : op->number);
    } else if (a == DW_OP_fbreg) {
        Dwarf_Attribute fb, *attr = e->attr;
        int fv, rc = -1;
        if (e->subprogram && dwarf_attr_integrate(e->subprogram, DW_AT_frame_base, &fb))
            rc = mqdh__eval(e, &fb, v, &fv);
        e->attr = attr;
        if (rc != 0) {
            if (!e->why)
                e->why = "no frame base";
            return -1;
        }
        *v += (Dwarf_Word)(Dwarf_Sword)op->number;
    } else if (a == DW_OP_call_frame_cfa) {
        return frame_cfa(e, v) == 0 ? 1 : -1;
    } else if (a == DW_OP_entry_value || a == DW_OP_GNU_entry_value) {
        return entry_value(e, op, v) == 0 ? 1 : -1;
    } else {
        return 0;
    }
    return 1;
}

/*
 * An operation on the stack st[*sp] (DWARF 5, 2.5.1.3-4: arithmetic,
 * stack manipulation, dereference).  1 done, 0 not such an operation (or
 * too few operands), -1 failed (e->why says why).
 */
static int stack_op(struct mqdh__eval *e, const Dwarf_Op *op, Dwarf_Word *st, int *sp)
{
    uint8_t a = op->atom;
    int n = *sp;
    Dwarf_Word v;
    if (a == DW_OP_plus_uconst && n >= 1) {
        st[n - 1] += op->number;
    } else if ((a == DW_OP_neg || a == DW_OP_not) && n >= 1) {
        st[n - 1] = a == DW_OP_neg ? -st[n - 1] : ~st[n - 1];
    } else if ((a == DW_OP_dup && n >= 1) || (a == DW_OP_over && n >= 2)) {
        st[n] = st[n - (a == DW_OP_dup ? 1 : 2)];
        (*sp)++;
    } else if (a == DW_OP_drop && n >= 1) {
        (*sp)--;
    } else if (a == DW_OP_swap && n >= 2) {
        v = st[n - 1];
        st[n - 1] = st[n - 2];
        st[n - 2] = v;
    } else if (n >= 2 && binary_op(a, st[n - 2], st[n - 1], &v)) {
        st[n - 2] = v;
        (*sp)--;
    } else if ((a == DW_OP_deref || a == DW_OP_deref_size) && n >= 1) {
        int size = a == DW_OP_deref ? e->addr_size : (int)op->number;
        if (!e->mem || size < 1 || size > 8 ||
            mqdh__mem_read_word(e->mem, st[n - 1], size, e->big_endian, &st[n - 1]) != 0) {
            e->why = "its stack could not be read";
            return -1;
        }
    } else {
        return 0;
    }
    return 1;
}

/* A location in one register (DW_OP_regN, DW_OP_regx): its value. */
static int register_location(struct mqdh__eval *e, const Dwarf_Op *op, size_t n,
                             Dwarf_Word *out)
{
    unsigned regno;
    if (n != 1) {
        e->why = "split across registers (DW_OP_piece)";
        return -1;
    }
    if (!register_op(op, &regno)) {
        e->why = "in a register mqd does not read";
        return -1;
    }
    return frame_reg(e, regno, out);
}

/*
 * Evaluate a DWARF expression in e.  *is_value: the result is the value
 * itself (a register, DW_OP_stack_value), else the address it lives at (or,
 * for a call site's value, the value).  The set compilers emit for
 * arguments and call sites (GCC 12): one stack machine, its operations
 * those that push a value (push_op) and those on the stack (stack_op);
 * anything else fails.
 */
static int eval_ops(struct mqdh__eval *e, const Dwarf_Op *ops, size_t n, Dwarf_Word *out,
                    int *is_value)
{
    Dwarf_Word st[8], v;
    int sp = 0, r;
    *is_value = 0;
    for (size_t i = 0; i < n; i++) {
        const Dwarf_Op *op = &ops[i];
        if (sp >= 7) {
            e->why = "a location expression too deep";
            return -1;
        }
        if ((op->atom >= DW_OP_reg0 && op->atom <= DW_OP_reg31) || op->atom == DW_OP_regx) {
            *is_value = 1;
            return register_location(e, op, n, out);
        }
        if ((r = push_op(e, op, &v)) > 0)
            st[sp++] = v;
        else if (r == 0 && (r = stack_op(e, op, st, &sp)) == 0) {
            if (op->atom == DW_OP_stack_value && sp >= 1 && i == n - 1) {
                *out = st[sp - 1];
                *is_value = 1;
                return 0;
            }
            e->why = "a location expression mqd does not evaluate";
            return -1;
        }
        if (r < 0)
            return -1;
    }
    if (sp != 1) {
        e->why = n ? "a malformed location expression" : "optimised out here";
        return -1;
    }
    *out = st[0];
    return 0;
}

/*
 * eval_ops, nested no deeper than a real location needs: a frame base or a
 * CFA rule that refers to itself (DW_OP_fbreg in DW_AT_frame_base,
 * DW_OP_call_frame_cfa in the CFA) would recurse for ever, and the DWARF
 * may come from anywhere (a debuginfod server).
 */
static int eval_expr(struct mqdh__eval *e, const Dwarf_Op *ops, size_t n, Dwarf_Word *out,
                     int *is_value)
{
    enum { MAX_DEPTH = 8 };
    if (e->depth >= MAX_DEPTH) {
        e->why = "a location expression that refers to itself";
        return -1;
    }
    e->depth++;
    int rc = eval_ops(e, ops, n, out, is_value);
    e->depth--;
    return rc;
}

int mqdh__eval(struct mqdh__eval *e, Dwarf_Attribute *attr, Dwarf_Word *out, int *is_value)
{
    Dwarf_Op *ops;
    size_t n;
    e->why = NULL;
    if (dwarf_getlocation_addr(attr, e->fr->at - e->dbias, &ops, &n, 1) != 1) {
        e->why = "optimised out here";
        return -1;
    }
    e->attr = attr;
    return eval_expr(e, ops, n, out, is_value);
}

/* Whether a call of `callee` enters the function `fn`: the same name, or
 * MPI_X and PMPI_X, which MPICH and Open MPI make one function. */
static int same_function(const char *callee, const char *fn)
{
    char a[64], b[64];
    if (!callee || !fn)
        return 0;
    return strcmp(callee, fn) == 0 ||
           (mqdh__entry_call(callee, 0, a, sizeof a) && mqdh__entry_call(fn, 0, b, sizeof b) &&
            strcmp(a, b) == 0);
}

/*
 * DW_OP_entry_value op (in the expression of e->attr): the value a
 * register had on entry to e's function, which the call site the outer
 * frame made it from gives, evaluated in that frame (which resolves no
 * entry value of its own).  Only a register's (DW_OP_regN) is described so.
 */
static int entry_value(struct mqdh__eval *e, const Dwarf_Op *op, Dwarf_Word *v)
{
    Dwarf_Attribute block, value;
    Dwarf_Op *ops;
    size_t n;
    unsigned regno;
    if (!e->attr || dwarf_getlocation_attr(e->attr, op, &block) != 0 ||
        dwarf_getlocation(&block, &ops, &n) != 0 || n != 1 || !register_op(&ops[0], &regno)) {
        e->why = "only its value on entry is described, in a way mqd does not evaluate";
        return -1;
    }
    const struct mqdh__frame *o = e->outer;
    struct mqdh__pc *pc = o && o->at_call ? mqdh__pc_of(o->file, o->at) : NULL;
    const struct mqdh__site *s = pc ? mqdh__pc_call_site(o->file, o->at, pc) : NULL;
    if (!s || s->state != MQDH__SITE_FOUND) {
        e->why = "only its value on entry is described, and no call site of the caller's says it";
        return -1;
    }
    struct mqdh__site site = *s;
    Dwarf_Die callee;
    if (!e->subprogram || mqdh__site_callee(&site, &callee) != 0 ||
        !same_function(mqdh__die_name(&callee), mqdh__die_name(e->subprogram))) {
        e->why = "only its value on entry is described, and the caller's call site is of "
                 "another function (a tail call)";
        return -1;
    }
    Dwarf_Die param;
    if (mqdh__site_reg_param(&site, regno, &param) != 0 || !mqdh__site_value(&param, &value)) {
        e->why = "only its value on entry is described, and the caller's call site does not "
                 "give it";
        return -1;
    }
    struct mqdh__eval oe;
    int is_value;
    if (mqdh__eval_init(&oe, o, NULL, e->mem, &site.fn, site.dbias) != 0)
        return -1;
    oe.site = 1;
    if (mqdh__eval(&oe, &value, v, &is_value) != 0) {
        e->why = oe.why;
        return -1;
    }
    e->used_outer = 1;
    return 0;
}

/* The canonical frame address of e's frame, from the module's CFI. */
static int frame_cfa(struct mqdh__eval *e, Dwarf_Word *cfa)
{
    if (e->have_cfa) {
        *cfa = e->cfa;
        return 0;
    }
    Dwfl_Module *mod = mqdh__file_module(e->fr->file);
    Dwarf_Addr cbias;
    Dwarf_CFI *cfi = mod ? dwfl_module_dwarf_cfi(mod, &cbias) : NULL; /* the file's, bias 0 */
    Dwarf_Frame *fr = NULL;
    if (!cfi || dwarf_cfi_addrframe(cfi, e->fr->at - cbias, &fr) != 0) {
        cfi = mod ? dwfl_module_eh_cfi(mod, &cbias) : NULL;
        if (!cfi || dwarf_cfi_addrframe(cfi, e->fr->at - cbias, &fr) != 0) {
            e->why = "no call frame information";
            return -1;
        }
    }
    Dwarf_Op *ops;
    size_t n;
    int is_value, rc = -1;
    /* The CFA rule is register + offset (or an expression), never fbreg. */
    if (dwarf_frame_cfa(fr, &ops, &n) == 0 && n > 0)
        rc = eval_expr(e, ops, n, cfa, &is_value);
    free(fr);
    if (rc != 0 && !e->why)
        e->why = "no call frame address";
    if (rc == 0) {
        e->cfa = *cfa;
        e->have_cfa = 1;
    }
    return rc;
}

int mqdh__param_size(Dwarf_Die *die, int addr_size)
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

void mqdh__store_arg(struct mqdh__where *w, unsigned bit, Dwarf_Word v, int size)
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
    case MQDH__ARG_COUNT:
        w->count = s;
        break;
    case MQDH__ARG_REQUEST:
        w->request = u; /* an address: MPI_Request *, or the array */
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
static int entry_scopes(Dwarf_Die *fn, Dwarf_Addr pc, const struct mqdh__file *file, const char *call,
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
 * Read the mqdh__arg_names parameters of one scope of the call that are not
 * read yet; lib->why[k] says why argument k could not be.
 */
static void scope_args(struct mqdh__eval *e, struct mqdh__where *w, Dwarf_Die *scope,
                       struct mqdh__lib_args *lib)
{
    Dwarf_Die child;
    if (dwarf_child(scope, &child) != 0)
        return;
    do {
        if (dwarf_tag(&child) != DW_TAG_formal_parameter)
            continue;
        Dwarf_Attribute na, la;
        const char *name = dwarf_formstring(dwarf_attr_integrate(&child, DW_AT_name, &na));
        int k = name ? arg_of_name(name) : -1;
        unsigned bit = k >= 0 ? 1u << k : 0;
        if (!bit || (w->args & bit))
            continue;
        Dwarf_Word v;
        int is_value, size = mqdh__param_size(&child, e->addr_size);
        e->used_outer = 0;
        if (!size) {
            e->why = "its type's size is unknown";
        } else if (!dwarf_attr_integrate(&child, DW_AT_location, &la)) {
            e->why = "optimised out here";
        } else if (mqdh__eval(e, &la, &v, &is_value) == 0 &&
                   (is_value || (e->mem && mqdh__mem_read_word(e->mem, v, size, e->big_endian,
                                                              &v) == 0))) {
            mqdh__store_arg(w, bit, v, size);
            if (e->used_outer)
                lib->via_outer |= bit;
            continue;
        } else if (!e->why) {
            e->why = "its stack could not be read";
        }
        lib->why[k] = e->why;
    } while (dwarf_siblingof(&child, &child) == 0);
}

/*
 * Read the arguments named in mqdh__arg_names of the MPI entry frame fr;
 * the scopes they are described in are looked up once per address (its
 * pc).
 */
void mqdh__read_args(struct mqdh__where *w, struct mqdh__mem *mem, const struct mqdh__frame *fr,
                     const struct mqdh__frame *outer, struct mqdh__lib_args *lib)
{
    Dwfl_Module *mod = mqdh__file_module(fr->file);
    struct mqdh__pc *pc = mqdh__pc_of(fr->file, fr->at);
    memset(lib, 0, sizeof *lib);
    lib->state = MQDH__LIB_NO_DWARF;
    if (pc && !pc->scoped) {
        Dwarf_Die *cu = mod ? dwfl_module_addrdie(mod, fr->at, &pc->dbias) : NULL;
        pc->scoped = 1;
        pc->have_cu = cu != NULL;
        /* The entry point's own scopes: PMPI_Probe, and the internal_Probe
         * inlined into it, never a helper inlined further in (whose "comm"
         * may be an MPIR_Comm pointer).  An argument optimised out in one
         * may be described in the other.  The concrete function holds the
         * frame base. */
        if (cu && containing_function(cu, fr->at - pc->dbias, &pc->outer) == 0)
            pc->nscopes = entry_scopes(&pc->outer, fr->at - pc->dbias, fr->file, w->call,
                                       pc->scopes, 4);
    }
    if (!pc) {
        snprintf(w->args_why, sizeof w->args_why, "out of memory");
        return;
    }
    if (!pc->have_cu) {
        snprintf(w->args_why, sizeof w->args_why,
                 "the MPI library has no debug information for %s", w->call);
        return;
    }
    lib->state = MQDH__LIB_NO_FUNCTION;
    if (pc->nscopes == 0) {
        snprintf(w->args_why, sizeof w->args_why, "no debug information for the function of %s",
                 w->call);
        return;
    }
    Dwarf_Die fn = pc->outer, scopes[4];
    int nscopes = pc->nscopes;
    memcpy(scopes, pc->scopes, sizeof scopes);
    struct mqdh__eval e;
    if (mqdh__eval_init(&e, fr, outer, mem, &fn, pc->dbias) != 0)
        return;
    lib->state = MQDH__LIB_SCOPES;
    for (int i = 0; i < nscopes; i++)
        scope_args(&e, w, &scopes[i], lib);
    /* The first the call has that no scope described. */
    for (int a = 0; a < MQDH__NARGS; a++)
        if (lib->why[a] && !(w->args & (1u << a))) {
            snprintf(w->args_why, sizeof w->args_why, "%s's %s: %s", w->call, mqdh__arg_names[a],
                     lib->why[a]);
            break;
        }
}
