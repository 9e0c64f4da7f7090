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
