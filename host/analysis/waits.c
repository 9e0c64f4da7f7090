/*
 * waits.c - what each blocked process waits for (waits.h), by the MPI call
 * it is in (match.h has how each kind of call waits), its own queues and
 * what its peers' queues hold.
 *
 * Each wait is an edge of the wait-for graph (mqdh_wait): a process's
 * edges of one group are alternatives, its groups all needed.  Whatever
 * could not be seen is said (mqdh__unseen) and makes the analysis assume
 * the process is free, so that a deadlock found holds whatever it hides.
 */
#define _GNU_SOURCE
#include "analysis/waits.h"

#include "base/dump.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---------------------------------------------------------------- building */


static void add_unseen(struct mqdh__waits *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

void mqdh__unseen(struct mqdh__waits *b, int who, const char *fmt, ...)
{
    b->blind[who] = 1;
    va_list ap;
    va_start(ap, fmt);
    add_unseen(b, fmt, ap);
    va_end(ap);
}

void mqdh__unseen_note(struct mqdh__waits *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_unseen(b, fmt, ap);
    va_end(ap);
}

static void add_unseen(struct mqdh__waits *b, const char *fmt, va_list ap)
{
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    struct mqdh_analysis *a = b->a;
    for (int i = 0; i < a->nunseen; i++)
        if (strcmp(a->unseen[i], line) == 0)
            return;
    if (a->nunseen == b->cap_unseen) {
        int cap = b->cap_unseen ? 2 * b->cap_unseen : 8;
        char **n = realloc(a->unseen, (size_t)cap * sizeof *n);
        if (!n) {
            b->nomem = 1;
            return;
        }
        a->unseen = n;
        b->cap_unseen = cap;
    }
    if (!(a->unseen[a->nunseen] = strdup(line)))
        b->nomem = 1;
    else
        a->nunseen++;
}

const char *mqdh__waits_label(const struct mqdh__waits *b, int i, char *buf, size_t len)
{
    mqdh_process_label(&b->m.d->procs[i], buf, len);
    return buf;
}

struct mqdh_wait *mqdh__add_wait(struct mqdh__waits *b)
{
    struct mqdh_analysis *a = b->a;
    if (a->nwaits == b->cap_waits) {
        int cap = b->cap_waits ? 2 * b->cap_waits : 16;
        struct mqdh_wait *n = realloc(a->waits, (size_t)cap * sizeof *n);
        if (!n) {
            b->nomem = 1;
            return NULL;
        }
        a->waits = n;
        b->cap_waits = cap;
    }
    struct mqdh_wait *w = &a->waits[a->nwaits++];
    memset(w, 0, sizeof *w);
    return w;
}

struct mqdh_wait *mqdh__add_collective_wait(struct mqdh__waits *b, int i, int m, int g, int comm,
                                           long local)
{
    struct mqdh_wait *w = mqdh__add_wait(b);
    if (!w)
        return NULL;
    w->from = i;
    w->to = m;
    w->group = g;
    w->kind = MQDH_WAIT_COLLECTIVE;
    w->comm = comm;
    w->peer_local = local;
    w->peer_global = b->ids[m];
    w->tag = -1;
    return w;
}

/* ---------------------------------------------------------------- entry */

int mqdh__waits_init(struct mqdh__waits *b, const struct mqdh_dump *d, struct mqdh_analysis *a)
{
    size_t m = (size_t)(d->nprocs ? d->nprocs : 1);
    memset(b, 0, sizeof *b);
    b->a = a;
    b->ids = calloc(m, sizeof *b->ids);
    b->blind = calloc(m, sizeof *b->blind);
    b->coll_comm = calloc(m, sizeof *b->coll_comm);
    b->cand = calloc(m, sizeof *b->cand);
    if (!b->ids || !b->blind || !b->coll_comm || !b->cand) {
        mqdh__waits_fini(b);
        return MQDH_E_NOMEM;
    }
    b->memo_world = -2;
    b->m.d = d;
    b->m.ids = b->ids;
    b->m.one_world = 1;
    if (mqdh__match_groups(&b->m) != MQDH_OK) {
        mqdh__waits_fini(b);
        return MQDH_E_NOMEM;
    }
    for (int i = 0; i < d->nprocs; i++) {
        const struct mqdh_process *p = &d->procs[i];
        b->m.one_world &= p->world <= 0;
        b->ids[i] = mqdh__process_global(p);
        /* A blocking collective's communicator is its comm argument where it
         * was read; else the one whose queues hold its traffic. */
        int ac =
            mqdh__call_kind(p->where_call) == MQDH__CALL_COLLECTIVE ? mqdh__comm_of_args(p) : -1;
        b->coll_comm[i] = ac >= 0 ? ac : mqdh__comm_of_traffic(p);
    }
    return MQDH_OK;
}

void mqdh__waits_fini(struct mqdh__waits *b)
{
    mqdh__match_fini(&b->m);
    free(b->ids);
    free(b->blind);
    free(b->coll_comm);
    free(b->cand);
    b->ids = NULL;
    b->blind = b->coll_comm = NULL;
    b->cand = NULL;
}

long mqdh__next_nbc_tag(const struct mqdh_dump *d, int m, int k)
{
    const struct mqdh_requests *r = d->requests ? &d->requests[m] : NULL;
    return r && r->nbc_next_tag && k >= 0 && k < r->nbc_ncomms ? r->nbc_next_tag[k] : -1;
}
