/*
 * result_write.c - a dump as the text an agent writes on its standard
 * output (mqdh_result_write; the format is docs/RESULT.md, read back by
 * result_read.c).
 */
#include "mqdhost.h"

#include "base/array.h"
#include "job/result_fields.h"
#include "job/result_requests.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const queue_states[] = MQDH__RESULT_QUEUE_STATES;

/* The object paths frames name, each written once ("m INDEX PATH") and
 * then named by its index. */
struct modules {
    const char **path;
    int n, cap, failed;
};

static int module_index(FILE *f, struct modules *m, const char *path)
{
    if (!path)
        return -1;
    for (int i = m->n - 1; i >= 0; i--)
        if (strcmp(m->path[i], path) == 0)
            return i;
    if (MQDH__GROW(m->path, m->cap, m->n + 1) != 0) {
        m->failed = 1;
        return -1;
    }
    m->path[m->n] = path;
    fprintf(f, "m %d", m->n);
    mqdh__result_put_str(f, path);
    putc('\n', f);
    return m->n++;
}

static void put_stack(FILE *f, const struct mqdh_stack *st, struct modules *m)
{
    for (int t = 0; t < st->nthreads; t++) {
        const struct mqdh_thread *th = &st->threads[t];
        fprintf(f, "t %d %d %d", (int)th->tid, th->nframes, th->entry);
        mqdh__result_put_str(f, th->call);
        mqdh__result_put_str(f, th->error);
        putc('\n', f);
        for (int i = 0; i < th->nframes; i++) {
            const struct mqdh_frame *fr = &th->frames[i];
            int module = module_index(f, m, fr->module); /* its m record, the first time */
            fprintf(f, "f %" PRIu64 " %d %d %d %d", fr->pc, fr->inlined, (int)fr->kind, fr->line,
                    module);
            mqdh__result_put_str(f, fr->function);
            mqdh__result_put_str(f, fr->file);
            putc('\n', f);
        }
    }
}

/* The CPU time the process had used at the look: "cpu NS", then "tc TID
 * NS" for each thread. */
static void put_cpu(FILE *f, const struct mqdh_cpu *cpu)
{
    fprintf(f, "cpu %" PRIu64 "\n", cpu->ns);
    for (int t = 0; t < cpu->nthreads; t++)
        fprintf(f, "tc %d %" PRIu64 "\n", (int)cpu->threads[t].tid, cpu->threads[t].ns);
}

/* A group ("g SIZE ..."): runs of consecutive ranks as "A-B" (a world is
 * one run). */
static void put_group(FILE *f, const struct mqdh_comm *cm)
{
    fprintf(f, "g %ld", cm->size);
    for (long i = 0; i < cm->size;) {
        long j = i;
        while (cm->group[i] >= 0 && j + 1 < cm->size && cm->group[j + 1] == cm->group[j] + 1)
            j++;
        if (j - i < 2)
            j = i; /* two are no shorter as a run */
        if (j > i)
            fprintf(f, " %ld-%ld", cm->group[i], cm->group[j]);
        else
            fprintf(f, " %ld", cm->group[i]);
        i = j + 1;
    }
    putc('\n', f);
}

/* A queue ("q N STATE ENTRIES ERROR"), then its entries ("o ...") and
 * their text lines ("x L TEXT"). */
static void put_queue(FILE *f, int q, const struct mqdh_queue *qu)
{
    fprintf(f, "q %d %s %d", q, queue_states[qu->state], qu->nops);
    mqdh__result_put_str(f, qu->error);
    putc('\n', f);
    for (int k = 0; k < qu->nops; k++) {
        const struct mqdh_op *o = &qu->ops[k];
        fprintf(f,
                "o %d %ld %ld %d %ld %ld %d %" PRIu64 " %ld %ld %ld %ld %d %" PRIu64 " %u\n",
                (int)o->status, o->desired_local_rank, o->desired_global_rank, o->tag_wild,
                o->desired_tag, o->desired_length, o->system_buffer, o->buffer,
                o->actual_local_rank, o->actual_global_rank, o->actual_tag, o->actual_length,
                o->collective ? 1 : o->maybe_collective ? 2 : 0, o->request, o->text_address);
        for (int l = 0; l < 5 && o->extra_text[l][0]; l++) {
            fprintf(f, "x %d", l);
            mqdh__result_put_str(f, o->extra_text[l]);
            putc('\n', f);
        }
    }
}

/* A communicator ("c ..."), its group and its three queues. */
static void put_comm(FILE *f, const struct mqdh_comm *cm)
{
    fprintf(f, "c %" PRIu64 " %ld %ld %d %" PRIu64, cm->unique_id, cm->local_rank, cm->size,
            cm->has_handle, cm->handle);
    mqdh__result_put_str(f, cm->name);
    putc('\n', f);
    if (cm->group)
        put_group(f, cm);
    if (cm->group_error) {
        fputs("ge", f);
        mqdh__result_put_str(f, cm->group_error);
        putc('\n', f);
    }
    for (int q = 0; q < MQDH_NQUEUES; q++)
        put_queue(f, q, &cm->queues[q]);
}

/* A process's own record ("p ...") and its strings ("s KEY STRING"). */
static void put_fields(FILE *f, const struct mqdh_process *p)
{
    fprintf(f, "p %d %d %d %d %d %d %d %u %ld %ld %ld %ld %" PRIu64 " %lu %lu %lu %lu %.6f\n",
            (int)p->pid, p->rank, p->world, p->identity, (int)p->dll_source, p->where_line,
            (int)p->where_tid, p->where_args, p->where_source, p->where_dest, p->where_tag,
            p->where_root, p->where_comm, p->stats.callbacks, p->stats.fetches, p->stats.bytes,
            p->stats.syscalls, p->stats.seconds);
    const struct {
        const char *key, *value;
    } strs[] = {
        {"host", p->host},       {"image", p->image},         {"dll", p->dll},
        {"dll_why", p->dll_why}, {"error", p->error},         {"call", p->where_call},
        {"function", p->where_function}, {"file", p->where_file},
        {"where_error", p->where_error}, {"args_why", p->where_args_why},
        {"args_from", p->where_args_from}, {"comm_name", p->where_comm_name},
    };
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if (strs[i].value) {
            fprintf(f, "s %s", strs[i].key);
            mqdh__result_put_str(f, strs[i].value);
            putc('\n', f);
        }
}

static void put_process(FILE *f, const struct mqdh_process *p, const struct mqdh_stack *st,
                        const struct mqdh_cpu *cpu, const struct mqdh_requests *rq,
                        struct modules *m)
{
    put_fields(f, p);
    if (p->world_size > 0)
        fprintf(f, "ws %d\n", p->world_size);
    if (p->other_worlds != MQDH_WORLDS_UNKNOWN)
        fprintf(f, "ow %d\n", (int)p->other_worlds);
    if (p->mpi_finalized)
        fputs("mf\n", f);
    if (cpu && cpu->known)
        put_cpu(f, cpu);
    if (st)
        put_stack(f, st, m);
    for (int c = 0; c < p->ncomms; c++)
        put_comm(f, &p->comms[c]);
    mqdh__result_put_requests(f, p, rq);
}

int mqdh_result_write(FILE *f, const struct mqdh_dump *d)
{
    if (!f || !d)
        return MQDH_E_USAGE;
    fprintf(f, "mqd-result %d\n", MQDH_RESULT_VERSION);
    fprintf(f, "dump %d %d %u\n", d->nprocs, d->workers, d->files);
    struct modules m = {0};
    for (int i = 0; i < d->nprocs; i++)
        put_process(f, &d->procs[i], d->stacks ? &d->stacks[i] : NULL,
                    d->cpu ? &d->cpu[i] : NULL, d->requests ? &d->requests[i] : NULL, &m);
    free(m.path);
    if (m.failed)
        return MQDH_E_NOMEM;
    fprintf(f, "end %d\n", d->nprocs);
    return fflush(f) == 0 && !ferror(f) ? MQDH_OK : MQDH_E_WRITE;
}
