/*
 * json.c - mqdump --json: the dump and its analysis as one JSON object,
 * and --list --json (json.h); the format is docs/JSON.md's.
 */
#define _GNU_SOURCE
#include "json.h"

#include "common.h"

#include <stdio.h>
#include <string.h>

static const char *const queue_keys[MQDH_NQUEUES] = {"pending_sends", "pending_receives",
                                                     "unexpected_messages"};

/* Why a process was dumped with its DLL, as "dll_source" says it. */
static const char *dll_source(enum mqdh_dll_source src)
{
    switch (src) {
    case MQDH_DLL_NONE: return "none";
    case MQDH_DLL_OPTION: return "option";
    case MQDH_DLL_ENVIRONMENT: return "environment";
    case MQDH_DLL_OWN: return "mqd";
    case MQDH_DLL_TARGET: return "target";
    }
    return "?";
}

/* The call's arguments read from its frame, and the communicator whose
 * handle its comm argument is. */
static void json_args(const struct mqdh_process *p)
{
    const struct {
        unsigned bit;
        const char *name;
        long value;
    } ints[] = {
        {MQDH_ARG_SOURCE, "source", p->where_source},
        {MQDH_ARG_DEST, "dest", p->where_dest},
        {MQDH_ARG_TAG, "tag", p->where_tag},
        {MQDH_ARG_ROOT, "root", p->where_root},
    };
    const char *sep = "";
    for (size_t a = 0; a < sizeof ints / sizeof ints[0]; a++)
        if (p->where_args & ints[a].bit) {
            printf("%s\"%s\": %ld", sep, ints[a].name, ints[a].value);
            sep = ", ";
        }
    if (p->where_args & MQDH_ARG_COMM) {
        printf("%s\"comm\": %llu, \"comm_name\": ", sep, (unsigned long long)p->where_comm);
        const char *name = p->where_comm_name;
        for (int c = 0; c < p->ncomms && !name; c++) /* a DLL's own communicator */
            if (p->comms[c].has_handle && p->comms[c].handle == p->where_comm)
                name = p->comms[c].name;
        json_string(name);
    }
}

/* Where the process is ("where"): its MPI call and the call's arguments,
 * or null. */
static void json_where(const struct mqdh_process *p)
{
    printf(", \"where\": ");
    if (!p->where_call) {
        printf("null");
        return;
    }
    printf("{\"call\": ");
    json_string(p->where_call);
    printf(", \"function\": ");
    json_string(p->where_function);
    printf(", \"file\": ");
    json_string(p->where_file);
    printf(", \"line\": %d, \"thread\": %d, \"args\": {", p->where_line, (int)p->where_tid);
    json_args(p);
    printf("}, \"args_why\": ");
    json_string(p->where_args_why);
    printf(", \"args_from\": ");
    json_string(p->where_args_from);
    printf("}");
}

/* Where its own code is ("user_frame"): what a process outside MPI is
 * doing; null if no frame is the program's. */
static void json_user_frame(const struct mqdh_dump *d, int i)
{
    const struct mqdh_frame *uf = mqdh_user_frame(d, i);
    printf(", \"user_frame\": ");
    if (!uf) {
        printf("null");
        return;
    }
    printf("{\"function\": ");
    json_string(uf->function);
    printf(", \"file\": ");
    json_string(uf->file);
    printf(", \"line\": %d}", uf->line);
}

/* A process's threads and their frames ("threads"), as an array. */
static void json_threads(const struct mqdh_stack *st)
{
    printf("[");
    for (int k = 0; k < st->nthreads; k++) {
        const struct mqdh_thread *th = &st->threads[k];
        printf("%s{\"tid\":%d,\"call\":", k ? "," : "", (int)th->tid);
        json_string(th->call);
        printf(",\"entry\":%d,\"error\":", th->entry);
        json_string(th->error);
        printf(",\"frames\":[");
        for (int i = 0; i < th->nframes; i++) {
            const struct mqdh_frame *f = &th->frames[i];
            printf("%s{\"pc\":%llu,\"function\":", i ? "," : "", (unsigned long long)f->pc);
            json_string(f->function);
            printf(",\"module\":");
            json_string(f->module);
            printf(",\"file\":");
            json_string(f->file);
            printf(",\"line\":%d,\"inlined\":%s,\"kind\":\"%s\"}", f->line,
                   f->inlined ? "true" : "false", frame_kind_name(f->kind));
        }
        printf("]}");
    }
    printf("]");
}

/* One queue entry: the interface's mqs_pending_operation, and what the
 * DLL's mqd_get_operation_info adds. */
static void json_op(const struct mqdh_op *op, int first)
{
    printf("%s\n   {\"status\": \"%s\", \"desired_local_rank\": %ld, "
           "\"desired_global_rank\": %ld, \"tag_wild\": %s, \"desired_tag\": "
           "%ld, \"desired_length\": %ld, \"system_buffer\": %s, \"buffer\": "
           "%llu, \"actual_local_rank\": %ld, \"actual_global_rank\": %ld, "
           "\"actual_tag\": %ld, \"actual_length\": %ld, \"extra_text\": [",
           first ? "" : ",", status_name(op->status), op->desired_local_rank,
           op->desired_global_rank, op->tag_wild ? "true" : "false", op->desired_tag,
           op->desired_length, op->system_buffer ? "true" : "false",
           (unsigned long long)op->buffer, op->actual_local_rank, op->actual_global_rank,
           op->actual_tag, op->actual_length);
    for (int l = 0; l < 5 && op->extra_text[l][0]; l++) {
        printf("%s", l ? ", " : "");
        json_string(op->extra_text[l]);
    }
    printf("], \"collective\": %s, ", op->collective ? "true" : "false");
    if (op->maybe_collective)
        printf("\"maybe_collective\": true, ");
    printf("\"request\": %llu}", (unsigned long long)op->request);
}

/* A communicator's queue q: its entries, or null without them (no
 * information, or the DLL failed: queue_errors says which). */
static void json_queue(const struct mqdh_comm *cm, int q)
{
    const struct mqdh_queue *qu = &cm->queues[q];
    printf(", \"%s\": ", queue_keys[q]);
    if (qu->state != MQDH_QUEUE_OK) {
        printf("null");
        return;
    }
    printf("[");
    for (int o = 0; o < qu->nops; o++)
        json_op(&qu->ops[o], o == 0);
    printf("]");
}

/* The queues the DLL failed on, and how ("queue_errors"). */
static void json_queue_errors(const struct mqdh_comm *cm)
{
    printf(", \"queue_errors\": [");
    int first = 1;
    for (int q = 0; q < MQDH_NQUEUES; q++) {
        if (cm->queues[q].state == MQDH_QUEUE_ERROR) {
            printf("%s{\"queue\": \"%s\", \"error\": ", first ? "" : ", ", queue_keys[q]);
            json_string(cm->queues[q].error);
            printf("}");
            first = 0;
        }
    }
    printf("]");
}

/* One communicator: its name, size, ranks and group, and its queues. */
static void json_communicator(const struct mqdh_comm *cm, int first)
{
    printf("%s\n  {\"name\": ", first ? "" : ",");
    json_string(cm->name);
    printf(", \"unique_id\": %llu, \"local_rank\": %ld, \"size\": %ld",
           (unsigned long long)cm->unique_id, cm->local_rank, cm->size);
    if (cm->has_handle)
        printf(", \"handle\": %llu", (unsigned long long)cm->handle);
    else
        printf(", \"handle\": null");
    printf(", \"group\": ");
    if (cm->group)
        json_longs(cm->group, cm->size);
    else
        fputs("null", stdout);
    printf(", \"group_error\": ");
    json_string(cm->group_error);
    for (int q = 0; q < MQDH_NQUEUES; q++)
        json_queue(cm, q);
    json_queue_errors(cm);
    printf("}");
}

/* Process i of d: who and where it is, how it was dumped, and its
 * communicators. */
static void json_process(const struct mqdh_dump *d, int i, int stats, int stacks)
{
    const struct mqdh_process *p = &d->procs[i];
    printf("%s\n {\"pid\": %d, \"rank\": %d, \"world\": %d, \"identity\": %d, \"host\": ",
           i ? "," : "", (int)p->pid, p->rank, p->world, p->identity);
    json_string(p->host);
    printf(", \"image\": ");
    json_string(p->image);
    printf(", \"dll\": ");
    json_string(p->dll);
    printf(", \"dll_source\": \"%s\", \"dll_why\": ", dll_source(p->dll_source));
    json_string(p->dll_why);
    printf(", \"error\": ");
    json_string(p->error);
    if (p->mpi_finalized)
        printf(", \"mpi_finalized\": true");
    json_where(p);
    json_user_frame(d, i);
    if (stacks && d->stacks) {
        printf(", \"threads\": ");
        json_threads(&d->stacks[i]);
    }
    if (stats)
        printf(", \"stats\": {\"callbacks\": %lu, \"fetches\": %lu, \"bytes\": %lu, "
               "\"syscalls\": %lu, \"seconds\": %.6f}",
               p->stats.callbacks, p->stats.fetches, p->stats.bytes, p->stats.syscalls,
               p->stats.seconds);
    printf(", \"communicators\": [");
    for (int c = 0; c < p->ncomms; c++)
        json_communicator(&p->comms[c], c == 0);
    printf("]}");
}

void json_begin(void)
{
    printf("{\"format\": %d, ", MQDUMP_JSON_FORMAT);
}

void json_processes(const struct mqdh_dump *d, int stats, int stacks)
{
    printf("\"processes\": [");
    for (int i = 0; i < d->nprocs; i++)
        json_process(d, i, stats, stacks);
    printf("\n]");
}

void json_end(void)
{
    printf("}\n");
}

static const char *wait_kind(enum mqdh_wait_kind k)
{
    switch (k) {
    case MQDH_WAIT_RECV: return "recv";
    case MQDH_WAIT_SEND: return "send";
    case MQDH_WAIT_COLLECTIVE: return "collective";
    }
    return "?";
}

/* Processes v[0..n-1]: "KEY": [their ranks], "PKEY": [their indexes in
 * "processes"], which also tell apart equal ranks of different worlds. */
static void json_members(const char *key, const char *pkey, const int *v, int n,
                         const struct mqdh_dump *d)
{
    printf("\"%s\": [", key);
    for (int i = 0; i < n; i++)
        printf("%s%d", i ? ", " : "", d->procs[v[i]].rank);
    printf("], \"%s\": [", pkey);
    for (int i = 0; i < n; i++)
        printf("%s%d", i ? ", " : "", v[i]);
    printf("]");
}

static void json_wait(const struct mqdh_dump *d, const struct mqdh_wait *w)
{
    const struct mqdh_process *f = &d->procs[w->from], *t = &d->procs[w->to];
    printf("{\"from\": %d, \"to\": %d, \"from_world\": %d, \"to_world\": %d, "
           "\"from_process\": %d, \"to_process\": %d, \"from_pid\": %d, \"to_pid\": %d, "
           "\"kind\": \"%s\", \"any_source\": %s, \"call\": ",
           f->rank, t->rank, f->world, t->world, w->from, w->to, (int)f->pid, (int)t->pid,
           wait_kind(w->kind), w->any_source && !w->peer_unknown ? "true" : "false");
    json_string(f->where_call);
    printf(", \"comm\": ");
    json_string(w->comm >= 0 ? f->comms[w->comm].name : w->comm == -1 ? "MPI_COMM_WORLD" : "?");
    if (w->tag_wild || w->tag_unknown || (w->kind == MQDH_WAIT_COLLECTIVE && w->tag < 0))
        printf(", \"tag\": null");
    else
        printf(", \"tag\": %ld", w->tag);
    printf(", \"group\": %d, \"in_deadlock\": %s, \"from_call\": %s, \"why\": ", w->group,
           w->in_deadlock ? "true" : "false", w->from_call ? "true" : "false");
    char why[WHY_LEN];
    mqdh_explain_wait(d, w, 0, why, sizeof why);
    json_string(why);
    printf("}");
}

static const char *activity_name(enum mqdh_activity act)
{
    switch (act) {
    case MQDH_ACT_UNKNOWN: break;
    case MQDH_ACT_RUNNING: return "running";
    case MQDH_ACT_IN_MPI: return "in_mpi";
    case MQDH_ACT_BLOCKED: return "blocked";
    }
    return "unknown";
}

static const char *verdict_name(enum mqdh_verdict v)
{
    switch (v) {
    case MQDH_VERDICT_DEADLOCK: return "deadlock";
    case MQDH_VERDICT_NONE: return "none";
    case MQDH_VERDICT_UNKNOWN: break;
    }
    return "unknown";
}

void json_analysis(const struct mqdh_dump *d, const struct mqdh_analysis *a)
{
    printf(",\n\"deadlock\": {\"found\": %s, \"verdict\": \"%s\", \"blind\": %d, "
           "\"calls_only\": %d, \"deadlocks\": [",
           a->ndeadlocks ? "true" : "false", verdict_name(a->verdict), a->nblind, a->ncalls_only);
    for (int k = 0; k < a->ndeadlocks; k++) {
        const struct mqdh_deadlock *dl = &a->deadlocks[k];
        printf("%s\n  {\"kind\": \"%s\", ", k ? "," : "", deadlock_kind_name(dl));
        json_members("ranks", "processes", dl->members, dl->nmembers, d);
        printf(", \"edges\": [");
        for (int e = 0; e < dl->nwaits; e++) {
            printf("%s\n   ", e ? "," : "");
            json_wait(d, &a->waits[dl->waits[e]]);
        }
        printf("]}");
    }
    printf("],\n ");
    json_members("behind", "behind_processes", a->behind, a->nbehind, d);
    printf(",\n \"activity\": [");
    for (int i = 0; i < a->nprocs; i++)
        printf("%s{\"rank\": %d, \"world\": %d, \"state\": \"%s\"}", i ? ", " : "",
               d->procs[i].rank, d->procs[i].world, activity_name(a->activity[i]));
    printf("],\n \"unseen\": [");
    for (int i = 0; i < a->nunseen; i++) {
        printf("%s", i ? ", " : "");
        json_string(a->unseen[i]);
    }
    printf("],\n \"waits\": [");
    for (int w = 0; w < a->nwaits; w++) {
        printf("%s\n  ", w ? "," : "");
        json_wait(d, &a->waits[w]);
    }
    printf("]}");
}

void json_jobs(const struct mqdh_job_info *jobs, int n)
{
    printf("{\"format\": %d, \"jobs\": [", MQDUMP_JSON_FORMAT);
    for (int i = 0; i < n; i++) {
        printf("%s\n {\"launcher\": %d, \"ranks\": %d, \"uid\": %u, \"command\": ",
               i ? "," : "", (int)jobs[i].launcher, jobs[i].nranks, (unsigned)jobs[i].uid);
        json_string(jobs[i].launcher_cmd);
        printf(", \"program\": ");
        json_string(jobs[i].program);
        printf("}");
    }
    printf("\n]}\n");
}

void json_cost(const struct mqdh_dump *d)
{
    struct own_cost c = own_cost();
    printf(",\n\"cost\": {\"user_seconds\": %.6f, \"system_seconds\": %.6f, \"max_rss_kb\": %ld, "
           "\"workers\": %d, \"files\": %u}",
           c.user, c.system, c.rss_kb, d->workers, d->files);
}
