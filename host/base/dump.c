/*
 * dump.c - the dump model: a dump's processes, communicators, queues and
 * stacks (mqdhost.h), freed, cleared, merged, indexed and named here, and
 * nowhere else.
 *
 * Every other file that makes or reads a dump calls down into this one:
 * the session that makes it, the result reader that makes one from an
 * agent's text, the remote front end that merges those, the analysis and
 * the views that name its processes.  This file calls none of them.
 */
#define _GNU_SOURCE
#include "base/dump.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- freeing */

void mqdh__process_clear(struct mqdh_process *p)
{
    for (int c = 0; c < p->ncomms; c++) {
        for (int q = 0; q < MQDH_NQUEUES; q++) {
            free(p->comms[c].queues[q].ops);
            free(p->comms[c].queues[q].error);
        }
        free(p->comms[c].group);
        free(p->comms[c].group_error);
    }
    free(p->comms);
    free(p->host);
    free(p->image);
    free(p->dll);
    free(p->dll_why);
    free(p->error);
    free(p->where_call);
    free(p->where_function);
    free(p->where_file);
    free(p->where_error);
    free(p->where_args_why);
    free(p->where_args_from);
    free(p->where_comm_name);
    memset(p, 0, sizeof *p);
}

void mqdh__thread_clear(struct mqdh_thread *t)
{
    for (int i = 0; i < t->nframes; i++) {
        free(t->frames[i].function);
        free(t->frames[i].module);
        free(t->frames[i].file);
    }
    free(t->frames);
    free(t->call);
    free(t->error);
    memset(t, 0, sizeof *t);
}

void mqdh__stack_clear(struct mqdh_stack *st)
{
    for (int i = 0; st && i < st->nthreads; i++)
        mqdh__thread_clear(&st->threads[i]);
    if (st) {
        free(st->threads);
        memset(st, 0, sizeof *st);
    }
}

void mqdh__cpu_clear(struct mqdh_cpu *c)
{
    if (c) {
        free(c->threads);
        memset(c, 0, sizeof *c);
    }
}

void mqdh__requests_clear(struct mqdh_requests *r)
{
    if (r) {
        free(r->v);
        free(r->why);
        free(r->nbc_next_tag);
        memset(r, 0, sizeof *r);
    }
}

void mqdh_dump_free(struct mqdh_dump *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->nprocs; i++) {
        mqdh__process_clear(&d->procs[i]);
        if (d->stacks)
            mqdh__stack_clear(&d->stacks[i]);
        if (d->cpu)
            mqdh__cpu_clear(&d->cpu[i]);
        if (d->requests)
            mqdh__requests_clear(&d->requests[i]);
    }
    free(d->procs);
    free(d->stacks);
    free(d->cpu);
    free(d->requests);
    mqdh__index_free(d->index);
    free(d);
}

/* ---------------------------------------------------------------- errors */

void mqdh__process_error(struct mqdh_process *p, const char *fmt, ...)
{
    if (p->error)
        return; /* the first error is the one that matters */
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&p->error, fmt, ap) < 0)
        p->error = NULL;
    va_end(ap);
}

/* ---------------------------------------------------------------- merging */

/* A place in the dump merged into: a process, by pid and host. */
struct slot {
    pid_t pid;
    const char *host;
    int index; /* into the dump's procs; -1 once a result's process took it */
};

static int cmp_slot(const void *a, const void *b)
{
    const struct slot *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return strcmp(x->host ? x->host : "", y->host ? y->host : "");
}

/* src_req (NULL: none) in into's requests[i], emptying it; into's are
 * made as the first comes, none kept without memory for them. */
static void place_requests(struct mqdh_dump *into, int i, struct mqdh_requests *src_req)
{
    if (src_req && (src_req->n || src_req->nbc_next_tag) && !into->requests)
        into->requests = calloc((size_t)into->nprocs, sizeof *into->requests);
    if (into->requests) {
        mqdh__requests_clear(&into->requests[i]);
        if (src_req) {
            into->requests[i] = *src_req;
            memset(src_req, 0, sizeof *src_req);
        }
    }
    mqdh__requests_clear(src_req);
}

/*
 * Put src (with its stack, src_stack, its CPU time, src_cpu, and its
 * requests, src_req, each of which may be NULL) in into's process i,
 * emptying src: into keeps what the front end knows from the launcher
 * (rank, world, identity, host).  The stacks (CPU records) are made for
 * into as the first comes; none is kept without memory for them.
 */
static void place(struct mqdh_dump *into, int i, struct mqdh_process *src,
                  struct mqdh_stack *src_stack, struct mqdh_cpu *src_cpu,
                  struct mqdh_requests *src_req)
{
    place_requests(into, i, src_req);
    if (src_stack && src_stack->nthreads && !into->stacks)
        into->stacks = calloc((size_t)into->nprocs, sizeof *into->stacks);
    if (into->stacks) {
        mqdh__stack_clear(&into->stacks[i]);
        if (src_stack) {
            into->stacks[i] = *src_stack;
            memset(src_stack, 0, sizeof *src_stack);
        }
    }
    mqdh__stack_clear(src_stack);
    struct mqdh_process *dst = &into->procs[i];
    if (src_cpu && src_cpu->known && !into->cpu)
        into->cpu = calloc((size_t)into->nprocs, sizeof *into->cpu);
    if (into->cpu) {
        mqdh__cpu_clear(&into->cpu[i]);
        if (src_cpu) {
            into->cpu[i] = *src_cpu;
            memset(src_cpu, 0, sizeof *src_cpu);
        }
    }
    mqdh__cpu_clear(src_cpu);
    char *host = dst->host;
    int rank = dst->rank, world = dst->world, identity = dst->identity;
    dst->host = NULL;
    mqdh__process_clear(dst);
    free(src->host);
    *dst = *src;
    dst->host = host;
    dst->rank = rank;
    dst->world = world;
    dst->identity = identity;
    memset(src, 0, sizeof *src);
}

int mqdh_dump_merge(struct mqdh_dump *into, struct mqdh_dump *const *from, int nfrom)
{
    return mqdh__dump_merge_marked(into, from, nfrom, NULL);
}

int mqdh__dump_merge_marked(struct mqdh_dump *into, struct mqdh_dump *const *from, int nfrom,
                            unsigned char *placed)
{
    return mqdh__dump_merge_only(into, from, nfrom, NULL, into ? into->nprocs : 0, placed);
}

/* Empty f of its processes (each placed or cleared already). */
static void emptied(struct mqdh_dump *f)
{
    free(f->procs);
    f->procs = NULL;
    free(f->stacks);
    f->stacks = NULL;
    free(f->cpu);
    f->cpu = NULL;
    free(f->requests);
    f->requests = NULL;
    f->nprocs = 0;
    mqdh_dump_index(f);
}

int mqdh__dump_merge_only(struct mqdh_dump *into, struct mqdh_dump *const *from, int nfrom,
                          const int *only, int nonly, unsigned char *placed)
{
    if (!into || nfrom < 0 || (nfrom && !from) || nonly < 0 || nonly > into->nprocs)
        return -MQDH_E_USAGE;
    struct slot *slots = malloc((size_t)(nonly ? nonly : 1) * sizeof *slots);
    if (!slots)
        return -MQDH_E_NOMEM;
    for (int k = 0; k < nonly; k++) {
        int i = only ? only[k] : k;
        if (i < 0 || i >= into->nprocs) {
            free(slots);
            return -MQDH_E_USAGE;
        }
        slots[k] = (struct slot){into->procs[i].pid, into->procs[i].host, i};
    }
    qsort(slots, (size_t)nonly, sizeof *slots, cmp_slot);
    int n_placed = 0;
    for (int k = 0; k < nfrom; k++) {
        struct mqdh_dump *f = from[k];
        for (int i = 0; f && i < f->nprocs; i++) {
            struct mqdh_process *src = &f->procs[i];
            struct mqdh_stack *src_stack = f->stacks ? &f->stacks[i] : NULL;
            struct mqdh_cpu *src_cpu = f->cpu ? &f->cpu[i] : NULL;
            struct mqdh_requests *src_req = f->requests ? &f->requests[i] : NULL;
            struct slot key = {src->pid, src->host, 0};
            struct slot *hit = bsearch(&key, slots, (size_t)nonly, sizeof *slots, cmp_slot);
            if (!hit || hit->index < 0) {
                mqdh__process_clear(src);
                mqdh__stack_clear(src_stack);
                mqdh__cpu_clear(src_cpu);
                mqdh__requests_clear(src_req);
                continue;
            }
            place(into, hit->index, src, src_stack, src_cpu, src_req);
            if (placed)
                placed[hit->index] = 1;
            hit->index = -1; /* one place, one process */
            n_placed++;
        }
        if (f)
            emptied(f);
    }
    free(slots);
    mqdh_dump_index(into);
    return n_placed;
}

/* ---------------------------------------------------------------- index */

/* Processes by global rank: sorted pairs, a rank two processes have (an
 * MPI-1 DLL's, over two worlds) standing once with process -1; and each
 * world's size (world 0 counting the processes of no known world). */
struct mqdh_index {
    int n;
    struct index_entry {
        long g;
        int proc;
    } * v;
    int nworlds;
    int *world_size;
};

long mqdh__process_global(const struct mqdh_process *p)
{
    return p->identity >= 0 ? p->identity : p->rank;
}

static int by_rank_then_process(const void *x, const void *y)
{
    const struct index_entry *a = x, *b = y;
    if (a->g != b->g)
        return a->g < b->g ? -1 : 1;
    return (a->proc > b->proc) - (a->proc < b->proc);
}

void mqdh__index_free(struct mqdh_index *x)
{
    if (x) {
        free(x->v);
        free(x->world_size);
    }
    free(x);
}

struct mqdh_index *mqdh__index_build(const struct mqdh_dump *d)
{
    struct mqdh_index *x = calloc(1, sizeof *x);
    int worlds = 1;
    for (int i = 0; i < d->nprocs; i++)
        if (d->procs[i].world >= worlds)
            worlds = d->procs[i].world + 1;
    if (!x || !(x->v = malloc((size_t)(d->nprocs ? d->nprocs : 1) * sizeof *x->v)) ||
        !(x->world_size = calloc((size_t)worlds, sizeof *x->world_size))) {
        mqdh__index_free(x);
        return NULL;
    }
    x->nworlds = worlds;
    for (int i = 0; i < d->nprocs; i++)
        x->world_size[d->procs[i].world < 0 ? 0 : d->procs[i].world]++;
    for (int i = 0; i < d->nprocs; i++)
        if (mqdh__process_global(&d->procs[i]) >= 0)
            x->v[x->n++] = (struct index_entry){mqdh__process_global(&d->procs[i]), i};
    qsort(x->v, (size_t)x->n, sizeof *x->v, by_rank_then_process);
    int k = 0;
    for (int i = 0; i < x->n; i++) {
        if (k > 0 && x->v[k - 1].g == x->v[i].g)
            x->v[k - 1].proc = -1;
        else
            x->v[k++] = x->v[i];
    }
    x->n = k;
    return x;
}

int mqdh_dump_index(struct mqdh_dump *d)
{
    if (!d)
        return MQDH_E_USAGE;
    mqdh__index_free(d->index);
    d->index = mqdh__index_build(d);
    return d->index ? MQDH_OK : MQDH_E_NOMEM;
}

static int index_find(const struct mqdh_index *x, long g)
{
    for (int lo = 0, hi = x->n; g >= 0 && lo < hi;) {
        int mid = lo + (hi - lo) / 2;
        if (x->v[mid].g == g)
            return x->v[mid].proc;
        if (x->v[mid].g < g)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int mqdh_process_by_global(const struct mqdh_dump *d, long g)
{
    if (d && d->index)
        return index_find(d->index, g);
    int found = -1;
    for (int i = 0; d && g >= 0 && i < d->nprocs; i++) {
        if (mqdh__process_global(&d->procs[i]) != g)
            continue;
        if (found >= 0)
            return -1; /* ranks of two worlds, from an MPI-1 DLL */
        found = i;
    }
    return found;
}

int mqdh_world_size(const struct mqdh_dump *d, int world)
{
    if (d && d->index && world < d->index->nworlds)
        return d->index->world_size[world < 0 ? 0 : world];
    int n = 0;
    for (int i = 0; d && i < d->nprocs; i++)
        n += d->procs[i].world == world || (world <= 0 && d->procs[i].world <= 0);
    return n;
}

/* ---------------------------------------------------------------- naming */

void mqdh_process_label(const struct mqdh_process *p, char *buf, size_t len)
{
    if (p->rank >= 0 && p->world > 0)
        snprintf(buf, len, "world %d rank %d", p->world, p->rank);
    else if (p->rank >= 0)
        snprintf(buf, len, "rank %d", p->rank);
    else
        snprintf(buf, len, "pid %d", (int)p->pid);
}

void mqdh__peer_label(long g, int self, int n, int relative, char *buf, size_t len)
{
    if (!relative || self < 0 || n <= 0 || g < 0 || g >= n) {
        snprintf(buf, len, "rank %ld", g);
        return;
    }
    long dist = ((g - self) % n + n) % n;
    if (dist == 0)
        snprintf(buf, len, "rank");
    else if (dist <= n / 2)
        snprintf(buf, len, "rank+%ld", dist);
    else
        snprintf(buf, len, "rank-%ld", n - dist);
}

void mqdh_peer_text(const struct mqdh_dump *d, int self, long local, long global, int relative,
                    char *buf, size_t len)
{
    const struct mqdh_process *p = &d->procs[self];
    int ti = mqdh_process_by_global(d, global);
    const struct mqdh_process *t = ti >= 0 ? &d->procs[ti] : NULL;
    char who[48];
    if (local < 0) {
        snprintf(buf, len, "ANY");
    } else if (!t) {
        if (global >= 0 && global != local)
            snprintf(buf, len, "%ld (global %ld)", local, global);
        else
            snprintf(buf, len, "%ld", local);
    } else if (relative && t->world == p->world && t->rank >= 0 && p->rank >= 0) {
        mqdh__peer_label(t->rank, p->rank, mqdh_world_size(d, p->world), 1, buf, len);
    } else if (t->world == p->world && t->rank == local) {
        snprintf(buf, len, "%ld", local);
    } else {
        mqdh_process_label(t, who, sizeof who);
        snprintf(buf, len, "%ld (%s)", local, who);
    }
}
