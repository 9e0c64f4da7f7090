/* memory.c - target memory through process_vm_readv, with a page cache. */
#define _GNU_SOURCE
#include "target/memory.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

enum { BATCH = 1024 }; /* IOV_MAX: vectors per process_vm_readv */

struct mqdh__mem_page {
    struct mqdh__mem_page *next;
    uint64_t addr; /* page-aligned */
    unsigned char data[];
};

void mqdh__mem_init(struct mqdh__mem *m, pid_t pid)
{
    memset(m, 0, sizeof *m);
    m->pid = pid;
    m->mem_fd = -1;
    long ps = sysconf(_SC_PAGESIZE);
    m->page_size = ps > 0 ? (size_t)ps : 4096;
    m->max_pages = 65536; /* 256 MiB of 4 KiB pages: far beyond any queue walk */
}

static unsigned bucket_of(const struct mqdh__mem *m, uint64_t page)
{
    uint64_t n = page / m->page_size;
    return (unsigned)((n * 0x9E3779B97F4A7C15ull) >> 56) % MQDH__MEM_BUCKETS;
}

static int fetch_page(struct mqdh__mem *m, uint64_t page, unsigned char *out)
{
    ssize_t n;
    m->syscalls++;
    if (!m->use_proc_mem) {
        struct iovec local = {out, m->page_size};
        struct iovec remote = {(void *)(uintptr_t)page, m->page_size};
        n = process_vm_readv(m->pid, &local, 1, &remote, 1, 0);
        if (n == (ssize_t)m->page_size) {
            m->bytes_read += (unsigned long)n;
            return 0;
        }
        if (n >= 0)
            return -EFAULT; /* the page is only partly mapped: impossible, but short */
        if (errno == ESRCH || errno == EFAULT || errno == ENOMEM)
            return errno == ENOMEM ? -EFAULT : -errno;
        /* EPERM, ENOSYS: fall back to /proc/PID/mem. */
        m->use_proc_mem = 1;
        m->syscalls++;
    }
    if (m->mem_fd < 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/mem", (int)m->pid);
        m->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
        if (m->mem_fd < 0)
            return errno == ENOENT ? -ESRCH : -errno;
    }
    n = pread(m->mem_fd, out, m->page_size, (off_t)page);
    if (n == (ssize_t)m->page_size) {
        m->bytes_read += (unsigned long)n;
        return 0;
    }
    if (n >= 0 || errno == EIO)
        return -EFAULT;
    return -errno;
}

static struct mqdh__mem_page *find(const struct mqdh__mem *m, uint64_t page)
{
    for (struct mqdh__mem_page *p = m->buckets[bucket_of(m, page)]; p; p = p->next)
        if (p->addr == page)
            return p;
    return NULL;
}

int mqdh__mem_cached(const struct mqdh__mem *m, uint64_t page)
{
    return find(m, page) != NULL;
}

static void insert(struct mqdh__mem *m, struct mqdh__mem_page *p)
{
    unsigned b = bucket_of(m, p->addr);
    p->next = m->buckets[b];
    m->buckets[b] = p;
    m->npages++;
}

static void note_missed(struct mqdh__mem *m, uint64_t page)
{
    if (m->nmissed == m->missed_cap) {
        size_t cap = m->missed_cap ? m->missed_cap * 2 : 32;
        uint64_t *more = realloc(m->missed, cap * sizeof *more);
        if (!more)
            return; /* only a hint */
        m->missed = more;
        m->missed_cap = cap;
    }
    m->missed[m->nmissed++] = page;
}

static const unsigned char *get_page(struct mqdh__mem *m, uint64_t page, int *err)
{
    struct mqdh__mem_page *hit = find(m, page);
    if (hit)
        return hit->data;
    if (m->max_pages && m->npages >= m->max_pages)
        mqdh__mem_flush(m);
    struct mqdh__mem_page *p = malloc(sizeof *p + m->page_size);
    if (!p) {
        *err = -ENOMEM;
        return NULL;
    }
    *err = fetch_page(m, page, p->data);
    if (*err) {
        free(p);
        return NULL;
    }
    p->addr = page;
    insert(m, p);
    note_missed(m, page);
    return p->data;
}

/* One process_vm_readv of the pages v[0..n-1] (ascending, n <= IOV_MAX):
 * the remote side in runs of adjacent pages.  How many pages, from the
 * first, were read whole (the kernel stops at the first it cannot read);
 * -1 if none could be and the process is gone. */
static ssize_t read_batch(struct mqdh__mem *m, struct mqdh__mem_page **v, size_t n)
{
    struct iovec local[BATCH], remote[BATCH];
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        local[i] = (struct iovec){v[i]->data, m->page_size};
        if (nr && (uint64_t)(uintptr_t)remote[nr - 1].iov_base + remote[nr - 1].iov_len ==
                      v[i]->addr)
            remote[nr - 1].iov_len += m->page_size;
        else
            remote[nr++] = (struct iovec){(void *)(uintptr_t)v[i]->addr, m->page_size};
    }
    m->syscalls++;
    ssize_t got = process_vm_readv(m->pid, local, (unsigned long)n, remote, (unsigned long)nr, 0);
    if (got < 0)
        return errno == ESRCH ? -1 : 0;
    m->bytes_read += (unsigned long)got;
    return got / (ssize_t)m->page_size;
}

size_t mqdh__mem_fetch_pages(struct mqdh__mem *m, const uint64_t *pages, size_t n)
{
    struct mqdh__mem_page *v[BATCH];
    size_t done = 0, i = 0;
    if (m->use_proc_mem)
        return 0; /* read on demand: pread has no vectors across the address space */
    while (i < n) {
        size_t k = 0;
        for (; i < n && k < BATCH; i++) {
            if (find(m, pages[i]) || (m->max_pages && m->npages + k >= m->max_pages))
                continue;
            if (!(v[k] = malloc(sizeof *v[k] + m->page_size)))
                break;
            v[k++]->addr = pages[i];
        }
        size_t from = 0;
        while (from < k) { /* past a page that cannot be read, on with the rest */
            ssize_t got = read_batch(m, v + from, k - from);
            if (got < 0)
                break;
            for (ssize_t j = 0; j < got; j++)
                insert(m, v[from + (size_t)j]);
            done += (size_t)got;
            from += (size_t)got;
            if (from < k)
                free(v[from++]);
        }
        for (; from < k; from++)
            free(v[from]);
        if (k == 0 || from < k)
            break;
    }
    return done;
}

int mqdh__mem_read(struct mqdh__mem *m, uint64_t addr, void *buf, size_t len)
{
    unsigned char *dst = buf;
    if (len == 0)
        return 0;
    if (addr + len < addr)
        return -EFAULT; /* wraps around the address space */
    while (len) {
        uint64_t page = addr & ~(uint64_t)(m->page_size - 1);
        size_t off = (size_t)(addr - page);
        size_t chunk = m->page_size - off;
        if (chunk > len)
            chunk = len;
        int err;
        const unsigned char *data = get_page(m, page, &err);
        if (!data)
            return err;
        memcpy(dst, data + off, chunk);
        dst += chunk;
        addr += chunk;
        len -= chunk;
    }
    return 0;
}

int mqdh__mem_read_string(struct mqdh__mem *m, uint64_t addr, char *buf, size_t len)
{
    size_t got = 0;
    /* A chunk at a time, no chunk crossing a page boundary: a string that
     * ends just before an unmapped page is still read. */
    while (got < len) {
        size_t chunk = 64, to_boundary = 4096 - (size_t)((addr + got) % 4096);
        if (chunk > to_boundary)
            chunk = to_boundary;
        if (chunk > len - got)
            chunk = len - got;
        int rc = mqdh__mem_read(m, addr + got, buf + got, chunk);
        if (rc != 0)
            return rc;
        if (memchr(buf + got, '\0', chunk))
            return 0;
        got += chunk;
    }
    if (len)
        buf[len - 1] = '\0';
    return -ENAMETOOLONG;
}

void mqdh__target_to_host(int big_endian, const void *in, void *out, int size)
{
    static const union {
        uint16_t v;
        unsigned char b[2];
    } probe = {1};
    int host_big = probe.b[0] == 0;
    if (size <= 0)
        return;
    if (host_big == !!big_endian || size > 16) {
        memmove(out, in, (size_t)size);
        return;
    }
    const unsigned char *s = in;
    unsigned char tmp[16];
    for (int i = 0; i < size; i++)
        tmp[i] = s[size - 1 - i];
    memcpy(out, tmp, (size_t)size);
}

uint64_t mqdh__target_word(const void *bytes, int size, int big_endian)
{
    const unsigned char *b = bytes;
    uint64_t v = 0;
    if (size < 1 || size > 8)
        return 0;
    for (int i = 0; i < size; i++)
        v |= (uint64_t)b[big_endian ? size - 1 - i : i] << (8 * i);
    return v;
}

int mqdh__mem_read_word(struct mqdh__mem *m, uint64_t addr, int size, int big_endian,
                       uint64_t *out)
{
    unsigned char bytes[8];
    *out = 0;
    if (size < 1 || size > 8)
        return -EINVAL;
    int rc = mqdh__mem_read(m, addr, bytes, (size_t)size);
    if (rc == 0)
        *out = mqdh__target_word(bytes, size, big_endian);
    return rc;
}

void mqdh__mem_flush(struct mqdh__mem *m)
{
    for (unsigned b = 0; b < MQDH__MEM_BUCKETS; b++) {
        struct mqdh__mem_page *p = m->buckets[b];
        while (p) {
            struct mqdh__mem_page *next = p->next;
            free(p);
            p = next;
        }
        m->buckets[b] = NULL;
    }
    m->npages = 0;
}

void mqdh__mem_forget(struct mqdh__mem *m, uint64_t start, uint64_t end)
{
    for (unsigned b = 0; b < MQDH__MEM_BUCKETS; b++) {
        struct mqdh__mem_page **link = &m->buckets[b];
        while (*link) {
            struct mqdh__mem_page *p = *link;
            if (p->addr < end && p->addr + m->page_size > start) {
                *link = p->next;
                free(p);
                m->npages--;
            } else {
                link = &p->next;
            }
        }
    }
}

void mqdh__mem_fini(struct mqdh__mem *m)
{
    mqdh__mem_flush(m);
    free(m->missed);
    m->missed = NULL;
    m->nmissed = m->missed_cap = 0;
    if (m->mem_fd >= 0)
        close(m->mem_fd);
    m->mem_fd = -1;
}
