/*
 * common.c - the helpers every view of mqdump shares (common.h).  Public
 * libmqdhost API only.
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

const char *status_name(enum mqdh_op_status s)
{
    switch (s) {
    case MQDH_OP_PENDING: return "pending";
    case MQDH_OP_MATCHED: return "matched";
    case MQDH_OP_COMPLETE: return "complete";
    case MQDH_OP_UNKNOWN: break;
    }
    return "unknown";
}

const char *frame_kind_name(enum mqdh_frame_kind k)
{
    switch (k) {
    case MQDH_FRAME_USER: return "user";
    case MQDH_FRAME_MPI: return "mpi";
    case MQDH_FRAME_SYSTEM: break;
    }
    return "system";
}

const char *base_name(const char *path)
{
    const char *b = path ? strrchr(path, '/') : NULL;
    return b ? b + 1 : path;
}

int call_path(const struct mqdh_dump *d, int i, int no_user_line, char *buf, size_t len)
{
    enum { SHOWN = 64 }; /* a recursion deeper than that: its innermost frames */
    const struct mqdh_thread *t = mqdh_shown_thread(d, i);
    struct mqdh_path_frame path[MQDH_PATH_MAX_FRAMES];
    int n = t ? mqdh_thread_path(t, t == &d->stacks[i].threads[0], 0, path,
                                 MQDH_PATH_MAX_FRAMES)
              : 0;
    if (n > MQDH_PATH_MAX_FRAMES)
        n = MQDH_PATH_MAX_FRAMES;
    /* The innermost of the program's own frames, its line left out. */
    const struct mqdh_frame *unlined = no_user_line ? mqdh_user_frame(d, i) : NULL;
    size_t at = 0;
    buf[0] = '\0';
    int from = n > SHOWN ? n - SHOWN : 0;
    for (int k = from; k < n && at < len; k++) {
        char f[300];
        const struct mqdh_path_frame *pf = &path[k];
        mqdh_frame_words(f, sizeof f, pf->function, pf->frame == unlined ? NULL : pf->file, pf->line,
                    pf->folded ? pf->frame->module : NULL, pf->folded ? 0 : pf->frame->inlined);
        int w = snprintf(buf + at, len - at, "%s%s", k > from ? " > " : from ? "... > " : "", f);
        if (w < 0)
            break;
        at += (size_t)w;
    }
    return n - from;
}

void print_ranks(FILE *f, const struct mqdh_dump *d, const int *idx, int n)
{
    for (int i = 0; i < n;) {
        const struct mqdh_process *p = &d->procs[idx[i]], *q;
        int j = i;
        while (p->rank >= 0 && j + 1 < n && (q = &d->procs[idx[j + 1]])->world == p->world &&
               q->rank == d->procs[idx[j]].rank + 1)
            j++;
        fprintf(f, "%s", i ? "," : "");
        if (p->world > 0 && p->rank >= 0 && (i == 0 || d->procs[idx[i - 1]].world != p->world))
            fprintf(f, "%sworld %d: ", i ? " " : "", p->world);
        if (p->rank < 0)
            fprintf(f, "pid %d", (int)p->pid);
        else if (j > i)
            fprintf(f, "%d-%d", p->rank, d->procs[idx[j]].rank);
        else
            fprintf(f, "%d", p->rank);
        i = j + 1;
    }
}

void json_string(const char *s)
{
    if (!s) {
        fputs("null", stdout);
        return;
    }
    putchar('"');
    const unsigned char *run = (const unsigned char *)s, *c = run;
    for (; *c; c++) {
        if (*c != '"' && *c != '\\' && *c >= 0x20 && *c < 0x7f)
            continue; /* in the run written at once */
        fwrite(run, 1, (size_t)(c - run), stdout);
        if (*c == '"' || *c == '\\')
            printf("\\%c", *c);
        else
            printf("\\u%04x", *c);
        run = c + 1;
    }
    fwrite(run, 1, (size_t)(c - run), stdout);
    putchar('"');
}

/* v in decimal into out (room for 21 bytes); its length. */
static size_t decimal(char *out, long v)
{
    char digits[24];
    size_t n = 0, len = 0;
    unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        out[len++] = '-';
    while (n)
        out[len++] = digits[--n];
    return len;
}

void json_longs(const long *v, long n)
{
    char buf[4096];
    size_t len = 0;
    buf[len++] = '[';
    for (long i = 0; i < n; i++) {
        if (len > sizeof buf - 32) {
            fwrite(buf, 1, len, stdout);
            len = 0;
        }
        if (i) {
            buf[len++] = ',';
            buf[len++] = ' ';
        }
        len += decimal(buf + len, v[i]);
    }
    buf[len++] = ']';
    fwrite(buf, 1, len, stdout);
}

struct own_cost own_cost(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (struct own_cost){(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
                             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
                             ru.ru_maxrss};
}

/*
 * A process outside MPI, where its own code is at work (uf, its innermost
 * user frame): "not in MPI: in relax at samples/hidden.c:29" ("past
 * MPI_Finalize: ..." once its MPI has finalized); lines, if not NULL, in
 * place of the frame's line (a folded group's).
 */
void print_at_work(FILE *f, const struct mqdh_process *p, const struct mqdh_frame *uf,
                   const char *lines)
{
    fprintf(f, "%s: in %s", p->mpi_finalized ? "past MPI_Finalize" : "not in MPI",
            uf->function ? uf->function : "??");
    if (uf->file && lines)
        fprintf(f, " at %s:%s", uf->file, lines);
    else if (uf->file)
        fprintf(f, " at %s:%d", uf->file, uf->line);
}

const char *deadlock_kind_name(const struct mqdh_deadlock *dl)
{
    return dl->knot == MQDH_DEADLOCK_END ? "end" : dl->knot ? "knot" : "cycle";
}

/* qsort's comparison of ints, ascending. */
int compare_ints(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

int process_unwound(const struct mqdh_dump *d, int i)
{
    return d->procs[i].where_call || (d->stacks && d->stacks[i].nthreads > 0);
}

void fold_free(struct fold *f)
{
    free(f->group);
    free(f->relative);
    f->group = NULL;
    f->relative = NULL;
}
