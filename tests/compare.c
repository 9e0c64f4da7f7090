/* compare.c - mqdump --json against SAMPLE.expect. */
#define _GNU_SOURCE
#include "compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Open MPI 4.1.4's libompi_dbg_msgq.so, read in its source
 * (ompi/debuggers/ in the release tarball):
 */
const struct dll_limits compare_ompi_limits = {
    /* ompi_msgq_dll.c:643-650 (rebuild_communicator_list) lists every
     * entry of ompi_mpi_communicators: MPI_COMM_NULL too (size 0), and the
     * duplicates MPI_Intercomm_create and MPI_Comm_spawn make inside. */
    .shows_internal_comms = 1,
    /* ompi_msgq_dll.c:1264-1265: mqs_setup_operation_iterator returns
     * mqs_no_information for mqs_unexpected_messages ("TODO"). */
    .unexpected_no_information = 1,
    /* ompi_msgq_dll.c:1128-1136 reads req_complete with ompi_fetch_bool,
     * which fetches sizes.bool_size (1) bytes (ompi_common_dll.c:556-563);
     * but req_complete is a pointer (ompi/request/request.h:129), which a
     * waiting MPI_Wait* points at its synchronisation object: one byte of
     * that address, so a waited-on request reads complete unless the
     * byte happens to be 0. */
    .completion_unreliable = 1,
    /* ompi_msgq_dll.c:678-681 keeps only c_local_group, and 1139-1140
     * translate a peer's rank through it even on an intercommunicator,
     * whose peers are in the remote group. */
    .intercomm_peers_in_local_group = 1,
    /* ompi_common_dll.c:540-553: ompi_fetch_int copies an int's 4 bytes
     * into a zeroed 64-bit mqs_tword_t, not sign-extended, so a receive
     * from MPI_ANY_SOURCE has desired_local_rank 4294967295 (the tag is
     * compared as an int at ompi_msgq_dll.c:1116, so tag_wild is right). */
    .ints_unsigned = 1,
    /* Not the DLL's: ob1's MPI_Send/MPI_Ssend run on a send request from
     * the free list the DLL walks (ompi/mca/pml/ob1/pml_ob1_isend.c:
     * 253-259, mca_pml_ob1_send), where MPICH's blocking sends are in no
     * queue. */
    .blocking_send_queued = 1,
    /* ompi_msgq_dll.c:1119-1121 skips requests of negative tags, and Open
     * MPI's collectives all use negative tags (ompi/mca/coll/base/
     * coll_tags.h:33-44, MCA_COLL_BASE_TAG_BARRIER -16 ...
     * NONBLOCKING_BASE -27); MPICH's collective traffic shows. */
    .collective_traffic_hidden = 1,
    /* Its other differences need no allowance here: its text's count
     * and datatype name are wrong (ompi_msgq_dll.c:1153-1170: the
     * datatype's size as "instances", the name cut to 4 characters), in
     * extra_text, which is not compared; it walks the request free lists
     * (1084-1100), so queues come in memory order, and the comparison
     * takes them in any order; it gives no communicator handles, which
     * are not compared. */
};

/*
 * mqd's libmqd_ompi.so on the same Open MPI 4.1.4 (pml ob1): exact, but
 * for what Open MPI does otherwise than the MPICH the .expect files were
 * written for.
 */
const struct dll_limits compare_mqd_ompi_limits = {
    /* ob1's MPI_Send and MPI_Ssend run on a send request of the free list
     * (ompi/mca/pml/ob1/pml_ob1_isend.c:253-276, mca_pml_ob1_send: only a
     * standard send small enough for mca_pml_ob1_send_inline has none),
     * which is in progress until the receiver takes it: a pending send. */
    .blocking_send_queued = 1,
    /* Open MPI's blocking collectives are coll/tuned's algorithms
     * (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c), with their own
     * fixed tags (ompi/mca/coll/base/coll_tags.h:27-43: MPI_Barrier's
     * -16, shown as 16), not MPICH's: a two-process MPI_Barrier is one
     * zero-byte sendrecv (coll_base_barrier.c,
     * ompi_coll_base_barrier_intra_two_procs), a gather a linear one.  The
     * nonblocking ones are libnbc's, each by its instance, compared. */
    .own_blocking_collectives = 1,
    .collective_flag_exact = 1,
    /* MPI_Finalize waits for the other processes in a PMIx fence
     * (ompi/runtime/ompi_mpi_finalize.c:251-280) before it frees the
     * communicators (ompi_comm_finalize, :329): a rank there still has its
     * MPI_COMM_SELF, which MPICH has freed by then. */
    .finalize_keeps_communicators = 1,
};

static const char *const queue_keys[] = {"pending_sends", "pending_receives",
                                         "unexpected_messages"};
static const char *const status_names[] = {"pending", "matched", "complete",
                                           "complete or pending"};

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

/* v as the int it is, from a DLL that reads ints unsigned. */
static long int_of(long v, const struct dll_limits *lim)
{
    return lim->ints_unsigned && v == 4294967295L ? -1 : v;
}

/* Is x's communicator an intercommunicator at x's rank? */
static int is_intercomm(const struct expect *e, const struct expect_op *x)
{
    for (int i = 0; i < e->ncomms; i++)
        if ((e->comms[i].rank == x->rank || e->comms[i].rank == EXPECT_ALL_RANKS) &&
            strcmp(e->comms[i].name, x->comm) == 0 && e->comms[i].remote_size >= 0)
            return 1;
    return 0;
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

/* The global rank a DLL that translates an intercommunicator's peers
 * through its local group gives peer: that group's member (-3: none). */
static long local_group_member(const struct json *comm, long peer)
{
    const struct json *g = json_get(comm, "group");
    return g && g->kind == JSON_ARRAY && peer >= 0 && peer < g->n ? (long)g->items[peer].number
                                                                   : -3;
}

static int op_matches(const struct json *op, const struct json *comm, int queue,
                      const struct expect_op *x, const struct expect *e,
                      const struct json *procs, const struct dll_limits *lim)
{
    const char *st = str(op, "status");
    if (!st || x->status < 0 || x->status > EXPECT_NOT_RECORDED ||
        (x->status == EXPECT_NOT_RECORDED
             ? strcmp(st, "complete") != 0 && strcmp(st, "pending") != 0
             : strcmp(st, status_names[x->status]) != 0 &&
         !(lim->completion_unreliable && queue != EXPECT_UNEXPECTED &&
           x->status == 0 && strcmp(st, "complete") == 0) &&
         !(lim->unexpected_complete_as_pending && queue == EXPECT_UNEXPECTED &&
           x->status == 2 && strcmp(st, "pending") == 0)))
        return 0;
    int unexp = queue == EXPECT_UNEXPECTED;
    long peer = int_of(num(op, unexp ? "actual_local_rank" : "desired_local_rank"), lim);
    if (lim->any_source_16bit && !unexp && peer == 65534)
        peer = -1;
    long shown_g = num(op, unexp ? "actual_global_rank" : "desired_global_rank");
    long gpeer = global_key(procs, shown_g);
    if (lim->intercomm_peers_in_local_group && x->peer >= 0 && is_intercomm(e, x) &&
        shown_g == local_group_member(comm, x->peer))
        gpeer = x->gpeer;
    long tag = int_of(num(op, unexp ? "actual_tag" : "desired_tag"), lim);
    long len = num(op, unexp ? "actual_length" : "desired_length");
    if (lim->collective_flag_exact && (num(op, "collective") == 1) != (x->coll != 0))
        return 0;
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
    const struct json *op, *cm;
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

static const char *const collectives[] = {
    "MPI_Barrier", "MPI_Bcast", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv",
    "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Alltoallw",
    "MPI_Reduce", "MPI_Allreduce", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block",
    "MPI_Scan", "MPI_Exscan"};

/* Does e put rank r in a collective: its where call, or a wait from it? */
static int in_collective(const struct expect *e, int r)
{
    for (int i = 0; i < e->nwaits; i++)
        if (e->waits[i].from == r && strcmp(e->waits[i].kind, "collective") == 0)
            return 1;
    for (int i = 0; i < e->nwheres; i++)
        for (size_t k = 0; (e->wheres[i].rank == r || e->wheres[i].rank == EXPECT_ALL_RANKS) &&
                           k < sizeof collectives / sizeof collectives[0]; k++)
            if (strcmp(e->wheres[i].call, collectives[k]) == 0)
                return 1;
    return 0;
}

/* Does e put rank r in MPI_Finalize? */
static int in_finalize(const struct expect *e, int r)
{
    for (int i = 0; i < e->nwheres; i++)
        if ((e->wheres[i].rank == r || e->wheres[i].rank == EXPECT_ALL_RANKS) &&
            strcmp(e->wheres[i].call, "MPI_Finalize") == 0)
            return 1;
    return 0;
}

/* Is o the pending send proc's blocking MPI_Send or MPI_Ssend made (its
 * dest, tag and communicator, as read from its frame)? */
static int own_blocking_send(const struct json *proc, const struct shown_op *o)
{
    const struct json *w = json_get(proc, "where");
    const char *call = w && w->kind == JSON_OBJECT ? str(w, "call") : NULL;
    const struct json *args = call ? json_get(w, "args") : NULL;
    return o->queue == EXPECT_SEND && args && o->comm && str(args, "comm_name") &&
           (strcmp(call, "MPI_Send") == 0 || strcmp(call, "MPI_Ssend") == 0) &&
           strcmp(str(o->op, "status"), "pending") == 0 &&
           num(args, "dest") == num(o->op, "desired_local_rank") &&
           num(args, "tag") == num(o->op, "desired_tag") &&
           strcmp(str(args, "comm_name"), o->comm) == 0;
}

/* MQD_NBC_FIRST_TAG (mpi_interface.h): a collective's tag from it up names
 * a nonblocking collective's instance, below it a blocking one's. */
enum { NBC_FIRST_TAG = 287 };

/* Is x a blocking collective's traffic, which lim lets the MPI do its own
 * way? */
static int own_collective_expected(const struct dll_limits *lim, const struct expect_op *x)
{
    return lim->own_blocking_collectives && x->coll && x->tag < NBC_FIRST_TAG;
}

/* Is shown entry o one (flagged collective, a tag below the instances')? */
static int own_collective_shown(const struct dll_limits *lim, const struct shown_op *o)
{
    long tag = num(o->op, o->queue == EXPECT_UNEXPECTED ? "actual_tag" : "desired_tag");
    return lim->own_blocking_collectives && num(o->op, "collective") == 1 &&
           tag < NBC_FIRST_TAG;
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
    if (!lim->shows_internal_comms && comms->n != want_comms &&
        !(lim->finalize_keeps_communicators && in_finalize(e, r))) {
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
                ops[nops++] = (struct shown_op){&list->items[o], &comms->items[c],
                                                str(&comms->items[c], "name"), q, 0};
        }
    }
    int want_ops = 0;
    for (int i = 0; i < e->nops; i++) {
        const struct expect_op *x = &e->ops[i];
        if (x->rank != r || (lim->unexpected_no_information && x->queue == EXPECT_UNEXPECTED) ||
            (lim->collective_traffic_hidden && in_collective(e, r)) ||
            own_collective_expected(lim, x))
            continue;
        want_ops++;
        int found = 0;
        for (int k = 0; k < nops && !found; k++) {
            if (ops[k].used || ops[k].queue != (int)x->queue ||
                !name_matches(ops[k].comm, x->comm, e, lim) ||
                !op_matches(ops[k].op, ops[k].cm, ops[k].queue, x, e, procs, lim))
                continue;
            ops[k].used = found = 1;
        }
        if (!found && x->status == EXPECT_NOT_RECORDED) { /* or never taken in */
            want_ops--;
            continue;
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
    for (int k = 0; lim->blocking_send_queued && k < nops; k++)
        if (!ops[k].used && own_blocking_send(proc, &ops[k]))
            ops[k].used = 1, want_ops++;
    for (int k = 0; k < nops; k++)
        if (!ops[k].used && own_collective_shown(lim, &ops[k]))
            ops[k].used = 1, want_ops++;
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
            const struct json *fin = json_get(p, "mpi_finalized");
            if (x->finalized && !(fin && fin->kind == JSON_BOOL && fin->number)) {
                snprintf(err, (size_t)errlen, "rank %s is not past MPI_Finalize (no "
                         "\"mpi_finalized\")", expect_process_text(rank, who, sizeof who));
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

static int edges_in_waits(const struct json *dump, const struct json *list,
                          const struct expect *e, char *err, int errlen);

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
        const char *want = e->deadlocks[i].knot == EXPECT_END ? "end"
                           : e->deadlocks[i].knot         ? "knot"
                                                          : "cycle";
        if (strcmp(kind, want) != 0 || strcmp(got, e->deadlocks[i].ranks) != 0) {
            snprintf(err, (size_t)errlen, "deadlock %d: a %s of ranks %s, expected a %s of %s",
                     i, kind, got, want, e->deadlocks[i].ranks);
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
    return edges_in_waits(dump, list, e, err, errlen);
}

/* 0 if each edge of the deadlocks in list is one of e's wait lines, each
 * line used once; else -1 with the first that is not, in err. */
static int edges_in_waits(const struct json *dump, const struct json *list,
                          const struct expect *e, char *err, int errlen)
{
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

/* Is every process of the list got ("0,1,1:0") one of the list want's? */
static int ranks_within(const char *got, const char *want)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", got);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t n = strlen(t);
        const char *w = want;
        while ((w = strstr(w, t)) && !((w == want || w[-1] == ',') && (w[n] == ',' || !w[n])))
            w += n;
        if (!w)
            return 0;
    }
    return 1;
}

int compare_deadlock_within(const struct json *dump, const struct expect *e, char *err,
                            int errlen)
{
    const struct json *dl = json_get(dump, "deadlock");
    const struct json *list = dl ? json_get(dl, "deadlocks") : NULL;
    if (!list || list->kind != JSON_ARRAY) {
        snprintf(err, (size_t)errlen, "no \"deadlock\" object with its \"deadlocks\"");
        return -1;
    }
    char got[256];
    for (int i = 0; i < list->n; i++) {
        joined(dump, json_get(&list->items[i], "processes"), got, sizeof got);
        int within = 0;
        for (int k = 0; k < e->ndeadlocks && !within; k++)
            within = ranks_within(got, e->deadlocks[k].ranks);
        if (!within) {
            snprintf(err, (size_t)errlen, "deadlock %d, of ranks %s, is none of the expected",
                     i, got);
            return -1;
        }
    }
    return edges_in_waits(dump, list, e, err, errlen);
}

/* ---------------------------------------------------------------- MPICH builds */

int compare_mpich_build(struct mpich_build *b, char *err, int errlen)
{
    const char *prefix = getenv("MQD_MPICH_PREFIX");
    char cmd[4200], line[512];
    memset(b, 0, sizeof *b);
    if (!prefix || !*prefix) {
        snprintf(err, (size_t)errlen, "MQD_MPICH_PREFIX is not set");
        return -1;
    }
    snprintf(cmd, sizeof cmd, "'%s/bin/mpichversion' 2>/dev/null", prefix);
    FILE *p = strchr(prefix, '\'') ? NULL : popen(cmd, "r");
    while (p && fgets(line, sizeof line, p)) {
        /* "MPICH Version:    \t4.0.2" (4.0) or "MPICH Version:      5.0.1" */
        if (strncmp(line, "MPICH Version:", 14) == 0)
            sscanf(line + 14, " %31s", b->version);
        else if (strncmp(line, "MPICH Device:", 13) == 0)
            sscanf(line + 13, " %31s", b->device);
    }
    if (p)
        pclose(p);
    int major, minor;
    if (!b->version[0] || !b->device[0] || sscanf(b->version, "%d.%d", &major, &minor) != 2) {
        snprintf(err, (size_t)errlen, "%s/bin/mpichversion names no MPICH version and device",
                 prefix);
        return -1;
    }
    b->generation = major * 100 + minor;
    return 0;
}

/*
 * 5.0 and later: a one-node communicator is no longer "node-consecutive"
 * (commit 61688644f4; 5.0.1 src/mpi/comm/commutil.c:519-521 set only
 * HIERARCHY__SINGLE_NODE, src/include/mpir_comm.h:370 tests the flag), so
 * MPI_Iscan's SMP algorithm falls back to recursive doubling on the
 * communicator itself (src/mpi/coll/iscan/iscan_intra_sched_smp.c:27-31),
 * as MPI_Iallreduce's small-message one runs: on 2 ranks each sends its
 * one int to the other with the same schedule tag and context, so the
 * mismatched pair completes each other.  Up to 4.3 the scan ran on the
 * node-level sub-communicator (another context) and never matched.
 */
#define NBCMIX_50                                                                              \
    "from MPICH 5.0 a one-node MPI_Iscan runs recursive doubling on MPI_COMM_WORLD "           \
    "(commit 61688644f4, iscan_intra_sched_smp.c:27-31), as MPI_Iallreduce does: the "         \
    "mismatched pair's messages match and both complete"

/*
 * What cannot be shown, by MPICH generation (major * 100 + minor, from ..
 * to inclusive) and device ("ch3", "ch4": the start of mpichversion's
 * device); each entry with the reason it is true, none overlapping.
 * Every build is judged by the same tests: what is not allowed here must
 * be exact.
 */
static const struct {
    int from, to;
    const char *device;
    struct mpich_allowances allow;
} mpich_allowances[] = {
    /* MPICH 4.0.2 ch4:
     * - libtvmpich.so reads ch3's lists through MPID_Recvq_*_head_ptr,
     *   which ch4 does not keep: nothing true (tag 65536, length 0 on
     *   every rank);
     * - the known layouts are ch3's;
     * - spawn: the receives and the unexpected message on the
     *   intercommunicator between the worlds are in no list of libmpi's
     *   (none shown; the send is, without its count and datatype);
     * - mixed: the rank in MPI_Finalize shows no unexpected message
     *   (MPII_Finalize has freed the communicators it was queued on);
     * - libfabric runs two threads of its own in every process. */
    {400, 400, "ch4",
     {.no_known_layout = 1, .tvmpich_blind = 1, .samples_unseen = "spawn mixed ",
      .library_threads = 1}},
    /* 4.1 and later, ch4:
     * - every send request is in MPIR_Debugq (MPII_Debugq_remember), and
     *   ch4 makes one for a blocking MPI_Send or MPI_Ssend: the rank's own
     *   blocked send shows as a pending send (4.2.3's ssend);
     * - the known layouts are of 4.0.2's ch3 alone;
     * - libfabric runs two threads of its own in every process;
     * - MPI_Finalize returns at once, without waiting for the other ranks
     *   (its shared-memory barrier went in 4.1, commit 37278ce3d2; 4.2.3
     *   ch4_init.c:769-823, MPID_Finalize): finalize's and mixed's rank
     *   is past it, waits for nobody, and the deadlock ends at it. */
    /* - libtvmpich.so, besides what it gets wrong everywhere, reads the
     *   debug queues (4.2.3 src/mpi/debugger/dll_mpich.c):
     *   - a receive's rank with fetch_int16 into an int (:575): its
     *     MPI_ANY_SOURCE (-2) is 65534, which (rank >= 0) keeps (:584);
     *   - an unexpected message's status from its request's cc (:576,
     *     :600), which ch4 keeps at 1 until a receive matches it
     *     (MPIDIG's create_unexp_rreq): an eager message whose data is
     *     all there shows as pending. */
    /* - spawn: the worlds reach each other through OFI's own tagged path
     *   (no shared memory between them), whose unexpected messages stay in
     *   libfabric and never reach the debug queues (only MPIDIG's
     *   callbacks enter them: 4.2.3 mpidig_pt2pt_callbacks.c:390, 5.0.1
     *   :420): child 0's message to parent 1 is not shown; and up to 4.3
     *   peers in another world are named by libfabric addresses alone
     *   (another address table), so they have no global rank. */
    /* - between nodes ch4 uses OFI's own tagged path too (MPIDI_irecv:
     *   the netmod unless the peer is local, 4.2.3 ch4_recv.h:114-118):
     *   no message from another node is ever an unexpected message of
     *   the debug queues. */
#define CH4_41_ALLOWANCES                                                                     \
    .limits = {.blocking_send_queued = 1}, .no_known_layout = 1, .library_threads = 1,        \
    .finalize_returns = 1, .samples_unseen = "spawn ", .internode_unexpected_unseen = 1,      \
    .tvmpich = {.any_source_16bit = 1, .unexpected_complete_as_pending = 1}
    {401, 402, "ch4", {CH4_41_ALLOWANCES}},
    /* 4.3 and later, ch4: as 4.1, and OFI's own send requests keep no
     * datatype (removed from ofi_send.h in 8dfff88526; only ofi_recv.h:160
     * keeps one): a send to another node has no length (-1). */
    {403, 499, "ch4", {CH4_41_ALLOWANCES, .internode_send_length_unknown = 1}},
    /* 5.0 and later, ch4: as 4.3, and nbcmix's MPI_Iscan and MPI_Iallreduce
     * complete each other (below). */
    {500, 9999, "ch4",
     {CH4_41_ALLOWANCES, .internode_send_length_unknown = 1, .samples_return = "nbcmix ",
      .returns_why = NBCMIX_50}},
#undef CH4_41_ALLOWANCES
    /* 4.1 and later, ch3: the known layouts are of 4.0.2's ch3 alone;
     * libtvmpich.so reads a receive's rank as under ch4 (dll_mpich.c:575). */
    {401, 499, "ch3", {.no_known_layout = 1, .tvmpich = {.any_source_16bit = 1}}},
    {500, 9999, "ch3",
     {.no_known_layout = 1, .tvmpich = {.any_source_16bit = 1}, .samples_return = "nbcmix ",
      .returns_why = NBCMIX_50}},
};

struct mpich_allowances compare_mpich_allowances(const struct mpich_build *b)
{
    for (size_t i = 0; i < sizeof mpich_allowances / sizeof mpich_allowances[0]; i++)
        if (b->generation >= mpich_allowances[i].from && b->generation <= mpich_allowances[i].to &&
            strncmp(b->device, mpich_allowances[i].device, strlen(mpich_allowances[i].device)) == 0)
            return mpich_allowances[i].allow;
    return (struct mpich_allowances){.no_known_layout = 0};
}

const struct mpich_allowances *compare_mpich_allowed(void)
{
    char err[512];
    const struct mpich_allowances *all = compare_mpich_under_test(err, sizeof err);
    if (!all) {
        fprintf(stderr, "the MPICH under test: %s\n", err);
        exit(2);
    }
    return all;
}

const char *compare_sample_returns(const struct mpich_allowances *a, const char *name)
{
    char word[128];
    snprintf(word, sizeof word, "%s ", name);
    return a->samples_return && strstr(a->samples_return, word) ? a->returns_why : NULL;
}

const struct mpich_allowances *compare_mpich_under_test(char *err, int errlen)
{
    static struct mpich_allowances all;
    static int read;
    struct mpich_build b;
    if (!read && compare_mpich_build(&b, err, errlen) != 0)
        return NULL;
    if (!read)
        all = compare_mpich_allowances(&b);
    read = 1;
    return &all;
}
