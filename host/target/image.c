/* image.c - a process's (or a file's) ELF objects and their symbols. */
#define _GNU_SOURCE
#include "target/image.h"
#include "target/dynmem.h"
#include "target/proc.h"
#include "base/array.h"
#include "target/types.h"

#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int add_module(struct mqdh__image *im, Dwfl_Module *mod, struct mqdh__file *f)
{
    if (MQDH__GROW(im->mods, im->cap, im->nmods + 1) != 0)
        return -ENOMEM;
    im->mods[im->nmods++] = (struct mqdh__image_module){mod, f, 0};
    return 0;
}

/* Move module m to position to (to <= m), the ones between up by one. */
static void move_module(struct mqdh__image *im, int m, int to)
{
    struct mqdh__image_module keep = im->mods[m];
    memmove(im->mods + to + 1, im->mods + to, (size_t)(m - to) * sizeof *im->mods);
    im->mods[to] = keep;
}

/*
 * The executable first, then the libraries in the dynamic loader's search
 * order (breadth first through DT_NEEDED, as its link map has them), then
 * the rest (dlopen's, the loader's own) by path.  Symbols and types are
 * looked up in this order, as the loader and a debugger resolve them; so a
 * type of libmpi is found before libc's large debug file is read.  The
 * loader gives the rest no search order of its own (it resolves a dlopen'd
 * object's symbols in that object's scope), so they come by path: their
 * addresses differ from rank to rank under ASLR (Open MPI's components),
 * and ranks share one image only if their files come in one order
 * (protocol/images.h).
 */
static void search_order(struct mqdh__image *im)
{
    for (int m = 1; m < im->nmods; m++)
        if (strcmp(im->mods[m].file->path, im->exe_path) == 0) {
            move_module(im, m, 0);
            break;
        }
    int placed = 1;
    for (int q = 0; q < placed && placed < im->nmods; q++) {
        const char *soname;
        char *const *needed;
        int n;
        mqdh__file_dynamic(im->mods[q].file, &soname, &needed, &n);
        for (int i = 0; i < n; i++) {
            uint32_t h = mqdh__file_name_hash(needed[i]), mh;
            for (int m = placed; m < im->nmods; m++) {
                const char *name = mqdh__file_needed_as(im->mods[m].file, &mh);
                if (mh == h && strcmp(name, needed[i]) == 0) {
                    move_module(im, m, placed++);
                    break;
                }
            }
        }
    }
    for (int m = placed + 1; m < im->nmods; m++) { /* the rest, by path */
        int to = m;
        while (to > placed && strcmp(im->mods[to - 1].file->path, im->mods[m].file->path) > 0)
            to--;
        if (to != m)
            move_module(im, m, to);
    }
}

/* Whether the last image ordered (files.h) had im's executable and its
 * files, each once: then they are put as there, wherever its maps had
 * them (Open MPI's components lie in a different order in every rank). */
static int order_again(struct mqdh__image *im, const struct mqdh__order *o,
                       struct mqdh__image_module *was, int *at)
{
    if (o->n != im->nmods || !o->exe || strcmp(o->exe, im->exe_path) != 0)
        return 0;
    for (int m = 0; m < im->nmods; m++)
        at[m] = -1;
    for (int m = 0; m < im->nmods; m++) {
        const struct mqdh__file *f = im->mods[m].file;
        if (f->order_gen != o->gen || f->order_at < 0 || f->order_at >= im->nmods ||
            at[f->order_at] >= 0)
            return 0;
        at[f->order_at] = m;
    }
    memcpy(was, im->mods, (size_t)im->nmods * sizeof *was);
    for (int m = 0; m < im->nmods; m++)
        im->mods[m] = was[at[m]];
    return 1;
}

/* Whether the order of im's modules was theirs alone: no two of them
 * with one path, or one name the loader knows a library by (the first
 * in the maps would have won). */
static int order_by_files(const struct mqdh__image *im)
{
    for (int m = 0; m < im->nmods; m++) {
        uint32_t h, k;
        const char *name = mqdh__file_needed_as(im->mods[m].file, &h);
        for (int n = m + 1; n < im->nmods; n++) {
            const char *other = mqdh__file_needed_as(im->mods[n].file, &k);
            if ((h == k && strcmp(name, other) == 0) ||
                strcmp(im->mods[m].file->path, im->mods[n].file->path) == 0)
                return 0;
        }
    }
    return 1;
}

/* The modules in search order (search_order), as the last image of the
 * same files was put, else put and kept for the next. */
static int loader_order(struct mqdh__image *im)
{
    struct mqdh__order *o = &im->files->order;
    size_t n = (size_t)im->nmods;
    struct mqdh__image_module *was = malloc(n * sizeof *was);
    int *at = malloc(n * sizeof *at);
    int rc = !was || !at ? -ENOMEM : 0;
    if (rc == 0 && !order_again(im, o, was, at)) {
        search_order(im);
        free(o->exe);
        o->exe = NULL;
        o->n = 0;
        if (order_by_files(im) && (o->exe = strdup(im->exe_path))) {
            o->n = im->nmods;
            o->gen = o->gen + 1 ? o->gen + 1 : 1;
            for (int m = 0; m < im->nmods; m++) {
                im->mods[m].file->order_gen = o->gen;
                im->mods[m].file->order_at = m;
            }
        }
    }
    free(was);
    free(at);
    return rc;
}

/* The modules in search order, and the target description from the
 * executable's header. */
static int finish(struct mqdh__image *im, char *err, size_t errlen)
{
    if (im->nmods == 0) {
        snprintf(err, errlen, "no ELF objects found");
        return -ENOENT;
    }
    if (loader_order(im) != 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    GElf_Ehdr eh;
    Elf *exe = mqdh__file_elf(im->mods[0].file);
    if (!exe || !gelf_getehdr(exe, &eh)) {
        snprintf(err, errlen, "cannot read the ELF header of %s: %s", im->exe_path,
                 elf_errmsg(-1));
        return -EIO;
    }
    im->elf_class = eh.e_ident[EI_CLASS];
    im->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
    return 0;
}

/* The ABI of im's executable, as far as its maps have been read (its
 * ELF machine and class; 0 if not met yet). */
static unsigned exe_abi(const struct mqdh__image *im)
{
    GElf_Ehdr eh;
    for (int m = 0; m < im->nmods; m++)
        if (strcmp(im->mods[m].file->path, im->exe_path) == 0)
            return mqdh__file_elf(im->mods[m].file) && gelf_getehdr(im->mods[m].file->elf, &eh)
                       ? (unsigned)eh.e_machine << 8 | eh.e_ident[EI_CLASS]
                       : 0;
    return 0;
}

/* One run of mappings of one file in the maps. */
struct run {
    const char *path;
    unsigned long long dev, ino;
    uint64_t low, high, first_end; /* first_end: its first mapping's end */
    int from_zero;                  /* its first mapping is of the file's offset 0 */
    struct mqdh__file *f;
};

/* One mapped object of the process: a module of its libdwfl at [low,
 * high), its file shared (described from memory or opened before).  0,
 * or -ENOMEM. */
static int report(struct mqdh__image *im, const struct run *r)
{
    struct mqdh__file *f = r->f;
    if (!f->bytes && !f->described)
        mqdh__file_elf(f); /* not described from memory: from its file */
    if (!f->usable)
        return 0; /* not ELF (MPICH's shared memory segment, say) */
    Dwfl_Module *mod = dwfl_report_module(im->dwfl, r->path, r->low, r->high);
    void **ud;
    if (!mod || !dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
        return 0; /* libdwfl refuses it (overlapping another): as if unmapped */
    *ud = f;
    if (add_module(im, mod, f) != 0)
        return -ENOMEM;
    im->mods[im->nmods - 1].bias = r->low - f->vaddr; /* libdwfl's main_bias */
    return 0;
}

/* The file of run r (the vDSO's read from the process), or NULL without
 * memory. */
static struct mqdh__file *file_of(struct mqdh__image *im, const struct run *r)
{
    if (strcmp(r->path, "[vdso]") != 0)
        return mqdh__files_get(im->files, r->path, r->dev, r->ino, im->pid, r->low, r->high);
    unsigned abi = exe_abi(im);
    struct mqdh__file *f = abi ? mqdh__files_vdso(im->files, abi, r->high - r->low) : NULL;
    if (!f && (f = mqdh__files_get(im->files, r->path, 0, 0, im->pid, r->low, r->high)) && abi)
        f->vdso_abi = abi;
    return f;
}

/*
 * The runs' files, those not described yet described from the process's
 * memory at once (dynmem.h), and each reported.
 */
static int report_runs(struct mqdh__image *im, struct run *runs, int n)
{
    struct mqdh__dynmem_req *reqs = calloc((size_t)n + 1, sizeof *reqs);
    int nreq = 0, rc = 0;
    if (!reqs)
        return -ENOMEM;
    for (int i = 0; i < n; i++) {
        if (strcmp(runs[i].path, "[vdso]") == 0)
            continue; /* after the executable is known (its ABI) */
        if (!(runs[i].f = file_of(im, &runs[i]))) {
            free(reqs);
            return -ENOMEM;
        }
        /* The executable is opened all the same (its ELF header says the
         * target's ABI; the DLL's look-ups start there). */
        if (runs[i].from_zero && !runs[i].f->described && !runs[i].f->opened &&
            strcmp(runs[i].path, im->exe_path) != 0)
            reqs[nreq++] = (struct mqdh__dynmem_req){runs[i].f, runs[i].low, runs[i].first_end};
    }
    mqdh__dynmem_describe(im->pid, reqs, nreq);
    free(reqs);
    for (int i = 0; rc == 0 && i < n; i++) {
        if (!runs[i].f && !(runs[i].f = file_of(im, &runs[i])))
            return -ENOMEM;
        rc = report(im, &runs[i]);
    }
    return rc;
}

/* Its maps' runs of one file into *runs (*n), with its regions; the
 * paths point into maps.  0, or -ENOMEM. */
static int maps_runs(struct mqdh__image *im, char *maps, size_t len, struct run **runs, int *n)
{
    int cap = 0, anon = 0;
    uint64_t last_file = 0;
    struct run *last = NULL;
    for (char *line = maps, *next; line < maps + len; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        else
            next = maps + len;
        struct mqdh__maps_entry e;
        if (mqdh__text_maps_line(line, &e) != 0)
            continue;
        if (e.perms[0] == 'r' &&
            MQDH__GROW(im->regions, im->regions_cap, im->nregions + 1) == 0) {
            struct mqdh__region *r = &im->regions[im->nregions++];
            r->start = e.start;
            r->end = e.end;
            mqdh__region_name(r, e.file, e.dev, e.ino, e.offset, &last_file, &anon);
        }
        int vdso = strcmp(e.file, "[vdso]") == 0;
        if (vdso ? im->exe_only
                 : e.file[0] != '/' || (e.ino == 0 && e.dev == 0) ||
                       (im->exe_only && strcmp(e.file, im->exe_path) != 0))
            continue; /* not a file, or not wanted */
        if (!vdso && last && e.ino == last->ino && e.dev == last->dev &&
            strcmp(e.file, last->path) == 0) {
            last->high = e.end; /* another segment of the same file */
            continue;
        }
        if (MQDH__GROW(*runs, cap, *n + 1) != 0)
            return -ENOMEM;
        last = &(*runs)[(*n)++];
        *last = (struct run){e.file, vdso ? 0 : e.dev, vdso ? 0 : e.ino, e.start, e.end,
                             e.end, e.offset == 0, NULL};
        if (vdso)
            last = NULL;
    }
    return 0;
}

/*
 * The process's objects, from its maps: each file's mappings (its segments,
 * maybe apart around anonymous ones) make one module from the lowest to the
 * highest address, as libdwfl's own reader makes them.
 */
static int read_maps(struct mqdh__image *im, char *err, size_t errlen)
{
    char path[64];
    size_t len;
    snprintf(path, sizeof path, "/proc/%d/maps", (int)im->pid);
    char *maps = mqdh__proc_alloc(path, &len, MQDH__PROC_MAPS);
    if (!maps) {
        int e = errno == ENOENT ? ESRCH : errno ? errno : ENOMEM;
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(e));
        return -e;
    }
    struct run *runs = NULL;
    int n = 0, rc = maps_runs(im, maps, len, &runs, &n);
    if (rc == 0)
        rc = report_runs(im, runs, n);
    free(runs);
    free(maps);
    if (rc)
        snprintf(err, errlen, "cannot describe process %d: %s", (int)im->pid, strerror(-rc));
    return rc;
}

static int open_pid(struct mqdh__image *im, pid_t pid, struct mqdh__files *files, int exe_only,
                    char *err, size_t errlen)
{
    char link[64];
    memset(im, 0, sizeof *im);
    im->pid = pid;
    im->exe_only = exe_only;
    snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(link, im->exe_path, sizeof im->exe_path - 1);
    if (n <= 0) {
        int e = errno == ENOENT ? ESRCH : errno;
        snprintf(err, errlen, "cannot read %s: %s", link, strerror(e));
        return -e;
    }
    im->exe_path[n] = '\0';
    if (!files && !(files = im->own_files = mqdh__files_new())) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    im->files = files;
    if (!(im->dwfl = dwfl_begin(&files->callbacks))) {
        snprintf(err, errlen, "libdwfl: %s", dwfl_errmsg(-1));
        mqdh__image_close(im);
        return -ENOMEM;
    }
    dwfl_report_begin(im->dwfl);
    int rc = read_maps(im, err, errlen);
    if (rc == 0 && dwfl_report_end(im->dwfl, NULL, NULL) != 0) {
        snprintf(err, errlen, "cannot describe process %d: %s", (int)pid, dwfl_errmsg(-1));
        rc = -EIO;
    }
    if (rc == 0)
        rc = finish(im, err, errlen);
    if (rc)
        mqdh__image_close(im);
    return rc;
}

int mqdh__image_open_pid(struct mqdh__image *im, pid_t pid, struct mqdh__files *files, char *err,
                        size_t errlen)
{
    return open_pid(im, pid, files, 0, err, errlen);
}

int mqdh__image_open_exe(struct mqdh__image *im, pid_t pid, struct mqdh__files *files, char *err,
                         size_t errlen)
{
    return open_pid(im, pid, files, 1, err, errlen);
}

int mqdh__image_open_file(struct mqdh__image *im, const char *path, char *err, size_t errlen)
{
    struct stat st;
    memset(im, 0, sizeof *im);
    if (!realpath(path, im->exe_path) || stat(im->exe_path, &st) != 0) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    if (!(im->files = im->own_files = mqdh__files_new())) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    struct mqdh__file *f = mqdh__files_get(im->files, im->exe_path, (unsigned long long)st.st_dev,
                                         (unsigned long long)st.st_ino, 0, 0, 0);
    Dwfl_Module *mod = f ? mqdh__file_module(f) : NULL;
    int rc = !f ? -ENOMEM : !mod ? -EINVAL : add_module(im, mod, f);
    if (rc == -EINVAL)
        snprintf(err, errlen, "%s: not a usable ELF file: %s", path,
                 f->usable ? dwfl_errmsg(-1) : "not an executable or shared object");
    else if (rc)
        snprintf(err, errlen, "out of memory");
    if (rc == 0)
        rc = finish(im, err, errlen);
    if (rc)
        mqdh__image_close(im);
    return rc;
}

void mqdh__image_close(struct mqdh__image *im)
{
    mqdh__types_free_all(im);
    if (im->dwfl)
        dwfl_end(im->dwfl);
    im->dwfl = NULL;
    free(im->mods);
    im->mods = NULL;
    im->nmods = im->cap = 0;
    free(im->regions);
    im->regions = NULL;
    im->nregions = im->regions_cap = 0;
    mqdh__files_free(im->own_files);
    im->own_files = im->files = NULL;
}

int mqdh__image_symbol(struct mqdh__image *im, const char *name, int functions_only,
                      uint64_t *addr, int *mod)
{
    /* A library's globals are its exports, a stripped one's read without
     * its debug file (and a name its .gnu.hash rules out without opening
     * it); a library's locals are read only if it is (part of) the MPI
     * library, whose state an MPI DLL reads: so a name the job does not
     * define (one a DLL tries) opens no other library, nor a debug file
     * of the C runtime's. */
    uint32_t h = mqdh__file_name_hash(name);
    for (int local = 0; local <= 1; local++) {
        for (int m = 0; m < im->nmods; m++) {
            struct mqdh__file *f = im->mods[m].file;
            uint64_t a;
            int found = m == 0 ? mqdh__file_symbol_h(f, name, h, functions_only, local, &a) == 0
                        : !local ? mqdh__file_global_h(f, name, h, functions_only, &a) == 0
                                 : mqdh__file_exports_mpi(f) &&
                                       mqdh__file_symbol_h(f, name, h, functions_only, 1, &a) == 0;
            if (found) {
                *addr = a + im->mods[m].bias;
                if (mod)
                    *mod = m;
                return 0;
            }
        }
    }
    return -ENOENT;
}

const struct mqdh__image_module *mqdh__image_module_of(const struct mqdh__image *im,
                                                     Dwfl_Module *mod)
{
    for (int m = 0; mod && m < im->nmods; m++)
        if (im->mods[m].mod == mod)
            return &im->mods[m];
    return NULL;
}
