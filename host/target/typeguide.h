/*
 * typeguide.h - the places in a file's DWARF that can name a type.
 *
 * types.c finds a type by scanning a file's units in order until one
 * defines the name.  Some names are defined late or nowhere: under MPICH's
 * ch3, MPIDI_VCRT first in unit 713 of 882, MPIR_Comm_list (which MPICH's
 * own DLL asks for) in the last, a name of another MPI version in none.
 * Scanning to them cost 200 M instructions, most of a small job's dump.
 *
 * A unit names a type the way its producer writes strings.  GCC writes a
 * name of 4 characters or more as an offset into .debug_str
 * (DW_FORM_strp; gcc/dwarf2out.cc, find_string_form), unless told
 * -fno-merge-debug-strings; clang always does, or uses DW_FORM_strx.  So
 * in such a file a unit can only name a type by holding one of the offsets
 * where .debug_str holds the name.  The guide finds those places by a
 * byte search, in order, so a lookup looks only at the units that mention
 * the name, and a name that .debug_str does not hold is known absent at
 * once.
 *
 * A guide is made only for DWARF whose names are all read so: every unit
 * from GCC (without -fno-merge-debug-strings), clang or the GNU assembler,
 * 32-bit, no .debug_str_offsets (DW_FORM_strx), no .debug_types, no
 * supplementary file (dwz).  For anything else mqdh__typeguide_open
 * returns NULL, and types.c scans.
 */
#ifndef MQDH__TYPEGUIDE_H
#define MQDH__TYPEGUIDE_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

struct mqdh__typeguide;

/* The guide to dw's names, or NULL when dw is not DWARF it can read (above)
 * or memory ran out.  It borrows dw's sections: free it before dw ends. */
struct mqdh__typeguide *mqdh__typeguide_open(Dwarf *dw);

/* Whether DWARF tag is one of the types types.c indexes (a struct, union,
 * class, typedef or base type): the entries the guide may take for a
 * definition (mqdh__typeguide_may_define). */
int mqdh__typeguide_type_tag(uint64_t tag);

/* Free g; NULL is allowed. */
void mqdh__typeguide_free(struct mqdh__typeguide *g);

/* The most places in .debug_str a name's string may be at (one, unless the
 * linker left copies or the name ends a longer string). */
#define MQDH__MENTION_STRS 8

/* A walk over the mentions of one name (mqdh__mentions_begin). */
struct mqdh__mentions {
    const struct mqdh__typeguide *g;
    const char *str;                           /* the name in .debug_str (first copy) */
    unsigned char strp[MQDH__MENTION_STRS][4]; /* its offsets, in the file's byte order */
    int nstrp;
    size_t next[MQDH__MENTION_STRS]; /* where each is next held */
};

/*
 * Start a walk over the mentions of name in .debug_info from offset from
 * on (m->str, whatever the answer, the name in .debug_str or NULL).  0; or
 * 1 when no unit from there on can name it; or -1 when the guide cannot
 * tell: a name a producer may write inline (under 4 characters), one that can
 * be a base type's (types.c relies on a type's name coming first in its
 * entry, and GCC writes a base type's last), or one .debug_str holds more
 * than MQDH__MENTION_STRS times.
 */
int mqdh__mentions_begin(struct mqdh__mentions *m, struct mqdh__typeguide *g, const char *name,
                         Dwarf_Off from);

/* Whether .debug_str holds name (as a string or a string's end): 1, or 0
 * when no unit can name it (.debug_str is where they must), or -1 when the
 * guide cannot tell (mqdh__mentions_begin's names).  No unit is read. */
int mqdh__typeguide_holds(struct mqdh__typeguide *g, const char *name);

/* The first mention at or after offset from: 0 with *at its offset, or 1
 * when none is left.  from never goes back between calls. */
int mqdh__mentions_next(struct mqdh__mentions *m, Dwarf_Off from, Dwarf_Off *at);

/*
 * Whether the mention at offset at may be in a unit's definition of a type
 * by that name: 1, with *die the offset of the unit's DIE, *end the offset
 * past the unit, and *entry the offset of the entry holding it when that
 * is known (else 0); or 0 when it surely is not.  GCC and clang write
 * DW_AT_name first in every entry that defines or declares a struct,
 * union, class or typedef, right after its abbreviation code.  When
 * exactly one way of reading the bytes before at as that code gives an
 * entry whose first attribute is this name, that entry holds it; when it
 * declares a type (DW_AT_declaration) or is none (a member, a function),
 * the mention defines nothing.  When no reading gives one, in a unit from
 * GCC, the bytes are no name at all (a reference, a location that happens
 * to hold them): GCC writes no such name anywhere else, and the only type
 * whose name it does not write first, a base type's, is never looked for
 * (mqdh__mentions_begin).  Anything else may be a definition (clang writes
 * a typedef's DW_AT_type first): the caller reads the unit through libdw.
 */
int mqdh__typeguide_may_define(const struct mqdh__typeguide *g, Dwarf_Off at, Dwarf_Off *die,
                               Dwarf_Off *end, Dwarf_Off *entry);

#endif
