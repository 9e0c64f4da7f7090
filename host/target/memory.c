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

static const unsigned char *get_page(struct mqdh__mem *m, uint64_t page, int *err)
{
    unsigned b = bucket_of(m, page);
    for (struct mqdh__mem_page *p = m->buckets[b]; p; p = p->next)
        if (p->addr == page)
            return p->data;
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
    p->next = m->buckets[b];
    m->buckets[b] = p;
    m->npages++;
    return p->data;
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

void mqdh__mem_fini(struct mqdh__mem *m)
{
    mqdh__mem_flush(m);
    if (m->mem_fd >= 0)
        close(m->mem_fd);
    m->mem_fd = -1;
}
