/*
 * pages.h - the pages a program's processes read, learnt from one of them
 * and fetched for each of the others in one batch.
 *
 * Every rank of a job runs the same program the same way: the DLL reads
 * the same structures of the MPI library's data, the heap holds them at
 * the same offsets, the unwinder reads the same stretch below the top of
 * the stack.  What one process read page by page (memory.h's missed
 * pages) is named by where it lies - a segment of a mapped file by its
 * device, inode and offset; the heap, the stack (from its top), an
 * anonymous mapping (by the file mapped before it and its place after
 * it) by the program that maps them - and each other process's cache is
 * filled with the same places of its own address space at once
 * (mqdh__mem_fetch_pages: one process_vm_readv), before its first read.
 * Only a hint: a page fetched and not needed costs a copy; one needed
 * and not fetched is read on demand; the data are read from the stopped
 * process either way, and a page that cannot be read is not fetched.
 */
#ifndef MQDH__PAGES_H
#define MQDH__PAGES_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct mqdh__image;
struct mqdh__mem;

/* A readable mapping of a process, named so that another process of the
 * same program names its own the same (pages.c). */
struct mqdh__region {
    uint64_t start, end;
    uint64_t key;
    int from_end;   /* a stack: its pages are named from its top */
    int of_program; /* not a file's: its name holds the program's */
};

/* The pages learnt, by name: one set per session (files.h). */
struct mqdh__pages {
    pthread_mutex_t lock;
    struct mqdh__learnt *v;
    int n, cap;
};

/*
 * The mapping of a maps line named (pages.c says how) into *r, from its
 * path (maps' last field, "" for none), device, inode and file offset,
 * the name of the last file mapped before it (*last_file, 0: none) and
 * how many anonymous mappings came between (*anon): both kept up here.
 */
void mqdh__region_name(struct mqdh__region *r, const char *path, unsigned long long dev,
                       unsigned long long ino, uint64_t offset, uint64_t *last_file, int *anon);

/* The reads a page is learnt for, and fetched before: a process's first
 * (its unwinding and the DLL's set-up) and the DLL's read of its queues.
 * The cache is flushed between them (workers.c), so each batch brings
 * only what its own reads need. */
enum { MQDH__PAGES_FIRST = 1, MQDH__PAGES_READ = 2 };

/* What process im (its regions) read on demand through m, from its
 * from-th missed page on, learnt for phase (MQDH__PAGES_*). */
void mqdh__pages_learn(struct mqdh__pages *pg, const struct mqdh__image *im,
                       const struct mqdh__mem *m, size_t from, unsigned phase);

/* Every page learnt for phase, at im's own places, fetched into m's
 * cache in one batch (those already there are not).  How many were read. */
size_t mqdh__pages_fetch(struct mqdh__pages *pg, const struct mqdh__image *im,
                         struct mqdh__mem *m, unsigned phase);

void mqdh__pages_free(struct mqdh__pages *pg);

#endif
