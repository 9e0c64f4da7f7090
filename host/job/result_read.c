/*
 * result_read.c - an agent's result read back into a dump
 * (mqdh_result_read; the format is docs/RESULT.md, written by
 * result_write.c).
 *
 * The reader takes its input for hostile: every number is range-checked,
 * every count bounded, every string unescaped with control characters made
 * '?', and a result that does not end with its "end" record (an agent that
 * died while writing) is refused whole.
 */
#define _GNU_SOURCE
#include "mqdhost.h"

#include "base/array.h"
#include "target/attach.h"
#include "job/result_fields.h"
#include "job/result_read.h"
#include "job/result_requests.h"
#include "target/where.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const queue_states[] = MQDH__RESULT_QUEUE_STATES;

static int read_process(struct mqdh__reader *r, struct mqdh_process *p)
{
    int dll_source;
    long long pid;
    int tid;
    if (mqdh__rd_ll(r, "pid", 1, 0x7fffffff, &pid) != 0 ||
        mqdh__rd_int(r, "rank", -1, MQDH__MAX_LIST, &p->rank) != 0 ||
        mqdh__rd_int(r, "world", -1, MQDH__MAX_LIST, &p->world) != 0 ||
        mqdh__rd_int(r, "identity", -1, 0x7fffffff, &p->identity) != 0 ||
        mqdh__rd_int(r, "dll_source", MQDH_DLL_NONE, MQDH_DLL_TARGET, &dll_source) != 0 ||
        mqdh__rd_int(r, "line", 0, 0x7fffffff, &p->where_line) != 0 ||
        mqdh__rd_int(r, "thread", 0, 0x7fffffff, &tid) != 0)
        return -1;
    p->pid = (pid_t)pid;
    p->where_tid = (pid_t)tid;
    p->dll_source = (enum mqdh_dll_source)dll_source;
    unsigned long args;
    if (mqdh__rd_ulong(r, "args", &args) != 0 ||
        mqdh__rd_long(r, "source", &p->where_source) != 0 ||
        mqdh__rd_long(r, "dest", &p->where_dest) != 0 ||
        mqdh__rd_long(r, "tag", &p->where_tag) != 0 ||
        mqdh__rd_long(r, "root", &p->where_root) != 0 ||
        mqdh__rd_u64(r, "comm", &p->where_comm) != 0 ||
        mqdh__rd_ulong(r, "callbacks", &p->stats.callbacks) != 0 ||
        mqdh__rd_ulong(r, "fetches", &p->stats.fetches) != 0 ||
        mqdh__rd_ulong(r, "bytes", &p->stats.bytes) != 0 ||
        mqdh__rd_ulong(r, "syscalls", &p->stats.syscalls) != 0 || mqdh__rd_need(r, "seconds") != 0)
        return -1;
    if (args > 0x1f)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "args %lu has unknown bits", args);
    p->where_args = (unsigned)args;
    char buf[32], *e;
    snprintf(buf, sizeof buf, "%.*s", (int)(r->toklen < 31 ? r->toklen : 31), r->tok);
    p->stats.seconds = strtod(buf, &e);
    if (*e || e == buf || !(p->stats.seconds >= 0 && p->stats.seconds < 1e9))
        return mqdh__rd_fail(r, MQDH_E_RESULT, "seconds '%s' is not a time", buf);
    return mqdh__rd_end(r);
}

static int read_string_field(struct mqdh__reader *r, struct mqdh_process *p)
{
    static const char *const keys[] = {"host",     "image",       "dll",       "dll_why",
                                       "error",    "call",        "function",  "file",
                                       "where_error", "args_why", "args_from", "comm_name"};
    char **slots[] = {&p->host,           &p->image,         &p->dll,
                      &p->dll_why,        &p->error,         &p->where_call,
                      &p->where_function, &p->where_file,    &p->where_error,
                      &p->where_args_why, &p->where_args_from, &p->where_comm_name};
    if (mqdh__rd_need(r, "key") != 0)
        return -1;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (strlen(keys[i]) != r->toklen || memcmp(keys[i], r->tok, r->toklen) != 0)
            continue;
        if (*slots[i])
            return mqdh__rd_fail(r, MQDH_E_RESULT, "%s given twice", keys[i]);
        if (mqdh__rd_str(r, keys[i], NULL, 0, slots[i]) != 0)
            return -1;
        return mqdh__rd_end(r);
    }
    return 0; /* a string a later version adds: skipped */
}

static int read_comm(struct mqdh__reader *r, struct mqdh_comm *c)
{
    if (mqdh__rd_u64(r, "unique_id", &c->unique_id) != 0 ||
        mqdh__rd_long(r, "local_rank", &c->local_rank) != 0 ||
        mqdh__rd_long(r, "size", &c->size) != 0 ||
        mqdh__rd_int(r, "has_handle", 0, 1, &c->has_handle) != 0 ||
        mqdh__rd_u64(r, "handle", &c->handle) != 0 ||
        mqdh__rd_str(r, "name", c->name, sizeof c->name, NULL) != 0)
        return -1;
    return mqdh__rd_end(r);
}

static int read_group(struct mqdh__reader *r, struct mqdh_comm *c)
{
    long long n;
    if (mqdh__rd_ll(r, "group size", 1, MQDH__MAX_LIST, &n) != 0)
        return -1;
    if (n != c->size || c->local_rank < 0 || c->local_rank >= c->size)
        return mqdh__rd_fail(r, MQDH_E_RESULT,
                             "a group of %lld in a communicator of %ld (rank %ld)", n, c->size,
                             c->local_rank);
    if (mqdh__rd_spend_group(r, (size_t)n * sizeof *c->group) != 0)
        return -1;
    if (!(c->group = malloc((size_t)n * sizeof *c->group)))
        return mqdh__rd_fail(r, MQDH_E_NOMEM, "out of memory");
    for (long long i = 0; i < n;) {
        if (mqdh__rd_need(r, "member") != 0)
            return -1;
        const char *dash = r->toklen > 1 ? memchr(r->tok + 1, '-', r->toklen - 1) : NULL;
        if (!dash || r->tok[0] == '-') { /* one member */
            r->p = r->tok;
            if (mqdh__rd_long(r, "member", &c->group[i++]) != 0)
                return -1;
            continue;
        }
        /* A run "A-B", 0 <= A < B, within the count. */
        char buf[48], *e1, *e2;
        if (r->toklen >= sizeof buf)
            return mqdh__rd_fail(r, MQDH_E_RESULT, "member run is too long");
        memcpy(buf, r->tok, r->toklen);
        buf[r->toklen] = '\0';
        errno = 0;
        long long a = strtoll(buf, &e1, 10);
        long long b = *e1 == '-' ? strtoll(e1 + 1, &e2, 10) : -1;
        if (*e1 != '-' || e1 == buf || *e2 || e2 == e1 + 1 || errno || a < 0 || b <= a ||
            b > LONG_MAX || b - a >= n - i)
            return mqdh__rd_fail(r, MQDH_E_RESULT,
                                 "member run '%s' is not A-B within the group's %lld", buf, n);
        for (long long v = a; v <= b; v++)
            c->group[i++] = (long)v;
    }
    return mqdh__rd_end(r);
}

/* Queue `which` (the next in its communicator). */
static int read_queue(struct mqdh__reader *r, struct mqdh_queue *q, int which)
{
    int given;
    if (mqdh__rd_int(r, "queue", 0, MQDH_NQUEUES - 1, &given) != 0)
        return -1;
    if (given != which)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "queue %d where queue %d comes", given, which);
    if (mqdh__rd_need(r, "state") != 0)
        return -1;
    int state = -1;
    for (int k = 0; k < 3; k++)
        if (strlen(queue_states[k]) == r->toklen && memcmp(queue_states[k], r->tok, r->toklen) == 0)
            state = k;
    if (state < 0)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "queue state '%.*s' unknown",
                             (int)(r->toklen < 20 ? r->toklen : 20), r->tok);
    int n;
    if (mqdh__rd_int(r, "entries", 0, MQDH__MAX_LIST, &n) != 0 ||
        mqdh__rd_str(r, "error", NULL, 0, &q->error) != 0)
        return -1;
    q->state = (enum mqdh_queue_state)state;
    if ((q->error != NULL) != (q->state == MQDH_QUEUE_ERROR) || (n && q->state != MQDH_QUEUE_OK))
        return mqdh__rd_fail(r, MQDH_E_RESULT, "queue %d: state, entries and error disagree",
                             which);
    /* Entries are counted as they come: room for them grows with them, not
     * with the number a corrupt line claims. */
    q->nops = n;
    return mqdh__rd_end(r);
}

static int read_op(struct mqdh__reader *r, struct mqdh_op *o)
{
    int status, coll;
    unsigned long text;
    if (mqdh__rd_int(r, "status", MQDH_OP_PENDING, MQDH_OP_UNKNOWN, &status) != 0 ||
        mqdh__rd_long(r, "desired_local_rank", &o->desired_local_rank) != 0 ||
        mqdh__rd_long(r, "desired_global_rank", &o->desired_global_rank) != 0 ||
        mqdh__rd_int(r, "tag_wild", 0, 1, &o->tag_wild) != 0 ||
        mqdh__rd_long(r, "desired_tag", &o->desired_tag) != 0 ||
        mqdh__rd_long(r, "desired_length", &o->desired_length) != 0 ||
        mqdh__rd_int(r, "system_buffer", 0, 1, &o->system_buffer) != 0 ||
        mqdh__rd_u64(r, "buffer", &o->buffer) != 0 ||
        mqdh__rd_long(r, "actual_local_rank", &o->actual_local_rank) != 0 ||
        mqdh__rd_long(r, "actual_global_rank", &o->actual_global_rank) != 0 ||
        mqdh__rd_long(r, "actual_tag", &o->actual_tag) != 0 ||
        mqdh__rd_long(r, "actual_length", &o->actual_length) != 0 ||
        mqdh__rd_int(r, "collective", 0, 2, &coll) != 0 ||
        mqdh__rd_u64(r, "request", &o->request) != 0 ||
        mqdh__rd_ulong(r, "text_address", &text) != 0)
        return -1;
    if (text > 0x1f)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "text_address %lu has unknown bits", text);
    o->status = (enum mqdh_op_status)status;
    o->collective = coll == 1;
    o->maybe_collective = coll == 2;
    o->text_address = (unsigned)text;
    return mqdh__rd_end(r);
}

static int read_text(struct mqdh__reader *r, struct mqdh_op *o, int *next)
{
    int l;
    if (mqdh__rd_int(r, "line", 0, 4, &l) != 0)
        return -1;
    if (l != *next)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "text line %d out of order", l);
    if (mqdh__rd_str(r, "text", o->extra_text[l], sizeof o->extra_text[l], NULL) != 0)
        return -1;
    if (!o->extra_text[l][0])
        return mqdh__rd_fail(r, MQDH_E_RESULT, "empty text line %d", l);
    (*next)++;
    return mqdh__rd_end(r);
}

/* A thread of a process's stack ("t TID FRAMES ENTRY CALL ERROR"). */
static int read_thread(struct mqdh__reader *r, struct mqdh_thread *t, int *want)
{
    int tid;
    if (mqdh__rd_int(r, "thread", 1, 0x7fffffff, &tid) != 0 ||
        mqdh__rd_int(r, "frames", 0, MQDH__MAX_FRAMES, want) != 0 ||
        mqdh__rd_int(r, "entry", -1, MQDH__MAX_FRAMES - 1, &t->entry) != 0 ||
        mqdh__rd_str(r, "call", NULL, 0, &t->call) != 0 ||
        mqdh__rd_str(r, "error", NULL, 0, &t->error) != 0)
        return -1;
    t->tid = (pid_t)tid;
    if (t->entry >= *want)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "entry frame %d of %d", t->entry, *want);
    return mqdh__rd_end(r);
}

/* A frame ("f PC INLINED KIND LINE MODULE FUNCTION FILE"), its module one
 * of the n modules[] given before. */
static int read_frame(struct mqdh__reader *r, struct mqdh_frame *fr, char *const *modules, int n)
{
    int kind, module;
    if (mqdh__rd_u64(r, "pc", &fr->pc) != 0 ||
        mqdh__rd_int(r, "inlined", 0, 1, &fr->inlined) != 0 ||
        mqdh__rd_int(r, "kind", MQDH_FRAME_USER, MQDH_FRAME_SYSTEM, &kind) != 0 ||
        mqdh__rd_int(r, "line", 0, 0x7fffffff, &fr->line) != 0 ||
        mqdh__rd_int(r, "module", -1, n - 1, &module) != 0 ||
        mqdh__rd_str(r, "function", NULL, 0, &fr->function) != 0 ||
        mqdh__rd_str(r, "file", NULL, 0, &fr->file) != 0)
        return -1;
    fr->kind = (enum mqdh_frame_kind)kind;
    if (module >= 0 && mqdh__rd_spend(r, strlen(modules[module]) + 1, "a frame's module") != 0)
        return -1;
    if (module >= 0 && !(fr->module = strdup(modules[module])))
        return mqdh__rd_fail(r, MQDH_E_NOMEM, "out of memory");
    return mqdh__rd_end(r);
}

/* Where the records being read go. */
struct place {
    struct mqdh_process *p;
    struct mqdh_stack *st; /* p's stack */
    struct mqdh_thread *t;
    int threads_cap, frames_cap, frames_want;
    int comms_cap;
    struct mqdh_comm *c;
    struct mqdh_queue *q;
    int q_next; /* the queue expected next in c */
    int ops_cap, ops_want;
    struct mqdh_op *o;
    int text_next;
};

/* Is the record's type word `name`? */
static int is(const struct mqdh__reader *r, const char *name)
{
    return strlen(name) == r->toklen && memcmp(name, r->tok, r->toklen) == 0;
}

/* A queue whose entries have all come, or a communicator whose queues
 * have: else the result is cut short. */
static int close_queue(struct mqdh__reader *r, struct place *at)
{
    if (at->q && at->q->nops != at->ops_want)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "a queue with %d of its %d entries", at->q->nops,
                             at->ops_want);
    at->q = NULL;
    at->o = NULL;
    return 0;
}

/* A thread whose frames have all come. */
static int close_thread(struct mqdh__reader *r, struct place *at)
{
    if (at->t && at->t->nframes != at->frames_want)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "a thread with %d of its %d frames", at->t->nframes,
                             at->frames_want);
    at->t = NULL;
    return 0;
}

static int close_comm(struct mqdh__reader *r, struct place *at)
{
    if (close_thread(r, at) != 0)
        return -1;
    if (close_queue(r, at) != 0)
        return -1;
    if (at->c && at->q_next != MQDH_NQUEUES)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "a communicator with %d of its %d queues",
                             at->q_next, MQDH_NQUEUES);
    at->c = NULL;
    return 0;
}

/* The objects frames name, as given by "m INDEX PATH" records. */
struct module_table {
    char **path;
    int n, cap;
};

static int read_module(struct mqdh__reader *r, struct module_table *m)
{
    int index;
    if (mqdh__rd_int(r, "module", 0, (1 << 16) - 1, &index) != 0)
        return -1;
    if (index != m->n)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "module %d where module %d comes", index, m->n);
    if (MQDH__GROW(m->path, m->cap, m->n + 1) != 0)
        return mqdh__rd_fail(r, MQDH_E_NOMEM, "out of memory");
    if (mqdh__rd_str(r, "path", NULL, 0, &m->path[m->n]) != 0)
        return -1;
    if (!m->path[m->n++])
        return mqdh__rd_fail(r, MQDH_E_RESULT, "module %d has no path", index);
    return mqdh__rd_end(r);
}

/* Process p's stack, made (zeroed) as the first thread of any process
 * comes: stacks stay as many as the processes. */
static struct mqdh_stack *stack_of(struct mqdh_dump *d, int *stacks_cap, int p)
{
    int had = d->stacks ? *stacks_cap : 0;
    if (MQDH__GROW(d->stacks, *stacks_cap, p + 1) != 0)
        return NULL;
    if (*stacks_cap > had)
        memset(d->stacks + had, 0, (size_t)(*stacks_cap - had) * sizeof *d->stacks);
    return &d->stacks[p];
}

struct stacks_read {
    struct module_table modules;
    int stacks_cap;
    int cpu_cap, tc_cap; /* the dump's cpu records; the current process's threads' */
    struct mqdh__requests_read rq;
};

/* Process p's CPU record, made (zeroed) as the first "cpu" of any
 * process comes: CPU records stay as many as the processes. */
static struct mqdh_cpu *cpu_of(struct mqdh_dump *d, int *cpu_cap, int p)
{
    int had = d->cpu ? *cpu_cap : 0;
    if (MQDH__GROW(d->cpu, *cpu_cap, p + 1) != 0)
        return NULL;
    if (*cpu_cap > had)
        memset(d->cpu + had, 0, (size_t)(*cpu_cap - had) * sizeof *d->cpu);
    return &d->cpu[p];
}

/* The current process's CPU time ("cpu NS"), once, before its threads'
 * ("tc TID NS"). */
static int read_cpu(struct mqdh__reader *r, struct mqdh_dump *d, struct place *at,
                    struct stacks_read *sr)
{
    struct mqdh_cpu *cpu = cpu_of(d, &sr->cpu_cap, (int)(at->p - d->procs));
    if (!cpu)
        return mqdh__rd_fail(r, MQDH_E_NOMEM, "out of memory");
    if (cpu->known)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "a second cpu record for one process");
    if (mqdh__rd_u64(r, "cpu", &cpu->ns) != 0)
        return -1;
    cpu->known = 1;
    return mqdh__rd_end(r);
}

static int read_thread_cpu(struct mqdh__reader *r, struct mqdh_dump *d, struct place *at,
                           struct stacks_read *sr)
{
    struct mqdh_cpu *cpu = d->cpu ? &d->cpu[at->p - d->procs] : NULL;
    if (!cpu || !cpu->known)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "a thread's cpu before its process's");
    if (cpu->nthreads >= MQDH__MAX_THREADS)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "more than %d threads", MQDH__MAX_THREADS);
    if (mqdh__rd_spend(r, sizeof *cpu->threads, "a thread's cpu") != 0)
        return -1;
    if (MQDH__GROW(cpu->threads, sr->tc_cap, cpu->nthreads + 1) != 0)
        return mqdh__rd_fail(r, MQDH_E_NOMEM, "out of memory");
    struct mqdh_thread_cpu *t = &cpu->threads[cpu->nthreads];
    int tid;
    if (mqdh__rd_int(r, "thread", 1, 0x7fffffff, &tid) != 0 ||
        mqdh__rd_u64(r, "cpu", &t->ns) != 0)
        return -1;
    t->tid = (pid_t)tid;
    if (cpu->nthreads && cpu->threads[cpu->nthreads - 1].tid >= t->tid)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "thread %d's cpu out of order", tid);
    cpu->nthreads++;
    return mqdh__rd_end(r);
}

/* A process ("p PID RANK ..."): the one the records after it are of. */
static int begin_process(struct mqdh__reader *r, struct mqdh_dump *d, int *procs_cap,
                         struct place *at, struct stacks_read *sr)
{
    if (close_comm(r, at) != 0 ||
        (at->p && mqdh__rd_requests_close(r, d, &sr->rq, (int)(at->p - d->procs)) != 0) ||
        mqdh__rd_spend(r, sizeof *d->procs + sizeof *d->stacks + sizeof *d->cpu, "a process") != 0)
        return -1;
    if (MQDH__GROW(d->procs, *procs_cap, d->nprocs + 1) != 0 ||
        (d->stacks && !stack_of(d, &sr->stacks_cap, d->nprocs)) ||
        (d->cpu && !cpu_of(d, &sr->cpu_cap, d->nprocs)))
        return mqdh__rd_fail(r, MQDH_E_NOMEM, "out of memory");
    if (d->requests && mqdh__rd_requests_room(r, d, &sr->rq, d->nprocs) != 0)
        return -1;
    *at = (struct place){.p = &d->procs[d->nprocs++]};
    sr->tc_cap = 0;
    memset(at->p, 0, sizeof *at->p);
    return read_process(r, at->p);
}

/* A thread of the current process's stack ("t ..."): the one the frames
 * after it are of. */
static int begin_thread(struct mqdh__reader *r, struct mqdh_dump *d, struct place *at,
                        struct stacks_read *sr)
{
    if (close_comm(r, at) != 0)
        return -1;
    if (!at->st && !(at->st = stack_of(d, &sr->stacks_cap, (int)(at->p - d->procs))))
        return mqdh__rd_fail(r, MQDH_E_NOMEM, "out of memory");
    if (at->st->nthreads >= MQDH__MAX_THREADS)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "more than %d threads", MQDH__MAX_THREADS);
    if (mqdh__rd_spend(r, sizeof *at->st->threads, "a thread") != 0)
        return -1;
    if (MQDH__GROW(at->st->threads, at->threads_cap, at->st->nthreads + 1) != 0)
        return mqdh__rd_fail(r, MQDH_E_NOMEM, "out of memory");
    at->t = &at->st->threads[at->st->nthreads++];
    memset(at->t, 0, sizeof *at->t);
    at->frames_cap = 0;
    return read_thread(r, at->t, &at->frames_want);
}

/* A frame of the current thread ("f ..."). */
static int add_frame(struct mqdh__reader *r, struct place *at, const struct stacks_read *sr)
{
    if (!at->t || at->t->nframes >= at->frames_want)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "a frame beyond its thread's count");
    if (mqdh__rd_spend(r, sizeof *at->t->frames, "a frame") != 0)
        return -1;
    if (MQDH__GROW(at->t->frames, at->frames_cap, at->t->nframes + 1) != 0)
        return mqdh__rd_fail(r, MQDH_E_NOMEM, "out of memory");
    struct mqdh_frame *fr = &at->t->frames[at->t->nframes++];
    memset(fr, 0, sizeof *fr);
    return read_frame(r, fr, sr->modules.path, sr->modules.n);
}

/* A communicator of the current process ("c ..."): the one the groups,
 * queues and entries after it are of. */
static int begin_comm(struct mqdh__reader *r, struct place *at)
{
    if (close_comm(r, at) != 0 || mqdh__rd_spend(r, sizeof *at->p->comms, "a communicator") != 0)
        return -1;
    if (MQDH__GROW(at->p->comms, at->comms_cap, at->p->ncomms + 1) != 0)
        return mqdh__rd_fail(r, MQDH_E_NOMEM, "out of memory");
    at->c = &at->p->comms[at->p->ncomms++];
    memset(at->c, 0, sizeof *at->c);
    at->q_next = 0;
    return read_comm(r, at->c);
}

/* The current communicator's next queue ("q ..."): the one the entries
 * after it are of. */
static int begin_queue(struct mqdh__reader *r, struct place *at)
{
    if (close_queue(r, at) != 0)
        return -1;
    if (at->q_next >= MQDH_NQUEUES)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "more than %d queues", MQDH_NQUEUES);
    at->q = &at->c->queues[at->q_next];
    if (read_queue(r, at->q, at->q_next++) != 0)
        return -1;
    at->ops_want = at->q->nops;
    at->q->nops = 0;
    at->ops_cap = 0;
    return 0;
}

/* An entry of the current queue ("o ..."): the one the text lines after
 * it are of. */
static int begin_op(struct mqdh__reader *r, struct place *at)
{
    if (!at->q || at->q->nops >= at->ops_want)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "an entry beyond its queue's count");
    if (mqdh__rd_spend(r, sizeof *at->q->ops, "an entry") != 0)
        return -1;
    if (MQDH__GROW(at->q->ops, at->ops_cap, at->q->nops + 1) != 0)
        return mqdh__rd_fail(r, MQDH_E_NOMEM, "out of memory");
    at->o = &at->q->ops[at->q->nops++];
    memset(at->o, 0, sizeof *at->o);
    at->text_next = 0;
    return read_op(r, at->o);
}

/* The records inside a communicator: its group, queues and entries. */
static int comm_record(struct mqdh__reader *r, struct place *at)
{
    if ((is(r, "g") || is(r, "ge")) && (at->c->group || at->c->group_error))
        return mqdh__rd_fail(r, MQDH_E_RESULT, "a second group for one communicator");
    if (is(r, "g"))
        return read_group(r, at->c);
    if (is(r, "ge"))
        return mqdh__rd_str(r, "group error", NULL, 0, &at->c->group_error) == 0 ? mqdh__rd_end(r)
                                                                                 : -1;
    if (is(r, "q"))
        return begin_queue(r, at);
    if (is(r, "o"))
        return begin_op(r, at);
    if (is(r, "x"))
        return at->o ? read_text(r, at->o, &at->text_next)
                     : mqdh__rd_fail(r, MQDH_E_RESULT, "a text line outside an entry");
    return 0; /* a record a later version adds: skipped */
}

/* One record of the body, its type word read. */
static int record(struct mqdh__reader *r, struct mqdh_dump *d, int *procs_cap, struct place *at,
                  struct stacks_read *sr)
{
    if (is(r, "p"))
        return begin_process(r, d, procs_cap, at, sr);
    if (is(r, "m"))
        return read_module(r, &sr->modules);
    if (!at->p)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "a '%.*s' record before any process", (int)r->toklen,
                             r->tok);
    if (is(r, "s"))
        return read_string_field(r, at->p);
    if (is(r, "ow")) {
        int ow;
        if (mqdh__rd_int(r, "other worlds", MQDH_WORLDS_NONE, MQDH_WORLDS_MAYBE, &ow) != 0)
            return -1;
        at->p->other_worlds = (enum mqdh_other_worlds)ow;
        return mqdh__rd_end(r);
    }
    if (is(r, "mf")) {
        at->p->mpi_finalized = 1;
        return mqdh__rd_end(r);
    }
    if (is(r, "ws"))
        return mqdh__rd_int(r, "world size", 1, 1 << 30, &at->p->world_size) == 0 ? mqdh__rd_end(r)
                                                                                : -1;
    if (is(r, "cpu"))
        return read_cpu(r, d, at, sr);
    if (is(r, "tc"))
        return read_thread_cpu(r, d, at, sr);
    if (is(r, "t"))
        return begin_thread(r, d, at, sr);
    if (is(r, "f"))
        return add_frame(r, at, sr);
    if (is(r, "c"))
        return begin_comm(r, at);
    int p = (int)(at->p - d->procs);
    if (is(r, "rq"))
        return mqdh__rd_requests(r, d, &sr->rq, p);
    if (is(r, "r"))
        return mqdh__rd_request(r, d, &sr->rq, p);
    if (is(r, "nbc"))
        return mqdh__rd_nbc_tags(r, d, &sr->rq, p);
    if (!at->c)
        return is(r, "g") || is(r, "ge") || is(r, "q") || is(r, "o") || is(r, "x")
                   ? mqdh__rd_fail(r, MQDH_E_RESULT, "a '%.*s' record outside a communicator",
                                   (int)r->toklen, r->tok)
                   : 0;
    return comm_record(r, at);
}

/* The header ("mqd-result VERSION"): which format, before anything else.
 * 0, or -1 (r failed). */
static int read_header(struct mqdh__reader *r, const char *buf, size_t len)
{
    int version;
    if (!buf || len < 11 || memcmp(buf, "mqd-result ", 11) != 0)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "not an mqd result (it begins '%.*s')",
                             (int)(len < 24 ? len : 24), buf ? buf : "");
    r->p += 11;
    if (mqdh__rd_int(r, "version", 0, 0x7fffffff, &version) != 0)
        return -1;
    if (version != MQDH_RESULT_VERSION)
        return mqdh__rd_fail(
            r, MQDH_E_RESULT,
            "result format %d, and this mqdump reads format %d: the agent is another mqd "
            "version (install the same one on every host)",
            version, MQDH_RESULT_VERSION);
    mqdh__rd_next_line(r);
    return 0;
}

/* The records after the header, into d, to the "end" record that must
 * close them (r failed if anything is wrong). */
static void read_body(struct mqdh__reader *r, struct mqdh_dump *d, struct stacks_read *sr)
{
    int procs_cap = 0, ended = 0, declared = -1;
    struct place at = {0};
    while (r->p < r->end && !r->failed) {
        if (mqdh__rd_field(r) != 0) { /* an empty line */
            mqdh__rd_next_line(r);
            continue;
        }
        if (ended) {
            mqdh__rd_fail(r, MQDH_E_RESULT, "a record after the end");
            break;
        }
        if (is(r, "dump")) {
            long long n, w, f;
            if (mqdh__rd_ll(r, "processes", 0, MQDH__MAX_LIST, &n) == 0 &&
                mqdh__rd_ll(r, "workers", 0, 1 << 20, &w) == 0 &&
                mqdh__rd_ll(r, "files", 0, 1 << 30, &f) == 0) {
                declared = (int)n;
                d->workers = (int)w;
                d->files = (unsigned)f;
            }
        } else if (is(r, "end")) {
            long long n;
            if (close_comm(r, &at) == 0 &&
                (!at.p || mqdh__rd_requests_close(r, d, &sr->rq, (int)(at.p - d->procs)) == 0) &&
                mqdh__rd_ll(r, "processes", 0, MQDH__MAX_LIST, &n) == 0 &&
                mqdh__rd_end(r) == 0 && (n != d->nprocs || n != declared))
                mqdh__rd_fail(r, MQDH_E_RESULT, "the end counts %lld processes, and %d came", n,
                              d->nprocs);
            ended = 1;
        } else {
            record(r, d, &procs_cap, &at, sr);
        }
        mqdh__rd_next_line(r);
    }
    if (!r->failed && !ended)
        mqdh__rd_fail(r, MQDH_E_RESULT,
                      "the result stops before its end (the agent died while writing?)");
}

int mqdh_result_read(const char *buf, size_t len, struct mqdh_dump **out, char *err, size_t errlen)
{
    return mqdh__result_read_at(buf, len, 1, out, err, errlen);
}

int mqdh__result_read_at(const char *buf, size_t len, int first_line, struct mqdh_dump **out,
                         char *err, size_t errlen)
{
    char dummy[1];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';
    if (!out)
        return MQDH_E_USAGE;
    *out = NULL;
    if (!buf && len)
        return MQDH_E_USAGE;
    struct mqdh__reader r;
    mqdh__rd_begin(&r, buf, len, first_line, err, errlen);
    struct mqdh_dump *d = calloc(1, sizeof *d);
    if (!d)
        return MQDH_E_NOMEM;
    d->version = MQDH_VERSION;
    struct stacks_read sr = {.rq = MQDH__REQUESTS_READ_INIT};
    if (read_header(&r, buf, len) == 0)
        read_body(&r, d, &sr);
    for (int i = 0; i < sr.modules.n; i++)
        free(sr.modules.path[i]);
    free(sr.modules.path);
    if (r.failed) {
        int code = r.failed;
        mqdh_dump_free(d);
        return code;
    }
    mqdh_dump_index(d);
    *out = d;
    return MQDH_OK;
}
