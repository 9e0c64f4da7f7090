/*
 * handdump.c - dumps of a job built by hand (handdump.h).
 */
#define _GNU_SOURCE
#include "handdump.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *must(void *p)
{
    if (!p) {
        fprintf(stderr, "handdump: out of memory\n");
        exit(1);
    }
    return p;
}

struct mqdh_dump *handdump_job(int n)
{
    struct mqdh_dump *d = must(calloc(1, sizeof *d));
    d->version = MQDH_VERSION;
    d->nprocs = n;
    d->procs = must(calloc((size_t)n + 1, sizeof *d->procs));
    for (int r = 0; r < n; r++) {
        struct mqdh_process *p = &d->procs[r];
        p->pid = 1000 + r;
        p->rank = p->identity = r;
        p->image = must(strdup("/bench/app"));
        p->dll = must(strdup("/bench/libmqd_mpich.so"));
        p->where_call = must(strdup("MPI_Recv"));
        p->where_function = must(strdup("solve"));
        p->where_file = must(strdup("app.c"));
        p->where_line = 42;
        p->ncomms = 1;
        p->comms = must(calloc(1, sizeof *p->comms));
        struct mqdh_comm *c = &p->comms[0];
        snprintf(c->name, sizeof c->name, "MPI_COMM_WORLD");
        c->size = n;
        c->local_rank = r;
        c->unique_id = 0x1000;
    }
    if (mqdh_dump_index(d) != MQDH_OK)
        must(NULL);
    return d;
}

struct mqdh_op *handdump_recv(struct mqdh_dump *d, int rank, long peer, long tag)
{
    struct mqdh_queue *q = &d->procs[rank].comms[0].queues[MQDH_RECEIVES];
    q->ops = must(realloc(q->ops, (size_t)(q->nops + 1) * sizeof *q->ops));
    struct mqdh_op *o = &q->ops[q->nops++];
    memset(o, 0, sizeof *o);
    o->status = MQDH_OP_PENDING;
    o->desired_local_rank = o->desired_global_rank = peer;
    o->desired_tag = tag;
    o->desired_length = 32;
    o->actual_local_rank = o->actual_global_rank = o->actual_tag = o->actual_length = -1;
    return o;
}

void handdump_computing(struct mqdh_dump *d, int rank)
{
    struct mqdh_process *p = &d->procs[rank];
    free(p->where_call);
    free(p->where_function);
    free(p->where_file);
    p->where_call = p->where_function = p->where_file = NULL;
    p->where_line = 0;
    struct mqdh_queue *q = &p->comms[0].queues[MQDH_RECEIVES];
    free(q->ops);
    q->ops = NULL;
    q->nops = 0;
}

static char *dup_or_null(const char *s)
{
    return s ? must(strdup(s)) : NULL;
}

static void set_frame(struct mqdh_frame *f, uint64_t pc, const char *function, const char *module,
                      const char *file, int line, enum mqdh_frame_kind kind)
{
    *f = (struct mqdh_frame){.pc = pc, .line = line, .kind = kind};
    f->function = dup_or_null(function);
    f->module = dup_or_null(module);
    f->file = dup_or_null(file);
}

struct mqdh_dump *handdump_stacked(int n, uint64_t progress_pc, uint64_t cpu_ns)
{
    struct mqdh_dump *d = handdump_job(n);
    d->stacks = must(calloc((size_t)n, sizeof *d->stacks));
    d->cpu = must(calloc((size_t)n, sizeof *d->cpu));
    for (int r = 0; r < n; r++) {
        handdump_recv(d, r, (r + n - 1) % n, 7);
        struct mqdh_stack *st = &d->stacks[r];
        st->nthreads = 1;
        st->threads = must(calloc(1, sizeof *st->threads));
        struct mqdh_thread *t = &st->threads[0];
        t->tid = d->procs[r].pid;
        t->nframes = 4;
        t->frames = must(calloc(4, sizeof *t->frames));
        set_frame(&t->frames[0], progress_pc, "progress_poll", "/usr/lib/libmpi.so.12", NULL, 0,
                  MQDH_FRAME_MPI);
        set_frame(&t->frames[1], 0x6000, "PMPI_Recv", "/usr/lib/libmpi.so.12", NULL, 0,
                  MQDH_FRAME_MPI);
        set_frame(&t->frames[2], 0x1234, "solve", "/bench/app", "app.c", 42, MQDH_FRAME_USER);
        set_frame(&t->frames[3], 0x1100, "main", "/bench/app", "app.c", 10, MQDH_FRAME_USER);
        t->call = dup_or_null("MPI_Recv");
        t->entry = 1;
        struct mqdh_cpu *c = &d->cpu[r];
        c->known = 1;
        c->ns = cpu_ns;
        c->nthreads = 1;
        c->threads = must(calloc(1, sizeof *c->threads));
        c->threads[0] = (struct mqdh_thread_cpu){t->tid, cpu_ns};
    }
    return d;
}

void handdump_stacked_computing(struct mqdh_dump *d, int r, uint64_t pc)
{
    handdump_computing(d, r);
    struct mqdh_thread *t = &d->stacks[r].threads[0];
    for (int k = 0; k < 2; k++) {
        free(t->frames[k].function);
        free(t->frames[k].module);
    }
    memmove(&t->frames[0], &t->frames[2], 2 * sizeof *t->frames);
    t->nframes = 2;
    t->frames[0].pc = pc;
    free(t->call);
    t->call = NULL;
    t->entry = -1;
}

void handdump_add_cpu(struct mqdh_dump *d, int r, uint64_t ns)
{
    d->cpu[r].ns += ns;
    d->cpu[r].threads[0].ns += ns;
}
