/* procstate.c - what /proc says of a test target's threads. */
#define _GNU_SOURCE
#include "procstate.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char thread_state(pid_t pid, pid_t tid, long *tracer)
{
    char path[96], line[256], st = '?';
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
    FILE *f = fopen(path, "r");
    *tracer = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "State:", 6) == 0)
            sscanf(line + 6, " %c", &st);
        else if (strncmp(line, "TracerPid:", 10) == 0)
            *tracer = strtol(line + 10, NULL, 10);
    }
    if (f)
        fclose(f);
    return st;
}

int count_threads(pid_t pid)
{
    char path[64];
    int n = 0;
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void pause_2ms(void)
{
    struct timespec ts = {0, 2 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

char settled_state(pid_t pid, pid_t tid, char want, long *tracer)
{
    char st = '?';
    for (int i = 0; i < 1000; i++) {
        st = thread_state(pid, tid, tracer);
        if (st == want && *tracer == 0)
            return st;
        pause_2ms();
    }
    return st;
}

/* The first thread of pid that is traced or stopped, or 0 if none. */
static pid_t offender(pid_t pid, char *st, long *tracer)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    struct dirent *e;
    pid_t bad = d ? 0 : -1;
    while (d && !bad && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        pid_t tid = (pid_t)atoi(e->d_name);
        *st = thread_state(pid, tid, tracer);
        if (*tracer != 0 || *st == 't' || *st == 'T')
            bad = tid;
    }
    if (d)
        closedir(d);
    return bad;
}

int proc_released(pid_t pid, char *why, size_t len)
{
    char st = '?';
    long tracer = -1;
    pid_t bad = 0;
    for (int i = 0; i < 1000; i++) {
        if ((bad = offender(pid, &st, &tracer)) == 0)
            return 0;
        pause_2ms();
    }
    if (bad < 0)
        snprintf(why, len, "process %d is gone", (int)pid);
    else
        snprintf(why, len, "thread %d of process %d is in state %c with TracerPid %ld",
                 (int)bad, (int)pid, st, tracer);
    return -1;
}

int job_released(const struct job *job, char *why, size_t len)
{
    for (int r = 0; r < job->np; r++)
        if (proc_released(job->ranks[r], why, len) != 0)
            return -1;
    return proc_released(job->mpiexec, why, len);
}
