/*
 * mqdump - show the MPI message queues of stopped or hung processes.
 * Uses only the public libmqdhost API (mqdhost.h).
 *
 * Exit status: 0 every process dumped and the analysis conclusive (a
 * deadlock, or none), 1 some process not dumped or the analysis cannot
 * tell, 2 none dumped (or no job found), 64 usage error.
 */
#define _GNU_SOURCE
#include "mqdhost.h"
#include "mqdump_graph.h"

#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const queue_names[MQDH_NQUEUES] = {"pending sends", "pending receives",
                                                      "unexpected messages"};
static const char *const queue_keys[MQDH_NQUEUES] = {"pending_sends", "pending_receives",
                                                     "unexpected_messages"};
static const char *status_name(enum mqdh_op_status s)
{
    switch (s) {
    case MQDH_OP_PENDING: return "pending";
    case MQDH_OP_MATCHED: return "matched";
    case MQDH_OP_COMPLETE: return "complete";
    case MQDH_OP_UNKNOWN: break;
    }
    return "unknown";
}

static void usage(FILE *f)
{
    fputs("usage: mqdump [OPTIONS] --job LAUNCHER_PID\n"
          "       mqdump [OPTIONS] --pid PID [--pid PID ...]\n"
          "       mqdump [--list]\n"
          "       mqdump --check-dll PATH\n"
          "Show the MPI message queues of processes, and who waits for whom.\n\n"
          "  -j, --job PID           every rank of the job this launcher (mpiexec) runs,\n"
          "                          and the processes they spawned (MPI_Comm_spawn)\n"
          "  -p, --pid PID           a process to dump (repeatable)\n"
          "  -l, --list              the MPI jobs on this node (also: no arguments)\n"
          "  -d, --dll PATH          the debug DLL to use (default: $MQD_DLL, else mqd's\n"
          "                          own for MPICH, else the one the process names)\n"
          "      --target-dll        use the DLL the process names (MPIR_dll_name), not\n"
          "                          mqd's own\n"
          "      --trust-target-dll  load the DLL the process names even if it fails\n"
          "                          the ownership and permission checks\n"
          "      --check-dll PATH    load and validate a debug DLL, print its version\n"
          "      --full              every process in full, not processes in the same\n"
          "                          state folded together under their ranks\n"
          "      --json              one JSON object instead of text\n"
          "      --graph FILE        the queues and deadlocks as a Graphviz graph: DOT,\n"
          "                          or SVG/PNG/PDF (by FILE's suffix) rendered by dot\n"
          "      --stats             per process: DLL callbacks, bytes, system calls, time\n"
          "  -v, --verbose           show the DLL's diagnostic messages\n"
          "  -h, --help              this text\n\n"
          "Exit status: 0 every process dumped and the analysis sure (a deadlock or\n"
          "none), 1 some process not dumped or the analysis cannot tell, 2 nothing\n"
          "dumped, 64 usage error.\n",
          f);
}

/*
 * How a process's state is written.  EXACT: as it is.  Folded views write
 * what may be the same in many processes: no addresses, a rank in a
 * communicator the size of the job that is the world rank as such, and
 * peers as ranks (FOLD_ABS) or relative to the process's own rank
 * (FOLD_REL: "rank-1", modulo the job).
 */
enum render { EXACT, FOLD_ABS, FOLD_REL };

struct view {
    FILE *f;
    const struct mqdh_dump *d;
    const struct mqdh_process *p;
    enum render mode;
};

static void print_peer(const struct view *v, long local, long global)
{
    char peer[96];
    mqdh_peer_text(v->d, (int)(v->p - v->d->procs), local, global, v->mode == FOLD_REL, peer,
                   sizeof peer);
    fprintf(v->f, "%s", peer);
}

static void text_op(const struct view *v, const struct mqdh_op *o, int q)
{
    FILE *f = v->f;
    fprintf(f, "      %-8s ", status_name(o->status));
    if (q == MQDH_UNEXPECTED) {
        fprintf(f, "from ");
        print_peer(v, o->actual_local_rank, o->actual_global_rank);
        fprintf(f, " tag %ld, %ld bytes", o->actual_tag, o->actual_length);
    } else {
        fprintf(f, q == MQDH_SENDS ? "to " : "from ");
        print_peer(v, o->desired_local_rank, o->desired_global_rank);
        if (o->tag_wild)
            fprintf(f, " tag ANY");
        else
            fprintf(f, " tag %ld", o->desired_tag);
        fprintf(f, ", %ld bytes", o->desired_length);
        if (q == MQDH_RECEIVES &&
            (o->status == MQDH_OP_MATCHED || o->status == MQDH_OP_COMPLETE)) {
            fprintf(f, " <- matched ");
            print_peer(v, o->actual_local_rank, o->actual_global_rank);
            fprintf(f, " tag %ld, %ld bytes", o->actual_tag, o->actual_length);
        }
    }
    if (v->mode == EXACT)
        fprintf(f, ", buffer 0x%llx%s", (unsigned long long)o->buffer,
                o->system_buffer ? " (system)" : "");
    else if (o->system_buffer)
        fprintf(f, ", system buffer");
    fprintf(f, "\n");
    for (int l = 0; l < 5 && o->extra_text[l][0]; l++)
        if (v->mode == EXACT || !(o->text_address & 1u << l))
            fprintf(f, "               %s\n", o->extra_text[l]);
}

/* Where the process is, its error and its communicators, indented. */
static void text_state(const struct view *v)
{
    const struct mqdh_process *p = v->p;
    FILE *f = v->f;
    if (p->where_call) {
        fprintf(f, "  in %s, called from %s", p->where_call, p->where_function);
        if (p->where_file)
            fprintf(f, " at %s:%d", p->where_file, p->where_line);
        if (p->where_tid != p->pid)
            fprintf(f, v->mode == EXACT ? " (thread %d)" : " (not the main thread)",
                    (int)p->where_tid);
        fprintf(f, "\n");
    } else if (p->where_error) {
        fprintf(f, "  where: %s\n", p->where_error);
    } else if (!p->error) {
        fprintf(f, "  not in MPI\n");
    }
    if (p->error)
        fprintf(f, "  error: %s\n", p->error);
    else if (p->ncomms == 0 && p->where_call && strcmp(p->where_call, "MPI_Finalize") == 0)
        fprintf(f, "  no communicators: the MPI library has freed them in MPI_Finalize\n");
    for (int c = 0; c < p->ncomms; c++) {
        const struct mqdh_comm *cm = &p->comms[c];
        if (v->mode != EXACT && cm->local_rank == p->rank && p->rank >= 0 &&
            cm->size == mqdh_world_size(v->d, p->world))
            fprintf(f, "  communicator \"%s\" (size %ld, rank = world rank)\n", cm->name,
                    cm->size);
        else
            fprintf(f, "  communicator \"%s\" (size %ld, rank %ld)\n", cm->name, cm->size,
                    cm->local_rank);
        for (int q = 0; q < MQDH_NQUEUES; q++) {
            const struct mqdh_queue *qu = &cm->queues[q];
            if (qu->state == MQDH_QUEUE_NO_INFO) {
                fprintf(f, "    %s: no information\n", queue_names[q]);
            } else if (qu->state == MQDH_QUEUE_ERROR) {
                fprintf(f, "    %s: error: %s\n", queue_names[q], qu->error ? qu->error : "?");
            } else if (qu->nops) {
                fprintf(f, "    %s: %d\n", queue_names[q], qu->nops);
                for (int o = 0; o < qu->nops; o++)
                    text_op(v, &qu->ops[o], q);
            }
        }
    }
}

static void print_stats(FILE *f, const struct mqdh_stats *st)
{
    fprintf(f, "  stats: %lu callbacks (%lu fetches), %lu bytes in %lu system calls, %.3f s\n",
            st->callbacks, st->fetches, st->bytes, st->syscalls, st->seconds);
}

static void print_ranks(const struct mqdh_dump *d, const int *idx, int n);

static const char *const dll_sources[] = {"none", "option", "environment", "mqd", "target"};

static const char *dll_source(enum mqdh_dll_source src)
{
    return (unsigned)src < sizeof dll_sources / sizeof dll_sources[0] ? dll_sources[src] : "?";
}

/* Which DLL each process was dumped with, and why: one line per choice. */
static void text_dlls(const struct mqdh_dump *d)
{
    int *same = malloc(((size_t)d->nprocs + 1) * sizeof *same);
    int *done = calloc((size_t)d->nprocs + 1, sizeof *done), distinct = 0;
    if (!same || !done) {
        free(same);
        free(done);
        return;
    }
    for (int i = 0; i < d->nprocs; i++)
        if (d->procs[i].dll && !done[i]) {
            distinct++;
            for (int j = i + 1; j < d->nprocs; j++)
                done[j] |= d->procs[j].dll && strcmp(d->procs[j].dll, d->procs[i].dll) == 0;
        }
    memset(done, 0, (size_t)d->nprocs * sizeof *done);
    for (int i = 0; i < d->nprocs; i++) {
        const struct mqdh_process *p = &d->procs[i];
        if (!p->dll || done[i])
            continue;
        int n = 0;
        for (int j = i; j < d->nprocs; j++)
            if (d->procs[j].dll && strcmp(d->procs[j].dll, p->dll) == 0) {
                done[j] = 1;
                same[n++] = j;
            }
        printf("DLL: %s (%s)", p->dll, p->dll_why ? p->dll_why : "?");
        if (distinct > 1) {
            printf(" for ranks [");
            print_ranks(d, same, n);
            printf("]");
        }
        printf("\n");
    }
    free(same);
    free(done);
}

/* --full: every process in turn. */
static void text_dump(const struct mqdh_dump *d, int stats)
{
    for (int i = 0; i < d->nprocs; i++) {
        const struct mqdh_process *p = &d->procs[i];
        char who[48];
        mqdh_process_label(p, who, sizeof who);
        printf("process %d", (int)p->pid);
        if (p->rank >= 0)
            printf(", %s", who);
        if (p->host)
            printf(", host %s", p->host);
        printf("%s%s\n", p->image ? ": " : "", p->image ? p->image : "");
        struct view v = {stdout, d, p, EXACT};
        text_state(&v);
        if (stats)
            print_stats(stdout, &p->stats);
    }
}

/* "0-3,5,7-8": ascending process indexes, as their ranks (pids if none);
 * a spawned world's after "world W: ". */
static void print_ranks(const struct mqdh_dump *d, const int *idx, int n)
{
    for (int i = 0; i < n;) {
        const struct mqdh_process *p = &d->procs[idx[i]], *q;
        int j = i;
        while (p->rank >= 0 && j + 1 < n && (q = &d->procs[idx[j + 1]])->world == p->world &&
               q->rank == d->procs[idx[j]].rank + 1)
            j++;
        printf("%s", i ? "," : "");
        if (p->world > 0 && p->rank >= 0 && (i == 0 || d->procs[idx[i - 1]].world != p->world))
            printf("%sworld %d: ", i ? " " : "", p->world);
        if (p->rank < 0)
            printf("pid %d", (int)p->pid);
        else if (j > i)
            printf("%d-%d", p->rank, d->procs[idx[j]].rank);
        else
            printf("%d", p->rank);
        i = j + 1;
    }
}

/* Process i's state written in mode, as one malloc'd string (NULL: no memory). */
static char *state_string(const struct mqdh_dump *d, int i, enum render mode)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    struct view v = {f, d, &d->procs[i], mode};
    text_state(&v);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* A process's state as text, for sorting processes by it. */
struct signature {
    const char *text;
    int proc;
};

static int by_text_then_process(const void *x, const void *y)
{
    const struct signature *a = x, *b = y;
    int c = strcmp(a->text, b->text);
    return c ? c : (a->proc > b->proc) - (a->proc < b->proc);
}

/*
 * Group the processes not yet in one (group[i] < 0) whose sig[i] are the
 * same, two or more: each under its lowest process, marked with how.
 * Sorted, not compared pairwise (a job of 100,000).  by[n] is scratch.
 */
static void fold_same(char **sig, int n, int *group, enum render *mode, enum render how,
                      struct signature *by)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (group[i] < 0)
            by[m++] = (struct signature){sig[i], i};
    qsort(by, (size_t)m, sizeof *by, by_text_then_process);
    for (int k = 0, end; k < m; k = end) {
        for (end = k + 1; end < m && strcmp(by[end].text, by[k].text) == 0; end++)
            ;
        if (end - k < 2)
            continue;
        mode[by[k].proc] = how;
        for (int j = k; j < end; j++)
            group[by[j].proc] = by[k].proc;
    }
}

/*
 * The compressed view: processes whose state is the same, with peers as
 * ranks or else relative to their own rank, are written once under the
 * ranks they are ("ranks [0-31,33-63]").  Returns -1 out of memory.
 */
static int text_folded(const struct mqdh_dump *d, int stats)
{
    int n = d->nprocs, rc = -1;
    char **abs = calloc((size_t)n + 1, sizeof *abs), **rel = calloc((size_t)n + 1, sizeof *rel);
    int *group = malloc(((size_t)n + 1) * sizeof *group), *members = malloc(((size_t)n + 1) * sizeof *members);
    enum render *mode = malloc(((size_t)n + 1) * sizeof *mode);
    struct signature *by = malloc(((size_t)n + 1) * sizeof *by);
    int *start = calloc((size_t)n + 2, sizeof *start); /* group g: members[start[g]...] */
    if (!abs || !rel || !group || !members || !mode || !by || !start)
        goto out;
    for (int i = 0; i < n; i++) {
        abs[i] = state_string(d, i, FOLD_ABS);
        rel[i] = state_string(d, i, FOLD_REL);
        if (!abs[i] || !rel[i])
            goto out;
        group[i] = -1;
    }
    /* The same with peers as they are first, then the same relative. */
    fold_same(abs, n, group, mode, FOLD_ABS, by);
    fold_same(rel, n, group, mode, FOLD_REL, by);
    for (int j = 0; j < n; j++) /* each group's members, in order */
        if (group[j] >= 0)
            start[group[j] + 2]++;
    for (int g = 0; g < n; g++)
        start[g + 2] += start[g + 1];
    for (int j = 0; j < n; j++)
        if (group[j] >= 0)
            members[start[group[j] + 1]++] = j;
    int same_image = 1, worlds = 1;
    for (int i = 0; i < n; i++)
        if (d->procs[i].world >= worlds)
            worlds = d->procs[i].world + 1;
    for (int i = 1; i < n; i++)
        same_image &= d->procs[i].image && d->procs[0].image &&
                      strcmp(d->procs[i].image, d->procs[0].image) == 0;
    if (n > 1 && same_image)
        printf("%d processes, all running %s\n", n, d->procs[0].image);
    for (int i = 0; i < n; i++) {
        const struct mqdh_process *p = &d->procs[i];
        if (group[i] >= 0 && group[i] != i)
            continue;
        if (group[i] < 0) { /* alone: as it is */
            char who[48];
            mqdh_process_label(p, who, sizeof who);
            if (p->rank >= 0)
                printf("%s (pid %d)", who, (int)p->pid);
            else
                printf("%s", who);
            if (!same_image || n == 1)
                printf(": %s", p->image ? p->image : "?");
            printf("\n");
            struct view v = {stdout, d, p, EXACT};
            text_state(&v);
            if (stats)
                print_stats(stdout, &p->stats);
            continue;
        }
        int m = start[i + 1] - start[i];
        const int *in = members + start[i];
        printf("ranks [");
        print_ranks(d, in, m);
        printf("] (%d processes%s)", m,
               mode[i] != FOLD_REL ? ""
               : worlds > 1        ? ", peers relative to each: rank+1 is the next, modulo "
                                     "its world"
                                   : ", peers relative to each: rank+1 is the next, modulo the "
                                     "job");
        if (!same_image)
            printf(": %s", p->image ? p->image : "?");
        printf("\n%s", mode[i] == FOLD_REL ? rel[i] : abs[i]);
        if (stats) {
            struct mqdh_stats sum = {0};
            for (int k = 0; k < m; k++) {
                const struct mqdh_stats *st = &d->procs[in[k]].stats;
                sum.callbacks += st->callbacks;
                sum.fetches += st->fetches;
                sum.bytes += st->bytes;
                sum.syscalls += st->syscalls;
                sum.seconds += st->seconds;
            }
            printf("  (stats summed over these %d)\n", m);
            print_stats(stdout, &sum);
        }
    }
    rc = 0;
out:
    for (int i = 0; abs && rel && i < n; i++) {
        free(abs[i]);
        free(rel[i]);
    }
    free(abs);
    free(rel);
    free(group);
    free(members);
    free(mode);
    free(by);
    free(start);
    return rc;
}

static void json_string(const char *s)
{
    if (!s) {
        printf("null");
        return;
    }
    putchar('"');
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            printf("\\%c", *c);
        else if (*c < 0x20 || *c >= 0x7f)
            printf("\\u%04x", *c);
        else
            putchar(*c);
    }
    putchar('"');
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
        const char *name = NULL;
        for (int c = 0; c < p->ncomms && !name; c++)
            if (p->comms[c].has_handle && p->comms[c].handle == p->where_comm)
                name = p->comms[c].name;
        json_string(name);
    }
}

static void json_dump(const struct mqdh_dump *d, int stats)
{
    printf("{\"processes\": [");
    for (int i = 0; i < d->nprocs; i++) {
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
        printf(", \"where\": ");
        if (p->where_call) {
            printf("{\"call\": ");
            json_string(p->where_call);
            printf(", \"function\": ");
            json_string(p->where_function);
            printf(", \"file\": ");
            json_string(p->where_file);
            printf(", \"line\": %d, \"thread\": %d, \"args\": {", p->where_line,
                   (int)p->where_tid);
            json_args(p);
            printf("}, \"args_why\": ");
            json_string(p->where_args_why);
            printf("}");
        } else {
            printf("null");
        }
        if (stats)
            printf(", \"stats\": {\"callbacks\": %lu, \"fetches\": %lu, \"bytes\": %lu, "
                   "\"syscalls\": %lu, \"seconds\": %.6f}",
                   p->stats.callbacks, p->stats.fetches, p->stats.bytes, p->stats.syscalls,
                   p->stats.seconds);
        printf(", \"communicators\": [");
        for (int c = 0; c < p->ncomms; c++) {
            const struct mqdh_comm *cm = &p->comms[c];
            printf("%s\n  {\"name\": ", c ? "," : "");
            json_string(cm->name);
            printf(", \"unique_id\": %llu, \"local_rank\": %ld, \"size\": %ld",
                   (unsigned long long)cm->unique_id, cm->local_rank, cm->size);
            if (cm->has_handle)
                printf(", \"handle\": %llu", (unsigned long long)cm->handle);
            else
                printf(", \"handle\": null");
            printf(", \"group\": ");
            if (cm->group) {
                printf("[");
                for (long r = 0; r < cm->size; r++)
                    printf("%s%ld", r ? ", " : "", cm->group[r]);
                printf("]");
            } else {
                printf("null");
            }
            printf(", \"group_error\": ");
            json_string(cm->group_error);
            for (int q = 0; q < MQDH_NQUEUES; q++) {
                const struct mqdh_queue *qu = &cm->queues[q];
                printf(", \"%s\": ", queue_keys[q]);
                if (qu->state != MQDH_QUEUE_OK) {
                    printf("null");
                    continue;
                }
                printf("[");
                for (int o = 0; o < qu->nops; o++) {
                    const struct mqdh_op *op = &qu->ops[o];
                    printf("%s\n   {\"status\": \"%s\", \"desired_local_rank\": %ld, "
                           "\"desired_global_rank\": %ld, \"tag_wild\": %s, \"desired_tag\": "
                           "%ld, \"desired_length\": %ld, \"system_buffer\": %s, \"buffer\": "
                           "%llu, \"actual_local_rank\": %ld, \"actual_global_rank\": %ld, "
                           "\"actual_tag\": %ld, \"actual_length\": %ld, \"extra_text\": [",
                           o ? "," : "", status_name(op->status), op->desired_local_rank,
                           op->desired_global_rank, op->tag_wild ? "true" : "false",
                           op->desired_tag, op->desired_length,
                           op->system_buffer ? "true" : "false",
                           (unsigned long long)op->buffer, op->actual_local_rank,
                           op->actual_global_rank, op->actual_tag, op->actual_length);
                    for (int l = 0; l < 5 && op->extra_text[l][0]; l++) {
                        printf("%s", l ? ", " : "");
                        json_string(op->extra_text[l]);
                    }
                    printf("], \"collective\": %s, \"request\": %llu}",
                           op->collective ? "true" : "false",
                           (unsigned long long)op->request);
                }
                printf("]");
            }
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
            printf("]}");
        }
        printf("]}");
    }
    printf("\n]");
}

static const char *const wait_kinds[] = {"recv", "send", "collective"};

static const char *wait_kind(enum mqdh_wait_kind k)
{
    return (unsigned)k < sizeof wait_kinds / sizeof wait_kinds[0] ? wait_kinds[k] : "?";
}

/*
 * Deadlock dl's waits, those whose explanations read the same relative to
 * the waiting rank once, under the ranks they hold for.  -1 out of memory
 * (nothing printed).
 */
static int fold_waits(const struct mqdh_dump *d, const struct mqdh_analysis *a,
                      const struct mqdh_deadlock *dl)
{
    size_t n = (size_t)dl->nwaits + 1;
    char (*rel)[320] = malloc(n * sizeof *rel);
    char *done = calloc(n, 1);
    int *who = malloc(n * sizeof *who);
    if (!rel || !done || !who) {
        free(rel);
        free(done);
        free(who);
        return -1;
    }
    for (int e = 0; e < dl->nwaits; e++)
        mqdh_explain_wait(d, &a->waits[dl->waits[e]], 1, rel[e], sizeof rel[e]);
    for (int e = 0; e < dl->nwaits; e++) {
        if (done[e])
            continue;
        int k = 0;
        for (int f = e; f < dl->nwaits; f++) {
            int from = a->waits[dl->waits[f]].from;
            if (done[f] || strcmp(rel[e], rel[f]) != 0)
                continue;
            done[f] = 1;
            if (!k || who[k - 1] != from)
                who[k++] = from;
        }
        if (k == 1) {
            printf("  %s\n", a->waits[dl->waits[e]].why);
        } else {
            printf("  [");
            print_ranks(d, who, k);
            printf("] %s\n", rel[e]);
        }
    }
    free(rel);
    free(done);
    free(who);
    return 0;
}

/*
 * The deadlock section.  fold: explanations that are the same up to the
 * waiting rank are printed once, under the ranks they hold for.
 */
static void text_analysis(const struct mqdh_dump *d, const struct mqdh_analysis *a, int fold)
{
    printf("\n");
    for (int k = 0; k < a->ndeadlocks; k++) {
        const struct mqdh_deadlock *dl = &a->deadlocks[k];
        printf("DEADLOCK: a %s of %d process%s, ranks [", dl->knot ? "knot" : "cycle",
               dl->nmembers, dl->nmembers == 1 ? "" : "es");
        print_ranks(d, dl->members, dl->nmembers);
        printf("]%s\n", dl->knot ? " (some wait for any one of several: all of those are in it)"
                                 : " (every wait in it is needed)");
        if (!fold || fold_waits(d, a, dl) != 0)
            for (int e = 0; e < dl->nwaits; e++)
                printf("  %s\n", a->waits[dl->waits[e]].why);
    }
    if (a->nbehind) {
        printf("also stuck, waiting on %s: ranks [", a->ndeadlocks == 1 ? "it" : "them");
        print_ranks(d, a->behind, a->nbehind);
        printf("]\n");
    }
    int blocked = 0, free_ = 0, unknown = 0;
    for (int i = 0; i < a->nprocs; i++) {
        blocked += a->activity[i] == MQDH_ACT_BLOCKED;
        free_ += a->activity[i] == MQDH_ACT_RUNNING || a->activity[i] == MQDH_ACT_IN_MPI;
        unknown += a->activity[i] == MQDH_ACT_UNKNOWN;
    }
    switch (a->verdict) {
    case MQDH_VERDICT_DEADLOCK:
        break;
    case MQDH_VERDICT_NONE:
        printf("no deadlock found: %d of %d processes blocked in MPI, %d not blocked, "
               "%d waits\n", blocked, a->nprocs, free_, a->nwaits);
        break;
    case MQDH_VERDICT_UNKNOWN:
        if (unknown == a->nprocs)
            printf("cannot tell whether the job is deadlocked: no process could be dumped "
                   "and unwound\n");
        else
            printf("cannot tell whether the job is deadlocked: no deadlock among what could "
                   "be seen, but for %d of %d processes what they wait for (or where they "
                   "are) could not be seen\n", a->nblind, a->nprocs);
        break;
    }
    if (a->nunseen) {
        printf("the analysis could not see%s:\n",
               a->ndeadlocks ? " (none of it can undo the deadlock)" : "");
        for (int i = 0; i < a->nunseen; i++)
            printf("  %s\n", a->unseen[i]);
    }
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
           wait_kind(w->kind), w->any_source ? "true" : "false");
    json_string(f->where_call);
    printf(", \"comm\": ");
    json_string(w->comm >= 0 ? f->comms[w->comm].name : "MPI_COMM_WORLD");
    if (w->tag_wild || w->kind == MQDH_WAIT_COLLECTIVE)
        printf(", \"tag\": null");
    else
        printf(", \"tag\": %ld", w->tag);
    printf(", \"group\": %d, \"in_deadlock\": %s, \"why\": ", w->group,
           w->in_deadlock ? "true" : "false");
    json_string(w->why);
    printf("}");
}

static void json_analysis(const struct mqdh_dump *d, const struct mqdh_analysis *a)
{
    static const char *const acts[] = {"unknown", "running", "in_mpi", "blocked"};
    static const char *const verdicts[] = {"deadlock", "none", "unknown"};
    printf(",\n\"deadlock\": {\"found\": %s, \"verdict\": \"%s\", \"blind\": %d, "
           "\"deadlocks\": [",
           a->ndeadlocks ? "true" : "false", verdicts[a->verdict], a->nblind);
    for (int k = 0; k < a->ndeadlocks; k++) {
        const struct mqdh_deadlock *dl = &a->deadlocks[k];
        printf("%s\n  {\"kind\": \"%s\", ", k ? "," : "", dl->knot ? "knot" : "cycle");
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
               d->procs[i].rank, d->procs[i].world, acts[a->activity[i]]);
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

/* --list: the MPI jobs on this node, for a user who has to find the
 * launcher's pid.  Returns the exit status. */
static int list_jobs(int json)
{
    struct mqdh_job_info *jobs = NULL;
    int n = 0;
    if (mqdh_list_jobs(&jobs, &n) != MQDH_OK) {
        fprintf(stderr, "mqdump: cannot read /proc: %s\n", mqdh_strerror(MQDH_E_NOMEM));
        return 2;
    }
    if (json) {
        printf("{\"jobs\": [");
        for (int i = 0; i < n; i++) {
            printf("%s\n {\"launcher\": %d, \"ranks\": %d, \"uid\": %u, \"command\": ",
                   i ? "," : "", (int)jobs[i].launcher, jobs[i].nranks, (unsigned)jobs[i].uid);
            json_string(jobs[i].launcher_cmd);
            printf(", \"program\": ");
            json_string(jobs[i].program);
            printf("}");
        }
        printf("\n]}\n");
    } else if (n == 0) {
        printf("no MPI job on this node (no process with PMI_RANK, PMI_ID, "
               "OMPI_COMM_WORLD_RANK or PMIX_RANK in its environment that you can read)\n");
    } else {
        printf("MPI jobs on this node:\n");
        printf("%8s %6s %-10s %s\n", "LAUNCHER", "RANKS", "USER", "PROGRAM (LAUNCHER COMMAND)");
        for (int i = 0; i < n; i++) {
            struct passwd *pw = getpwuid(jobs[i].uid);
            char user[32];
            if (pw)
                snprintf(user, sizeof user, "%s", pw->pw_name);
            else
                snprintf(user, sizeof user, "%u", (unsigned)jobs[i].uid);
            printf("%8d %6d %-10s %s (%s)\n", (int)jobs[i].launcher, jobs[i].nranks, user,
                   jobs[i].program ? jobs[i].program : "?",
                   jobs[i].launcher_cmd ? jobs[i].launcher_cmd : "?");
        }
        printf("dump one with: mqdump --job LAUNCHER\n");
    }
    mqdh_jobs_free(jobs, n);
    return 0;
}

/* Interrupted mid-dump: let every process go, then die of the signal. */
static void on_fatal_signal(int sig)
{
    mqdh_release_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(int argc, char **argv)
{
    static const int fatal[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigfillset(&sa.sa_mask);
        sigaction(fatal[i], &sa, NULL);
    }
    static const struct option longopts[] = {
        {"pid", required_argument, NULL, 'p'},  {"job", required_argument, NULL, 'j'},
        {"dll", required_argument, NULL, 'd'},  {"trust-target-dll", no_argument, NULL, 'T'},
        {"json", no_argument, NULL, 'J'},       {"stats", no_argument, NULL, 'S'},
        {"verbose", no_argument, NULL, 'v'},    {"help", no_argument, NULL, 'h'},
        {"check-dll", required_argument, NULL, 'C'},
        {"full", no_argument, NULL, 'F'},
        {"graph", required_argument, NULL, 'G'},
        {"list", no_argument, NULL, 'l'},
        {"target-dll", no_argument, NULL, 'D'},
        {NULL, 0, NULL, 0},
    };
    pid_t *pids = NULL;
    int npids = 0, json = 0, stats = 0, full = 0, list = 0, opt;
    long job = 0;
    const char *check = NULL, *graph = NULL;
    struct mqdh_options o = {0};

    while ((opt = getopt_long(argc, argv, "p:j:d:lvh", longopts, NULL)) != -1) {
        char *end;
        long v;
        switch (opt) {
        case 'p':
        case 'j':
            v = strtol(optarg, &end, 10);
            if (*end || v <= 0 || v > 0x7fffffff) {
                fprintf(stderr, "mqdump: '%s' is not a process id\n", optarg);
                return 64;
            }
            if (opt == 'j') {
                job = v;
                break;
            }
            pid_t *np = realloc(pids, (size_t)(npids + 1) * sizeof *np);
            if (!np)
                return 2;
            pids = np;
            pids[npids++] = (pid_t)v;
            break;
        case 'd':
            o.dll = optarg;
            break;
        case 'C':
            check = optarg;
            break;
        case 'T':
            o.trust_target_dll = 1;
            break;
        case 'J':
            json = 1;
            break;
        case 'S':
            stats = 1;
            break;
        case 'F':
            full = 1;
            break;
        case 'G':
            graph = optarg;
            break;
        case 'l':
            list = 1;
            break;
        case 'D':
            o.target_dll = 1;
            break;
        case 'v':
            o.verbose = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 64;
        }
    }
    if (check && optind == argc && npids == 0 && job == 0) {
        char version[512], err[1024];
        int mpi2 = 0;
        if (mqdh_dll_check(check, version, sizeof version, &mpi2, err, sizeof err) != MQDH_OK) {
            fprintf(stderr, "mqdump: %s\n", err);
            return 2;
        }
        printf("%s: %s\n  usable: the %s protocol\n", check, version,
               mpi2 ? "MPI-2 (jobs and process identities)" : "MPI-1");
        return 0;
    }
    if (optind < argc && !list) {
        fprintf(stderr, "mqdump: unexpected argument '%s' (a pid goes after --job or --pid)\n",
                argv[optind]);
        usage(stderr);
        free(pids);
        return 64;
    }
    if (list || (argc == 1)) {
        if (npids || job || check || optind < argc) {
            fprintf(stderr, "mqdump: --list takes no other argument\n");
            free(pids);
            return 64;
        }
        return list_jobs(json);
    }
    if ((npids == 0) == (job == 0) || check) {
        fprintf(stderr, "mqdump: give --pid (one or more), --job, or --check-dll alone\n");
        usage(stderr);
        free(pids);
        return 64;
    }
    int *ranks = NULL;
    char **hosts = NULL;
    if (job) {
        char err[512];
        int rc = mqdh_job_ranks((pid_t)job, &pids, &ranks, &hosts, &npids, err, sizeof err);
        if (rc != MQDH_OK) {
            fprintf(stderr, "mqdump: %s\n", err);
            return 2;
        }
    }
    struct mqdh_dump *d = NULL;
    int rc = mqdh_dump_processes(pids, ranks, (const char *const *)hosts, npids, &o, &d);
    int status;
    if (!d) {
        fprintf(stderr, "mqdump: %s\n", mqdh_strerror(rc));
        status = 2;
    } else {
        int failed = 0;
        for (int i = 0; i < d->nprocs; i++) {
            if (d->procs[i].error) {
                failed++;
                if (json)
                    fprintf(stderr, "mqdump: process %d: %s\n", (int)d->procs[i].pid,
                            d->procs[i].error);
            }
        }
        status = failed == 0 ? 0 : failed < d->nprocs ? 1 : 2;
        struct mqdh_analysis *a = NULL;
        if (mqdh_analyze(d, &a) != MQDH_OK)
            fprintf(stderr, "mqdump: the wait-for analysis ran out of memory\n");
        if (status == 0 && (!a || a->verdict == MQDH_VERDICT_UNKNOWN))
            status = 1;
        if (json) {
            json_dump(d, stats);
            if (a)
                json_analysis(d, a);
            printf("}\n");
        } else {
            text_dlls(d);
            if (full || text_folded(d, stats) != 0)
                text_dump(d, stats);
            if (a)
                text_analysis(d, a, !full);
        }
        char gerr[4600];
        if (graph && graph_write(graph, d, a, gerr, sizeof gerr) != 0) {
            fprintf(stderr, "mqdump: --graph: %s\n", gerr);
            if (status == 0)
                status = 1;
        }
        mqdh_analysis_free(a);
    }
    mqdh_dump_free(d);
    if (job)
        mqdh_job_free(pids, ranks, hosts, npids);
    else
        free(pids);
    return status;
}
