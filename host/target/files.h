/*
 * files.h - the ELF objects a session's processes map, each read once.
 *
 * Every rank of a job maps the same executable and the same libraries.  A
 * file is recognised by the device and inode /proc/PID/maps gives for it
 * (no system call), described once from the memory of the first process
 * that maps it (dynmem.h), opened at most once per session, when its
 * symbols, DWARF or CFI are first needed (mqdh__file_elf), and then read
 * once: its symbols hashed by name, and its DWARF (types, lines,
 * functions, frames) through one offline libdwfl module at the file's own
 * addresses.  A
 * process's image (image.h) maps each file at its own load bias: it turns
 * the file's addresses into its own by adding the bias, and its own into
 * the file's by subtracting it.  The file's libelf descriptor is lent to
 * every process's libdwfl module, so unwinding reads the same mapped
 * .eh_frame for every rank.
 *
 * Not thread-safe: libdw and libelf are not (elfutils 0.188), so a session
 * calls into its files from one thread at a time (protocol/objects.h).
 */
#ifndef MQDH__FILES_H
#define MQDH__FILES_H

#include "target/pages.h"

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct fsym;
struct fmemo;

/* Symbols by name, built on first look-up (filesyms.c). */
struct mqdh__file_syms {
    struct fsym *syms;
    uint32_t nsyms, *heads;
    size_t nheads;
    int built;
    /* Its functions by address, sorted on first need: indexes into syms
     * by value, and reach[k] the highest end among the first k + 1. */
    uint32_t *byaddr, nfuncs;
    uint64_t *reach;
    int sorted;
    /* Every symbol libdwfl names addresses by, sorted by value on first
     * need (mqdh__file_addrname), and ends[k] the highest end of a sized
     * one among the first k + 1. */
    uint32_t *byvalue, nvalues;
    uint64_t *ends;
    int values_sorted;
};

struct mqdh__file {
    struct mqdh__file *next;
    struct mqdh__file *same_slot; /* the next of its inode's slot (files.c) */
    unsigned order_gen;           /* its place in the files' order (image.c) */
    int order_at;
    unsigned long long dev, ino; /* as the maps give them; a vDSO: 0, 0 */
    char *path;                  /* as the maps give it ("[vdso]") */
    int usable;                  /* an ELF object mqd could open */
    /* What a process's memory told of it (dynmem.h), before it is opened,
     * if ever: its load extent (described), DT_SONAME and DT_NEEDED
     * (dynamic_read), its .gnu.hash (mem_hash, mem_hash_len bytes: a
     * 64-bit object's, dynmem.h reads no other) and its imports (worlds).
     * Opened
     * (opened: tried) only when its symbols, DWARF, CFI or ELF header are
     * needed: mqdh__file_elf. */
    int described, opened;
    unsigned char *mem_hash;
    size_t mem_hash_len;
    Elf *elf;                    /* lent to every process's module */
    int fd;                      /* elf's file, -1 for a vDSO */
    void *map;                   /* the file mapped (elf's memory), map_len bytes */
    size_t map_len;
    void *bytes;                 /* a vDSO's copy (elf's memory) */
    size_t nbytes;
    unsigned vdso_abi;           /* a vDSO: its processes' (mqdh__files_vdso) */
    uint64_t vaddr; /* its first PT_LOAD's page address, as libdwfl takes it */
    uint64_t span;  /* from vaddr to the end of its last PT_LOAD */
    struct mqdh__files *owner;
    /* The file alone in a libdwfl of its own, at its own addresses (bias
     * 0): symbols, DWARF, CFI and lines.  Made on first need. */
    Dwfl *dwfl;
    Dwfl_Module *mod;
    int offline_tried;
    /* Its symbols: all of them (.symtab, its own or its debug file's,
     * else .dynsym), and the ones it exports (its own .dynsym). */
    struct mqdh__file_syms all, exported;
    int own_symtab;  /* the file itself has a .symtab */
    Elf_Data *gnu_hash; /* its .gnu.hash, mqdh__gnuhash_may_define's cache */
    int exports_mpi; /* 0 not looked, else mqdh__file_exports_mpi's answer + 2 */
    int worlds; /* mqdh__file_reaches_worlds: 0 not looked, else its answer + 2 */
    int prefetched; /* its debug file looked for before the ranks stopped */
    /* Per address, what the address's users keep of it (mqdh__file_memo). */
    struct fmemo *memo;
    size_t memo_cap, memo_used;
    /* Its dynamic section's DT_SONAME and DT_NEEDED (mqdh__file_dynamic). */
    char *soname;
    char **needed;
    int nneeded, needed_cap, dynamic_read;
    const char *needed_as; /* mqdh__file_needed_as, made once (NULL: not yet) */
    uint32_t needed_as_hash;
    void *types;                    /* types.c's index of its DWARF */
    void (*free_types)(void *types); /* how to free it */
    void *fns;                      /* pc.c's functions of its units by address */
    void (*free_fns)(void *fns);    /* how to free them */
};

/* The extent of an object's load segments, as libdwfl takes it: the
 * first PT_LOAD's page address (vaddr), and the end of the highest. */
struct mqdh__extent {
    int loads;
    uint64_t vaddr, end;
};

/* Program header ph added to x (only a PT_LOAD counts). */
void mqdh__extent_add(struct mqdh__extent *x, const GElf_Phdr *ph);

/* Every file a session's processes map. */
struct mqdh__files {
    struct mqdh__file *list;
    /* Where separate debug files are looked for (debugfile.h,
     * mqdh__debug_dirs): $MQD_DEBUGINFO_PATH in elfutils' format (as
     * eu-stack --debuginfo-path), else the file's directory, its .debug,
     * /usr/lib/debug, by build id and debuglink.  The callbacks point at
     * it; owned.  Made on first need (mqdh__debug_path): checking
     * the directories costs a walk of each, which a file whose symbols
     * are its own never needs. */
    char *debuginfo_path;
    /* The debug link's search resolves a file's directory (realpath,
     * a readlink per component): the last few directories and what they
     * resolved to, as a job's files share a few (debugfile.c). */
    struct mqdh__real_dir {
        char *dir, *real;
        /* Per entry of the debug directories (the first 32): is the
         * directory the link's candidate would be in known (known), and
         * not there (missing)?  Then no candidate in it is asked for. */
        uint32_t known, missing;
    } real_dirs[8];
    unsigned real_dirs_next;
    /* For every libdwfl: a process's and a file's own. */
    Dwfl_Callbacks callbacks;
    unsigned long opened;             /* files opened (for --stats) */
    /* debuginfod (debugfile.c): the client, made on first need; a fetch
     * had no answer in its time, so the servers are taken as silent and
     * later fetches are cancelled; the seconds fetches took before the
     * ranks were stopped [0] and since [1]. */
    debuginfod_client *dclient;
    int debuginfod_silent, ranks_stopped;
    double fetch_spent[2];
    /* The pages its processes read, learnt from one (pages.h). */
    struct mqdh__pages pages;
    /* Its files but vDSOs by device and inode (mqdh__files_get): a rank
     * of Open MPI maps some 80, each looked up once a rank. */
    struct mqdh__file *slots[128];
    /* The last image's search order (image.c): its executable and its n
     * files, each file's place in it marked with gen (struct mqdh__file);
     * a rank of the same program and libraries is put in the same order. */
    struct mqdh__order {
        char *exe;
        int n;
        unsigned gen;
    } order;
};

/* A new, empty set, or NULL without memory. */
struct mqdh__files *mqdh__files_new(void);

/*
 * Before the processes pids[0..n-1] are stopped, with DEBUGINFOD_URLS set:
 * every file they map opened (as their images will find them), and the
 * debug file of each that has no DWARF of its own fetched into
 * debuginfod's cache (debugfile.h), so that fetches cost the job nothing.
 */
void mqdh__files_prefetch(struct mqdh__files *fs, const pid_t *pids, int n);

/* Close every file (after every image that used them). */
void mqdh__files_free(struct mqdh__files *fs);

/*
 * fs, kept from an earlier session (mqdh_options.cache), ready for another:
 * its files and what they hold kept, and whether debuginfod's servers fell
 * silent; the ranks taken as running again and the fetches' time budgets
 * as a new set has them (debugfile.h).
 */
void mqdh__files_again(struct mqdh__files *fs);

/*
 * The file mapped from path with (dev, ino); pid is a process that maps
 * it (a vDSO, path "[vdso]", is read from pid's memory at [start, end),
 * and described).  A file is not opened here: it is described from a
 * process's memory (dynmem.h), else opened (mqdh__file_elf).  NULL only
 * without memory.
 */
struct mqdh__file *mqdh__files_get(struct mqdh__files *fs, const char *path, unsigned long long dev,
                                 unsigned long long ino, pid_t pid, uint64_t start, uint64_t end);

/*
 * The vDSO of nbytes already read from a process whose executable is of
 * abi (its ELF machine and class, mqdh__image's), or NULL.  The kernel
 * maps one vDSO image into every process of an ABI, so another process's
 * is the same bytes: not read again.  The caller sets vdso_abi on the
 * vDSO it read.
 */
struct mqdh__file *mqdh__files_vdso(struct mqdh__files *fs, unsigned abi, size_t nbytes);

/*
 * The file's libelf descriptor, the file opened and described on first
 * need (mapped, its load extent and whether it has a .symtab of its own);
 * NULL if it cannot be opened or is no ELF object (usable 0 then).  A
 * file whose extent differs from what a process's memory said of it is
 * not the one mapped (replaced since): not usable.
 */
Elf *mqdh__file_elf(struct mqdh__file *f);

/*
 * The file's own libdwfl module (bias 0), for its DWARF, CFI and lines;
 * NULL if libdwfl cannot describe it.
 */
Dwfl_Module *mqdh__file_module(struct mqdh__file *f);

/*
 * The file address of a defined symbol called name (its hash, FNV-1a, in
 * hash: mqdh__file_name_hash, so that a name looked for in each of a
 * process's files is hashed once): global and weak ones (want_local 0) or
 * local ones (1), from .symtab where the file or its debug file has one,
 * else .dynsym; never a section, file or TLS symbol; functions_only:
 * STT_FUNC and STT_GNU_IFUNC only.  The first in the table's order wins.
 * 0, or -ENOENT.
 */
uint32_t mqdh__file_name_hash(const char *name);
int mqdh__file_symbol_h(struct mqdh__file *f, const char *name, uint32_t hash,
                        int functions_only, int want_local, uint64_t *addr);

/*
 * The same for a global or weak symbol of a shared object, without its
 * debug file: a linked shared object's global definitions are the ones it
 * exports (the link makes hidden ones local), so its own .dynsym has them
 * all; from .symtab if the file has one itself.  A name its .gnu.hash
 * has no entry for is not looked for in its symbols (gnuhash.h).
 * mqdh__file_global hashes name itself.
 */
int mqdh__file_global_h(struct mqdh__file *f, const char *name, uint32_t hash,
                        int functions_only, uint64_t *addr);
int mqdh__file_global(struct mqdh__file *f, const char *name, int functions_only, uint64_t *addr);

/* Does the file export MPI's functions (PMPI_Init): is it the MPI library,
 * or a part of it?  1 or 0. */
int mqdh__file_exports_mpi(struct mqdh__file *f);

/*
 * The name of the function file address addr is in: from the file's own
 * .symtab, or for a file without one from the functions it exports
 * (.dynsym, the global symbols its debug file would have, which is not
 * read).  The one starting nearest below whose range holds addr, as
 * libdwfl's dwfl_module_addrname chooses, but for a weak alias, which
 * comes before the global it aliases (MPI_Send before PMPI_Send); found
 * by a binary search where libdwfl reads the whole table for every
 * address.  NULL if no such function holds addr (the caller asks libdwfl,
 * which reads the debug file and knows labels without a size).
 */
const char *mqdh__file_function_at(struct mqdh__file *f, uint64_t addr);

/*
 * What libdwfl's dwfl_module_addrname answers for file address addr of f,
 * from the same table (every symbol libdwfl has of f: its debug file's,
 * its minidebuginfo's) by a binary search, where libdwfl reads the whole
 * table for each address: 1 with *name (NULL if it names nothing), or 0
 * when only libdwfl can tell (an assembly label without a size may be
 * what it takes; no table).  The C library's 10,000 symbols of its debug
 * file cost 2 M instructions an address, once for every thread of every
 * rank stopped somewhere of its own in it.
 */
int mqdh__file_addrname(struct mqdh__file *f, uint64_t addr, const char **name);

/*
 * The slot where the file's users keep what they learnt of file address
 * addr (NULL the first time); the file frees it with free() when it is
 * closed.  NULL without memory.
 */
void **mqdh__file_memo(struct mqdh__file *f, uint64_t addr);

/*
 * Does f call what reaches processes outside its own MPI_COMM_WORLD:
 * MPI_Comm_spawn(_multiple), MPI_Comm_connect, MPI_Comm_accept,
 * MPI_Comm_join, MPI_Comm_get_parent, in any binding (MPI_, PMPI_,
 * Fortran's mpi_..._)?  Read from the symbols it imports, once: 1 yes, 0
 * no, -1 its symbols cannot be read.
 */
int mqdh__file_reaches_worlds(struct mqdh__file *f);

/* Is name (an imported symbol's) one of the calls that reach other worlds
 * (mqdh__file_reaches_worlds), in any binding? */
int mqdh__name_reaches_worlds(const char *name);

/*
 * f's DT_SONAME (*soname, NULL if none) and DT_NEEDED entries (*needed,
 * *n), read from its section headers once; what cannot be read (no
 * memory, no dynamic section) is left out.
 */
void mqdh__file_dynamic(struct mqdh__file *f, const char **soname, char *const **needed, int *n);

/* The name f answers to as a DT_NEEDED entry: its DT_SONAME, else its
 * path's base name, as the dynamic loader matches; with its hash
 * (mqdh__file_name_hash) into *hash.  Made once per file. */
const char *mqdh__file_needed_as(struct mqdh__file *f, uint32_t *hash);

#endif
