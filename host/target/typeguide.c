/* typeguide.c - the places in a file's DWARF that can name a type. */
#define _GNU_SOURCE
#include "target/typeguide.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NONE SIZE_MAX

struct unit {
    Dwarf_Off start, die, end;
    Dwarf_Off abbrev; /* its table's offset in .debug_abbrev */
    int gnu;          /* from GCC or the GNU assembler (known_producer) */
};

struct mqdh__typeguide {
    const unsigned char *info; /* .debug_info, as libdw reads it */
    size_t ninfo;
    const char *str; /* .debug_str */
    size_t nstr;
    const unsigned char *abbrev; /* .debug_abbrev */
    size_t nabbrev;
    int msb;            /* the file is big-endian */
    uint32_t seen[256]; /* how often each byte value is in a sample of .debug_info */
    uint32_t producers[4]; /* .debug_str offsets of producers known_producer took */
    int producer_gnu[4];   /* each one GNU's */
    int nproducers;
    struct unit *units; /* in offset order */
    size_t nunits;
    /* .debug_str's strings by their last 4 bytes (build_tails): where each
     * ends, chained from heads[hash] through next, all 1 + an index. */
    uint32_t *heads, *next, *ends;
};

#define TAIL_BITS 12

/*
 * .debug_info and .debug_str of elf, or -1 when a section says the names
 * may be elsewhere, or one is compressed still (libdw decompresses what it
 * reads when it opens a file, so both are plain by now).
 */
static int sections(Elf *elf, Elf_Data **info, Elf_Data **str, Elf_Data **abbrev)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return -1;
    *info = *str = *abbrev = NULL;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        if (!n)
            continue;
        if (strcmp(n, ".debug_str_offsets") == 0 || strcmp(n, ".debug_types") == 0 ||
            strncmp(n, ".zdebug", 7) == 0)
            return -1;
        Elf_Data **want = strcmp(n, ".debug_info") == 0     ? info
                          : strcmp(n, ".debug_str") == 0    ? str
                          : strcmp(n, ".debug_abbrev") == 0 ? abbrev
                                                            : NULL;
        if (!want)
            continue;
        if (sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_COMPRESSED))
            return -1;
        *want = elf_getdata(scn, NULL);
        if (!*want || !(*want)->d_buf)
            return -1;
    }
    return *info && *str && *abbrev ? 0 : -1;
}

/* A ULEB128 at *p, before end: 0 and *p past it, or -1. */
static int uleb_long(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        unsigned char b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return 0;
    }
    return -1;
}

static inline int uleb(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    if (*p < end && !(**p & 0x80)) { /* most are one byte */
        *v = *(*p)++;
        return 0;
    }
    return uleb_long(p, end, v);
}

/* What the guide needs to know of one abbreviation (DWARF 5, 7.5.3). */
struct abbrev {
    uint64_t tag;
    uint64_t first_at, first_form; /* its first attribute with bytes in the entry */
    int declaration;               /* 0 none, 1 DW_FORM_flag_present, 2 a flag to read */
};

/*
 * The abbreviation code in the table at offset table of .debug_abbrev, or
 * -1 if that table has none.  libdw looks one up only for a DIE, and then
 * reads (and keeps) the unit's whole table: 30,000 instructions a unit,
 * for one fact of one entry, at each of the 588 mentions of MPIDI_VCRT
 * (declarations, in the units before one defines it) under MPICH's ch3.
 */
static int abbrev_find(const struct mqdh__typeguide *g, Dwarf_Off table, uint64_t code,
                       struct abbrev *a)
{
    const unsigned char *p = g->abbrev + table, *end = g->abbrev + g->nabbrev;
    if (table >= g->nabbrev)
        return -1;
    for (;;) {
        uint64_t c, at, form, skip;
        if (uleb(&p, end, &c) != 0 || c == 0 || uleb(&p, end, &a->tag) != 0 || p >= end)
            return -1;
        p++; /* DW_CHILDREN_yes or _no */
        a->first_at = a->first_form = 0;
        a->declaration = 0;
        for (;;) {
            if (uleb(&p, end, &at) != 0 || uleb(&p, end, &form) != 0)
                return -1;
            if (at == 0 && form == 0)
                break;
            if (form == DW_FORM_implicit_const && uleb(&p, end, &skip) != 0)
                return -1; /* an SLEB128: skipped alike */
            if (!a->first_at && form != DW_FORM_flag_present && form != DW_FORM_implicit_const) {
                a->first_at = at; /* the first the entry holds bytes of */
                a->first_form = form;
            }
            if (at == DW_AT_declaration)
                a->declaration = form == DW_FORM_flag_present ? 1 : 2;
        }
        if (c == code)
            return 0;
    }
}

/* The abbreviation of the DIE whose code takes the bytes [die, upto) of
 * unit u: 0, or -1 if those bytes are no code, or one the table lacks. */
static int die_abbrev(const struct mqdh__typeguide *g, const struct unit *u, Dwarf_Off die,
                      Dwarf_Off upto, struct abbrev *a)
{
    const unsigned char *p = g->info + die;
    uint64_t code;
    if (uleb(&p, g->info + upto, &code) != 0 || p != g->info + upto)
        return -1;
    return abbrev_find(g, u->abbrev, code, a);
}

/* The 4 bytes at p, in g's byte order. */
static uint32_t word(const struct mqdh__typeguide *g, const unsigned char *p)
{
    return g->msb ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                  : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/*
 * Whether unit u writes names as typeguide.h says: its producer is GCC
 * without -fno-merge-debug-strings, clang, or the GNU assembler (which
 * names no types).  GCC and clang write DW_AT_producer first, as an offset
 * into .debug_str, and a library's units have a handful of producers.  The
 * unit DIE's abbreviation is among the last of its table, so finding it
 * for each unit would read the whole of .debug_abbrev: a unit whose first
 * 4 bytes are the offset of a producer already taken is taken at once.
 */
static int known_producer(Dwarf *dw, struct mqdh__typeguide *g, struct unit *u)
{
    const unsigned char *p = g->info + u->die;
    uint64_t code;
    if (uleb(&p, g->info + u->end, &code) != 0 || p + 4 > g->info + u->end)
        return 0;
    uint32_t off = word(g, p);
    for (int i = 0; i < g->nproducers; i++)
        if (g->producers[i] == off) {
            u->gnu = g->producer_gnu[i];
            return 1;
        }
    struct abbrev a;
    int first = abbrev_find(g, u->abbrev, code, &a) == 0 && a.first_at == DW_AT_producer &&
                a.first_form == DW_FORM_strp && off < g->nstr &&
                memchr(g->str + off, 0, g->nstr - off);
    const char *name = first ? g->str + off : NULL;
    Dwarf_Die cu;
    Dwarf_Attribute attr;
    if (!name && dwarf_offdie(dw, u->die, &cu) && dwarf_attr(&cu, DW_AT_producer, &attr))
        name = dwarf_formstring(&attr);
    if (!name)
        return 0;
    u->gnu = strncmp(name, "GNU ", 4) == 0;
    if (u->gnu ? strstr(name, "-fno-merge-debug-strings") != NULL : !strstr(name, "clang"))
        return 0;
    if (first && g->nproducers < 4) {
        g->producer_gnu[g->nproducers] = u->gnu;
        g->producers[g->nproducers++] = off;
    }
    return 1;
}

/* Every unit of dw, or -1: a 64-bit unit (its offsets are 8 bytes), or one
 * from another producer. */
static int list_units(Dwarf *dw, struct mqdh__typeguide *g)
{
    size_t cap = 0;
    Dwarf_Off off = 0, next, abbrev;
    size_t hsize;
    uint8_t offsize;
    while (dwarf_next_unit(dw, off, &next, &hsize, NULL, &abbrev, NULL, &offsize, NULL, NULL) ==
           0) {
        if (offsize != 4 || next > g->ninfo)
            return -1;
        if (g->nunits == cap) {
            cap = cap ? cap * 2 : 256;
            struct unit *u = realloc(g->units, cap * sizeof *u);
            if (!u)
                return -1;
            g->units = u;
        }
        struct unit *u = &g->units[g->nunits++];
        *u = (struct unit){off, off + hsize, next, abbrev, 0};
        if (!known_producer(dw, g, u))
            return -1;
        off = next;
    }
    return 0;
}

struct mqdh__typeguide *mqdh__typeguide_open(Dwarf *dw)
{
    Elf *elf = dw ? dwarf_getelf(dw) : NULL;
    GElf_Ehdr eh;
    Elf_Data *info, *str, *abbrev;
    if (!elf || dwarf_getalt(dw) || !gelf_getehdr(elf, &eh) ||
        sections(elf, &info, &str, &abbrev) != 0)
        return NULL;
    struct mqdh__typeguide *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->info = info->d_buf;
    g->ninfo = info->d_size;
    g->str = str->d_buf;
    g->nstr = str->d_size;
    g->abbrev = abbrev->d_buf;
    g->nabbrev = abbrev->d_size;
    g->msb = eh.e_ident[EI_DATA] == ELFDATA2MSB;
    /* 64 runs of 256 bytes spread over the section: the file is mapped,
     * and a byte every page would fault in all of it. */
    for (size_t c = 0; c < 64; c++)
        for (size_t i = g->ninfo / 64 * c, e = i + 256; i < e && i < g->ninfo; i++)
            g->seen[g->info[i]]++;
    if (list_units(dw, g) != 0 || g->nunits == 0) {
        mqdh__typeguide_free(g);
        return NULL;
    }
    return g;
}

void mqdh__typeguide_free(struct mqdh__typeguide *g)
{
    if (g) {
        free(g->units);
        free(g->heads);
        free(g->next);
        free(g->ends);
    }
    free(g);
}

/* The bucket of the string that ends (has its NUL) at e, 4 bytes or more. */
static uint32_t tail_hash(const char *e)
{
    uint32_t v;
    memcpy(&v, e - 4, 4);
    return (v * 2654435761u) >> (32 - TAIL_BITS);
}

/*
 * Index .debug_str's strings of 4 bytes or more by their last 4: a name
 * is held wherever a string ends with it, the linker having merged equal
 * strings and tails (a name may be the end of a longer one).  0, or -1.
 */
static int build_tails(struct mqdh__typeguide *g)
{
    if (g->heads)
        return 0;
    if (g->nstr > UINT32_MAX - 1)
        return -1;
    size_t n = 0;
    const char *end = g->str + g->nstr;
    for (const char *p = g->str, *e; p < end && (e = memchr(p, 0, (size_t)(end - p))); p = e + 1)
        n++;
    g->heads = calloc(1u << TAIL_BITS, sizeof *g->heads);
    g->next = calloc(n + 1, sizeof *g->next);
    g->ends = calloc(n + 1, sizeof *g->ends);
    if (!g->heads || !g->next || !g->ends) {
        free(g->heads);
        free(g->next);
        free(g->ends);
        g->heads = g->next = g->ends = NULL;
        return -1;
    }
    uint32_t k = 0;
    for (const char *p = g->str, *e; p < end && (e = memchr(p, 0, (size_t)(end - p))); p = e + 1) {
        if (e - p < 4)
            continue;
        uint32_t h = tail_hash(e);
        g->ends[k] = (uint32_t)(e - g->str);
        g->next[k] = g->heads[h];
        g->heads[h] = ++k;
    }
    return 0;
}

/*
 * The first place at or after from where .debug_info holds the 4 bytes of
 * pat, or NONE.  glibc's memmem crawls over so short a needle (324 M
 * instructions for one ch3 dump); memchr for the byte of pat least seen in
 * .debug_info skips 16 or 32 bytes at a time, and stops where it is rarely
 * wrong.
 */
static size_t hit(const struct mqdh__typeguide *g, const unsigned char *pat, size_t from)
{
    int r = 0;
    for (int i = 1; i < 4; i++)
        if (g->seen[pat[i]] < g->seen[pat[r]])
            r = i;
    for (size_t at = from + (size_t)r; at + 4 - (size_t)r <= g->ninfo; at++) {
        const unsigned char *p = memchr(g->info + at, pat[r], g->ninfo - at - (3 - (size_t)r));
        if (!p)
            break;
        at = (size_t)(p - g->info);
        if (memcmp(p - r, pat, 4) == 0)
            return at - (size_t)r;
    }
    return NONE;
}

/*
 * Whether the guide may look for name (mqdh__mentions_begin): a C
 * identifier of 4 bytes or more, not reserved to the implementation (__x,
 * _X: __int128, _Float128, _Bool) and no base type's name.
 */
static int guided_name(const char *name)
{
    static const char *const base[] = {"char", "short", "long", "float", "double", "void",
                                       "bool", "wchar_t", "char8_t", "char16_t", "char32_t"};
    size_t len = strlen(name);
    if (len < 4 || (name[0] == '_' && (name[1] == '_' || (name[1] >= 'A' && name[1] <= 'Z'))))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!(name[i] == '_' || (name[i] >= '0' && name[i] <= '9') ||
              ((name[i] | 0x20) >= 'a' && (name[i] | 0x20) <= 'z')))
            return 0;
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        if (strcmp(name, base[i]) == 0)
            return 0;
    return 1;
}

/* The next place .debug_str holds name (len bytes) as a string's end,
 * along the tails' chain from *k (moved past it): its offset, or NONE at
 * the chain's end. */
static size_t held(const struct mqdh__typeguide *g, const char *name, size_t len, uint32_t *k)
{
    while (*k) {
        size_t e = g->ends[*k - 1];
        *k = g->next[*k - 1];
        if (e >= len && memcmp(g->str + e - len, name, len) == 0)
            return e - len;
    }
    return NONE;
}

int mqdh__mentions_begin(struct mqdh__mentions *m, struct mqdh__typeguide *g, const char *name,
                         Dwarf_Off from)
{
    m->g = g;
    m->str = NULL;
    m->nstrp = 0;
    if (!guided_name(name) || build_tails(g) != 0)
        return -1;
    size_t len = strlen(name), off;
    for (uint32_t k = g->heads[tail_hash(name + len)]; (off = held(g, name, len, &k)) != NONE;) {
        const char *p = g->str + off;
        if (m->nstrp == MQDH__MENTION_STRS)
            return -1;
        for (int b = 0; b < 4; b++)
            m->strp[m->nstrp][g->msb ? 3 - b : b] = (unsigned char)(off >> (8 * b));
        m->str = m->str && m->str < p ? m->str : p;
        m->nstrp++;
    }
    int any = 0;
    for (int i = 0; i < m->nstrp; i++) {
        m->next[i] = hit(g, m->strp[i], from);
        any |= m->next[i] != NONE;
    }
    return any ? 0 : 1;
}

int mqdh__typeguide_holds(struct mqdh__typeguide *g, const char *name)
{
    if (!guided_name(name) || build_tails(g) != 0)
        return -1;
    size_t len = strlen(name);
    uint32_t k = g->heads[tail_hash(name + len)];
    return held(g, name, len, &k) != NONE;
}

int mqdh__mentions_next(struct mqdh__mentions *m, Dwarf_Off from, Dwarf_Off *at)
{
    int best = -1;
    for (int i = 0; i < m->nstrp; i++) {
        if (m->next[i] != NONE && m->next[i] < from)
            m->next[i] = hit(m->g, m->strp[i], from);
        if (m->next[i] != NONE && (best < 0 || m->next[i] < m->next[best]))
            best = i;
    }
    if (best < 0)
        return 1;
    *at = m->next[best];
    return 0;
}

/* The unit holding offset at, or NULL (a unit header holds it). */
static const struct unit *unit_of(const struct mqdh__typeguide *g, Dwarf_Off at)
{
    size_t lo = 0, hi = g->nunits; /* the unit is the last starting at or before at */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->units[mid].start <= at)
            lo = mid;
        else
            hi = mid;
    }
    const struct unit *u = &g->units[lo];
    return at >= u->die && at < u->end ? u : NULL;
}

int mqdh__typeguide_type_tag(uint64_t tag)
{
    return tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
           tag == DW_TAG_class_type || tag == DW_TAG_typedef || tag == DW_TAG_base_type;
}

int mqdh__typeguide_may_define(const struct mqdh__typeguide *g, Dwarf_Off at, Dwarf_Off *die,
                               Dwarf_Off *end, Dwarf_Off *entry)
{
    const struct unit *u = unit_of(g, at);
    if (!u)
        return 0;
    *die = u->die;
    *end = u->end;
    *entry = 0;
    int read = 0, defining = 0;
    for (Dwarf_Off k = 1; k <= 3 && at >= u->die + k; k++) { /* a code of k bytes */
        struct abbrev a;
        if (die_abbrev(g, u, at - k, at, &a) != 0 || a.first_at != DW_AT_name ||
            a.first_form != DW_FORM_strp)
            continue;
        read++;
        if (mqdh__typeguide_type_tag(a.tag) && a.declaration != 1) {
            defining = 1;
            *entry = at - k;
        }
    }
    if (read == 0 && u->gnu)
        return 0; /* no name: GCC writes a type's first (typeguide.h) */
    if (read != 1)
        *entry = 0;
    return read != 1 || defining;
}
