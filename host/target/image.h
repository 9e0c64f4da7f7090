/*
 * image.h - what the host knows of one process's address space: its ELF
 * objects, their symbols, and their DWARF types.
 *
 * The objects come from /proc/PID/maps with their load biases (or from one
 * file, for offline use and tests); what each object says is read once per
 * session, from the first process's memory that maps it (dynmem.h) and in
 * its file when needed (files.h), however many processes map it.  The MQD
 * interface calls an executable an "image", but the addresses of shared
 * libraries differ per process under ASLR, so the host makes one
 * mqdh__image per process: the list of its files and their biases, and a
 * libdwfl of its own to unwind it with.
 */
#ifndef MQDH__IMAGE_H
#define MQDH__IMAGE_H

#include "target/files.h"
#include "target/pages.h"

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MQDH__PATH_MAX 4096

struct mqdh__type;   /* types.c */
struct mqdh__attach; /* attach.h */
struct mqdh__mem;    /* memory.h */

/* One object of the image: a file (files.h) at the process's load bias. */
struct mqdh__image_module {
    Dwfl_Module *mod; /* the process's libdwfl module (the file's own for a file image) */
    struct mqdh__file *file;
    uint64_t bias; /* process address = file address + bias */
};

struct mqdh__image {
    pid_t pid; /* 0 when built from a file */
    /* The process's libdwfl, its modules at its own addresses, for
     * unwinding; NULL for a file. */
    Dwfl *dwfl;
    int nmods, cap;
    struct mqdh__image_module *mods; /* the executable first, then by address */
    char exe_path[MQDH__PATH_MAX];
    /* The target, from the executable's ELF header. */
    int elf_class;           /* ELFCLASS32 or ELFCLASS64 */
    int big_endian;          /* ELFDATA2MSB */
    struct mqdh__type *types; /* types handed out; freed with the image */
    struct mqdh__files *files;     /* the files, maybe shared (files.h) */
    struct mqdh__files *own_files; /* the files, when the image made them */
    void *owner; /* the caller's, for callbacks that reach the image (may be NULL) */
    /* The process's threads, stopped by this thread (attach.h), and its
     * memory: what libdwfl unwinds it through (unwind.h).  NULL: libdwfl
     * reads /proc itself. */
    const struct mqdh__attach *att;
    struct mqdh__mem *mem;
    /* Its readable mappings, named as pages.h names them. */
    struct mqdh__region *regions;
    int nregions, regions_cap;
    int exe_only; /* only the executable described (mqdh__image_open_exe) */
    int flavour;  /* its MPI as callsite.c knows it: 0 not yet looked, else that + 1 */
};

/*
 * Describe process pid (normally stopped) from its /proc/PID/maps, with
 * the files of files (NULL: the image's own).  0, or -errno with err
 * filled.
 */
int mqdh__image_open_pid(struct mqdh__image *im, pid_t pid, struct mqdh__files *files, char *err,
                        size_t errlen);

/*
 * The same, but of its objects the executable alone: a symbol a program
 * defines itself (a launcher's MPIR_proctable) found without opening its
 * libraries.  0, or -errno with err filled.
 */
int mqdh__image_open_exe(struct mqdh__image *im, pid_t pid, struct mqdh__files *files, char *err,
                         size_t errlen);

/* Describe one ELF file, unrelocated.  0, or -errno with err filled. */
int mqdh__image_open_file(struct mqdh__image *im, const char *path, char *err, size_t errlen);

void mqdh__image_close(struct mqdh__image *im);

/*
 * The address of a defined symbol.  Global and weak definitions are looked
 * for first, in every object, executable first (so an executable's
 * definition wins, as with the dynamic linker): the executable's from
 * .symtab where it or its debug file has one, else .dynsym, a library's
 * from its own .symtab or .dynsym (the ones it exports: mqdh__file_global);
 * then local ones (MPICH 4.0's MPID_Recvq_posted_head_ptr is local), from
 * .symtab where the object or its debug file has one, else .dynsym, of
 * the executable and of the libraries that export MPI's functions only:
 * an MPI DLL reads no other's state, and a name no object defines then
 * opens no other library (image.h's objects are opened on first need,
 * dynmem.h).
 * functions_only restricts to STT_FUNC (and STT_GNU_IFUNC).  mod, if not
 * NULL, gets the defining object's index in im->mods.  Returns 0 or
 * -ENOENT.
 */
int mqdh__image_symbol(struct mqdh__image *im, const char *name, int functions_only,
                      uint64_t *addr, int *mod);

/* The image's object that mod (one of the image's libdwfl modules) is, or
 * NULL. */
const struct mqdh__image_module *mqdh__image_module_of(const struct mqdh__image *im,
                                                     Dwfl_Module *mod);

#endif
