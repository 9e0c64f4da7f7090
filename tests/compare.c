/* compare.c - mqdump --json against SAMPLE.expect. */
#define _GNU_SOURCE
#include "compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const queue_keys[] = {"pending_sends", "pending_receives",
                                         "unexpected_messages"};
static const char *const status_names[] = {"pending", "matched", "complete"};

static long num(const struct json *obj, const char *key)
{
    const struct json *v = json_get(obj, key);
    return v && (v->kind == JSON_NUMBER || v->kind == JSON_BOOL) ? (long)v->number : -999999;
}

static const char *str(const struct json *obj, const char *key)
{
    const struct json *v = json_get(obj, key);
    return v && v->kind == JSON_STRING ? v->string : NULL;
}

/* A shown process as a number (EXPECT_WORLD): world * EXPECT_WORLD + rank. */
static int proc_key(const struct json *proc)
{
    long rank = num(proc, "rank"), world = num(proc, "world");
    if (world == -999999)
        world = 0; /* a dump from before worlds */
    return rank < 0 || world < 0 ? -1 : (int)(world * EXPECT_WORLD + rank);
}

/* The process a DLL's global rank g names, as a number: the one it gave
 * that identity (MPI-2), else world 0's rank g; -2 if none, g if g < 0. */
static long global_key(const struct json *procs, long g)
{
    if (g < 0)
        return g;
    for (int i = 0; procs && i < procs->n; i++) {
        const struct json *p = &procs->items[i];
        long id = num(p, "identity");
        if (id >= 0 ? id == g : proc_key(p) == g)
            return proc_key(p);
    }
    return -2;
}

/* Process index i of the dump's "processes", as a number. */
static int index_key(const struct json *dump, long i)
{
    const struct json *procs = json_get(dump, "processes");
    return procs && i >= 0 && i < procs->n ? proc_key(&procs->items[i]) : -1;
}

/* Does a dump communicator's name stand for the expected one? */
static int name_matches(const char *shown, const char *want, const struct expect *e,
                        const struct dll_limits *lim)
{
    if (!shown)
        return 0;
    if (want[0])
        return strcmp(shown, want) == 0;
    if (lim->unnamed_name)
        return strcmp(shown, lim->unnamed_name) == 0;
    if (!shown[0])
        return 0;
    for (int i = 0; i < e->ncomms; i++)
        if (e->comms[i].name[0] && strcmp(shown, e->comms[i].name) == 0)
            return 0;
    return 1;
}

static int length_ok(long shown, long bytes, int in_elements)
{
    if (shown == bytes)
        return 1;
    if (!in_elements || shown <= 0)
        return 0;
    for (long size = 1; size <= 16; size *= 2)
        if (shown * size == bytes)
            return 1;
    return 0;
}

static int op_matches(const struct json *op, int queue, const struct expect_op *x,
                      const struct json *procs, const struct dll_limits *lim)
{
    const char *st = str(op, "status");
    if (!st || x->status < 0 || x->status > 2 || strcmp(st, status_names[x->status]) != 0)
        return 0;
    int unexp = queue == EXPECT_UNEXPECTED;
    long peer = num(op, unexp ? "actual_local_rank" : "desired_local_rank");
    long gpeer = global_key(procs, num(op, unexp ? "actual_global_rank" : "desired_global_rank"));
    long tag = num(op, unexp ? "actual_tag" : "desired_tag");
    long len = num(op, unexp ? "actual_length" : "desired_length");
    if (x->peer == EXPECT_ANY ? peer != -1 : peer != x->peer)
        return 0;
    if (x->gpeer == EXPECT_ANY ? gpeer != -1
                               : gpeer != x->gpeer && !(lim->no_global_ranks && gpeer == -1))
        return 0;
    if (x->tag == EXPECT_ANY) {
        if (!num(op, "tag_wild"))
            return 0;
    } else if (tag != x->tag || (!unexp && num(op, "tag_wild"))) {
        return 0;
    }
    if (unexp && lim->unexpected_length_unknown && len == -1)
        return 1;
    return length_ok(len, x->bytes, !unexp && lim->lengths_in_elements);
}

struct shown_op {
    const struct json *op;
    const char *comm;
    int queue, used;
};

static void describe_ops(char *err, int errlen, const struct shown_op *ops, int n)
{
    size_t used = strlen(err);
    for (int i = 0; i < n && used + 1 < (size_t)errlen; i++) {
        const struct json *o = ops[i].op;
        snprintf(err + used, (size_t)errlen - used,
                 "\n    shown: %s %s %s peer %ld/%ld tag %ld%s len %ld | actual %ld/%ld tag %ld "
                 "len %ld",
                 ops[i].comm, queue_keys[ops[i].queue], str(o, "status"),
                 num(o, "desired_local_rank"), num(o, "desired_global_rank"),
                 num(o, "desired_tag"), num(o, "tag_wild") ? " (wild)" : "",
                 num(o, "desired_length"), num(o, "actual_local_rank"),
                 num(o, "actual_global_rank"), num(o, "actual_tag"), num(o, "actual_length"));
        used = strlen(err);
    }
}

static int compare_rank(const struct json *proc, int r, const struct expect *e,
                        const struct json *procs, const struct job *job,
                        const struct dll_limits *lim, char *err, int errlen)
{
    char who[32];
    const char *rs = expect_process_text(r, who, sizeof who);
    const char *perr = str(proc, "error");
    if (perr) {
        snprintf(err, (size_t)errlen, "rank %s: error: %s", rs, perr);
        return -1;
    }
    /* The launcher knows the pids of the ranks it started, not of those
     * they spawned. */
    if (r < EXPECT_WORLD && num(proc, "pid") != job->ranks[r]) {
        snprintf(err, (size_t)errlen, "rank %s: pid %ld, the launcher said %d", rs,
                 num(proc, "pid"), (int)job->ranks[r]);
        return -1;
    }
    const struct json *comms = json_get(proc, "communicators");
    if (!comms || comms->kind != JSON_ARRAY) {
        snprintf(err, (size_t)errlen, "rank %s: no communicators array", rs);
        return -1;
    }
    int want_comms = 0;
    for (int i = 0; i < e->ncomms; i++) {
        const struct expect_comm *x = &e->comms[i];
        if (x->rank != r && x->rank != EXPECT_ALL_RANKS)
            continue;
        want_comms++;
        int found = 0;
        for (int c = 0; c < comms->n && !found; c++) {
            const struct json *cm = &comms->items[c];
            found = name_matches(str(cm, "name"), x->name, e, lim) &&
                    num(cm, "size") == x->size && num(cm, "local_rank") == x->local_rank;
        }
        if (!found) {
            snprintf(err, (size_t)errlen, "rank %s: no communicator \"%s\" of size %ld where "
                     "it has rank %ld", rs, x->name[0] ? x->name : "(unnamed)", x->size,
                     x->local_rank);
            return -1;
        }
    }
    if (!lim->shows_internal_comms && comms->n != want_comms) {
        snprintf(err, (size_t)errlen, "rank %s: %d communicators shown, the sample has %d", rs,
                 comms->n, want_comms);
        return -1;
    }
    /* Every operation shown, in any communicator. */
    struct shown_op ops[256];
    int nops = 0;
    for (int c = 0; c < comms->n; c++) {
        for (int q = 0; q < 3; q++) {
            const struct json *list = json_get(&comms->items[c], queue_keys[q]);
            for (int o = 0; list && list->kind == JSON_ARRAY && o < list->n && nops < 256; o++)
                ops[nops++] = (struct shown_op){&list->items[o], str(&comms->items[c], "name"),
                                                q, 0};
        }
    }
    int want_ops = 0;
    for (int i = 0; i < e->nops; i++) {
        const struct expect_op *x = &e->ops[i];
        if (x->rank != r)
            continue;
        want_ops++;
        int found = 0;
        for (int k = 0; k < nops && !found; k++) {
            if (ops[k].used || ops[k].queue != (int)x->queue ||
                !name_matches(ops[k].comm, x->comm, e, lim) ||
                !op_matches(ops[k].op, ops[k].queue, x, procs, lim))
                continue;
            ops[k].used = found = 1;
        }
        if (!found) {
            snprintf(err, (size_t)errlen, "rank %s: nothing shown for: %s %s %s peer %ld "
                     "global %ld tag %ld bytes %ld", rs, x->comm[0] ? x->comm : "(unnamed)",
                     queue_keys[x->queue], status_names[x->status], x->peer, x->gpeer, x->tag,
                     x->bytes);
            describe_ops(err, errlen, ops, nops);
            return -1;
        }
    }
    if (nops != want_ops) {
        snprintf(err, (size_t)errlen, "rank %s: %d operations shown, the sample left %d", rs,
                 nops, want_ops);
        describe_ops(err, errlen, ops, nops);
        return -1;
    }
    return 0;
}

int compare_dump(const struct json *dump, const struct expect *e, const struct job *job,
                 const struct dll_limits *lim, char *err, int errlen)
{
    const struct json *procs = json_get(dump, "processes");
    if (!procs || procs->kind != JSON_ARRAY) {
        snprintf(err, (size_t)errlen, "no processes array");
        return -1;
    }
    if (procs->n != expect_nprocs(e)) {
        snprintf(err, (size_t)errlen, "%d processes shown, the job has %d", procs->n,
                 expect_nprocs(e));
        return -1;
    }
    for (int k = 0; k < expect_nprocs(e); k++) {
        int r = expect_process(e, k);
        const struct json *proc = NULL;
        for (int i = 0; i < procs->n && !proc; i++)
            if (proc_key(&procs->items[i]) == r)
                proc = &procs->items[i];
        if (!proc) {
            char who[32];
            snprintf(err, (size_t)errlen, "rank %s is not shown",
                     expect_process_text(r, who, sizeof who));
            return -1;
        }
        if (compare_rank(proc, r, e, procs, job, lim, err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- analysis */

int compare_where(const struct json *dump, const struct expect *e, char *err, int errlen)
{
    const struct json *procs = json_get(dump, "processes");
    for (int i = 0; procs && i < procs->n; i++) {
        const struct json *p = &procs->items[i];
        int rank = proc_key(p);
        char who[32];
        const struct json *w = json_get(p, "where");
        const char *call = w && w->kind == JSON_OBJECT ? json_get(w, "call")->string : NULL;
        for (int k = 0; k < e->nwheres; k++) {
            const struct expect_where *x = &e->wheres[k];
            if (x->rank != EXPECT_ALL_RANKS && x->rank != rank)
                continue;
            if (x->call[0] ? !call || strcmp(call, x->call) != 0 : call != NULL) {
                snprintf(err, (size_t)errlen, "rank %s is in %s, not in %s",
                         expect_process_text(rank, who, sizeof who),
                         call ? call : "no MPI call", x->call[0] ? x->call : "no MPI call");
                return -1;
            }
            const struct json *args = x->nargs ? json_get(w, "args") : NULL;
            for (int a = 0; a < x->nargs; a++) {
                int comm = strcmp(x->arg[a], "comm") == 0;
                const struct json *v = args ? json_get(args, comm ? "comm_name" : x->arg[a]) : NULL;
                char got[64] = "not read";
                if (v && v->kind == JSON_STRING)
                    snprintf(got, sizeof got, "%s", v->string);
                else if (v && v->kind == JSON_NUMBER)
                    snprintf(got, sizeof got, "%ld", (long)v->number);
                if (strcmp(got, x->value[a]) != 0) {
                    const struct json *why = json_get(w, "args_why");
                    snprintf(err, (size_t)errlen, "rank %s's %s: %s is %s, not %s (%s)",
                             expect_process_text(rank, who, sizeof who), call, x->arg[a], got,
                             x->value[a], why && why->kind == JSON_STRING ? why->string : "");
                    return -1;
                }
            }
        }
    }
    return 0;
}

/* "0,1,1:0" from a JSON array of indexes into the dump's processes. */
static void joined(const struct json *dump, const struct json *a, char *buf, size_t len)
{
    size_t at = 0;
    char who[32];
    buf[0] = '\0';
    for (int i = 0; a && a->kind == JSON_ARRAY && i < a->n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "," : "",
                               expect_process_text(index_key(dump, (long)a->items[i].number),
                                                   who, sizeof who));
}

int compare_deadlock(const struct json *dump, const struct expect *e, char *err, int errlen)
{
    const struct json *dl = json_get(dump, "deadlock");
    const struct json *list = dl ? json_get(dl, "deadlocks") : NULL;
    char got[256];
    if (!list || list->kind != JSON_ARRAY) {
        snprintf(err, (size_t)errlen, "no \"deadlock\" object with its \"deadlocks\"");
        return -1;
    }
    if (json_get(dl, "found")->number != (e->ndeadlocks > 0) || list->n != e->ndeadlocks) {
        snprintf(err, (size_t)errlen, "%d deadlocks reported, %d expected", list->n,
                 e->ndeadlocks);
        return -1;
    }
    int nedges = 0;
    for (int i = 0; i < list->n; i++) {
        const struct json *d = &list->items[i];
        const char *kind = json_get(d, "kind")->string;
        joined(dump, json_get(d, "processes"), got, sizeof got);
        if (strcmp(kind, e->deadlocks[i].knot ? "knot" : "cycle") != 0 ||
            strcmp(got, e->deadlocks[i].ranks) != 0) {
            snprintf(err, (size_t)errlen, "deadlock %d: a %s of ranks %s, expected a %s of %s",
                     i, kind, got, e->deadlocks[i].knot ? "knot" : "cycle",
                     e->deadlocks[i].ranks);
            return -1;
        }
        nedges += json_get(d, "edges")->n;
    }
    joined(dump, json_get(dl, "behind_processes"), got, sizeof got);
    if (strcmp(got, e->behind) != 0) {
        snprintf(err, (size_t)errlen, "ranks behind the deadlock: [%s], expected [%s]", got,
                 e->behind);
        return -1;
    }
    if (nedges != e->nwaits) {
        snprintf(err, (size_t)errlen, "%d edges explain the deadlocks, %d expected", nedges,
                 e->nwaits);
        return -1;
    }
    /* Every expected edge, each reported edge used once. */
    char *used = calloc((size_t)e->nwaits + 1, 1);
    int rc = used ? 0 : -1;
    for (int i = 0; rc == 0 && i < list->n; i++) {
        const struct json *edges = json_get(&list->items[i], "edges");
        for (int k = 0; rc == 0 && k < edges->n; k++) {
            const struct json *g = &edges->items[k];
            int from = index_key(dump, num(g, "from_process")),
                to = index_key(dump, num(g, "to_process"));
            const char *kind = json_get(g, "kind")->string;
            int hit = -1;
            for (int x = 0; hit < 0 && x < e->nwaits; x++)
                if (!used[x] && e->waits[x].from == from && e->waits[x].to == to &&
                    strcmp(e->waits[x].kind, kind) == 0)
                    hit = x;
            if (hit < 0) {
                char a[32], b[32];
                snprintf(err, (size_t)errlen, "unexpected edge %s -> %s (%s): %s",
                         expect_process_text(from, a, sizeof a),
                         expect_process_text(to, b, sizeof b), kind, json_get(g, "why")->string);
                rc = -1;
            } else {
                used[hit] = 1;
            }
        }
    }
    free(used);
    return rc;
}
