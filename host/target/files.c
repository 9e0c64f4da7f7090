/* files.c - the ELF objects a session's processes map, each read once. */
#define _GNU_SOURCE
#include "target/files.h"
#include "target/debugfile.h"
#include "target/gnuhash.h"
#include "target/proc.h"
#include "base/array.h"
#include "base/radix.h"
#include "base/progress.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <gelf.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* A defined symbol, chained to the next one of the same hash. */
struct fsym {
    const char *name; /* in the file's (or its debug file's) string table */
    uint64_t value, size;
    uint32_t next; /* index + 1 in syms; 0 ends the chain */
    unsigned char type, bind;
};

struct fmemo {
    uint64_t addr;
    void *value;
    int used;
};

/* libdwfl's find_elf for every module mqd reports: the module's file is
 * its userdata, and its descriptor is lent (libelf counts the references,
 * libdwfl ends its own). */
static int lend_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                    char **file_name, Elf **elfp)
{
    (void)mod;
    (void)modname;
    (void)base;
    struct mqdh__file *f = *userdata;
    *elfp = NULL;
    if (!f || !f->usable)
        return -1;
    *elfp = elf_begin(-1, ELF_C_READ_MMAP, f->elf);
    if (*elfp && f->fd >= 0 && !*file_name)
        *file_name = strdup(f->path); /* where libdwfl looks for a debug link */
    return -1;
}

struct mqdh__files *mqdh__files_new(void)
{
    struct mqdh__files *fs = calloc(1, sizeof *fs);
    if (!fs)
        return NULL;
    elf_version(EV_CURRENT); /* before any elf_begin (libdwfl calls it too) */
    pthread_mutex_init(&fs->pages.lock, NULL);
    fs->callbacks = (Dwfl_Callbacks){
        .find_elf = lend_elf,
        .find_debuginfo = mqdh__find_debuginfo,
        .debuginfo_path = &fs->debuginfo_path,
    };
    return fs;
}

static void file_free(struct mqdh__file *f)
{
    if (f->types && f->free_types)
        f->free_types(f->types);
    if (f->fns && f->free_fns)
        f->free_fns(f->fns);
    if (f->dwfl)
        dwfl_end(f->dwfl);
    for (size_t i = 0; i < f->memo_cap; i++)
        if (f->memo[i].used)
            free(f->memo[i].value);
    free(f->memo);
    struct mqdh__file_syms *tables[] = {&f->all, &f->exported};
    for (int i = 0; i < 2; i++) {
        free(tables[i]->syms);
        free(tables[i]->heads);
        free(tables[i]->byaddr);
        free(tables[i]->reach);
    }
    for (int i = 0; i < f->nneeded; i++)
        free(f->needed[i]);
    free(f->needed);
    free(f->soname);
    if (f->elf)
        elf_end(f->elf);
    if (f->map)
        munmap(f->map, f->map_len);
    if (f->fd >= 0)
        close(f->fd);
    free(f->bytes);
    free(f->path);
    free(f);
}

void mqdh__files_free(struct mqdh__files *fs)
{
    if (!fs)
        return;
    while (fs->list) {
        struct mqdh__file *f = fs->list;
        fs->list = f->next;
        file_free(f);
    }
    mqdh__debug_client_end(fs);
    mqdh__pages_free(&fs->pages);
    pthread_mutex_destroy(&fs->pages.lock);
    free(fs->debuginfo_path);
    mqdh__debug_dirs_forget(fs, 0);
    free(fs);
}

void mqdh__files_again(struct mqdh__files *fs)
{
    fs->ranks_stopped = 0;
    fs->fetch_spent[0] = fs->fetch_spent[1] = 0;
    mqdh__debug_dirs_forget(fs, 1); /* a debug directory made since is looked in */
}

/* The load segments' extent, as libdwfl takes it (usable set if sane). */
static void describe(struct mqdh__file *f)
{
    GElf_Ehdr eh;
    size_t nph;
    if (elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &eh) ||
        (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || elf_getphdrnum(f->elf, &nph) != 0)
        return;
    int first = 1;
    uint64_t end = 0;
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(f->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
            continue;
        if (first)
            f->vaddr = ph.p_align > 1 ? ph.p_vaddr & -ph.p_align : ph.p_vaddr;
        first = 0;
        if (ph.p_vaddr + ph.p_memsz > end)
            end = ph.p_vaddr + ph.p_memsz;
    }
    if (!first && end > f->vaddr) {
        f->span = end - f->vaddr;
        f->usable = 1;
    }
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while (!f->own_symtab && (scn = elf_nextscn(f->elf, scn)))
        f->own_symtab = gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB;
}

/*
 * Open a file named by the maps: regular files only (a mapped device is
 * never opened: that could act on it).  It is mapped here, at the size
 * the stat gave, and handed to libelf as memory: elf_begin on the
 * descriptor would check it (fcntl) and stat it again.  Private and
 * writable, as libelf takes memory it may convert in place; no page is
 * written for a native object.
 */
static void open_file(struct mqdh__file *f)
{
    struct stat st;
    if (stat(f->path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (unsigned long long)st.st_size > SIZE_MAX)
        return;
    f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0)
        return;
    f->owner->opened++;
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, f->fd, 0);
    if (map == MAP_FAILED)
        return;
    f->map = map;
    f->map_len = (size_t)st.st_size;
    if ((f->elf = elf_memory(map, f->map_len)))
        describe(f);
}

/* A vDSO, from pid's memory: the same bytes are the same object. */
static int read_vdso(pid_t pid, uint64_t start, uint64_t end, void **bytes, size_t *n)
{
    if (end <= start || end - start > (1u << 24))
        return -1;
    *n = (size_t)(end - start);
    if (!(*bytes = malloc(*n)))
        return -1;
    struct iovec local = {*bytes, *n}, remote = {(void *)(uintptr_t)start, *n};
    if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)*n) {
        free(*bytes);
        *bytes = NULL;
        return -1;
    }
    return 0;
}

struct mqdh__file *mqdh__files_get(struct mqdh__files *fs, const char *path, unsigned long long dev,
                                 unsigned long long ino, pid_t pid, uint64_t start, uint64_t end)
{
    int vdso = strcmp(path, "[vdso]") == 0;
    void *bytes = NULL;
    size_t nbytes = 0;
    if (vdso && read_vdso(pid, start, end, &bytes, &nbytes) != 0)
        bytes = NULL, nbytes = 0;
    for (struct mqdh__file *f = fs->list; f; f = f->next) {
        if (vdso ? f->bytes && nbytes == f->nbytes && memcmp(bytes, f->bytes, nbytes) == 0
                 : !f->bytes && f->dev == dev && f->ino == ino && strcmp(f->path, path) == 0) {
            free(bytes);
            return f;
        }
    }
    struct mqdh__file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path))) {
        free(f);
        free(bytes);
        return NULL;
    }
    f->dev = dev;
    f->ino = ino;
    f->fd = -1;
    f->owner = fs;
    if (vdso) {
        f->bytes = bytes;
        f->nbytes = nbytes;
        if (bytes && (f->elf = elf_memory(bytes, nbytes)))
            describe(f);
    } else {
        open_file(f);
    }
    f->next = fs->list;
    fs->list = f;
    return f;
}

struct mqdh__file *mqdh__files_vdso(struct mqdh__files *fs, unsigned abi, size_t nbytes)
{
    for (struct mqdh__file *f = fs->list; abi && f; f = f->next)
        if (f->bytes && f->vdso_abi == abi && f->nbytes == nbytes && f->usable)
            return f;
    return NULL;
}

Dwfl_Module *mqdh__file_module(struct mqdh__file *f)
{
    if (f->offline_tried)
        return f->mod;
    f->offline_tried = 1;
    if (!f->usable || !(f->dwfl = dwfl_begin(&f->owner->callbacks)))
        return NULL;
    dwfl_report_begin(f->dwfl);
    Dwfl_Module *m = dwfl_report_module(f->dwfl, f->path, f->vaddr, f->vaddr + f->span);
    void **ud;
    Dwarf_Addr bias;
    if (m && dwfl_module_info(m, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
        *ud = f;
    if (!m || dwfl_report_end(f->dwfl, NULL, NULL) != 0 || !dwfl_module_getelf(m, &bias) ||
        bias != 0)
        return NULL;
    return f->mod = m;
}

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

/* Is name (an imported symbol's) one of the calls that reach other
 * worlds, in any binding? */
static int reaches(const char *name)
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
    Elf_Data *data = f->usable ? dynsym_of(f, &sh, &n) : NULL;
    int found = 0;
    if (data) {
        for (size_t i = 1; i < n && !found; i++) {
            GElf_Sym sym;
            const char *name = gelf_getsym(data, (int)i, &sym) && sym.st_shndx == SHN_UNDEF
                                   ? elf_strptr(f->elf, sh.sh_link, sym.st_name)
                                   : NULL;
            found = name && reaches(name);
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
        found = name && sym.st_shndx == SHN_UNDEF && reaches(name);
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
    if (f->own_symtab || !f->usable)
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

/* t's functions in the order of their values, the table's among equal ones
 * (t->sorted; none without memory, and the caller asks libdwfl). */
static void sort_functions(struct mqdh__file_syms *t)
{
    t->sorted = 1;
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->nsyms; i++)
        n += is_function(&t->syms[i]);
    struct mqdh__keyed *pairs = n ? malloc(2 * (size_t)n * sizeof *pairs) : NULL;
    if (!pairs || !(t->byaddr = malloc(n * sizeof *t->byaddr)) ||
        !(t->reach = malloc(n * sizeof *t->reach))) {
        free(pairs);
        free(t->byaddr);
        t->byaddr = NULL;
        return;
    }
    for (uint32_t i = 0; i < t->nsyms; i++)
        if (is_function(&t->syms[i]))
            pairs[t->nfuncs++] = (struct mqdh__keyed){t->syms[i].value, i};
    const struct mqdh__keyed *sorted = mqdh__radix_sort(pairs, pairs + n, n);
    uint64_t reach = 0;
    for (uint32_t k = 0; k < t->nfuncs; k++) {
        const struct fsym *s = &t->syms[t->byaddr[k] = sorted[k].idx];
        uint64_t end = s->value + (s->size ? s->size : 1);
        t->reach[k] = reach = end > reach ? end : reach;
    }
    free(pairs);
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
    uint32_t lo = 0, hi = t->nfuncs;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->syms[t->byaddr[mid]].value <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
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
    if (!f->usable)
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

int mqdh__file_exports_mpi(struct mqdh__file *f)
{
    uint64_t a;
    if (!f->exports_mpi)
        f->exports_mpi = 2 + (mqdh__file_global(f, "PMPI_Init", 1, &a) == 0);
    return f->exports_mpi - 2;
}

static size_t memo_slot(const struct fmemo *t, size_t cap, uint64_t addr)
{
    size_t i = (size_t)((addr * 0x9e3779b97f4a7c15u) >> 20) & (cap - 1);
    while (t[i].used && t[i].addr != addr)
        i = (i + 1) & (cap - 1);
    return i;
}

void **mqdh__file_memo(struct mqdh__file *f, uint64_t addr)
{
    if ((f->memo_used + 1) * 2 > f->memo_cap) {
        size_t cap = f->memo_cap ? f->memo_cap * 2 : 64;
        struct fmemo *t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; i < f->memo_cap; i++)
            if (f->memo[i].used)
                t[memo_slot(t, cap, f->memo[i].addr)] = f->memo[i];
        free(f->memo);
        f->memo = t;
        f->memo_cap = cap;
    }
    size_t i = memo_slot(f->memo, f->memo_cap, addr);
    if (!f->memo[i].used) {
        f->memo[i] = (struct fmemo){addr, NULL, 1};
        f->memo_used++;
    }
    return &f->memo[i].value;
}

void mqdh__file_dynamic(struct mqdh__file *f, const char **soname, char *const **needed, int *n)
{
    if (!f->dynamic_read && f->usable) {
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
        f->needed_as_hash = hash_name(f->needed_as);
    }
    *hash = f->needed_as_hash;
    return f->needed_as;
}

/* ---------------------------------------------------------------- prefetch */

/* Has the ELF file f DWARF of its own? */
static int has_dwarf(struct mqdh__file *f)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;
    if (!f->usable || elf_getshdrstrndx(f->elf, &shstrndx) != 0)
        return 1; /* nothing to fetch for */
    while ((scn = elf_nextscn(f->elf, scn))) {
        GElf_Shdr sh;
        const char *n;
        if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
            (n = elf_strptr(f->elf, shstrndx, sh.sh_name)) && strcmp(n, ".debug_info") == 0)
            return 1;
    }
    return 0;
}

void mqdh__files_prefetch(struct mqdh__files *fs, const pid_t *pids, int n)
{
    const char *urls = getenv("DEBUGINFOD_URLS");
    if (!urls || !*urls)
        return;
    for (int i = 0; i < n && fs->fetch_spent[0] < MQDH__PREFETCH_BUDGET; i++) {
        char path[64];
        size_t len;
        snprintf(path, sizeof path, "/proc/%d/maps", (int)pids[i]);
        char *maps = mqdh__proc_alloc(path, &len, MQDH__PROC_TO_EOF);
        for (char *line = maps, *next; line && line < maps + len; line = next) {
            next = strchr(line, '\n');
            if (next)
                *next++ = '\0';
            else
                next = maps + len;
            struct mqdh__maps_entry e;
            if (mqdh__text_maps_line(line, &e) != 0 || e.file[0] != '/' || e.ino == 0)
                continue;
            struct mqdh__file *f =
                mqdh__files_get(fs, e.file, e.dev, e.ino, pids[i], e.start, e.end);
            if (!f || f->prefetched || has_dwarf(f))
                continue;
            f->prefetched = 1;
            Dwfl_Module *m = mqdh__file_module(f);
            if (m)
                mqdh__debug_prefetch_one(fs, m, f->path);
        }
        free(maps);
    }
}
