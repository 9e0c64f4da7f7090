/*
 * callsite.c - an MPI call's arguments from its caller's call site
 * (callsite.h).
 *
 * GCC, from -O1 with -g, describes each call it compiles: a
 * DW_TAG_call_site (DW_TAG_GNU_call_site before DWARF 5) under the
 * caller's function, at the call's return address, naming the callee's
 * declaration, with a DW_TAG_call_site_parameter for each argument whose
 * value it could still say after the call: where the argument was passed
 * (a register, or a slot of the outgoing stack) and an expression of its
 * value in the caller's frame (DWARF 5 section 3.4.2).  The expression is
 * evaluated in the caller's unwound frame (args.c), its parameters matched
 * to the MPI call's by the platform's calling convention and the MPI
 * standard's C prototypes.  An argument the call site does not describe
 * stays unknown, and the reason says which of those steps failed.
 */
#define _GNU_SOURCE
#include "target/callsite.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>


/* An int argument's size: 32 bits on every platform mqd unwinds (LP64,
 * ILP32). */
enum { INT_SIZE = 4 };

/*
 * A platform's calling convention, as far as MPI's arguments go (all of
 * them integers or pointers): the DWARF registers of the first ones, then
 * the stack from the caller's stack pointer at the call, one slot each.
 * The x86-64 System V psABI's parameter passing (3.2.3) and AAPCS64's
 * (NGRN, NSAA: an int on the stack takes an 8-byte slot).
 */
struct abi {
    int machine;
    int nregs;
    unsigned regs[8];
    unsigned sp;
    int slot;
};

static const struct abi abis[] = {
    {EM_X86_64, 6, {5, 4, 1, 2, 8, 9}, 7, 8},
    {EM_AARCH64, 8, {0, 1, 2, 3, 4, 5, 6, 7}, 31, 8},
};

/* The MPI that im runs, as far as its communicator handles go. */
enum flavour { FLAVOUR_UNKNOWN, FLAVOUR_MPICH, FLAVOUR_OPEN_MPI };

/* Known as choose.c knows MPICH (its debugger list, else the version
 * string every build has); Open MPI by its MPI_COMM_WORLD object.  Looked
 * up once an image: a name a job lacks is looked for in all its files. */
static enum flavour mpi_flavour(struct mqdh__image *im)
{
    static const char *const mpich[] = {"MPIR_All_communicators", "MPII_Version_device"};
    uint64_t a;
    enum flavour f = FLAVOUR_UNKNOWN;
    if (im->flavour)
        return (enum flavour)(im->flavour - 1);
    for (size_t i = 0; f == FLAVOUR_UNKNOWN && i < sizeof mpich / sizeof mpich[0]; i++)
        if (mqdh__image_symbol(im, mpich[i], 0, &a, NULL) == 0)
            f = FLAVOUR_MPICH;
    if (f == FLAVOUR_UNKNOWN && mqdh__image_symbol(im, "ompi_mpi_comm_world", 0, &a, NULL) == 0)
        f = FLAVOUR_OPEN_MPI;
    im->flavour = (int)f + 1;
    return f;
}

int mqdh__request_size(struct mqdh__image *im)
{
    switch (mpi_flavour(im)) {
    case FLAVOUR_MPICH: return 4;
    case FLAVOUR_OPEN_MPI: return im->elf_class == ELFCLASS32 ? 4 : 8;
    case FLAVOUR_UNKNOWN: break;
    }
    return 0;
}

long mqdh__proc_null(struct mqdh__image *im)
{
    switch (mpi_flavour(im)) {
    case FLAVOUR_MPICH: return -1;
    case FLAVOUR_OPEN_MPI: return -2;
    case FLAVOUR_UNKNOWN: break;
    }
    return 0;
}

/*
 * MPICH's predefined handles (mpi.h of every generation: MPI_COMM_WORLD
 * ((MPI_Comm)0x44000000), MPI_COMM_SELF 0x44000001); Open MPI's are the
 * addresses of ompi_mpi_comm_world and ompi_mpi_comm_self, as the dynamic
 * linker resolved them: a PIE executable's copy (a copy relocation) wins
 * over libmpi's definition, and mqdh__image_symbol looks in the executable
 * first.
 */
const char *mqdh__comm_name(struct mqdh__image *im, uint64_t comm)
{
    static const struct {
        const char *name, *ompi;
        uint64_t mpich;
    } predefined[] = {
        {"MPI_COMM_WORLD", "ompi_mpi_comm_world", 0x44000000},
        {"MPI_COMM_SELF", "ompi_mpi_comm_self", 0x44000001},
    };
    enum flavour f = mpi_flavour(im);
    for (size_t i = 0; i < sizeof predefined / sizeof predefined[0]; i++) {
        uint64_t a;
        if (f == FLAVOUR_MPICH && comm == predefined[i].mpich)
            return predefined[i].name;
        if (f == FLAVOUR_OPEN_MPI && mqdh__image_symbol(im, predefined[i].ompi, 0, &a, NULL) == 0 &&
            comm == a)
            return predefined[i].name;
    }
    return NULL;
}

/* ---------------------------------------------------------------- reading */

/* The calling convention of code in file, or NULL if mqd knows none. */
static const struct abi *abi_of(struct mqdh__file *file, int *machine)
{
    GElf_Ehdr eh;
    *machine = file && mqdh__file_elf(file) && gelf_getehdr(file->elf, &eh) ? eh.e_machine
                                                                        : EM_NONE;
    for (size_t i = 0; i < sizeof abis / sizeof abis[0]; i++)
        if (abis[i].machine == *machine)
            return &abis[i];
    return NULL;
}

/* The site's parameter passed in the stack slot of argument pos (abi
 * holds fewer registers) into *param: 0, or -1 if it describes none.  The
 * slot's location is an expression of the caller's frame at the call
 * (GCC: DW_OP_breg7 <offset> on x86-64, or DW_OP_fbreg). */
static int stack_param(struct mqdh__eval *e, const struct mqdh__site *site, const struct abi *abi,
                       int pos, Dwarf_Die *param)
{
    if (!(e->fr->have & (UINT64_C(1) << abi->sp)))
        return -1;
    Dwarf_Word slot = e->fr->regs[abi->sp] + (Dwarf_Word)((pos - abi->nregs) * abi->slot);
    Dwarf_Die die = site->die;
    if (dwarf_child(&die, param) != 0)
        return -1;
    do {
        int tag = dwarf_tag(param), is_value;
        Dwarf_Attribute a;
        Dwarf_Word addr;
        if ((tag == DW_TAG_call_site_parameter || tag == DW_TAG_GNU_call_site_parameter) &&
            dwarf_attr(param, DW_AT_location, &a) && mqdh__eval(e, &a, &addr, &is_value) == 0 &&
            !is_value && addr == slot)
            return 0;
    } while (dwarf_siblingof(param, param) == 0);
    return -1;
}

/* The size of the call's comm argument (at pos): its type in the callee's
 * declaration, else what the MPI makes MPI_Comm (MPICH an int, Open MPI a
 * pointer); 0 if neither is known. */
static int comm_size(Dwarf_Die *callee, int pos, struct mqdh__image *im, int addr_size)
{
    Dwarf_Die param;
    int n = 0;
    if (dwarf_child(callee, &param) == 0) {
        do
            if (dwarf_tag(&param) == DW_TAG_formal_parameter && n++ == pos) {
                int size = mqdh__param_size(&param, addr_size);
                if (size)
                    return size;
                break;
            }
        while (dwarf_siblingof(&param, &param) == 0);
    }
    switch (mpi_flavour(im)) {
    case FLAVOUR_MPICH:
        return INT_SIZE;
    case FLAVOUR_OPEN_MPI:
        return addr_size;
    case FLAVOUR_UNKNOWN:
        return 0;
    }
    return 0;
}

/* One reading of a call site: for w, the place it names in reasons
 * ("the call site in main at ring.c:21"), and the reason each argument
 * was not read. */
struct reading {
    struct mqdh__where *w;
    const char *place; /* "the call site in main at ring.c:21" */
    char why[MQDH__NARGS][256];
};

/* snprintf, where a long function or file name may cut the text short
 * (which the compiler warns of when it sees the buffers' sizes). */
static void say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* Set every wanted argument's reason. */
static void all_why(struct reading *r, unsigned wanted, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void all_why(struct reading *r, unsigned wanted, const char *fmt, ...)
{
    va_list ap;
    for (int k = 0; k < MQDH__NARGS; k++)
        if (wanted & (1u << k)) {
            va_start(ap, fmt);
            vsnprintf(r->why[k], sizeof r->why[k], fmt, ap);
            va_end(ap);
        }
}

/*
 * The call site of caller's call, if it is the MPI call w->call, into
 * *site and its callee's declaration into *callee: 0, or -1 with the
 * reason for every wanted argument in r.
 */
static int find_call(struct reading *r, const struct mqdh__frame *caller, unsigned wanted,
                     struct mqdh__site *site, Dwarf_Die *callee)
{
    struct mqdh__where *w = r->w;
    if (!caller->at_call) {
        all_why(r, wanted, "%s was interrupted, not calling", w->function);
        return -1;
    }
    struct mqdh__pc *pc = mqdh__pc_of(caller->file, caller->at);
    if (!pc) {
        all_why(r, wanted, "out of memory");
        return -1;
    }
    *site = *mqdh__pc_call_site(caller->file, caller->at, pc);
    switch (site->state) {
    case MQDH__SITE_UNSEEN:
    case MQDH__SITE_NO_DWARF:
        all_why(r, wanted, "the program has no debug information for %s", w->function);
        return -1;
    case MQDH__SITE_NONE:
        if (site->unoptimised)
            all_why(r, wanted, "%s describes no arguments (the program was built without "
                    "optimisation: -O1 -g or higher describes them)", r->place);
        else if (!site->fn_sites)
            all_why(r, wanted, "%s is not described (%s's debug information describes none of "
                    "its calls)", r->place, w->function);
        else
            all_why(r, wanted, "%s is not in %s's debug information", r->place, w->function);
        return -1;
    case MQDH__SITE_FOUND:
        break;
    }
    char call[sizeof w->call];
    const char *name = mqdh__site_callee(site, callee) == 0 ? mqdh__die_name(callee) : NULL;
    if (!name) {
        all_why(r, wanted, "%s names no callee (an indirect call)", r->place);
        return -1;
    }
    if (!mqdh__entry_call(name, 0, call, sizeof call) || strcmp(call, w->call) != 0) {
        all_why(r, wanted, "%s calls %s, not %s", r->place, name, w->call);
        return -1;
    }
    return 0;
}

/*
 * Read the wanted arguments of w->call (prototype p) from the call site in
 * caller: those read come back as MQDH_ARG_* bits, the others' reasons in
 * r.
 */
static unsigned read_site(struct reading *r, struct mqdh__image *im, struct mqdh__mem *mem,
                          const struct mqdh__frame *caller, const struct mqdh__frame *outer,
                          const struct mqdh__mpi_call *p, unsigned wanted)
{
    struct mqdh__site site;
    Dwarf_Die callee;
    struct mqdh__eval e;
    int machine;
    unsigned read = 0;
    if (!caller) {
        all_why(r, wanted, "no frame of the program's was unwound to read its call site");
        return 0;
    }
    if (find_call(r, caller, wanted, &site, &callee) != 0)
        return 0;
    const struct abi *abi = abi_of(caller->file, &machine);
    if (!abi) {
        all_why(r, wanted, "mqd does not know the calling convention of ELF machine %d",
                machine);
        return 0;
    }
    if (mqdh__eval_init(&e, caller, outer, mem, &site.fn, site.dbias) != 0) {
        all_why(r, wanted, "%s has no ELF header", caller->file->path);
        return 0;
    }
    e.site = 1;
    for (int k = 0; k < MQDH__NARGS; k++) {
        unsigned bit = 1u << k;
        int pos = p->at[k], is_value;
        if (!(wanted & bit))
            continue;
        int size = bit == MQDH_ARG_COMM      ? comm_size(&callee, pos, im, e.addr_size)
                   : bit == MQDH__ARG_REQUEST ? e.addr_size
                                              : INT_SIZE;
        Dwarf_Die param;
        Dwarf_Attribute value;
        Dwarf_Word v;
        if (!size) {
            say(r->why[k], sizeof r->why[k], "%s: its type's size is unknown", r->place);
        } else if (pos < abi->nregs ? mqdh__site_reg_param(&site, abi->regs[pos], &param) != 0
                                    : stack_param(&e, &site, abi, pos, &param) != 0) {
            if (pos < abi->nregs)
                say(r->why[k], sizeof r->why[k],
                         "%s does not describe it (its value was not kept)", r->place);
            else
                say(r->why[k], sizeof r->why[k],
                         "%s does not describe it (the %dth argument, passed on the stack)",
                         r->place, pos + 1);
        } else if (!mqdh__site_value(&param, &value)) {
            say(r->why[k], sizeof r->why[k],
                     "%s does not describe it (its value was not kept)", r->place);
        } else if (mqdh__eval(&e, &value, &v, &is_value) != 0) {
            say(r->why[k], sizeof r->why[k], "%s: %s", r->place, e.why);
        } else {
            mqdh__store_arg(r->w, bit, v, size);
            read |= bit;
        }
    }
    return read;
}

/* The MPI library's part of the reason argument k is unknown. */
static const char *library_why(const struct mqdh__lib_args *lib, int k, char *buf, size_t len)
{
    switch (lib->state) {
    case MQDH__LIB_NO_FRAME:
        return "it left no frame of its own in the MPI library (it tail-called into the "
               "library's internals)";
    case MQDH__LIB_NO_DWARF:
        return "the MPI library has no debug information";
    case MQDH__LIB_NO_FUNCTION:
        return "the MPI library has no debug information for the call's function";
    case MQDH__LIB_SCOPES:
        if (!lib->why[k])
            return "the MPI library's debug information does not name it";
        say(buf, len, "the MPI library's debug information: %s", lib->why[k]);
        return buf;
    }
    return "";
}

/*
 * Is v, read from a frame's stack, a communicator of im's MPI?  MPICH's is
 * a handle whose object kind is a communicator's (src/include/
 * mpir_objects.h: bits 26-29, 0x1) and whose kind is one (builtin, direct,
 * indirect: bits 30-31 not 0); Open MPI's a pointer, taken only where it is
 * a predefined communicator's object.  A stale or reused slot is most
 * unlikely to pass.
 */
static int is_comm_value(struct mqdh__image *im, uint64_t v)
{
    switch (mpi_flavour(im)) {
    case FLAVOUR_MPICH:
        return v <= 0xffffffffu && (v & 0x3c000000u) == 0x04000000u && (v >> 30) != 0;
    case FLAVOUR_OPEN_MPI:
        return mqdh__comm_name(im, v) != NULL;
    case FLAVOUR_UNKNOWN:
        break;
    }
    return 0;
}

/*
 * The arguments of w->call passed on the stack (after abi's registers)
 * that neither the library's DWARF nor the call site gave (wanted): read
 * from the slots the System V and AAPCS64 conventions put them in, at the
 * caller's stack pointer as the call left it (the callee's CFA), which the
 * caller made the call to the MPI entry point itself (its frame the one
 * outside the entry point's: direct).  The callee owns those slots and
 * might have written over them, so a value is taken only if it
 * validates: comm a communicator of this MPI, root a rank (0 to 2^24)
 * and only beside a comm that validated from the same slots or known
 * otherwise.  The analysis checks roots against the communicator's size.
 * Returns the MQDH_ARG_* bits read; r->why says why the others were not.
 */
static unsigned read_stack(struct reading *r, struct mqdh__image *im, struct mqdh__mem *mem,
                           const struct mqdh__frame *caller, int direct,
                           const struct mqdh__mpi_call *p, unsigned wanted)
{
    int machine;
    const struct abi *abi = caller ? abi_of(caller->file, &machine) : NULL;
    unsigned read = 0;
    if (!abi || !mem || !direct || !(caller->have & (UINT64_C(1) << abi->sp)))
        return 0;
    int big = 0;
    GElf_Ehdr eh;
    if (mqdh__file_elf(caller->file) && gelf_getehdr(caller->file->elf, &eh))
        big = eh.e_ident[EI_DATA] == ELFDATA2MSB;
    /* comm first: a root is taken only beside a valid one */
    static const int order[] = {4, 0, 1, 2, 3, 5, 6};
    for (int i = 0; i < MQDH__NARGS; i++) {
        int k = order[i], pos = p->at[k];
        unsigned bit = 1u << k;
        if (!(wanted & bit) || pos < abi->nregs)
            continue;
        int size = bit == MQDH_ARG_COMM ? (mpi_flavour(im) == FLAVOUR_OPEN_MPI ? 8 : INT_SIZE)
                                        : INT_SIZE;
        uint64_t slot = caller->regs[abi->sp] + (uint64_t)((pos - abi->nregs) * abi->slot), v;
        if (mqdh__mem_read_word(mem, slot, size, big, &v) != 0)
            continue;
        long sv = (long)(int32_t)(uint32_t)v;
        int ok = bit == MQDH_ARG_COMM ? is_comm_value(im, v)
                 : bit == MQDH_ARG_ROOT ? sv >= 0 && sv < (1L << 24) &&
                                              (r->w->args & MQDH_ARG_COMM)
                                        : 1;
        if (!ok) {
            say(r->why[k], sizeof r->why[k], "its stack slot (the %dth argument) holds %#llx, "
                "which is no %s: the call may have reused it", pos + 1, (unsigned long long)v,
                bit == MQDH_ARG_COMM ? "communicator" : "rank");
            continue;
        }
        mqdh__store_arg(r->w, bit, v, size);
        read |= bit;
    }
    return read;
}

void mqdh__callsite_args(struct mqdh__where *w, struct mqdh__image *im, struct mqdh__mem *mem,
                         const struct mqdh__frame *caller, const struct mqdh__frame *outer,
                         const struct mqdh__lib_args *lib, int lib_outer_is_caller)
{
    struct reading r = {.w = w};
    char place[sizeof w->function + sizeof w->file + 48];
    unsigned from_lib = w->args, wanted = 0;
    const struct mqdh__mpi_call *p = mqdh__mpi_call(w->call);
    for (int k = 0; p && k < MQDH__NARGS; k++)
        if (p->at[k] >= 0 && !(w->args & (1u << k)))
            wanted |= 1u << k;
    if (w->file[0])
        say(place, sizeof place, "the call site in %s at %s:%d", w->function, w->file,
                 w->line);
    else
        say(place, sizeof place, "the call site in %s", w->function);
    r.place = place;
    unsigned from_site = wanted ? read_site(&r, im, mem, caller, outer, p, wanted) : 0;
    unsigned from_stack =
        wanted & ~from_site ? read_stack(&r, im, mem, caller, lib_outer_is_caller, p,
                                         wanted & ~from_site)
                            : 0;
    int by_site = from_site || (lib_outer_is_caller && (lib->via_outer & from_lib));
    const char *stack = from_stack ? " and its caller's stack" : "";
    if (from_lib && by_site)
        say(w->args_from, sizeof w->args_from, "the MPI library's debug information and %s%s",
                 place, stack);
    else if (from_lib)
        say(w->args_from, sizeof w->args_from, "the MPI library's debug information%s", stack);
    else if (by_site)
        say(w->args_from, sizeof w->args_from, "%s%s", place, stack);
    else if (from_stack)
        say(w->args_from, sizeof w->args_from, "its caller's stack (%s)", place);
    from_site |= from_stack;
    if (!wanted)
        return; /* the library's reasons stand */
    w->args_why[0] = '\0';
    for (int k = 0; k < MQDH__NARGS; k++)
        if ((wanted & ~from_site) & (1u << k)) {
            char buf[200];
            say(w->args_why, sizeof w->args_why, "%s's %s: %s, and %s", w->call,
                     mqdh__arg_names[k], library_why(lib, k, buf, sizeof buf), r.why[k]);
            break;
        }
}
