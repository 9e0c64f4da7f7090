/*
 * filesyms.c - a file's symbols (files.h): looked up by name in a table
 * built on first need, its functions by address, what it imports, the
 * names its dynamic section gives.
 */
#define _GNU_SOURCE
#include "target/files.h"
#include "target/gnuhash.h"
#include "base/array.h"
#include "base/radix.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A defined symbol, chained to the next one of the same hash. */
struct fsym {
    const char *name; /* in the file's (or its debug file's) string table */
    uint64_t value, size;
    uint32_t next; /* index + 1 in syms; 0 ends the chain */
    unsigned char type, bind;
};

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Room for n symbols in t, its chains empty: 0, or -1 without memory. */
static int syms_alloc(struct mqdh__file_syms *t, size_t n)
{
    size_t nheads = 64;
    while (nheads < n)
        nheads *= 2;
    t->syms = calloc(n, sizeof *t->syms);
    t->heads = calloc(nheads, sizeof *t->heads);
    if (!t->syms || !t->heads) {
        free(t->syms);
        free(t->heads);
        t->syms = NULL;
        t->heads = NULL;
        return -1;
    }
    t->nheads = nheads;
    return 0;
}

/* Symbol sym called name, at file address value, pushed at its chain's
 * head (so added backwards, chains end up in the table's order). */
static void syms_push(struct mqdh__file_syms *t, const char *name, const GElf_Sym *sym,
                      uint64_t value)
{
    if (!name || sym->st_shndx == SHN_UNDEF)
        return;
    struct fsym *s = &t->syms[t->nsyms];
    uint32_t h = hash_name(name) & (uint32_t)(t->nheads - 1);
    *s = (struct fsym){name, value, sym->st_size, t->heads[h],
                       (unsigned char)GELF_ST_TYPE(sym->st_info),
                       (unsigned char)GELF_ST_BIND(sym->st_info)};
    t->heads[h] = ++t->nsyms;
}

/* Every defined symbol, from libdwfl (its debug file's if it has none). */
static void build_all(struct mqdh__file *f)
{
    f->all.built = 1;
    Dwfl_Module *m = mqdh__file_module(f);
    int n = m ? dwfl_module_getsymtab(m) : -1;
    if (n <= 1 || syms_alloc(&f->all, (size_t)n) != 0)
        return;
    for (int i = n - 1; i >= 1; i--) {
        GElf_Sym sym;
        GElf_Addr value;
        const char *name = dwfl_module_getsym_info(m, i, &sym, &value, NULL, NULL, NULL);
        syms_push(&f->all, name, &sym, value);
    }
}

/* The file's own .dynsym (its section's, as the link wrote it), its
 * header in *sh and its number of entries in *n; NULL if it has none. */
static Elf_Data *dynsym_of(struct mqdh__file *f, GElf_Shdr *sh, size_t *n)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(f->elf, scn)))
        if (gelf_getshdr(scn, sh) && sh->sh_type == SHT_DYNSYM)
            break;
    Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
    *n = data && sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
    return *n > 1 ? data : NULL;
}

/* The symbols the file exports: its own .dynsym's definitions. */
static void build_exported(struct mqdh__file *f)
{
    f->exported.built = 1;
    GElf_Shdr sh;
    size_t n;
    Elf_Data *data = dynsym_of(f, &sh, &n);
    if (!data || syms_alloc(&f->exported, n) != 0)
        return;
    for (size_t i = n - 1; i >= 1; i--) {
        GElf_Sym sym;
        if (gelf_getsym(data, (int)i, &sym))
            syms_push(&f->exported, elf_strptr(f->elf, sh.sh_link, sym.st_name), &sym,
                      sym.st_value);
    }
}

int mqdh__name_reaches_worlds(const char *name)
{
    static const char *const calls[] = {"mpi_comm_spawn", "mpi_comm_connect", "mpi_comm_accept",
                                        "mpi_comm_join", "mpi_comm_get_parent"};
    char low[64];
    size_t k = 0;
    if ((name[0] == 'p' || name[0] == 'P') && strncasecmp(name + 1, "mpi_", 4) == 0)
        name++; /* the profiling binding */
    for (; name[k] && k < sizeof low - 1; k++)
        low[k] = (char)((name[k] >= 'A' && name[k] <= 'Z') ? name[k] - 'A' + 'a' : name[k]);
    low[k] = '\0';
    for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++)
        if (strncmp(low, calls[c], strlen(calls[c])) == 0)
            return 1;
    return 0;
}

/*
 * What a dynamically linked object imports is in its own .dynsym (the
 * dynamic loader binds nothing else), which needs no debug file; a static
 * executable has no imports there, and its .symtab says what it calls
 * unresolved.
 */
int mqdh__file_reaches_worlds(struct mqdh__file *f)
{
    if (f->worlds)
        return f->worlds - 2;
    GElf_Shdr sh;
    size_t n;
    Elf_Data *data = mqdh__file_elf(f) ? dynsym_of(f, &sh, &n) : NULL;
    int found = 0;
    if (data) {
        for (size_t i = 1; i < n && !found; i++) {
            GElf_Sym sym;
            const char *name = gelf_getsym(data, (int)i, &sym) && sym.st_shndx == SHN_UNDEF
                                   ? elf_strptr(f->elf, sh.sh_link, sym.st_name)
                                   : NULL;
            found = name && mqdh__name_reaches_worlds(name);
        }
        f->worlds = found + 2;
        return found;
    }
    Dwfl_Module *m = mqdh__file_module(f);
    int nsyms = m ? dwfl_module_getsymtab(m) : -1;
    for (int i = 1; i < nsyms && !found; i++) {
        GElf_Sym sym;
        GElf_Addr value;
        const char *name = dwfl_module_getsym_info(m, i, &sym, &value, NULL, NULL, NULL);
        found = name && sym.st_shndx == SHN_UNDEF && mqdh__name_reaches_worlds(name);
    }
    f->worlds = (nsyms < 1 ? -1 : found) + 2;
    return f->worlds - 2;
}

/* The first of t's symbols called name that fits (mqdh__file_symbol_h). */
static int syms_find(const struct mqdh__file_syms *t, const char *name, uint32_t hash,
                     int functions_only, int want_local, uint64_t *addr)
{
    if (!t->nheads)
        return -ENOENT;
    uint32_t h = hash & (uint32_t)(t->nheads - 1);
    for (uint32_t i = t->heads[h]; i; i = t->syms[i - 1].next) {
        const struct fsym *s = &t->syms[i - 1];
        if (strcmp(s->name, name) != 0)
            continue;
        if (functions_only && s->type != STT_FUNC && s->type != STT_GNU_IFUNC)
            continue;
        if (s->type == STT_SECTION || s->type == STT_FILE || s->type == STT_TLS)
            continue;
        if ((s->bind == STB_LOCAL) != want_local)
            continue;
        *addr = s->value;
        return 0;
    }
    return -ENOENT;
}

uint32_t mqdh__file_name_hash(const char *name)
{
    return hash_name(name);
}

int mqdh__file_symbol_h(struct mqdh__file *f, const char *name, uint32_t hash,
                        int functions_only, int want_local, uint64_t *addr)
{
    if (!f->all.built)
        build_all(f);
    return syms_find(&f->all, name, hash, functions_only, want_local, addr);
}

int mqdh__file_global_h(struct mqdh__file *f, const char *name, uint32_t hash,
                        int functions_only, uint64_t *addr)
{
    /* Before the file is opened, its .gnu.hash as a process's memory
     * holds it (dynmem.h: a 64-bit object's, 8-byte Bloom words) rules
     * names out. */
    if (!f->opened && f->mem_hash &&
        mqdh__gnuhash_check(f->mem_hash, f->mem_hash_len, 8, name) == 0)
        return -ENOENT;
    if (!mqdh__file_elf(f) || f->own_symtab)
        return mqdh__file_symbol_h(f, name, hash, functions_only, 0, addr);
    if (!f->exported.built && mqdh__gnuhash_may_define(f->elf, name, &f->gnu_hash) == 0)
        return -ENOENT; /* one it cannot define, told without reading its symbols */
    if (!f->exported.built)
        build_exported(f);
    return syms_find(&f->exported, name, hash, functions_only, 0, addr);
}

int mqdh__file_global(struct mqdh__file *f, const char *name, int functions_only, uint64_t *addr)
{
    return mqdh__file_global_h(f, name, hash_name(name), functions_only, addr);
}

static int is_function(const struct fsym *s)
{
    return s->type == STT_FUNC || s->type == STT_GNU_IFUNC;
}

/*
 * The symbols of t that keep takes, in the order of their values, the
 * table's among equal ones: *order their indexes into t->syms, *count how
 * many, (*reach)[k] the highest end among the first k + 1 (a symbol
 * without a size ends a byte past its start if sizeless_byte, else it
 * reaches nothing).  Nothing without memory (the caller asks libdwfl).
 */
static void sort_by_value(const struct mqdh__file_syms *t, int (*keep)(const struct fsym *),
                          int sizeless_byte, uint32_t **order, uint32_t *count, uint64_t **reach)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->nsyms; i++)
        n += keep(&t->syms[i]);
    struct mqdh__keyed *pairs = n ? malloc(2 * (size_t)n * sizeof *pairs) : NULL;
    if (!pairs || !(*order = malloc(n * sizeof **order)) ||
        !(*reach = malloc(n * sizeof **reach))) {
        free(pairs);
        free(*order);
        *order = NULL;
        return;
    }
    for (uint32_t i = 0; i < t->nsyms; i++)
        if (keep(&t->syms[i]))
            pairs[(*count)++] = (struct mqdh__keyed){t->syms[i].value, i};
    const struct mqdh__keyed *sorted = mqdh__radix_sort(pairs, pairs + n, n);
    uint64_t highest = 0;
    for (uint32_t k = 0; k < n; k++) {
        const struct fsym *s = &t->syms[(*order)[k] = sorted[k].idx];
        uint64_t end = s->value + (s->size ? s->size : (uint64_t)sizeless_byte);
        if ((s->size || sizeless_byte) && end > highest)
            highest = end;
        (*reach)[k] = highest;
    }
    free(pairs);
}

/* The place in order (n of t's symbols by value) of the first one whose
 * value is above addr. */
static uint32_t first_above(const struct mqdh__file_syms *t, const uint32_t *order, uint32_t n,
                            uint64_t addr)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->syms[order[mid]].value <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* t's functions by value (t->sorted). */
static void sort_functions(struct mqdh__file_syms *t)
{
    t->sorted = 1;
    sort_by_value(t, is_function, 1, &t->byaddr, &t->nfuncs, &t->reach);
}

/*
 * The function of t whose range holds addr, as libdwfl chooses it: the
 * nearest start, then the higher binding, then the table's order (the
 * array holds it backwards: the higher index).  But for the binding: a
 * weak alias comes before the global it aliases (MPI_Send, the name the
 * program calls, before PMPI_Send), where libdwfl takes the global.
 * Walked back from the last start at or below addr, for as long as a
 * function before could still reach it.
 */
static const char *syms_at(struct mqdh__file_syms *t, uint64_t addr)
{
    if (!t->sorted)
        sort_functions(t);
    uint32_t lo = first_above(t, t->byaddr, t->nfuncs, addr);
    const struct fsym *best = NULL;
    uint32_t best_i = 0;
    for (uint32_t k = lo; k-- > 0 && t->reach[k] > addr;) {
        uint32_t i = t->byaddr[k];
        const struct fsym *s = &t->syms[i];
        if (best && s->value < best->value)
            break;
        if (addr - s->value >= (s->size ? s->size : 1))
            continue;
        if (!best || s->value > best->value || s->bind > best->bind ||
            (s->bind == best->bind && i > best_i)) {
            best = s;
            best_i = i;
        }
    }
    return best ? best->name : NULL;
}

const char *mqdh__file_function_at(struct mqdh__file *f, uint64_t addr)
{
    if (!mqdh__file_elf(f))
        return NULL;
    struct mqdh__file_syms *t = f->own_symtab ? &f->all : &f->exported;
    if (!t->built) {
        if (f->own_symtab)
            build_all(f);
        else
            build_exported(f);
    }
    return syms_at(t, addr);
}

/* Whether libdwfl names addresses by s (dwfl_module_addrsym.c skips the
 * nameless, sections, files and thread-local ones). */
static int names_addresses(const struct fsym *s)
{
    return s->name[0] && s->type != STT_SECTION && s->type != STT_FILE && s->type != STT_TLS;
}

/* t's symbols that name addresses by value (t->values_sorted). */
static void sort_values(struct mqdh__file_syms *t)
{
    t->values_sorted = 1;
    sort_by_value(t, names_addresses, 0, &t->byvalue, &t->nvalues, &t->ends);
}

/* GELF_ST_BIND as dwfl_module_addrsym.c ranks it: the higher the better. */
static int binding_rank(const struct fsym *s)
{
    return s->bind == STB_GLOBAL ? 3 : s->bind == STB_WEAK ? 2 : s->bind == STB_LOCAL ? 1 : 0;
}

/* Whether libdwfl, holding cur, takes s instead (its try_sym_value, for
 * two symbols with a size that both hold the address). */
static int dwfl_prefers(const struct fsym *cur, const struct fsym *s)
{
    int bc = binding_rank(cur), bs = binding_rank(s);
    if (cur->value < s->value || bc < bs)
        return 1;
    return cur->value == s->value &&
           ((cur->size > s->size && bc <= bs) || (cur->size >= s->size && bc < bs));
}

enum { MAX_HOLDERS = 64 };

/* Whether a global symbol without a size is at addr (the symbols of t by
 * value below lo are those at or below it). */
static int global_label_at(const struct mqdh__file_syms *t, uint32_t lo, uint64_t addr)
{
    for (uint32_t k = lo; k-- > 0 && t->syms[t->byvalue[k]].value == addr;)
        if (!t->syms[t->byvalue[k]].size && t->syms[t->byvalue[k]].bind != STB_LOCAL)
            return 1;
    return 0;
}

int mqdh__file_addrname(struct mqdh__file *f, uint64_t addr, const char **name)
{
    struct mqdh__file_syms *t = &f->all;
    *name = NULL;
    if (!t->built)
        build_all(f);
    if (!t->values_sorted)
        sort_values(t);
    if (!t->byvalue)
        return 0;
    uint32_t lo = first_above(t, t->byvalue, t->nvalues, addr);
    if (lo == 0)
        return 1;
    if (t->ends[lo - 1] <= addr)
        /* None with a size holds addr.  One that started at or after
         * the end of all those below would end past addr: the last
         * symbol below is a label then, and libdwfl may take it. */
        return t->syms[t->byvalue[lo - 1]].value < t->ends[lo - 1];
    /* Those with a size that hold addr, in the table's order (syms holds
     * it backwards); the global ones first, the local ones only if none
     * is global, as libdwfl reads them. */
    uint32_t held[MAX_HOLDERS], n = 0;
    for (uint32_t k = lo; k-- > 0 && t->ends[k] > addr;) {
        const struct fsym *s = &t->syms[t->byvalue[k]];
        if (s->size && addr - s->value < s->size) {
            if (n == MAX_HOLDERS)
                return 0;
            held[n++] = t->byvalue[k];
        }
    }
    for (uint32_t i = 1; i < n; i++) /* the table's order: indexes down */
        for (uint32_t c = i; c > 0 && held[c - 1] < held[c]; c--) {
            uint32_t x = held[c];
            held[c] = held[c - 1];
            held[c - 1] = x;
        }
    const struct fsym *best = NULL;
    for (int pass = 0; pass < 2 && !best; pass++) {
        for (uint32_t i = 0; i < n; i++) {
            const struct fsym *s = &t->syms[held[i]];
            if ((s->bind == STB_LOCAL) == (pass == 1) && (!best || dwfl_prefers(best, s)))
                best = s;
        }
        if (!best && pass == 0 && global_label_at(t, lo, addr))
            return 0; /* libdwfl reads no local symbol then */
    }
    *name = best ? best->name : NULL;
    return 1;
}

int mqdh__file_exports_mpi(struct mqdh__file *f)
{
    uint64_t a;
    if (!f->exports_mpi)
        f->exports_mpi = 2 + (mqdh__file_global(f, "PMPI_Init", 1, &a) == 0);
    return f->exports_mpi - 2;
}

void mqdh__file_dynamic(struct mqdh__file *f, const char **soname, char *const **needed, int *n)
{
    if (!f->dynamic_read && mqdh__file_elf(f)) {
        f->dynamic_read = 1;
        Elf_Scn *scn = NULL;
        while ((scn = elf_nextscn(f->elf, scn))) {
            GElf_Shdr sh;
            Elf_Data *d;
            if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || sh.sh_entsize == 0 ||
                !(d = elf_getdata(scn, NULL)))
                continue;
            size_t count = sh.sh_size / sh.sh_entsize;
            for (size_t i = 0; i < count; i++) {
                GElf_Dyn dyn;
                if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
                    break;
                if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_SONAME)
                    continue;
                const char *str = elf_strptr(f->elf, sh.sh_link, dyn.d_un.d_val);
                char *copy = str ? strdup(str) : NULL;
                if (!copy)
                    continue;
                if (dyn.d_tag == DT_SONAME && !f->soname) {
                    f->soname = copy;
                } else if (dyn.d_tag == DT_NEEDED &&
                           MQDH__GROW(f->needed, f->needed_cap, f->nneeded + 1) == 0) {
                    f->needed[f->nneeded++] = copy;
                } else {
                    free(copy);
                }
            }
            break;
        }
    }
    *soname = f->soname;
    *needed = f->needed;
    *n = f->nneeded;
}

const char *mqdh__file_needed_as(struct mqdh__file *f, uint32_t *hash)
{
    if (!f->needed_as) {
        const char *soname, *base = strrchr(f->path, '/');
        char *const *needed;
        int n;
        mqdh__file_dynamic(f, &soname, &needed, &n);
        f->needed_as = soname ? soname : base ? base + 1 : f->path;
        f->needed_as_hash = mqdh__file_name_hash(f->needed_as);
    }
    *hash = f->needed_as_hash;
    return f->needed_as;
}
