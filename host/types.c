/* types.c - DWARF types by name, field offsets and sizes, through libdw. */
#define _GNU_SOURCE
#include "types.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

struct mqdh_type {
    struct mqdh_type *next;
    char *name;
    int found;
    Dwarf_Die die; /* the struct, union or base type (typedefs followed) */
};

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

/* Look for name among the top-level DIEs of every unit of one Dwarf. */
static int search_dwarf(Dwarf *dw, const char *name, Dwarf_Die *out)
{
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu, child;
        if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &child) == 0) {
            do {
                int tag = dwarf_tag(&child);
                if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type &&
                    tag != DW_TAG_typedef && tag != DW_TAG_base_type &&
                    tag != DW_TAG_class_type)
                    continue;
                const char *n = dwarf_diename(&child);
                if (!n || strcmp(n, name) != 0 || !is_definition(&child))
                    continue;
                Dwarf_Die t = child;
                if (strip_typedefs(&t) != 0 || !is_definition(&t))
                    continue; /* a typedef of an incomplete type: keep looking */
                *out = t;
                return 0;
            } while (dwarf_siblingof(&child, &child) == 0);
        }
        off = next;
    }
    return -1;
}

struct mqdh_type *mqdh_type_find(struct mqdh_image *im, const char *name)
{
    struct mqdh_type *t;
    for (t = im->types; t; t = t->next)
        if (strcmp(t->name, name) == 0)
            return t->found ? t : NULL;
    t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->name = strdup(name);
    if (!t->name) {
        free(t);
        return NULL;
    }
    for (int m = 0; m < im->nmods && !t->found; m++) {
        Dwarf_Addr bias;
        Dwarf *dw = dwfl_module_getdwarf(im->mods[m], &bias);
        if (dw && search_dwarf(dw, name, &t->die) == 0)
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

int mqdh_type_field_offset(const struct mqdh_type *t, const char *field)
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

int mqdh_type_size(const struct mqdh_type *t)
{
    Dwarf_Die d;
    if (!t)
        return -1;
    d = t->die;
    int s = dwarf_bytesize(&d);
    return s >= 0 ? s : -1;
}

void mqdh_types_free_all(struct mqdh_image *im)
{
    struct mqdh_type *t = im->types;
    while (t) {
        struct mqdh_type *next = t->next;
        free(t->name);
        free(t);
        t = next;
    }
    im->types = NULL;
}
