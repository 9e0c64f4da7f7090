/*
 * proccpu.c - the CPU time of a process and its threads, as /proc's stat
 * and schedstat files say it (proc.h).
 */
#define _GNU_SOURCE
#include "target/proc.h"

#include "mqdhost.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int mqdh__text_stat_cpu(const char *stat, uint64_t *ticks)
{
    /* After "(comm)": state ppid pgrp session tty_nr tpgid flags minflt
     * cminflt majflt cmajflt utime stime (proc_pid_stat(5)). */
    const char *close = strrchr(stat, ')');
    unsigned long long utime, stime;
    if (!close || sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
                         &utime, &stime) != 2)
        return -1;
    *ticks = utime + stime;
    return 0;
}

/* The first line of a /proc file into buf[len]: 0, or -1. */
static int read_proc_line(const char *path, char *buf, size_t len)
{
    return mqdh__proc_file(path, buf, len, MQDH__PROC_ONE) > 0 ? 0 : -1;
}

long mqdh__text_stat_threads(const char *stat)
{
    /* After "(comm)": state ppid pgrp session tty_nr tpgid flags minflt
     * cminflt majflt cmajflt utime stime cutime cstime priority nice
     * num_threads (proc_pid_stat(5)). */
    const char *close = strrchr(stat, ')');
    long n;
    if (!close || sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
                                    "%*d %*d %*d %*d %ld", &n) != 1)
        return -1;
    return n;
}

/* Clock ticks as nanoseconds. */
static uint64_t ticks_ns(uint64_t ticks)
{
    long hz = sysconf(_SC_CLK_TCK);
    return ticks * (1000000000u / (uint64_t)(hz > 0 ? hz : 100));
}

/* Thread tid of pid: its run time in nanoseconds from its schedstat (the
 * scheduler's own count), else utime + stime from its stat.  0, or -1. */
static int thread_cpu(pid_t pid, pid_t tid, uint64_t *ns)
{
    char path[96], line[1024];
    snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
    unsigned long long run;
    if (read_proc_line(path, line, sizeof line) == 0 && sscanf(line, "%llu", &run) == 1) {
        *ns = run;
        return 0;
    }
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    uint64_t ticks;
    if (read_proc_line(path, line, sizeof line) != 0 || mqdh__text_stat_cpu(line, &ticks) != 0)
        return -1;
    *ns = ticks_ns(ticks);
    return 0;
}

static int cmp_thread_cpu(const void *a, const void *b)
{
    const struct mqdh_thread_cpu *x = a, *y = b;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

int mqdh__proc_cpu(pid_t pid, const char *stat, const pid_t *tids, int n, struct mqdh_cpu *out)
{
    memset(out, 0, sizeof *out);
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    uint64_t ticks;
    if (stat && *stat)
        snprintf(line, sizeof line, "%s", stat);
    else if (read_proc_line(path, line, sizeof line) != 0)
        return MQDH_OK; /* gone: not known */
    if (mqdh__text_stat_cpu(line, &ticks) != 0)
        return MQDH_OK;
    out->known = 1;
    out->ns = ticks_ns(ticks);
    if (n <= 0)
        return MQDH_OK;
    if (!(out->threads = calloc((size_t)n, sizeof *out->threads))) {
        memset(out, 0, sizeof *out);
        return MQDH_E_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        struct mqdh_thread_cpu *t = &out->threads[out->nthreads];
        if (tids[i] > 0 && thread_cpu(pid, tids[i], &t->ns) == 0) {
            t->tid = tids[i];
            out->nthreads++;
        }
    }
    qsort(out->threads, (size_t)out->nthreads, sizeof *out->threads, cmp_thread_cpu);
    return MQDH_OK;
}
