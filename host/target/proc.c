/* proc.c - MPI processes as /proc shows them. */
#define _GNU_SOURCE
#include "target/proc.h"

#include "mqdhost.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Is the last line of buf[0..n) the gate area's, x86-64's vsyscall page?
 * Its address no mapping can have, its name none can take (a file's path
 * has its newlines escaped, and starts with '/'). */
static int ends_with_gate(const char *buf, size_t n)
{
    static const char start[] = "ffffffffff600000-", end[] = " [vsyscall]\n";
    size_t ls = sizeof start - 1, le = sizeof end - 1, at = n - 1;
    if (n < ls + le || memcmp(buf + n - le, end, le) != 0)
        return 0;
    while (at > 0 && buf[at - 1] != '\n') /* back to the last line's start */
        at--;
    return n - at >= ls + le && memcmp(buf + at, start, ls) == 0;
}

/*
 * Read fd into buf[*n..cap-1), as much as fits, NUL-terminated: open,
 * read, close and nothing else (stdio would add an fstat and a read at
 * the end).  How the end is known (whole): MQDH__PROC_ONE, a file the
 * kernel writes in one piece (stat, status, schedstat, environ, cmdline,
 * comm) is all there once a read leaves room in the buffer;
 * MQDH__PROC_MAPS, a process's maps, written a record at a time, once a
 * read gives nothing or ends with the gate area's line ("[vsyscall]" on
 * x86-64), which the kernel writes after the last mapping (proc_get_vma)
 * and no mapping can be named: a read less; MQDH__PROC_SHORT_RECORDS,
 * one written a page of short records at a time (children: each a pid
 * and a space) once a read, offered more than a page, gives less than a
 * page less a record: the kernel fills its page until the records run
 * out (seq_read_iter).
 * 1 if it is all in, 0 if the buffer is full, -1 if it cannot be read.
 */
static int read_fd(int fd, char *buf, size_t cap, size_t *n, int whole)
{
    enum { PAGE = 4096, RECORD = 64 };
    while (*n + 1 < cap) {
        size_t room = cap - *n - 1;
        if (whole == MQDH__PROC_SHORT_RECORDS && room <= PAGE)
            break; /* the kernel could leave part of its page behind: grow first */
        ssize_t got = read(fd, buf + *n, room);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            buf[*n] = '\0';
            return -1;
        }
        *n += (size_t)got;
        if (got == 0 || (whole == MQDH__PROC_ONE && (size_t)got < room) ||
            (whole == MQDH__PROC_SHORT_RECORDS && got + RECORD < PAGE) ||
            (whole == MQDH__PROC_MAPS && ends_with_gate(buf, *n))) {
            buf[*n] = '\0';
            return 1;
        }
    }
    buf[*n] = '\0';
    return 0;
}

ssize_t mqdh__proc_file(const char *path, char *buf, size_t cap, int whole)
{
    size_t n = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -1;
    int rc = read_fd(fd, buf, cap, &n, whole);
    close(fd);
    return rc > 0 ? (ssize_t)n : -1;
}

char *mqdh__proc_alloc(const char *path, size_t *n, int whole)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return NULL;
    /* A rank's maps are 10 to 20 KB (a libmpi that maps hwloc's plugins:
     * 17 KB), which the kernel gives a page a read: a buffer they fill
     * would cost a read more, and a copy. */
    size_t cap = 65536;
    char *buf = NULL;
    int rc = 0;
    *n = 0;
    while (rc == 0) {
        char *nb = realloc(buf, cap);
        if (!nb)
            break;
        buf = nb;
        rc = read_fd(fd, buf, cap, n, whole);
        cap *= 2;
    }
    close(fd);
    if (rc <= 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

char *mqdh__proc_read(const char *root, pid_t pid, const char *name, size_t *n)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%d/%s", root, (int)pid, name);
    return mqdh__proc_alloc(path, n, MQDH__PROC_ONE);
}

static char *read_proc_file(pid_t pid, const char *name, size_t *n)
{
    return mqdh__proc_read("/proc", pid, name, n);
}

/* The value of variable name ("PMI_RANK=") in env[n], or NULL. */
static const char *env_value(const char *env, size_t n, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < n; i += strlen(env + i) + 1)
        if (strncmp(env + i, name, len) == 0)
            return env + i + len;
    return NULL;
}

/* A decimal number in [0, 2^30) that is all of s; -1 if s is not one. */
static int small_number(const char *s)
{
    char *end;
    long v = s ? strtol(s, &end, 10) : -1;
    return s && end != s && *end == '\0' && v >= 0 && v < (1L << 30) ? (int)v : -1;
}

int mqdh__text_cmdline_pgid(const char *cmd, size_t n)
{
    for (size_t i = 0; i < n; i += strlen(cmd + i) + 1)
        if (strcmp(cmd + i, "--pgid") == 0 && i + 7 < n)
            return small_number(cmd + i + 7);
    return -1;
}

/* The N of "--pgid N" on pid's command line (hydra's proxy), or -1. */
static int proxy_pgid(pid_t pid)
{
    size_t n;
    char *cmd = read_proc_file(pid, "cmdline", &n);
    int pgid = cmd ? mqdh__text_cmdline_pgid(cmd, n) : -1;
    free(cmd);
    return pgid;
}

/* The world of a process hydra marked spawned (mqdh__proc_env_rank). */
static int spawned_world(pid_t pid, pid_t *spawner)
{
    /* Hydra starts each MPI_Comm_spawn's processes under a proxy of its
     * own, "hydra_pmi_proxy ... --pgid N": N numbers the spawns from 1. */
    pid_t up = mqdh__proc_parent(pid);
    for (int depth = 0; depth < 8 && up > 1; depth++) {
        int pgid = proxy_pgid(up);
        if (pgid > 0)
            return pgid;
        up = mqdh__proc_parent(up);
    }
    *spawner = mqdh__proc_parent(pid);
    return -2;
}

int mqdh__text_env_rank(const char *env, size_t n, int *spawned, int *size)
{
    static const char *const sizes[] = {"PMI_SIZE=", "OMPI_COMM_WORLD_SIZE="};
    if (size) {
        *size = -1;
        for (size_t v = 0; v < sizeof sizes / sizeof sizes[0] && *size < 0; v++)
            *size = small_number(env_value(env, n, sizes[v]));
    }
    static const char *const vars[] = {"PMI_RANK=", "PMI_ID=", "OMPI_COMM_WORLD_RANK=",
                                       "PMIX_RANK="};
    int rank = -1;
    for (size_t v = 0; v < sizeof vars / sizeof vars[0]; v++) {
        const char *val = env_value(env, n, vars[v]);
        if (val) {
            rank = small_number(val);
            break;
        }
    }
    const char *sp = env_value(env, n, "PMI_SPAWNED=");
    *spawned = sp && *sp && strcmp(sp, "0") != 0;
    return rank;
}

int mqdh__proc_env_rank(pid_t pid, int *world, pid_t *spawner, int *size)
{
    pid_t unused;
    if (!spawner)
        spawner = &unused;
    *spawner = -1;
    if (world)
        *world = -1;
    if (size)
        *size = -1;
    size_t n;
    char *env = read_proc_file(pid, "environ", &n);
    if (!env)
        return -1;
    int is_spawned;
    int rank = mqdh__text_env_rank(env, n, &is_spawned, size);
    free(env);
    if (world)
        *world = is_spawned ? spawned_world(pid, spawner) : 0;
    return rank;
}

int mqdh__text_stat(const char *stat, struct mqdh__stat_line *st)
{
    /* "pid (comm) state ppid pgrp session tty_nr tpgid flags ...": comm
     * may hold spaces and parentheses (proc_pid_stat(5)). */
    const char *close = strrchr(stat, ')');
    char state;
    int ppid;
    unsigned long flags = 0;
    if (!close)
        return -1;
    int got = sscanf(close + 1, " %c %d %*d %*d %*d %*d %lu", &state, &ppid, &flags);
    if (got < 2)
        return -1;
    st->state = state;
    st->ppid = (pid_t)ppid;
    st->flags = got == 3 ? flags : 0;
    return 0;
}

pid_t mqdh__text_stat_ppid(const char *stat)
{
    struct mqdh__stat_line st;
    return mqdh__text_stat(stat, &st) == 0 ? st.ppid : -1;
}

int mqdh__proc_stat(pid_t pid, struct mqdh__stat_line *st)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (mqdh__proc_file(path, line, sizeof line, MQDH__PROC_ONE) <= 0)
        return -1;
    return mqdh__text_stat(line, st);
}

pid_t mqdh__proc_parent(pid_t pid)
{
    struct mqdh__stat_line st;
    return mqdh__proc_stat(pid, &st) == 0 ? st.ppid : -1;
}

struct pp {
    pid_t pid, parent;
};

static int cmp_pp(const void *a, const void *b)
{
    pid_t x = ((const struct pp *)a)->pid, y = ((const struct pp *)b)->pid;
    return (x > y) - (x < y);
}

int mqdh__proc_descendants(pid_t root, pid_t **out, int *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return -errno;
    struct pp *t = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        char *end;
        long v = strtol(e->d_name, &end, 10);
        if (*end || v <= 0)
            continue;
        pid_t parent = mqdh__proc_parent((pid_t)v);
        if (parent < 0)
            continue; /* gone meanwhile */
        if (count == cap) {
            size_t nc = cap ? cap * 2 : 256;
            struct pp *nt = realloc(t, nc * sizeof *nt);
            if (!nt) {
                rc = -ENOMEM;
                break;
            }
            t = nt;
            cap = nc;
        }
        t[count].pid = (pid_t)v;
        t[count++].parent = parent;
    }
    closedir(d);
    if (rc || !count) {
        free(t);
        return rc;
    }
    qsort(t, count, sizeof *t, cmp_pp);
    /* A process descends from root if walking up its parents reaches root
     * (bounded: a parent table read while processes come and go may loop). */
    int found = 0;
    char *in = calloc(count, 1);
    if (!in) {
        free(t);
        return -ENOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        pid_t up = t[i].parent;
        for (int depth = 0; depth < 1024 && up > 0; depth++) {
            if (up == root) {
                in[i] = 1;
                found++;
                break;
            }
            struct pp key = {up, 0}, *hit = bsearch(&key, t, count, sizeof *t, cmp_pp);
            up = hit ? hit->parent : -1;
        }
    }
    if (found && !(*out = malloc((size_t)found * sizeof **out)))
        rc = -ENOMEM;
    for (size_t i = 0; !rc && i < count; i++)
        if (in[i])
            (*out)[(*n)++] = t[i].pid;
    free(in);
    free(t);
    return rc;
}

int mqdh__proc_tasks(pid_t pid, pid_t **out, int *n)
{
    char path[64], buf[8192];
    *out = NULL;
    *n = 0;
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -(errno == ENOENT ? ESRCH : errno);
    int cap = 0, rc = 0;
    for (;;) {
        ssize_t got = getdents64(fd, buf, sizeof buf);
        if (got <= 0) {
            rc = got < 0 ? -errno : 0;
            break;
        }
        for (ssize_t off = 0; off < got;) {
            struct dirent64 *e = (struct dirent64 *)(buf + off);
            off += e->d_reclen;
            char *end;
            long t = strtol(e->d_name, &end, 10);
            if (*end || t <= 0 || t > 1L << 30)
                continue;
            if (*n == cap) {
                pid_t *m = realloc(*out, (size_t)(cap = cap ? 2 * cap : 8) * sizeof *m);
                if (!m) {
                    rc = -ENOMEM;
                    break;
                }
                *out = m;
            }
            (*out)[(*n)++] = (pid_t)t;
        }
        /* The kernel fills the buffer until an entry does not fit: room
         * left for one more means there is none (proc_task_readdir). */
        if (rc || got + 512 < (ssize_t)sizeof buf)
            break;
    }
    close(fd);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* The children of every thread of pid, appended to *kids (of *n, room
 * *cap): 0, 1 if the kernel keeps no children files, or -1. */
static int children_of(pid_t pid, pid_t **kids, size_t *n, size_t *cap)
{
    pid_t *tids;
    int nt;
    if (mqdh__proc_tasks(pid, &tids, &nt) != 0)
        return 0; /* gone meanwhile: no children */
    int rc = 0;
    for (int t = 0; t < nt && rc == 0; t++) {
        char path[96];
        size_t len;
        snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)tids[t]);
        char *text = mqdh__proc_alloc(path, &len, MQDH__PROC_SHORT_RECORDS);
        if (!text) {
            rc = errno == ENOENT && t == 0 ? 1 : 0;
            continue;
        }
        for (char *p = text, *end; *p; p = end) {
            long v = strtol(p, &end, 10);
            if (end == p)
                break;
            if (v <= 0 || v > 1L << 30)
                continue;
            if (*n == *cap) {
                size_t nc = *cap ? *cap * 2 : 64;
                pid_t *m = realloc(*kids, nc * sizeof *m);
                if (!m) {
                    rc = -1;
                    break;
                }
                *kids = m;
                *cap = nc;
            }
            (*kids)[(*n)++] = (pid_t)v;
        }
        free(text);
    }
    free(tids);
    return rc;
}

static int cmp_pid(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

int mqdh__proc_descendants_below(pid_t root, const pid_t *leaves, int nleaves, pid_t **out,
                                 int *n)
{
    pid_t *all = NULL;
    size_t count = 0, cap = 0;
    *out = NULL;
    *n = 0;
    int rc = children_of(root, &all, &count, &cap);
    if (rc == 1) { /* no children files (CONFIG_PROC_CHILDREN): every process's parent */
        free(all);
        return mqdh__proc_descendants(root, out, n);
    }
    /* Breadth first; a leaf is listed, not looked below; bounded, as pids
     * may be reused while the files are read. */
    for (size_t i = 0; rc == 0 && i < count && count < (size_t)1 << 16; i++) {
        int leaf = 0;
        for (int k = 0; k < nleaves && !leaf; k++)
            leaf = leaves[k] == all[i];
        if (!leaf)
            rc = children_of(all[i], &all, &count, &cap) < 0 ? -ENOMEM : 0;
    }
    if (rc) {
        free(all);
        return rc < 0 ? rc : -ENOMEM;
    }
    qsort(all, count, sizeof *all, cmp_pid);
    size_t keep = 0;
    for (size_t i = 0; i < count; i++)
        if (keep == 0 || all[keep - 1] != all[i])
            all[keep++] = all[i];
    *out = all;
    *n = (int)keep;
    return 0;
}

char *mqdh__proc_cmdline(pid_t pid)
{
    size_t n;
    char *cmd = read_proc_file(pid, "cmdline", &n);
    if (!cmd)
        return NULL;
    while (n > 0 && cmd[n - 1] == '\0')
        n--;
    for (size_t i = 0; i < n; i++)
        if (cmd[i] == '\0')
            cmd[i] = ' ';
    cmd[n] = '\0';
    return cmd;
}

int mqdh__proc_name(pid_t pid, char *buf, size_t len)
{
    size_t n;
    char *comm = read_proc_file(pid, "comm", &n);
    if (!comm || len == 0) {
        free(comm);
        return -1;
    }
    comm[strcspn(comm, "\n")] = '\0';
    snprintf(buf, len, "%s", comm);
    free(comm);
    return 0;
}

/* The text after "field:" on its line of status, or NULL. */
static const char *status_value(const char *status, const char *field)
{
    size_t flen = strlen(field);
    for (const char *line = status; line && *line;) {
        if (strncmp(line, field, flen) == 0 && line[flen] == ':')
            return line + flen + 1;
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return NULL;
}

int mqdh__text_status_numbers(const char *status, const char *field, long *v, int max)
{
    const char *s = status_value(status, field);
    int k = 0;
    while (s && k < max) {
        while (*s == ' ' || *s == '\t')
            s++; /* not strtol's: it would skip the newline into the next field */
        if (*s < '0' || *s > '9')
            break;
        char *end;
        errno = 0;
        long x = strtol(s, &end, 10);
        if (errno != 0 || (*end && *end != ' ' && *end != '\t' && *end != '\n'))
            break;
        v[k++] = x;
        s = end;
    }
    return k;
}

long mqdh__text_status_field(const char *status, const char *field)
{
    long v;
    return mqdh__text_status_numbers(status, field, &v, 1) == 1 ? v : -1;
}

int mqdh__text_status_hex(const char *status, const char *field, uint64_t *v)
{
    const char *s = status_value(status, field);
    if (!s)
        return -1;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
        return -1; /* strtoull would take a sign, or skip a newline */
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 16);
    if (errno != 0 || (*end && *end != '\n'))
        return -1;
    *v = (uint64_t)x;
    return 0;
}

long mqdh__proc_status_field(pid_t pid, const char *field)
{
    size_t n;
    char *st = read_proc_file(pid, "status", &n);
    long v = st ? mqdh__text_status_field(st, field) : -1;
    free(st);
    return v;
}

int mqdh__proc_uid(pid_t pid, uid_t *uid)
{
    long v = mqdh__proc_status_field(pid, "Uid");
    if (v < 0)
        return -1;
    *uid = (uid_t)v;
    return 0;
}

int mqdh__proc_uids(pid_t pid, uid_t ids[4])
{
    return mqdh__proc_uids_at("/proc", pid, ids);
}

int mqdh__proc_uids_at(const char *root, pid_t pid, uid_t ids[4])
{
    size_t n;
    char *st = mqdh__proc_read(root, pid, "status", &n);
    long v[4];
    int got = st ? mqdh__text_status_numbers(st, "Uid", v, 4) : 0;
    free(st);
    if (got != 4)
        return -1;
    for (int i = 0; i < 4; i++)
        ids[i] = (uid_t)v[i];
    return 0;
}

int mqdh__proc_status_open(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    return open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
}

int mqdh__proc_owners(pid_t pid, uid_t ids[4], uid_t *dump_owner, long *threads)
{
    int fd = mqdh__proc_status_open(pid);
    if (fd < 0)
        return -1;
    int rc = mqdh__proc_owners_fd(fd, ids, dump_owner, threads);
    close(fd);
    return rc;
}

int mqdh__proc_owners_fd(int fd, uid_t ids[4], uid_t *dump_owner, long *threads)
{
    char text[4096];
    struct stat st;
    long v[4];
    /* The file's owner is the dump owner, as every file of /proc/PID
     * (task_dump_owner): one descriptor answers both.  The status fits
     * in one read from its start (MQDH__PROC_ONE). */
    ssize_t n;
    while ((n = pread(fd, text, sizeof text - 1, 0)) < 0 && errno == EINTR)
        ;
    if (n <= 0 || (size_t)n >= sizeof text - 1 || fstat(fd, &st) != 0)
        return -1; /* none, or more than it could hold: not all of it */
    text[n] = '\0';
    if (mqdh__text_status_numbers(text, "Uid", v, 4) != 4 ||
        (threads && mqdh__text_status_numbers(text, "Threads", threads, 1) != 1))
        return -1;
    for (int i = 0; i < 4; i++)
        ids[i] = (uid_t)v[i];
    *dump_owner = st.st_uid;
    return 0;
}

int mqdh__proc_dump_owner(pid_t pid, uid_t *uid)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (stat(path, &st) != 0)
        return -1;
    *uid = st.st_uid;
    return 0;
}

int mqdh__proc_capable(pid_t pid, int cap)
{
    size_t n;
    char *st = read_proc_file(pid, "status", &n);
    uint64_t caps;
    int rc = st && cap >= 0 && cap < 64 && mqdh__text_status_hex(st, "CapEff", &caps) == 0
                 ? (int)((caps >> cap) & 1)
                 : -1;
    free(st);
    return rc;
}
