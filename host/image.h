/*
 * image.h - what the host knows of one process's address space: its ELF
 * objects, their symbols, and their DWARF types.
 *
 * Built on elfutils libdwfl: the objects come from /proc/PID/maps with their
 * load biases (or from one file, for offline use and tests), and separate
 * debug information is found by build-id and .gnu_debuglink in the standard
 * places.  The MQD interface calls an executable an "image", but symbol
 * addresses of shared libraries differ per process under ASLR, so the host
 * makes one mqdh_image per process.
 */
#ifndef MQDH_IMAGE_H
#define MQDH_IMAGE_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MQDH_MAX_MODULES 512
#define MQDH_PATH_MAX 4096

struct mqdh_type;      /* types.c */
struct mqdh_typeshare; /* types.c */

struct mqdh_image {
    pid_t pid; /* 0 when built from a file */
    Dwfl *dwfl;
    int nmods;
    Dwfl_Module *mods[MQDH_MAX_MODULES]; /* the executable first */
    char exe_path[MQDH_PATH_MAX];
    /* The target, from the executable's ELF header. */
    int elf_class;       /* ELFCLASS32 or ELFCLASS64 */
    int big_endian;      /* ELFDATA2MSB */
    struct mqdh_type *types; /* types handed out; freed with the image */
    struct mqdh_typeshare *share;     /* DWARF indexes, maybe shared (types.h) */
    struct mqdh_typeshare *own_share; /* the share, when the image made it */
    void *owner; /* the caller's, for callbacks that reach the image (may be NULL) */
    /* Where libdwfl looks for separate debug files: $MQD_DEBUGINFO_PATH,
     * else NULL for its default; its callbacks point at it. */
    char *debuginfo_path;
    Dwfl_Callbacks callbacks;
};

/* Describe process pid (normally stopped).  0, or -errno with err filled. */
int mqdh_image_open_pid(struct mqdh_image *im, pid_t pid, char *err, size_t errlen);

/* Describe one ELF file, unrelocated.  0, or -errno with err filled. */
int mqdh_image_open_file(struct mqdh_image *im, const char *path, char *err, size_t errlen);

void mqdh_image_close(struct mqdh_image *im);

/*
 * The address of a defined symbol.  Global and weak definitions are looked
 * for first, in every object, executable first (so an executable's
 * definition wins, as with the dynamic linker); then local ones (MPICH 4.0's
 * MPID_Recvq_posted_head_ptr is local), from .symtab where the object or its
 * debug file has one, else .dynsym.  functions_only restricts to STT_FUNC
 * (and STT_GNU_IFUNC).  module, if not NULL, gets the defining object's
 * name (borrowed from the image).  Returns 0 or -ENOENT.
 */
int mqdh_image_symbol(struct mqdh_image *im, const char *name, int functions_only,
                      uint64_t *addr, const char **module);

#endif
