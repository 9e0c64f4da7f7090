/*
 * test_memory.c - host/target/memory.c against a real child process: contents,
 * page-crossing reads, one system call per page, the cache, and errors.
 */
#define _GNU_SOURCE
#include "host/target/memory.h"
#include "host/target/image.h"
#include "host/target/pages.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

struct child {
    pid_t pid;
    uint64_t addr;     /* a 3-page pattern in the child */
    uint64_t hole;     /* an address with nothing mapped */
    int release_fd;
};

static unsigned char pattern_byte(size_t i)
{
    return (unsigned char)(i * 7 + 3);
}

/* A child that maps a known 3-page pattern and a hole, then waits. */
static void start_child(struct child *c)
{
    int info[2], release[2];
    assert_int_equal(pipe(info), 0);
    assert_int_equal(pipe(release), 0);
    size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(info[0]);
        close(release[1]);
        unsigned char *p = mmap(NULL, 5 * ps, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            _exit(1);
        for (size_t i = 0; i < 3 * ps; i++)
            p[i] = pattern_byte(i);
        munmap(p + 4 * ps, ps); /* page 4: the hole */
        uint64_t a[2] = {(uint64_t)(uintptr_t)p, (uint64_t)(uintptr_t)(p + 4 * ps)};
        if (write(info[1], a, sizeof a) != sizeof a)
            _exit(1);
        char ch;
        while (read(release[0], &ch, 1) < 0 && errno == EINTR)
            ;
        _exit(0);
    }
    close(info[1]);
    close(release[0]);
    uint64_t a[2];
    assert_int_equal(read(info[0], a, sizeof a), (ssize_t)sizeof a);
    close(info[0]);
    c->pid = pid;
    c->addr = a[0];
    c->hole = a[1];
    c->release_fd = release[1];
}

static void stop_child(struct child *c)
{
    close(c->release_fd);
    waitpid(c->pid, NULL, 0);
}

/* A child started and m made to read it; a buffer for its 3 pages. */
static unsigned char *start_reading(struct child *c, struct mqdh__mem *m)
{
    start_child(c);
    mqdh__mem_init(m, c->pid);
    unsigned char *buf = malloc(3 * m->page_size);
    assert_non_null(buf);
    return buf;
}

/* start_reading's undone. */
static void stop_reading(struct child *c, struct mqdh__mem *m, unsigned char *buf)
{
    free(buf);
    mqdh__mem_fini(m);
    stop_child(c);
}

/* buf[0..len-1] is the child's pattern from byte off on. */
static void expect_pattern(const unsigned char *buf, size_t off, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != pattern_byte(off + i))
            fail_msg("byte %zu differs", off + i);
}

static void test_memory__reads_whole_and_across_pages(void **state)
{
    (void)state;
    struct child c;
    struct mqdh__mem m;
    unsigned char *buf = start_reading(&c, &m);
    size_t ps = m.page_size;

    /* A read spanning three pages, starting mid-page. */
    size_t off = ps / 2, len = 2 * ps;
    assert_int_equal(mqdh__mem_read(&m, c.addr + off, buf, len), 0);
    expect_pattern(buf, off, len);
    assert_int_equal(m.syscalls, 3);
    assert_int_equal(m.bytes_read, 3 * ps);

    /* Everything again, and small reads inside: all from the cache. */
    assert_int_equal(mqdh__mem_read(&m, c.addr, buf, 3 * ps), 0);
    for (int i = 0; i < 100; i++) {
        uint32_t v;
        assert_int_equal(mqdh__mem_read(&m, c.addr + (uint64_t)i * 8, &v, sizeof v), 0);
    }
    assert_int_equal(m.syscalls, 3);
    assert_int_equal(buf[ps + 5], pattern_byte(ps + 5));

    /* After a flush, the pages are read again. */
    mqdh__mem_flush(&m);
    assert_int_equal(mqdh__mem_read(&m, c.addr, buf, 1), 0);
    assert_int_equal(m.syscalls, 4);
    stop_reading(&c, &m, buf);
}

/* Forgetting a range drops its pages and only those: the rest stays
 * cached, the range is read again on the next read of it. */
static void test_memory__forget_a_range(void **state)
{
    (void)state;
    struct child c;
    struct mqdh__mem m;
    unsigned char *buf = start_reading(&c, &m);
    size_t ps = m.page_size;
    assert_int_equal(mqdh__mem_read(&m, c.addr, buf, 3 * ps), 0);
    assert_int_equal(m.syscalls, 3);
    assert_int_equal(m.npages, 3);

    /* A range from inside the second page to inside the third: both go,
     * the first (which ends where the range starts, less one) stays. */
    mqdh__mem_forget(&m, c.addr + ps + 1, c.addr + 2 * ps + ps / 2);
    assert_int_equal(m.npages, 1);
    assert_true(mqdh__mem_cached(&m, c.addr));
    assert_false(mqdh__mem_cached(&m, c.addr + ps));
    assert_false(mqdh__mem_cached(&m, c.addr + 2 * ps));

    /* The first page still costs nothing; the others are read again. */
    assert_int_equal(mqdh__mem_read(&m, c.addr, buf, 16), 0);
    assert_int_equal(m.syscalls, 3);
    assert_int_equal(mqdh__mem_read(&m, c.addr, buf, 3 * ps), 0);
    expect_pattern(buf, 0, 3 * ps);
    assert_int_equal(m.syscalls, 5);
    assert_int_equal(m.npages, 3);

    /* A range with nothing cached in it changes nothing. */
    mqdh__mem_forget(&m, c.hole, c.hole + ps);
    assert_int_equal(m.npages, 3);
    stop_reading(&c, &m, buf);
}

/*
 * The pages one process read, learnt per read (pages.h), fetched for
 * another before each read: its first reads only what the first reads
 * missed, its read only what the read missed, a page both missed before
 * both.  The child's three pages are one region of a program.
 */
static void test_memory__pages_learnt_per_read(void **state)
{
    (void)state;
    struct child c;
    struct mqdh__mem pilot, other;
    unsigned char *buf = start_reading(&c, &pilot);
    size_t ps = pilot.page_size;
    struct mqdh__region r = {.start = c.addr, .end = c.addr + 3 * ps, .key = 42};
    struct mqdh__image im;
    memset(&im, 0, sizeof im);
    im.regions = &r;
    im.nregions = 1;
    struct mqdh__pages pg = {.lock = PTHREAD_MUTEX_INITIALIZER};

    /* The pilot's first reads miss pages 0 and 1; its read, after a
     * flush, pages 1 and 2. */
    assert_int_equal(mqdh__mem_read(&pilot, c.addr, buf, 2 * ps), 0);
    mqdh__pages_learn(&pg, &im, &pilot, 0, MQDH__PAGES_FIRST);
    mqdh__mem_flush(&pilot);
    size_t from = pilot.nmissed;
    assert_int_equal(mqdh__mem_read(&pilot, c.addr + ps, buf, 2 * ps), 0);
    mqdh__pages_learn(&pg, &im, &pilot, from, MQDH__PAGES_READ);

    mqdh__mem_init(&other, c.pid);
    assert_int_equal(mqdh__pages_fetch(&pg, &im, &other, MQDH__PAGES_FIRST), 2);
    assert_int_equal(other.syscalls, 1);
    assert_true(mqdh__mem_cached(&other, c.addr) && mqdh__mem_cached(&other, c.addr + ps));
    assert_false(mqdh__mem_cached(&other, c.addr + 2 * ps));
    mqdh__mem_flush(&other);
    assert_int_equal(mqdh__pages_fetch(&pg, &im, &other, MQDH__PAGES_READ), 2);
    assert_int_equal(other.syscalls, 2);
    assert_false(mqdh__mem_cached(&other, c.addr));
    assert_true(mqdh__mem_cached(&other, c.addr + ps) && mqdh__mem_cached(&other, c.addr + 2 * ps));
    /* What is cached already is not fetched again. */
    assert_int_equal(mqdh__pages_fetch(&pg, &im, &other, MQDH__PAGES_READ), 0);
    assert_int_equal(other.syscalls, 2);
    assert_int_equal(mqdh__mem_read(&other, c.addr + ps, buf, 2 * ps), 0);
    expect_pattern(buf, ps, 2 * ps);
    assert_int_equal(other.syscalls, 2);

    mqdh__pages_free(&pg);
    mqdh__mem_fini(&other);
    stop_reading(&c, &pilot, buf);
}

static void test_memory__unmapped_is_an_error(void **state)
{
    (void)state;
    struct child c;
    struct mqdh__mem m;
    unsigned char buf[64];
    start_child(&c);
    mqdh__mem_init(&m, c.pid);
    assert_int_equal(mqdh__mem_read(&m, c.hole, buf, 8), -EFAULT);
    assert_int_equal(mqdh__mem_read(&m, 0, buf, 8), -EFAULT);
    /* A read that runs off the end of the mapping into the hole's
     * neighbour page (page 3 is mapped, page 4 is not). */
    assert_int_equal(mqdh__mem_read(&m, c.hole - 4, buf, 8), -EFAULT);
    /* Wrapping around the address space. */
    assert_int_equal(mqdh__mem_read(&m, UINT64_MAX - 2, buf, 8), -EFAULT);
    /* Zero bytes is always fine. */
    assert_int_equal(mqdh__mem_read(&m, c.hole, buf, 0), 0);
    mqdh__mem_fini(&m);
    stop_child(&c);
}

static void test_memory__process_gone(void **state)
{
    (void)state;
    struct child c;
    struct mqdh__mem m;
    unsigned char buf[8];
    start_child(&c);
    mqdh__mem_init(&m, c.pid);
    stop_child(&c);
    int rc = mqdh__mem_read(&m, c.addr, buf, sizeof buf);
    assert_int_equal(rc, -ESRCH);
    mqdh__mem_fini(&m);
}

/* The /proc/PID/mem path gives the same bytes. */
static void test_memory__proc_mem_fallback(void **state)
{
    (void)state;
    struct child c;
    struct mqdh__mem m;
    unsigned char buf[100];
    start_child(&c);
    mqdh__mem_init(&m, c.pid);
    m.use_proc_mem = 1;
    assert_int_equal(mqdh__mem_read(&m, c.addr + 10, buf, sizeof buf), 0);
    for (size_t i = 0; i < sizeof buf; i++)
        assert_int_equal(buf[i], pattern_byte(10 + i));
    assert_int_equal(mqdh__mem_read(&m, c.hole, buf, 8), -EFAULT);
    mqdh__mem_fini(&m);
    stop_child(&c);
}

/* Strings: up to the NUL and no further, even at the edge of a mapping. */
static void test_memory__strings_at_the_edge(void **state)
{
    (void)state;
    long page = sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(map != MAP_FAILED);
    assert_int_equal(munmap(map + page, (size_t)page), 0);
    char *s = map + page - 6;
    memcpy(s, "hello", 6); /* the NUL is the page's last byte */
    struct mqdh__mem m;
    char buf[256];
    mqdh__mem_init(&m, getpid());
    assert_int_equal(mqdh__mem_read_string(&m, (uint64_t)(uintptr_t)s, buf, sizeof buf), 0);
    assert_string_equal(buf, "hello");
    /* Too long for the buffer: an error, and the buffer is still a string. */
    assert_int_equal(mqdh__mem_read_string(&m, (uint64_t)(uintptr_t)s, buf, 4), -ENAMETOOLONG);
    assert_int_equal(strlen(buf), 3);
    /* Unterminated up to the hole. */
    memset(map + page - 64, 'x', 64);
    mqdh__mem_flush(&m);
    assert_int_equal(mqdh__mem_read_string(&m, (uint64_t)(uintptr_t)(map + page - 64), buf,
                                          sizeof buf),
                     -EFAULT);
    /* Words in either byte order; a bad size or a hole is an error. */
    static const unsigned char word[4] = {0x12, 0x34, 0x56, 0x78};
    uint64_t v;
    assert_int_equal(mqdh__mem_read_word(&m, (uint64_t)(uintptr_t)word, 4, 1, &v), 0);
    assert_true(v == 0x12345678u);
    assert_int_equal(mqdh__mem_read_word(&m, (uint64_t)(uintptr_t)word, 4, 0, &v), 0);
    assert_true(v == 0x78563412u);
    assert_int_equal(mqdh__mem_read_word(&m, (uint64_t)(uintptr_t)word, 9, 0, &v), -EINVAL);
    assert_int_equal(mqdh__mem_read_word(&m, (uint64_t)(uintptr_t)(map + page), 4, 0, &v),
                     -EFAULT);
    mqdh__mem_fini(&m);
    munmap(map, (size_t)page);
}

/* Target integers of either byte order, on whatever the host is. */
static void test_memory__target_to_host_both_orders(void **state)
{
    (void)state;
    static const unsigned char be[8] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
    static const unsigned char le[8] = {0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01};
    uint64_t v64;
    uint32_t v32;
    uint16_t v16;
    uint8_t v8;
    mqdh__target_to_host(1, be, &v64, 8);
    assert_true(v64 == 0x0123456789abcdefull);
    mqdh__target_to_host(0, le, &v64, 8);
    assert_true(v64 == 0x0123456789abcdefull);
    mqdh__target_to_host(1, be, &v32, 4);
    assert_true(v32 == 0x01234567u);
    mqdh__target_to_host(0, le + 4, &v32, 4);
    assert_true(v32 == 0x01234567u);
    mqdh__target_to_host(1, be, &v16, 2);
    assert_true(v16 == 0x0123);
    mqdh__target_to_host(0, le + 6, &v16, 2);
    assert_true(v16 == 0x0123);
    mqdh__target_to_host(1, be + 7, &v8, 1);
    assert_true(v8 == 0xef);
    /* In place, both ways. */
    unsigned char buf[8];
    memcpy(buf, be, 8);
    mqdh__target_to_host(1, buf, buf, 8);
    memcpy(&v64, buf, 8);
    assert_true(v64 == 0x0123456789abcdefull);
    /* Not an integer (more than 16 bytes): copied unchanged; size 0: nothing. */
    unsigned char big[20], out[20];
    for (int i = 0; i < 20; i++)
        big[i] = (unsigned char)i;
    mqdh__target_to_host(1, big, out, 20);
    assert_memory_equal(big, out, 20);
    out[0] = 0x55;
    mqdh__target_to_host(1, big, out, 0);
    assert_int_equal(out[0], 0x55);
    /* Words of 1 to 8 bytes, independent of the host. */
    assert_true(mqdh__target_word(be, 8, 1) == 0x0123456789abcdefull);
    assert_true(mqdh__target_word(le, 8, 0) == 0x0123456789abcdefull);
    assert_true(mqdh__target_word(be, 4, 1) == 0x01234567u);
    assert_true(mqdh__target_word(be, 4, 0) == 0x67452301u);
    assert_true(mqdh__target_word(be, 3, 1) == 0x012345u);
    assert_true(mqdh__target_word(be, 0, 1) == 0);
    assert_true(mqdh__target_word(be, 9, 1) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory__reads_whole_and_across_pages),
        cmocka_unit_test(test_memory__forget_a_range),
        cmocka_unit_test(test_memory__pages_learnt_per_read),
        cmocka_unit_test(test_memory__unmapped_is_an_error),
        cmocka_unit_test(test_memory__process_gone),
        cmocka_unit_test(test_memory__proc_mem_fallback),
        cmocka_unit_test(test_memory__target_to_host_both_orders),
        cmocka_unit_test(test_memory__strings_at_the_edge),
    };
    return cmocka_run_group_tests_name("memory", tests, NULL, NULL);
}
