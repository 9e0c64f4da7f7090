/* types.c - DWARF types by name, field offsets and sizes, through libdw. */
#define _GNU_SOURCE
#include "target/types.h"

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
 * names after typedefs.  Built unit by unit as lookups need it: a lookup
 * scans on from the last unit scanned until a unit defines its name.  A
 * type of the library's internal headers is in its first units, which is
 * all a DLL asking only for those costs; a name no unit defines, or one
 * only the last unit does (MPICH's MPIR_Comm_list, src/mpi/debugger/
 * dbginit.c), scans them all, and from then on every lookup is a hash
 * probe.  Kept with the file (files.h), so N ranks that map it read its
 * DWARF once.
 */
struct file_index {
    Dwarf *dw; /* the file's; NULL: a file with no types to look in */
    size_t cap, used;
    const char **names; /* strings of dw's string table */
    Dwarf_Off *offs;
    Dwarf_Off next_cu; /* the first unit not scanned yet */
    int scanned;       /* all are */
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
            int tag = dwarf_tag(&child);
            if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type &&
                tag != DW_TAG_typedef && tag != DW_TAG_base_type && tag != DW_TAG_class_type)
                continue;
            const char *n = dwarf_diename(&child);
            Dwarf_Off had;
            if (!n || index_get(fi, n, &had) == 0 || !is_definition(&child))
                continue; /* the first definition wins: nothing more to see */
            Dwarf_Die t = child;
            if (strip_typedefs(&t) != 0 || !is_definition(&t))
                continue; /* a typedef of an incomplete type: keep looking */
            if (index_put(fi, n, dwarf_dieoffset(&t)) != 0)
                return -1;
        } while (dwarf_siblingof(&child, &child) == 0);
    }
    fi->next_cu = next;
    return 0;
}

static void free_index(void *p)
{
    struct file_index *fi = p;
    free(fi->names);
    free(fi->offs);
    free(fi);
}

const struct mqdh__image *mqdh__type_image(const struct mqdh__type *t)
{
    return t->image;
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
        int rc = 0;
        while (index_get(fi, name, &off) != 0 && (rc = scan_unit(fi)) == 0)
            ;
        if (rc != 0)
            continue;
        if (dwarf_offdie(fi->dw, off, &t->die))
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
