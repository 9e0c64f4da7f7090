/* proc.c - MPI processes as /proc shows them. */
#define _GNU_SOURCE
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mqdh_proc_env_rank(pid_t pid)
{
    static const char *const vars[] = {"PMI_RANK=", "PMI_ID=", "OMPI_COMM_WORLD_RANK=",
                                       "PMIX_RANK="};
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    /* The whole environment, however long. */
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (cap - n < 4096) {
            char *nb = realloc(buf, cap + 65536);
            if (!nb)
                break;
            buf = nb;
            cap += 65536;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    if (!buf)
        return -1;
    buf[n] = '\0';
    int rank = -1;
    for (size_t v = 0; v < sizeof vars / sizeof vars[0] && rank < 0; v++) {
        size_t len = strlen(vars[v]);
        for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
            if (strncmp(buf + i, vars[v], len) != 0)
                continue;
            char *end;
            long r = strtol(buf + i + len, &end, 10);
            if (end != buf + i + len && *end == '\0' && r >= 0 && r < (1L << 30))
                rank = (int)r;
            break;
        }
    }
    free(buf);
    return rank;
}

pid_t mqdh_proc_parent(pid_t pid)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    /* "pid (comm) state ppid ...": comm may hold spaces and parentheses. */
    char *close = strrchr(line, ')');
    int ppid;
    if (!close || sscanf(close + 1, " %*c %d", &ppid) != 1)
        return -1;
    return (pid_t)ppid;
}

struct pp {
    pid_t pid, parent;
};

static int cmp_pp(const void *a, const void *b)
{
    pid_t x = ((const struct pp *)a)->pid, y = ((const struct pp *)b)->pid;
    return (x > y) - (x < y);
}

int mqdh_proc_descendants(pid_t root, pid_t **out, int *n)
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
        pid_t parent = mqdh_proc_parent((pid_t)v);
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
