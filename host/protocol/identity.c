/*
 * identity.c - who each process is: its rank, its MPI_COMM_WORLD, and the
 * MPI-2 identity the DLL names it by.
 */
#define _GNU_SOURCE
#include "protocol/identity.h"
#include "protocol/objects.h"

#include "target/proc.h"

#include <stdlib.h>

/* A process's place in the order identities are handed out in. */
struct order {
    int later; /* 0 world 0 with a rank, 1 another world, 2 neither */
    int world, rank, index;
    pid_t spawner;
};

static int cmp_order(const void *a, const void *b)
{
    const struct order *x = a, *y = b;
    if (x->later != y->later)
        return x->later - y->later;
    if (x->world != y->world)
        return x->world - y->world;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return x->index - y->index;
}

/*
 * Each process's rank (ranks[i] if given and >= 0, else from its
 * environment, unless remote[i]: on another host), its world (the first
 * tabled, given their ranks, are the launcher's table: world 0, of tabled
 * processes, their environments not read), and an
 * identity no other process in the dump has, for the DLL to name it by: a world 0 process's own rank (so a DLL's
 * global ranks read as ranks, as they do without spawns), then the other
 * worlds' processes by world and rank, and last any whose rank is unknown
 * or taken twice.  Spawned processes whose spawn hydra did not number are
 * put in worlds of their own after the numbered ones, one per parent.
 * Returns MQDH_OK or MQDH_E_NOMEM.
 */
int mqdh__name_processes(struct mqdh_process *procs, const int *ranks, const int *remote, int n,
                         int tabled)
{
    struct order *o = calloc((size_t)(n ? n : 1), sizeof *o);
    if (!o)
        return MQDH_E_NOMEM;
    int top = 0;
    for (int i = 0; i < n; i++) {
        /* Another host's pid names nothing here: its rank is the caller's. */
        int env = -1;
        o[i].world = -1;
        if (i < tabled && ranks && ranks[i] >= 0) {
            o[i].world = 0; /* the launcher's table: its world, of its size */
            procs[i].world_size = tabled;
        } else if (!remote || !remote[i]) {
            env = mqdh__proc_env_rank(procs[i].pid, &o[i].world, &o[i].spawner,
                                      &procs[i].world_size);
        }
        if (procs[i].world_size < 0)
            procs[i].world_size = 0; /* unknown */
        procs[i].rank = ranks && ranks[i] >= 0 ? ranks[i] : env;
        o[i].index = i;
        o[i].rank = procs[i].rank;
        if (o[i].world == -1 && procs[i].rank >= 0)
            o[i].world = 0; /* a rank the caller gave: a launched process */
        if (o[i].world > top)
            top = o[i].world;
    }
    /* Unnumbered spawns: one new world per spawner, in spawner order. */
    for (;;) {
        pid_t next = -1;
        for (int i = 0; i < n; i++)
            if (o[i].world == -2 && (next < 0 || o[i].spawner < next))
                next = o[i].spawner;
        if (next < 0)
            break;
        top++;
        for (int i = 0; i < n; i++)
            if (o[i].world == -2 && o[i].spawner == next)
                o[i].world = top;
    }
    for (int i = 0; i < n; i++) {
        procs[i].world = o[i].world;
        o[i].later = o[i].rank < 0 || o[i].world < 0 ? 2 : o[i].world > 0;
    }
    qsort(o, (size_t)n, sizeof *o, cmp_order);
    int next = 0, k = 0;
    for (; k < n && o[k].later == 0; k++) {
        struct mqdh_process *p = &procs[o[k].index];
        if (p->rank >= next) {
            p->identity = p->rank;
            next = p->rank + 1;
        } else {
            p->identity = -1; /* a second process with this rank */
        }
    }
    for (int i = 0; i < n; i++)
        if (procs[o[i].index].identity < 0 || i >= k)
            procs[o[i].index].identity = next++;
    free(o);
    return MQDH_OK;
}
