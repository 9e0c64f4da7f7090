/*
 * pc.c - what a code address of a file says (pc.h): its symbol and source
 * line from libdwfl, the functions inlined there walked down from the
 * DWARF, and the MPI call a function's name is.
 */
#define _GNU_SOURCE
#include "target/pc.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Functions inlined at one address that are kept: a corrupt DWARF's chain
 * ends there. */
enum { MAX_INLINED = 32 };

/* The pc of file address addr of f; NULL without memory. */
struct mqdh__pc *mqdh__pc_of(struct mqdh__file *f, Dwarf_Addr addr)
{
    void **slot = f ? mqdh__file_memo(f, addr) : NULL;
    if (!slot)
        return NULL;
    if (!*slot) {
        struct mqdh__pc *pc = calloc(1, sizeof *pc);
        if (!pc)
            return NULL;
        /* From the file's own table, or a stripped library's exports
         * without its debug file (the C library's, for nearly every
         * thread); else as libdwfl would name it, from its table. */
        if (!(pc->name = mqdh__file_function_at(f, addr)) &&
            !mqdh__file_addrname(f, addr, &pc->name)) {
            Dwfl_Module *m = mqdh__file_module(f);
            pc->name = m ? dwfl_module_addrname(m, addr) : NULL;
        }
        pc->line = -1;
        *slot = pc;
    }
    return *slot;
}

/* pc's source file and line (looked up once). */
const char *mqdh__pc_line(struct mqdh__file *f, Dwarf_Addr addr, struct mqdh__pc *pc, int *line)
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

const char *mqdh__die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

/*
 * The concrete functions of one unit by address: each address range of
 * each subprogram among the children of the unit (and of its namespaces
 * and classes, as deep as C++ nests them), sorted by start, reach[i] the
 * furthest end of v[0..i].  Made on the unit's first lookup: N ranks
 * stopped at N addresses of one MPI library's progress loop walk the
 * unit's DIEs once, not N times.
 */
struct unit_fn {
    Dwarf_Addr lo, hi, reach;
    size_t order; /* the DIE's place in the walk: the first one wins */
    Dwarf_Die die;
};
struct unit_fns {
    struct unit_fns *next;
    const void *unit; /* the unit DIE's place in its section's data */
    size_t n, cap;
    struct unit_fn *v;
};

static void free_fns(void *p)
{
    for (struct unit_fns *u = p, *next; u; u = next) {
        next = u->next;
        free(u->v);
        free(u);
    }
}

static int add_fn(struct unit_fns *u, Dwarf_Die *die, Dwarf_Addr lo, Dwarf_Addr hi, size_t order)
{
    if (u->n == u->cap) {
        size_t cap = u->cap ? u->cap * 2 : 64;
        struct unit_fn *v = realloc(u->v, cap * sizeof *v);
        if (!v)
            return -1;
        u->v = v;
        u->cap = cap;
    }
    u->v[u->n++] = (struct unit_fn){lo, hi, hi, order, *die};
    return 0;
}

/* Every range of every function among die's children into u. */
static int collect_fns(struct unit_fns *u, Dwarf_Die *die, size_t *order, int depth)
{
    Dwarf_Die child;
    if (depth > 4 || dwarf_child(die, &child) != 0)
        return 0;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_subprogram) {
            Dwarf_Addr base, lo, hi;
            ptrdiff_t off = 0;
            size_t at = (*order)++;
            while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0)
                if (lo < hi && add_fn(u, &child, lo, hi, at) != 0)
                    return -1;
        } else if ((tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
                    tag == DW_TAG_structure_type) &&
                   collect_fns(u, &child, order, depth + 1) != 0) {
            return -1;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const struct unit_fn *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : (x->order > y->order) - (x->order < y->order);
}

/* The functions of f's unit cu, made on first need; NULL without memory. */
static struct unit_fns *unit_fns(struct mqdh__file *f, Dwarf_Die *cu)
{
    const void *key = cu->addr; /* where its DIE is: no two units share it */
    struct unit_fns *u;
    for (u = f->fns; u; u = u->next)
        if (u->unit == key)
            return u;
    if (!(u = calloc(1, sizeof *u)))
        return NULL;
    size_t order = 0;
    u->unit = key;
    if (collect_fns(u, cu, &order, 0) != 0) {
        free_fns(u);
        return NULL;
    }
    if (u->n)
        qsort(u->v, u->n, sizeof *u->v, by_start);
    for (size_t i = 1; i < u->n; i++)
        if (u->v[i].reach < u->v[i - 1].reach)
            u->v[i].reach = u->v[i - 1].reach;
    u->next = f->fns;
    f->fns = u;
    f->free_fns = free_fns;
    return u;
}

/*
 * The concrete function of f holding pc in unit cu: of those whose ranges
 * hold it, the first in the unit's DIEs, as a walk of them finds it.
 */
static int function_in(struct mqdh__file *f, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *out)
{
    struct unit_fns *u = unit_fns(f, cu);
    if (!u)
        return -1;
    size_t lo = 0, hi = u->n; /* the first entry starting after pc */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u->v[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct unit_fn *best = NULL;
    for (size_t i = lo; i-- > 0 && u->v[i].reach > pc;)
        if (pc < u->v[i].hi && (!best || u->v[i].order < best->order))
            best = &u->v[i];
    if (!best)
        return -1;
    *out = best->die;
    return 0;
}

/* Into *cur, its child that holds pc and is a scope of its code (a lexical
 * block, an inlined subroutine): 1, or 0 if none is. */
int mqdh__inner_scope(Dwarf_Die *cur, Dwarf_Addr pc)
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
    for (int depth = 0; depth < 64 && n < max && mqdh__inner_scope(&cur, pc); depth++)
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
struct mqdh__pc *mqdh__pc_expand(struct mqdh__file *f, Dwarf_Addr addr, struct mqdh__pc *pc, int lines)
{
    /* Expanded without lines (a brief dump's MPI frame) and wanted with
     * them now (a later dump with the same files): expanded again. */
    if (pc->expanded == 2 || (pc->expanded && !lines))
        return pc;
    int line = 0, ninl = 0;
    const char *src = lines ? mqdh__pc_line(f, addr, pc, &line) : NULL;
    Dwarf_Die inl[MAX_INLINED], fn, cu_mem, *cu = NULL;
    Dwfl_Module *m = lines ? mqdh__file_module(f) : NULL;
    Dwarf_Addr dbias;
    if (m && (cu = dwfl_module_addrdie(m, addr, &dbias)) != NULL) {
        cu_mem = *cu;
        cu = &cu_mem;
        if (function_in(f, cu, addr - dbias, &fn) == 0)
            ninl = inlined_at(&fn, addr - dbias, inl, MAX_INLINED);
    }
    void **slot = mqdh__file_memo(f, addr);
    struct mqdh__pc *n = slot ? realloc(pc, sizeof *pc + (size_t)(ninl + 1) * sizeof pc->fr[0]) : NULL;
    if (!n)
        return pc;
    *slot = n;
    int k = 0;
    for (int j = ninl - 1; j >= 0; j--) {
        n->fr[k++] = (struct mqdh__pcframe){mqdh__die_name(&inl[j]), src, line};
        call_site(&inl[j], cu, &src, &line);
    }
    n->fr[k++] = (struct mqdh__pcframe){n->name, src, line};
    n->nfr = k;
    n->expanded = lines ? 2 : 1;
    return n;
}

/* ---------------------------------------------------------------- call sites */

/* DIEs of one function looked through for its call sites: a corrupt
 * DWARF's tree ends there. */
enum { MAX_SITE_DIES = 100000, MAX_SITE_DEPTH = 64 };

/*
 * Whether cu was built by GCC without optimisation: its producer (GCC
 * records its options there, -grecord-gcc-switches being the default)
 * ends with -O0, or has no -O at all, GCC's default.  GCC describes call
 * sites only from -O1, where it tracks variables' locations.
 */
static int gcc_unoptimised(Dwarf_Die *cu)
{
    Dwarf_Attribute a;
    const char *p = dwarf_formstring(dwarf_attr(cu, DW_AT_producer, &a)), *last = NULL;
    if (!p || strncmp(p, "GNU ", 4) != 0)
        return 0;
    for (const char *o = p; (o = strstr(o, " -O")) != NULL; o += 3)
        last = o;
    return !last || (last[3] == '0' && (last[4] == ' ' || last[4] == '\0'));
}

/* The return address of call site die (a file address of its DWARF) into
 * *ret: 0, or -1 if die is no call site or says none. */
static int site_return(Dwarf_Die *die, Dwarf_Addr *ret)
{
    Dwarf_Attribute a;
    switch (dwarf_tag(die)) {
    case DW_TAG_call_site:
        return dwarf_formaddr(dwarf_attr(die, DW_AT_call_return_pc, &a), ret);
    case DW_TAG_GNU_call_site: /* its low pc is the return address */
        return dwarf_formaddr(dwarf_attr(die, DW_AT_low_pc, &a), ret);
    default:
        return -1;
    }
}

/*
 * Among the scopes of die (a function, a lexical block, an inlined
 * instance: a call site is a child of the innermost scope holding its
 * call), the call site returning to ret into *out: 1 if found, else 0
 * with every call site seen counted in *sites.  *seen counts the DIEs.
 */
static int find_site(Dwarf_Die *die, Dwarf_Addr ret, Dwarf_Die *out, int *sites, int *seen,
                     int depth)
{
    Dwarf_Die child;
    if (depth > MAX_SITE_DEPTH || dwarf_child(die, &child) != 0)
        return 0;
    do {
        Dwarf_Addr r;
        int tag = dwarf_tag(&child);
        if (++*seen > MAX_SITE_DIES)
            return 0;
        if (tag == DW_TAG_call_site || tag == DW_TAG_GNU_call_site) {
            ++*sites;
            if (site_return(&child, &r) == 0 && r == ret) {
                *out = child;
                return 1;
            }
        } else if ((tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) &&
                   find_site(&child, ret, out, sites, seen, depth + 1)) {
            return 1;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

const struct mqdh__site *mqdh__pc_call_site(struct mqdh__file *f, Dwarf_Addr addr,
                                            struct mqdh__pc *pc)
{
    struct mqdh__site *s = &pc->site;
    if (s->state != MQDH__SITE_UNSEEN)
        return s;
    Dwfl_Module *m = mqdh__file_module(f);
    Dwarf_Die *cu = m ? dwfl_module_addrdie(m, addr, &s->dbias) : NULL;
    int seen = 0;
    s->state = MQDH__SITE_NO_DWARF;
    if (!cu || function_in(f, cu, addr - s->dbias, &s->fn) != 0)
        return s;
    s->unoptimised = gcc_unoptimised(cu);
    s->state = find_site(&s->fn, addr + 1 - s->dbias, &s->die, &s->fn_sites, &seen, 0)
                   ? MQDH__SITE_FOUND
                   : MQDH__SITE_NONE;
    return s;
}

int mqdh__site_callee(const struct mqdh__site *site, Dwarf_Die *callee)
{
    Dwarf_Attribute a;
    Dwarf_Die die = site->die;
    if (!dwarf_attr(&die, DW_AT_call_origin, &a) && !dwarf_attr(&die, DW_AT_abstract_origin, &a))
        return -1;
    return dwarf_formref_die(&a, callee) ? 0 : -1;
}

int mqdh__site_reg_param(const struct mqdh__site *site, unsigned regno, Dwarf_Die *param)
{
    Dwarf_Die die = site->die;
    if (dwarf_child(&die, param) != 0)
        return -1;
    do {
        int tag = dwarf_tag(param);
        Dwarf_Attribute a;
        Dwarf_Op *ops;
        size_t n;
        if ((tag != DW_TAG_call_site_parameter && tag != DW_TAG_GNU_call_site_parameter) ||
            !dwarf_attr(param, DW_AT_location, &a) || dwarf_getlocation(&a, &ops, &n) != 0 ||
            n != 1)
            continue;
        if ((ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31 &&
             ops[0].atom - DW_OP_reg0 == (int)regno) ||
            (ops[0].atom == DW_OP_regx && ops[0].number == regno))
            return 0;
    } while (dwarf_siblingof(param, param) == 0);
    return -1;
}

Dwarf_Attribute *mqdh__site_value(Dwarf_Die *param, Dwarf_Attribute *attr)
{
    Dwarf_Attribute *a = dwarf_attr(param, DW_AT_call_value, attr);
    return a ? a : dwarf_attr(param, DW_AT_GNU_call_site_value, attr);
}

/* ---------------------------------------------------------------- names */

/*
 * Whether f is the MPI library: libmpi*, libpmpi* (libmpich* too), and
 * Open MPI's own layers under libmpi (libopen-pal, libopen-rte, its MCA
 * components mca_*.so and their libmca_common_*), where its calls wait
 * (PMPI_Recv > mca_pml_ob1_recv > opal_progress).
 */
int mqdh__is_mpi_library(const struct mqdh__file *f)
{
    static const char *const prefixes[] = {"libmpi",      "libpmpi", "libopen-pal",
                                           "libopen-rte", "mca_",    "libmca_common_"};
    const char *base = f ? strrchr(f->path, '/') : NULL;
    base = base ? base + 1 : NULL;
    for (size_t i = 0; base && i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
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
int mqdh__entry_call(const char *name, int in_mpi_library, char *buf, size_t len)
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

/* mqdh__entry_call for a frame in file f. */
int mqdh__mpi_entry(const char *name, const struct mqdh__file *f, char *buf, size_t len)
{
    return mqdh__entry_call(name, mqdh__is_mpi_library(f), buf, len);
}
