/*
 * memory.h - read a stopped process's memory, one system call per page
 * read on demand, or one for many pages fetched in a batch.
 *
 * Reads go through process_vm_readv; if the kernel refuses that (EPERM or
 * ENOSYS, e.g. under some seccomp policies) they fall back to /proc/PID/mem
 * opened read-only.  Every page read is kept until mqdh__mem_flush(), which
 * the caller must call whenever the process may have run (on resume), so a
 * dump costs one system call per page it touches, however many fields it
 * reads.  A page that cannot be read whole is an error: nothing is ever
 * zero-filled.
 */
#ifndef MQDH__MEMORY_H
#define MQDH__MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MQDH__MEM_BUCKETS 256

struct mqdh__mem_page;

struct mqdh__mem {
    pid_t pid;
    int mem_fd;              /* /proc/PID/mem, opened on first need; -1 if not */
    int use_proc_mem;        /* process_vm_readv refused: use mem_fd */
    size_t page_size;
    size_t npages, max_pages; /* cache size and bound (0: unbounded) */
    struct mqdh__mem_page *buckets[MQDH__MEM_BUCKETS];
    /* Counters for --stats; reset only by mqdh__mem_init. */
    unsigned long syscalls;
    unsigned long bytes_read; /* from the target, not from the cache */
    /* The pages read on demand, in the order they were (what a batch
     * could have read at once: pages.h learns from it). */
    uint64_t *missed;
    size_t nmissed, missed_cap;
};

/* Prepare to read pid.  Cannot fail; nothing is opened yet. */
void mqdh__mem_init(struct mqdh__mem *m, pid_t pid);

/*
 * Read len bytes at addr into buf.  Returns 0, or a negative errno:
 * -EFAULT for an address range that is not (wholly) mapped, -ESRCH if the
 * process is gone, -ENOMEM if the cache cannot grow.  On error buf is
 * unspecified and must not be used.
 */
int mqdh__mem_read(struct mqdh__mem *m, uint64_t addr, void *buf, size_t len);

/*
 * Read the NUL-terminated string at addr into buf[len], never reading past
 * its terminator's page.  Returns 0, a negative errno as mqdh__mem_read, or
 * -ENAMETOOLONG when no terminator comes within len bytes.
 */
int mqdh__mem_read_string(struct mqdh__mem *m, uint64_t addr, char *buf, size_t len);

/*
 * Target data to host data: size bytes at in, an integer in the target's
 * byte order (big_endian or not), to the host's order at out (in and out
 * may be the same).  Sizes above 16 are copied unchanged: not an integer.
 */
void mqdh__target_to_host(int big_endian, const void *in, void *out, int size);

/* The unsigned integer of size (1..8) bytes at bytes, in the target's order. */
uint64_t mqdh__target_word(const void *bytes, int size, int big_endian);

/*
 * Read the size-byte (1..8) unsigned integer at addr, in the target's byte
 * order, into *out.  0, or a negative errno as mqdh__mem_read.
 */
int mqdh__mem_read_word(struct mqdh__mem *m, uint64_t addr, int size, int big_endian,
                       uint64_t *out);

/*
 * Read the pages at pages[0..n-1] (page-aligned, ascending, each once)
 * that are not cached yet into the cache, in as few system calls as
 * process_vm_readv's vectors allow (up to 1024 pages a call).  A page that
 * cannot be read is left out, as if never asked for: a read of it later
 * says why.  Returns how many pages were read.
 */
size_t mqdh__mem_fetch_pages(struct mqdh__mem *m, const uint64_t *pages, size_t n);

/* Is the page at page (page-aligned) cached? */
int mqdh__mem_cached(const struct mqdh__mem *m, uint64_t page);

/* Forget every cached page (the process may have changed its memory). */
void mqdh__mem_flush(struct mqdh__mem *m);

/* Forget the cached pages with any byte in [start, end) (what is not
 * needed again: their memory goes back to the heap, for the next
 * process's pages).  A later read of them reads them again. */
void mqdh__mem_forget(struct mqdh__mem *m, uint64_t start, uint64_t end);

/* Flush and close.  m may be reused after mqdh__mem_init. */
void mqdh__mem_fini(struct mqdh__mem *m);

#endif
