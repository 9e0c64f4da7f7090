/*
 * text.c - mqdump's text views: every process in full (--full), processes
 * in the same state folded under their ranks (the default), the DLL lines
 * and --list.  The deadlock report is verdict.c's.
 */
#define _GNU_SOURCE
#include "text.h"

#include "common.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const queue_names[MQDH_NQUEUES] = {"pending sends", "pending receives",
                                                      "unexpected messages"};
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
    /*
     * Folded views: the line(s) a process outside MPI is at in its own
     * code, for the group it stands for ("29", "27-30"); NULL: "?".  It
     * varies with the moment each was stopped, so processes are folded
     * without it, and the group says every line its members are at.
     */
    const char *lines;
};

/*
 * The error every process with one has, said once above the folded view
 * rather than in each group (a job whose MPI keeps no queues for
 * debuggers: one line, not one per group); NULL when there is none.
 */
static const char *shared_error;

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

/* The requests its blocked MPI_Wait* call was given (mqdh_dump.requests),
 * one line each: what the DLL says each is. */
static void text_requests(const struct view *v, int i)
{
    static const char *const kinds[] = {
        [MQDH_REQ_NULL] = "MPI_REQUEST_NULL", [MQDH_REQ_SEND] = "send",
        [MQDH_REQ_RECV] = "receive", [MQDH_REQ_PERSISTENT_SEND] = "persistent send",
        [MQDH_REQ_PERSISTENT_RECV] = "persistent receive",
        [MQDH_REQ_PERSISTENT_COLL] = "persistent collective",
        [MQDH_REQ_COLLECTIVE] = "nonblocking collective",
        [MQDH_REQ_GENERALIZED] = "generalized request", [MQDH_REQ_PARTITIONED] = "partitioned",
        [MQDH_REQ_RMA] = "RMA operation", [MQDH_REQ_OTHER] = "request"};
    const struct mqdh_requests *rq = v->d->requests ? &v->d->requests[i] : NULL;
    const struct mqdh_process *p = v->p;
    FILE *f = v->f;
    for (int n = 0; rq && n < rq->n; n++) {
        const struct mqdh_request *r = &rq->v[n];
        fprintf(f, "  request");
        if (v->mode == EXACT)
            fprintf(f, " 0x%llx", (unsigned long long)r->handle);
        if (!r->decoded) {
            fprintf(f, ": not known\n");
            continue;
        }
        fprintf(f, ": %s", r->kind <= MQDH_REQ_OTHER ? kinds[r->kind] : "request");
        int coll = r->kind == MQDH_REQ_COLLECTIVE || r->kind == MQDH_REQ_PERSISTENT_COLL;
        if (r->comm >= 0 && coll)
            fprintf(f, " on \"%s\"", p->comms[r->comm].name);
        if (r->sched_tag >= 0)
            fprintf(f, ", schedule tag %ld", r->sched_tag);
        if (r->peer_known && coll) {
            fprintf(f, ", next ");
            print_peer(v, r->peer_local, r->peer_global);
        } else if (r->peer_known) {
            int send = r->kind == MQDH_REQ_SEND || r->kind == MQDH_REQ_PERSISTENT_SEND;
            fprintf(f, send ? " to " : " from ");
            if (r->peer_local < 0)
                fprintf(f, "ANY");
            else
                print_peer(v, r->peer_local, r->peer_global);
        }
        if (r->tag_known && r->tag < 0)
            fprintf(f, " tag ANY");
        else if (r->tag_known)
            fprintf(f, " tag %ld", r->tag);
        if (r->comm >= 0 && !coll)
            fprintf(f, " on \"%s\"", p->comms[r->comm].name);
        fprintf(f, ", %s\n", r->done ? "done" : "pending");
    }
    if (rq && rq->why)
        fprintf(f, "  requests: %s\n", rq->n < 0 ? rq->why : rq->why);
}

/* Where the process is, its error and its communicators, indented. */
static void text_state(const struct view *v)
{
    const struct mqdh_process *p = v->p;
    FILE *f = v->f;
    int i = (int)(p - v->d->procs);
    const struct mqdh_frame *uf;
    if (p->where_call) {
        fprintf(f, "  in %s, called from %s", p->where_call, p->where_function);
        if (p->where_file)
            fprintf(f, " at %s:%d", p->where_file, p->where_line);
        if (p->where_tid != p->pid)
            fprintf(f, v->mode == EXACT ? " (thread %d)" : " (not the main thread)",
                    (int)p->where_tid);
        fprintf(f, "\n");
        text_requests(v, i);
    } else if (p->where_error) {
        fprintf(f, "  where: %s\n", p->where_error);
    } else if ((uf = mqdh_user_frame(v->d, i)) != NULL) {
        fprintf(f, "  ");
        print_at_work(f, p, uf, v->mode == EXACT ? NULL : v->lines ? v->lines : "?");
        fprintf(f, "\n");
    } else if (!p->error) {
        fprintf(f, "  not in MPI\n");
    }
    /* How it got there, when that is more than main calling MPI (folded:
     * the line of a process outside MPI is said above). */
    char path[2048];
    if (call_path(v->d, i, v->mode != EXACT && !p->where_call, path, sizeof path) > 2)
        fprintf(f, "  call path: %s\n", path);
    if (p->error && !(shared_error && strcmp(p->error, shared_error) == 0))
        fprintf(f, "  error: %s\n", p->error);
    else if (!p->error && p->ncomms == 0 && p->where_call &&
             strcmp(p->where_call, "MPI_Finalize") == 0)
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


/* Which DLL each process was dumped with, and why: one line per choice. */
void text_dlls(const struct mqdh_dump *d)
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
            print_ranks(stdout, d, same, n);
            printf("]");
        }
        printf("\n");
    }
    free(same);
    free(done);
}

static const struct mqdh_dump *host_dump;
static int cmp_by_host(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    int c = strcmp(host_dump->procs[x].host, host_dump->procs[y].host);
    return c ? c : x - y;
}

/* Which hosts the processes are on, when more than one: a job across
 * nodes, its ranks by host (the first few hosts, by their first rank). */
void text_hosts(const struct mqdh_dump *d)
{
    enum { SHOWN = 8 };
    int n = 0, *idx = malloc(((size_t)d->nprocs + 1) * sizeof *idx);
    int *first = malloc(((size_t)d->nprocs + 1) * sizeof *first); /* each host's run */
    if (!idx || !first)
        goto out;
    for (int i = 0; i < d->nprocs; i++)
        if (d->procs[i].host)
            idx[n++] = i;
    host_dump = d;
    qsort(idx, (size_t)n, sizeof *idx, cmp_by_host);
    int nhosts = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || strcmp(d->procs[idx[i]].host, d->procs[idx[i - 1]].host) != 0)
            first[nhosts++] = i;
    if (nhosts < 2)
        goto out;
    first[nhosts] = n;
    /* Hosts in the order of their lowest process. */
    int *order = malloc((size_t)nhosts * sizeof *order);
    if (!order)
        goto out;
    for (int h = 0; h < nhosts; h++)
        order[h] = h;
    for (int h = 1; h < nhosts; h++) /* insertion: by the first index of each */
        for (int k = h; k > 0 && idx[first[order[k]]] < idx[first[order[k - 1]]]; k--) {
            int t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    printf("%d processes on %d hosts:", n, nhosts);
    for (int k = 0; k < nhosts && k < SHOWN; k++) {
        int h = order[k];
        printf("%s %s [", k ? "," : "", d->procs[idx[first[h]]].host);
        print_ranks(stdout, d, idx + first[h], first[h + 1] - first[h]);
        printf("]");
    }
    if (nhosts > SHOWN)
        printf(", and %d more", nhosts - SHOWN);
    printf("\n");
    free(order);
out:
    free(idx);
    free(first);
}

/* --full: every process in turn. */
void text_dump(const struct mqdh_dump *d, int stats)
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
        struct view v = {stdout, d, p, EXACT, NULL};
        text_state(&v);
        if (stats)
            print_stats(stdout, &p->stats);
    }
}

/* Process i's state written in mode, as one malloc'd string (NULL: no
 * memory); lines: view.lines. */
static char *state_string(const struct mqdh_dump *d, int i, enum render mode, const char *lines)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    struct view v = {f, d, &d->procs[i], mode, lines};
    text_state(&v);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* The lines processes in[m] are at in their own code, as "29" or
 * "27-28,30" (malloc'd; NULL if none has one, or out of memory). */
static char *user_lines(const struct mqdh_dump *d, const int *in, int m)
{
    int *v = malloc(((size_t)m + 1) * sizeof *v), n = 0;
    if (!v)
        return NULL;
    for (int k = 0; k < m; k++) {
        const struct mqdh_frame *uf = mqdh_user_frame(d, in[k]);
        if (uf && uf->file)
            v[n++] = uf->line;
    }
    qsort(v, (size_t)n, sizeof *v, compare_ints);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = n ? open_memstream(&buf, &len) : NULL;
    for (int k = 0; f && k < n;) {
        int j = k;
        while (j + 1 < n && v[j + 1] <= v[j] + 1)
            j++;
        fprintf(f, "%s%d", k ? "," : "", v[k]);
        if (v[j] != v[k])
            fprintf(f, "-%d", v[j]);
        k = j + 1;
    }
    free(v);
    if (f && fclose(f) != 0) {
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
 * How the processes fold: each one's state written both ways (peers as
 * ranks, and relative to its own rank), the group each is in, and each
 * group's members.
 */
struct folding {
    char **abs, **rel;   /* per process: its state, FOLD_ABS and FOLD_REL */
    int *group;          /* per process: its group's lowest process, -1 alone */
    enum render *mode;   /* per group (by its lowest process): how it was folded */
    int *members, *start; /* group g's members: members[start[g] .. start[g + 1] - 1] */
};

static void folding_free(struct folding *fo, int n)
{
    for (int i = 0; fo->abs && fo->rel && i < n; i++) {
        free(fo->abs[i]);
        free(fo->rel[i]);
    }
    free(fo->abs);
    free(fo->rel);
    free(fo->group);
    free(fo->mode);
    free(fo->members);
    free(fo->start);
}

/* Fold d's processes: those the same with peers as they are first, then
 * those the same relative to their own rank.  0, or -1 out of memory (fo
 * still to be freed). */
static int folding_make(struct folding *fo, const struct mqdh_dump *d)
{
    int n = d->nprocs, rc = -1;
    struct signature *by = malloc(((size_t)n + 1) * sizeof *by);
    fo->abs = calloc((size_t)n + 1, sizeof *fo->abs);
    fo->rel = calloc((size_t)n + 1, sizeof *fo->rel);
    fo->group = malloc(((size_t)n + 1) * sizeof *fo->group);
    fo->members = malloc(((size_t)n + 1) * sizeof *fo->members);
    fo->mode = malloc(((size_t)n + 1) * sizeof *fo->mode);
    fo->start = calloc((size_t)n + 2, sizeof *fo->start);
    if (!fo->abs || !fo->rel || !fo->group || !fo->members || !fo->mode || !by || !fo->start)
        goto out;
    for (int i = 0; i < n; i++) {
        fo->abs[i] = state_string(d, i, FOLD_ABS, NULL);
        fo->rel[i] = state_string(d, i, FOLD_REL, NULL);
        if (!fo->abs[i] || !fo->rel[i])
            goto out;
        fo->group[i] = -1;
    }
    fold_same(fo->abs, n, fo->group, fo->mode, FOLD_ABS, by);
    fold_same(fo->rel, n, fo->group, fo->mode, FOLD_REL, by);
    for (int j = 0; j < n; j++) /* each group's members, in order */
        if (fo->group[j] >= 0)
            fo->start[fo->group[j] + 2]++;
    for (int g = 0; g < n; g++)
        fo->start[g + 2] += fo->start[g + 1];
    for (int j = 0; j < n; j++)
        if (fo->group[j] >= 0)
            fo->members[fo->start[fo->group[j] + 1]++] = j;
    rc = 0;
out:
    free(by);
    return rc;
}

/* Are all of d's processes running the same executable? */
static int same_image(const struct mqdh_dump *d)
{
    int same = 1;
    for (int i = 1; i < d->nprocs; i++)
        same &= d->procs[i].image && d->procs[0].image &&
                strcmp(d->procs[i].image, d->procs[0].image) == 0;
    return same;
}

/* How many MPI_COMM_WORLDs d's processes are in (1 + the highest world). */
static int worlds(const struct mqdh_dump *d)
{
    int n = 1;
    for (int i = 0; i < d->nprocs; i++)
        if (d->procs[i].world >= n)
            n = d->procs[i].world + 1;
    return n;
}

/* Process i, in no group: as it is, under its label (and its executable
 * unless the header said it). */
static void text_alone(const struct mqdh_dump *d, int i, int image_said, int stats)
{
    const struct mqdh_process *p = &d->procs[i];
    char who[48];
    mqdh_process_label(p, who, sizeof who);
    if (p->rank >= 0)
        printf("%s (pid %d)", who, (int)p->pid);
    else
        printf("%s", who);
    if (!image_said)
        printf(": %s", p->image ? p->image : "?");
    printf("\n");
    struct view v = {stdout, d, p, EXACT, NULL};
    text_state(&v);
    if (stats)
        print_stats(stdout, &p->stats);
}

/* The stats of processes in[0..m-1], summed. */
static void print_summed_stats(const struct mqdh_dump *d, const int *in, int m)
{
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

/* The group whose lowest process is i: its ranks, how its peers read, and
 * its state once. */
static void text_group(const struct mqdh_dump *d, const struct folding *fo, int i,
                       int image_said, int nworlds, int stats)
{
    const struct mqdh_process *p = &d->procs[i];
    int m = fo->start[i + 1] - fo->start[i];
    const int *in = fo->members + fo->start[i];
    printf("ranks [");
    print_ranks(stdout, d, in, m);
    printf("] (%d processes%s)", m,
           fo->mode[i] != FOLD_REL ? ""
           : nworlds > 1           ? ", peers relative to each: rank+1 is the next, modulo "
                                     "its world"
                                   : ", peers relative to each: rank+1 is the next, modulo the "
                                     "job");
    if (!image_said)
        printf(": %s", p->image ? p->image : "?");
    /* Outside MPI: the lines its members are at, in the state. */
    char *lines = p->where_call ? NULL : user_lines(d, in, m);
    char *state = lines ? state_string(d, i, fo->mode[i], lines) : NULL;
    printf("\n%s", state ? state : fo->mode[i] == FOLD_REL ? fo->rel[i] : fo->abs[i]);
    free(state);
    free(lines);
    if (stats)
        print_summed_stats(d, in, m);
}

/*
 * The compressed view: processes whose state is the same, with peers as
 * ranks or else relative to their own rank, are written once under the
 * ranks they are ("ranks [0-31,33-63]").  Returns -1 out of memory.
 */
/* The error every process that has one shares, if two or more do, and
 * who they are (into in, room for every process); NULL else. */
static const char *common_error(const struct mqdh_dump *d, int *in, int *m)
{
    const char *e = NULL;
    *m = 0;
    for (int i = 0; i < d->nprocs; i++) {
        const char *pe = d->procs[i].error;
        if (!pe)
            continue;
        if (e && strcmp(e, pe) != 0)
            return NULL;
        e = pe;
        in[(*m)++] = i;
    }
    return *m > 1 ? e : NULL;
}

int text_folded(const struct mqdh_dump *d, int stats)
{
    int n = d->nprocs, m = 0;
    struct folding fo = {0};
    int *in = malloc(((size_t)n + 1) * sizeof *in);
    shared_error = in ? common_error(d, in, &m) : NULL;
    if (folding_make(&fo, d) != 0) {
        folding_free(&fo, n);
        free(in);
        shared_error = NULL;
        return -1;
    }
    int same = same_image(d), nworlds = worlds(d);
    if (n > 1 && same)
        printf("%d processes, all running %s\n", n, d->procs[0].image);
    if (shared_error) {
        printf("ranks [");
        print_ranks(stdout, d, in, m);
        printf("]: %s\n", shared_error);
    }
    free(in);
    for (int i = 0; i < n; i++) {
        if (fo.group[i] < 0) /* alone: as it is */
            text_alone(d, i, same && n > 1, stats);
        else if (fo.group[i] == i)
            text_group(d, &fo, i, same, nworlds, stats);
    }
    folding_free(&fo, n);
    shared_error = NULL;
    return 0;
}

int text_fold(const struct mqdh_dump *d, struct fold *out)
{
    int n = d->nprocs, m = 0, rc = -1;
    struct folding fo = {0};
    int *in = malloc(((size_t)n + 1) * sizeof *in);
    out->group = malloc(((size_t)n + 1) * sizeof *out->group);
    out->relative = calloc((size_t)n + 1, sizeof *out->relative);
    /* The same states as text_folded's: the error they share left out. */
    shared_error = in ? common_error(d, in, &m) : NULL;
    if (!in || !out->group || !out->relative || folding_make(&fo, d) != 0)
        goto out;
    for (int i = 0; i < n; i++) {
        out->group[i] = fo.group[i] < 0 ? i : fo.group[i];
        out->relative[i] = fo.group[i] >= 0 && fo.mode[fo.group[i]] == FOLD_REL;
    }
    rc = 0;
out:
    if (rc != 0)
        fold_free(out);
    folding_free(&fo, n);
    free(in);
    shared_error = NULL;
    return rc;
}

/* --list: the MPI jobs on this node, for a user who has to find the
 * launcher's pid. */
void text_jobs(const struct mqdh_job_info *jobs, int n)
{
    if (n == 0) {
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
            /* A program's path and a command line are their owner's to
             * choose: a newline in one would be a forged row. */
            char program[1024], cmd[2048];
            mqdh_escape(program, sizeof program, jobs[i].program ? jobs[i].program : "?");
            mqdh_escape(cmd, sizeof cmd, jobs[i].launcher_cmd ? jobs[i].launcher_cmd : "?");
            printf("%8d %6d %-10s %s (%s)\n", (int)jobs[i].launcher, jobs[i].nranks, user,
                   program, cmd);
        }
        printf("dump one with: mqdump --job LAUNCHER\n");
    }
}

void text_cost(const struct mqdh_dump *d)
{
    struct own_cost c = own_cost();
    printf("\nmqdump: %.3f s user + %.3f s system CPU, peak memory %ld MB; %d worker%s, %u ELF "
           "file%s read once\n",
           c.user, c.system, c.rss_kb / 1024, d->workers, d->workers == 1 ? "" : "s", d->files,
           d->files == 1 ? "" : "s");
}
