/* types.c - DWARF types by name, field offsets and sizes, through libdw. */
#define _GNU_SOURCE
#include "target/types.h"

#include "target/typeguide.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

struct mqdh__type {
    struct mqdh__type *next;
    const struct mqdh__image *image; /* where it was looked up */
    size_t hash;                     /* of name (hash_name) */
    char *name;
    int found;
    Dwarf_Die die; /* the struct, union or base type (typedefs followed) */
};

static size_t hash_name(const char *s);

/* Follow typedef, const and volatile to the type they name. */
static int strip_typedefs(Dwarf_Die *die)
{
    for (int depth = 0; depth < 32; depth++) {
        int tag = dwarf_tag(die);
        if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type)
            return 0;
        Dwarf_Attribute attr;
        if (!dwarf_attr_integrate(die, DW_AT_type, &attr) || !dwarf_formref_die(&attr, die))
            return -1;
    }
    return -1;
}

static int is_definition(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    bool decl = false;
    if (dwarf_attr(die, DW_AT_declaration, &attr) && dwarf_formflag(&attr, &decl) != 0)
        decl = false;
    return !decl;
}

/*
 * The index of one object file's DWARF: every top-level struct, union,
 * class, typedef and base type definition by name (the first one wins, as a
 * linear search would find it), mapped to the DIE offset of the type it
 * names after typedefs.  Built as lookups need it, and kept with the file
 * (files.h), so N ranks that map it read its DWARF once.
 *
 * A lookup first scans on, unit by unit, through the first PREFIX_UNITS:
 * a type of the library's internal headers is defined there, and a scan
 * indexes all of them at once; unless the guide says no unit can name it
 * (another layer's type: Open MPI's DLL asks for its ob1 component's
 * in each of some 30 objects, whose first units cost 30 M instructions a
 * dump to read).  Past those it takes the file's guide
 * (typeguide.h), which looks only at the units that mention the name:
 * MPICH's MPIR_Comm_list, defined only in the last unit (src/mpi/debugger/
 * dbginit.c), costs one unit's scan, not 882.  A name found so is the
 * first definition too (no unit scanned before it defines it), so the
 * index holds it with the rest; so does a name found nowhere (ABSENT).
 * Without a guide, the lookup scans on to the end, as before.
 */
#define PREFIX_UNITS 4
#define ABSENT ((Dwarf_Off)-1)

struct file_index {
    Dwarf *dw; /* the file's; NULL: a file with no types to look in */
    struct mqdh__typeguide *guide; /* NULL: none (typeguide.h) */
    size_t cap, used;
    const char **names; /* strings of dw's string table */
    Dwarf_Off *offs;    /* or ABSENT */
    Dwarf_Off next_cu;  /* the first unit not scanned yet */
    unsigned units;     /* how many were */
    int scanned;        /* all are */
};

static size_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return (size_t)h;
}

static void index_insert(struct file_index *fi, const char *name, Dwarf_Off off)
{
    size_t i = hash_name(name) & (fi->cap - 1);
    while (fi->names[i]) {
        if (strcmp(fi->names[i], name) == 0)
            return; /* the first definition wins */
        i = (i + 1) & (fi->cap - 1);
    }
    fi->names[i] = name;
    fi->offs[i] = off;
    fi->used++;
}

static int index_put(struct file_index *fi, const char *name, Dwarf_Off off)
{
    if ((fi->used + 1) * 2 > fi->cap) {
        struct file_index old = *fi;
        fi->cap = old.cap ? old.cap * 2 : 1024;
        fi->used = 0;
        fi->names = calloc(fi->cap, sizeof *fi->names);
        fi->offs = calloc(fi->cap, sizeof *fi->offs);
        if (!fi->names || !fi->offs) {
            free(fi->names);
            free(fi->offs);
            *fi = old;
            return -1;
        }
        for (size_t i = 0; i < old.cap; i++)
            if (old.names[i])
                index_insert(fi, old.names[i], old.offs[i]);
        free(old.names);
        free(old.offs);
    }
    index_insert(fi, name, off);
    return 0;
}

static int index_get(const struct file_index *fi, const char *name, Dwarf_Off *off)
{
    if (!fi->cap)
        return -1;
    size_t i = hash_name(name) & (fi->cap - 1);
    while (fi->names[i]) {
        if (strcmp(fi->names[i], name) == 0) {
            *off = fi->offs[i];
            return 0;
        }
        i = (i + 1) & (fi->cap - 1);
    }
    return -1;
}

/* Whether die, of an indexed tag, defines a type; then *type is where that
 * type is, typedefs followed (a typedef of an incomplete type does not). */
static int defines(Dwarf_Die *die, Dwarf_Off *type)
{
    if (!is_definition(die))
        return 0;
    Dwarf_Die t = *die;
    if (strip_typedefs(&t) != 0 || !is_definition(&t))
        return 0;
    *type = dwarf_dieoffset(&t);
    return 1;
}

/* Index the next unit not scanned yet: 0, or 1 when none is left, or -1
 * out of memory (the unit is scanned again next time). */
static int scan_unit(struct file_index *fi)
{
    Dwarf_Off off = fi->next_cu, next;
    size_t hsize;
    if (fi->scanned || dwarf_nextcu(fi->dw, off, &next, &hsize, NULL, NULL, NULL) != 0) {
        fi->scanned = 1;
        return 1;
    }
    Dwarf_Die cu, child;
    if (dwarf_offdie(fi->dw, off + hsize, &cu) && dwarf_child(&cu, &child) == 0) {
        do {
            if (!mqdh__typeguide_type_tag(dwarf_tag(&child)))
                continue;
            const char *n = dwarf_diename(&child);
            Dwarf_Off had, type;
            if (!n || index_get(fi, n, &had) == 0 || !defines(&child, &type))
                continue; /* the first definition wins: nothing more to see */
            if (index_put(fi, n, type) != 0)
                return -1;
        } while (dwarf_siblingof(&child, &child) == 0);
    }
    fi->next_cu = next;
    fi->units++;
    return 0;
}

/* Whether the unit whose DIE is at die defines name at its top level: then
 * *type as scan_unit would index it, and *stored the name in dw. */
static int unit_defines(Dwarf *dw, Dwarf_Off die, const char *name, Dwarf_Off *type,
                        const char **stored)
{
    Dwarf_Die cu, child;
    if (!dwarf_offdie(dw, die, &cu) || dwarf_child(&cu, &child) != 0)
        return 0;
    do {
        if (!mqdh__typeguide_type_tag(dwarf_tag(&child)))
            continue;
        const char *n = dwarf_diename(&child);
        if (n && strcmp(n, name) == 0 && defines(&child, type)) {
            *stored = n;
            return 1;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

/* Whether the entry at off is a top-level one of the unit whose DIE is at
 * die: a sibling walk, without reading each entry's tag and name. */
static int top_level(Dwarf *dw, Dwarf_Off die, Dwarf_Off off)
{
    Dwarf_Die cu, child;
    if (!dwarf_offdie(dw, die, &cu) || dwarf_child(&cu, &child) != 0)
        return 0;
    do {
        Dwarf_Off at = dwarf_dieoffset(&child);
        if (at >= off)
            return at == off;
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

/* Whether the entry at off of the unit whose DIE is at die is a top-level
 * definition of name: then *type and *stored as unit_defines says. */
static int entry_defines(Dwarf *dw, Dwarf_Off die, Dwarf_Off off, const char *name,
                         Dwarf_Off *type, const char **stored)
{
    Dwarf_Die d;
    const char *n;
    if (!dwarf_offdie(dw, off, &d) || !mqdh__typeguide_type_tag(dwarf_tag(&d)) ||
        !(n = dwarf_diename(&d)) || strcmp(n, name) != 0 || !defines(&d, type) ||
        !top_level(dw, die, off))
        return 0;
    *stored = n;
    return 1;
}

/*
 * Where the first definition of name is, in the units from fi->next_cu on,
 * through the guide: 0 with *type and *stored (the name in dw), or 1 when
 * none defines it (*stored the name in dw, or NULL), or -1 when the guide
 * cannot tell.  The mentions are taken in order; one the guide knows the
 * entry of is checked alone, and a unit with one it does not is scanned.
 */
static int guided_find(struct file_index *fi, const char *name, Dwarf_Off *type,
                       const char **stored)
{
    struct mqdh__mentions m;
    int rc = mqdh__mentions_begin(&m, fi->guide, name, fi->next_cu);
    *stored = m.str;
    if (rc != 0)
        return rc;
    Dwarf_Off from = fi->next_cu, at, die, end, entry;
    while (mqdh__mentions_next(&m, from, &at) == 0) {
        from = at + 1;
        if (!mqdh__typeguide_may_define(fi->guide, at, &die, &end, &entry))
            continue;
        if (entry ? entry_defines(fi->dw, die, entry, name, type, stored)
                  : unit_defines(fi->dw, die, name, type, stored))
            return 0;
        if (!entry)
            from = end;
    }
    return 1;
}

/* 1 when the guide knows that no unit of fi can name name (its
 * .debug_str does not hold it), else -1: without reading a unit, nor
 * searching them for a name they may hold (guided_find does that). */
static int guided_absent(struct file_index *fi, const char *name, const char **stored)
{
    *stored = NULL;
    return mqdh__typeguide_holds(fi->guide, name) == 0 ? 1 : -1;
}

/*
 * The offset of the first definition of name in fi: 0, or 1 when there is
 * none, or -1 when that cannot be told now (out of memory).
 */
static int index_find(struct file_index *fi, const char *name, Dwarf_Off *off)
{
    for (;;) {
        if (index_get(fi, name, off) == 0)
            return *off == ABSENT ? 1 : 0;
        if (fi->guide && !fi->scanned) {
            /* In the prefix, the guide is asked only whether no unit
             * can name it (a file of another layer of the MPI, whose
             * strings do not hold the name): then no unit is scanned. */
            const char *stored;
            int rc = fi->units >= PREFIX_UNITS ? guided_find(fi, name, off, &stored)
                                               : guided_absent(fi, name, &stored);
            if (rc >= 0) {
                if (stored && index_put(fi, stored, rc == 0 ? *off : ABSENT) != 0)
                    return -1;
                return rc;
            }
        }
        int rc = scan_unit(fi);
        if (rc != 0)
            return rc;
    }
}

static void free_index(void *p)
{
    struct file_index *fi = p;
    mqdh__typeguide_free(fi->guide);
    free(fi->names);
    free(fi->offs);
    free(fi);
}

const struct mqdh__image *mqdh__type_image(const struct mqdh__type *t)
{
    return t->image;
}

unsigned mqdh__types_units_read(const struct mqdh__file *f)
{
    const struct file_index *fi = f->types;
    return fi ? fi->units : 0;
}

/*
 * The C and C++ runtimes and the dynamic loader: they define no MPI
 * library's types, and their DWARF is the largest there is (libc6-dbg's
 * debug file: tens of MB, compressed).  A type a DLL asks for that no
 * other file defines (a probe for another MPI version's name) would
 * otherwise index it, once per dump: 200 ms of the first rank's 300.
 */
static int runtime_library(const char *path)
{
    static const char *const names[] = {"libc.so",    "libc-",     "ld-linux",  "ld64.so",
                                        "libm.so",    "libm-",     "libmvec",   "libpthread",
                                        "libdl.so",   "libdl-",    "librt.so",  "librt-",
                                        "libgcc_s",   "libstdc++", "libresolv", "libnss_",
                                        "libanl",     "libutil.so", "libutil-"};
    const char *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : path;
    for (size_t i = 0; base && i < sizeof names / sizeof names[0]; i++)
        if (strncmp(base, names[i], strlen(names[i])) == 0)
            return 1;
    return 0;
}

/*
 * The index of f's DWARF, made on first use, or NULL out of memory.  A
 * runtime library, or a file without DWARF, gets an index with no types
 * (dw NULL), so the next lookup in it is one test: a DLL asks for some
 * 30 names in each of a process's 10 or so files.
 */
static struct file_index *file_index(struct mqdh__file *f)
{
    if (f->types)
        return f->types;
    Dwarf *dw = NULL;
    if (!runtime_library(f->path)) {
        Dwfl_Module *m = mqdh__file_module(f);
        Dwarf_Addr bias;
        dw = m ? dwfl_module_getdwarf(m, &bias) : NULL;
    }
    struct file_index *fi = calloc(1, sizeof *fi);
    if (!fi)
        return NULL;
    fi->dw = dw;
    fi->guide = mqdh__typeguide_open(dw);
    fi->scanned = !dw;
    f->types = fi;
    f->free_types = free_index;
    return fi;
}

struct mqdh__type *mqdh__type_find(struct mqdh__image *im, const char *name)
{
    struct mqdh__type *t;
    size_t hash = hash_name(name);
    for (t = im->types; t; t = t->next)
        if (t->hash == hash && strcmp(t->name, name) == 0)
            return t->found ? t : NULL;
    t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->image = im;
    t->hash = hash;
    t->name = strdup(name);
    if (!t->name) {
        free(t);
        return NULL;
    }
    for (int m = 0; m < im->nmods && !t->found; m++) {
        struct file_index *fi = file_index(im->mods[m].file);
        Dwarf_Off off;
        if (!fi || !fi->dw)
            continue;
        if (index_find(fi, name, &off) == 0 && dwarf_offdie(fi->dw, off, &t->die))
            t->found = 1;
    }
    t->next = im->types;
    im->types = t;
    return t->found ? t : NULL;
}

/* The offset of a member DIE within its parent; 0 when absent (unions). */
static int member_location(Dwarf_Die *member, Dwarf_Word *off)
{
    Dwarf_Attribute attr;
    *off = 0;
    if (!dwarf_attr_integrate(member, DW_AT_data_member_location, &attr))
        return 0;
    if (dwarf_formudata(&attr, off) == 0)
        return 0;
    /* DWARF 2 style: a location expression, DW_OP_plus_uconst N. */
    Dwarf_Op *ops;
    size_t nops;
    if (dwarf_getlocation(&attr, &ops, &nops) == 0 && nops == 1 &&
        ops[0].atom == DW_OP_plus_uconst) {
        *off = ops[0].number;
        return 0;
    }
    return -1;
}

/* Offset of one (undotted) field in the aggregate die, or -1. */
static long find_member(Dwarf_Die *agg, const char *field, size_t len, Dwarf_Die *type_out,
                        int depth)
{
    Dwarf_Die child;
    if (depth > 8 || dwarf_child(agg, &child) != 0)
        return -1;
    do {
        if (dwarf_tag(&child) != DW_TAG_member)
            continue;
        Dwarf_Word off;
        if (member_location(&child, &off) != 0)
            continue;
        const char *n = dwarf_diename(&child);
        Dwarf_Attribute attr;
        Dwarf_Die mtype;
        int have_type = dwarf_attr_integrate(&child, DW_AT_type, &attr) &&
                        dwarf_formref_die(&attr, &mtype) && strip_typedefs(&mtype) == 0;
        if (n && strlen(n) == len && strncmp(n, field, len) == 0) {
            if (type_out && have_type)
                *type_out = mtype;
            return (long)off;
        }
        if (!n && have_type) { /* anonymous struct or union: look inside */
            long inner = find_member(&mtype, field, len, type_out, depth + 1);
            if (inner >= 0)
                return (long)off + inner;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return -1;
}

int mqdh__type_field_offset(const struct mqdh__type *t, const char *field)
{
    if (!t || !field)
        return -1;
    Dwarf_Die cur = t->die;
    long total = 0;
    const char *p = field;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        Dwarf_Die mtype;
        long off = find_member(&cur, p, len, &mtype, 0);
        if (off < 0)
            return -1;
        total += off;
        if (!dot)
            break;
        cur = mtype;
        p = dot + 1;
    }
    return total > 0x7fffffff ? -1 : (int)total;
}

const void *mqdh__type_key(const struct mqdh__type *t)
{
    return t ? t->die.addr : NULL;
}

int mqdh__type_size(const struct mqdh__type *t)
{
    Dwarf_Die d;
    if (!t)
        return -1;
    d = t->die;
    int s = dwarf_bytesize(&d);
    return s >= 0 ? s : -1;
}

void mqdh__types_free_all(struct mqdh__image *im)
{
    struct mqdh__type *t = im->types;
    while (t) {
        struct mqdh__type *next = t->next;
        free(t->name);
        free(t);
        t = next;
    }
    im->types = NULL;
}
