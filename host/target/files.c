/* files.c - the ELF objects a session's processes map, each read once. */
#define _GNU_SOURCE
#include "target/files.h"
#include "target/debugfile.h"
#include "target/proc.h"
#include "base/array.h"
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
    if (!f || !mqdh__file_elf(f))
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
        free(tables[i]->byvalue);
        free(tables[i]->ends);
    }
    for (int i = 0; i < f->nneeded; i++)
        free(f->needed[i]);
    free(f->needed);
    free(f->soname);
    free(f->mem_hash);
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
    free(fs->order.exe);
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

void mqdh__extent_add(struct mqdh__extent *x, const GElf_Phdr *ph)
{
    if (ph->p_type != PT_LOAD)
        return;
    if (!x->loads++)
        x->vaddr = ph->p_align > 1 ? ph->p_vaddr & -ph->p_align : ph->p_vaddr;
    if (ph->p_vaddr + ph->p_memsz > x->end)
        x->end = ph->p_vaddr + ph->p_memsz;
}

/* The load segments' extent, as libdwfl takes it (usable set if sane,
 * and if a process's memory described the file, only if the same). */
static void describe(struct mqdh__file *f)
{
    GElf_Ehdr eh;
    size_t nph;
    int was = f->described;
    f->described = 1;
    f->usable = 0;
    if (elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &eh) ||
        (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || elf_getphdrnum(f->elf, &nph) != 0)
        return;
    struct mqdh__extent x = {0, 0, 0};
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(f->elf, (int)i, &ph))
            mqdh__extent_add(&x, &ph);
    }
    if (!x.loads || x.end <= x.vaddr ||
        (was && (x.vaddr != f->vaddr || x.end - x.vaddr != f->span)))
        return;
    f->vaddr = x.vaddr;
    f->span = x.end - x.vaddr;
    f->usable = 1;
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
    f->opened = 1;
    if (f->bytes)
        return; /* a vDSO: described from its copy */
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

Elf *mqdh__file_elf(struct mqdh__file *f)
{
    if (!f->opened)
        open_file(f);
    if (!f->elf && f->described)
        f->usable = 0; /* described from memory, but its file is not there */
    return f->usable ? f->elf : NULL;
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

/* Where files of inode ino on device dev are kept in a files' slots. */
static size_t inode_slot(unsigned long long dev, unsigned long long ino)
{
    unsigned long long h = (ino ^ dev * 0x9e3779b97f4a7c15ull) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 57); /* 128 slots */
}

struct mqdh__file *mqdh__files_get(struct mqdh__files *fs, const char *path, unsigned long long dev,
                                 unsigned long long ino, pid_t pid, uint64_t start, uint64_t end)
{
    int vdso = strcmp(path, "[vdso]") == 0;
    void *bytes = NULL;
    size_t nbytes = 0;
    struct mqdh__file **slot = &fs->slots[inode_slot(dev, ino)];
    for (struct mqdh__file *f = vdso ? NULL : *slot; f; f = f->same_slot)
        if (f->dev == dev && f->ino == ino && strcmp(f->path, path) == 0)
            return f;
    if (vdso && read_vdso(pid, start, end, &bytes, &nbytes) != 0)
        bytes = NULL, nbytes = 0;
    for (struct mqdh__file *f = fs->list; vdso && f; f = f->next) {
        if (f->bytes && nbytes == f->nbytes && memcmp(bytes, f->bytes, nbytes) == 0) {
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
        f->opened = 1;
        if (bytes && (f->elf = elf_memory(bytes, nbytes)))
            describe(f);
    }
    f->next = fs->list;
    fs->list = f;
    if (!vdso) {
        f->same_slot = *slot;
        *slot = f;
    }
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
    if (!mqdh__file_elf(f) || !(f->dwfl = dwfl_begin(&f->owner->callbacks)))
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

/* ---------------------------------------------------------------- prefetch */

/* Has the ELF file f DWARF of its own? */
static int has_dwarf(struct mqdh__file *f)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;
    if (!mqdh__file_elf(f) || elf_getshdrstrndx(f->elf, &shstrndx) != 0)
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
        char *maps = mqdh__proc_alloc(path, &len, MQDH__PROC_MAPS);
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
