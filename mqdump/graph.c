/*
 * graph.c - mqdump --graph: the job's message queues as a Graphviz
 * graph, its deadlocks highlighted.  Public libmqdhost API only.
 *
 * Nodes are processes (filled by what the analysis says of them); grey
 * edges are queue entries in the direction the message goes (solid: a
 * pending send, dashed: a posted receive, dotted: an unexpected message),
 * labelled with their tags; red edges are the waits that explain a
 * deadlock, from the waiting process to the one it waits for; orange ones
 * the waits of processes stuck behind a deadlock.  A job with spawned
 * processes has each of its MPI_COMM_WORLDs in a box of its own.
 *
 * Folded (the default; --full draws one node per process): processes in
 * the same state as the folded text view has it (struct fold), in the same
 * world and with the same part in the analysis (in a deadlock of the same
 * kind and size, stuck behind one, free) are one node, labelled with
 * their ranks.  Edges with the same ends and the same words are one, with
 * their count and, if not one of each member's, whose they are; the words
 * name the peer as the node's members do ("recv tag 7 from rank-1": each
 * member's left neighbour).  So a ring of any size is one node with one
 * red loop, "cycle of N processes", and N/2 pairs that wait for each
 * other two nodes and "N/2 cycles of 2 processes".
 */
#define _GNU_SOURCE
#include "graph.h"

#include "common.h"
#include "dot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for a folded node's ranks ("0-31,33-63,..."): a longer list is cut. */
enum { RANKS_SHOWN = 160 };

/* What is drawn, and which processes each node stands for. */
struct queues_graph {
    const struct mqdh_dump *d;
    const struct mqdh_analysis *a; /* may be NULL */
    const struct fold *fold;       /* NULL: one node per process */
    int *node;                     /* per process: its node, named by its lowest process */
    int *start, *members;          /* node i's: members[start[i] .. start[i + 1] - 1] */
    int *deadlock;                 /* per process: 1 + the deadlock it is in, 0 none */
};

static int node_size(const struct queues_graph *g, int i)
{
    return g->start[g->node[i] + 1] - g->start[g->node[i]];
}

/* What a process's node is folded by: its state's group, its world and
 * its part in the analysis (the kind and size of the deadlock it is in:
 * 3 * size + knot, 0 none); then the process, so the lowest comes first. */
enum { KEY_FIELDS = 5 };
struct node_key {
    int field[KEY_FIELDS]; /* group, world, deadlock, stuck, activity */
    int proc;
};

static int by_node_key(const void *x, const void *y)
{
    const struct node_key *a = x, *b = y;
    for (int k = 0; k < KEY_FIELDS; k++)
        if (a->field[k] != b->field[k])
            return (a->field[k] > b->field[k]) - (a->field[k] < b->field[k]);
    return (a->proc > b->proc) - (a->proc < b->proc);
}

static int deadlock_kind(const struct queues_graph *g, int i)
{
    const struct mqdh_deadlock *dl = g->deadlock[i] ? &g->a->deadlocks[g->deadlock[i] - 1] : NULL;
    return dl ? 3 * dl->nmembers + dl->knot : 0;
}

/* Put each process in its node (g->node, g->start, g->members) and say
 * which deadlock it is in (g->deadlock).  0, or -1 out of memory. */
static int nodes_make(struct queues_graph *g)
{
    const struct mqdh_dump *d = g->d;
    const struct mqdh_analysis *a = g->a;
    int n = d->nprocs;
    struct node_key *key = malloc(((size_t)n + 1) * sizeof *key);
    g->node = malloc(((size_t)n + 1) * sizeof *g->node);
    g->start = calloc((size_t)n + 2, sizeof *g->start);
    g->members = malloc(((size_t)n + 1) * sizeof *g->members);
    g->deadlock = calloc((size_t)n + 1, sizeof *g->deadlock);
    if (!key || !g->node || !g->start || !g->members || !g->deadlock) {
        free(key);
        return -1;
    }
    for (int k = 0; a && k < a->ndeadlocks; k++)
        for (int m = 0; m < a->deadlocks[k].nmembers; m++)
            g->deadlock[a->deadlocks[k].members[m]] = k + 1;
    for (int i = 0; i < n; i++)
        key[i] = (struct node_key){{g->fold ? g->fold->group[i] : i, d->procs[i].world,
                                    deadlock_kind(g, i), a ? a->stuck[i] : 0,
                                    a ? (int)a->activity[i] : 0},
                                   i};
    qsort(key, (size_t)n, sizeof *key, by_node_key);
    for (int k = 0; k < n; k++) {
        int same = k > 0 && memcmp(key[k].field, key[k - 1].field, sizeof key[k].field) == 0;
        g->node[key[k].proc] = same ? g->node[key[k - 1].proc] : key[k].proc;
    }
    free(key);
    for (int i = 0; i < n; i++) /* each node's members, in order */
        g->start[g->node[i] + 2]++;
    for (int i = 0; i < n; i++)
        g->start[i + 2] += g->start[i + 1];
    for (int i = 0; i < n; i++)
        g->members[g->start[g->node[i] + 1]++] = i;
    return 0;
}

static void nodes_free(struct queues_graph *g)
{
    free(g->node);
    free(g->start);
    free(g->members);
    free(g->deadlock);
}

/* Who node i is, into label[len]: "rank 3\npid 4242" alone, "ranks
 * [0-15]\n16 processes" folded.  Returns the length written. */
static int node_who(const struct queues_graph *g, int i, char *label, size_t len)
{
    const struct mqdh_process *p = &g->d->procs[i];
    int m = node_size(g, i);
    if (m == 1) {
        char who[48];
        mqdh_process_label(p, who, sizeof who);
        return snprintf(label, len, "%s\npid %d", who, (int)p->pid);
    }
    char *ranks = NULL;
    size_t rlen = 0;
    FILE *f = open_memstream(&ranks, &rlen);
    if (f) {
        print_ranks(f, g->d, g->members + g->start[i], m);
        if (fclose(f) != 0) {
            free(ranks);
            ranks = NULL;
        }
    }
    int n = snprintf(label, len, "ranks [%.*s%s]\n%d processes", RANKS_SHOWN,
                     ranks ? ranks : "?", ranks && rlen > RANKS_SHOWN ? "..." : "", m);
    free(ranks);
    return n;
}

static void node(FILE *f, const struct queues_graph *g, int i)
{
    const struct mqdh_process *p = &g->d->procs[i];
    const struct mqdh_analysis *a = g->a;
    char label[1024];
    int n = node_who(g, i, label, sizeof label);
    if (p->where_call)
        n += snprintf(label + n, sizeof label - (size_t)n, "\n%s", p->where_call);
    if (p->where_file)
        n += snprintf(label + n, sizeof label - (size_t)n, "\n%s:%d", base_name(p->where_file),
                      p->where_line);
    /* Receives from MPI_ANY_SOURCE have no one edge: listed on the node
     * (the same in every member of a folded one). */
    for (int c = 0; c < p->ncomms; c++) {
        const struct mqdh_queue *q = &p->comms[c].queues[MQDH_RECEIVES];
        for (int o = 0; q->state == MQDH_QUEUE_OK && o < q->nops; o++)
            if (q->ops[o].desired_local_rank < 0 && n < (int)sizeof label - 64) {
                if (q->ops[o].tag_wild)
                    n += snprintf(label + n, sizeof label - (size_t)n,
                                  "\nrecv ANY tag ANY (%s)", p->comms[c].name);
                else
                    n += snprintf(label + n, sizeof label - (size_t)n,
                                  "\nrecv ANY tag %ld (%s)", q->ops[o].desired_tag,
                                  p->comms[c].name);
            }
    }
    if (p->error && n < (int)sizeof label - 64)
        snprintf(label + n, sizeof label - (size_t)n, "\nnot dumped");
    const char *fill = "white";
    if (g->deadlock[i])
        fill = "#f4a6a6";
    else if (a && a->stuck[i])
        fill = "#f8d49a";
    else if (a && a->activity[i] == MQDH_ACT_RUNNING)
        fill = "#c8e6c0";
    else if (a && a->activity[i] == MQDH_ACT_UNKNOWN)
        fill = "#dddddd";
    fprintf(f, "  p%d [label=", i);
    dot_string(f, label);
    fprintf(f, ", fillcolor=\"%s\"%s%s];\n", fill,
            g->deadlock[i] ? ", color=red, penwidth=2" : "",
            node_size(g, i) > 1 ? ", shape=box3d" : "");
}

/*
 * An edge between nodes, before those with the same ends and words are
 * made one: its kind (a queue, or a wait), its words (malloc'd), the
 * process whose operation or wait it is (owner), for a wait its index in
 * the analysis, and for a deadlock's the deadlock.  Made one: how many it
 * stands for, in how many deadlocks, and when those are not one of each
 * member of the owner's node, whose they are (malloc'd).
 */
enum edge_kind { EDGE_SEND, EDGE_RECV, EDGE_UNEXPECTED, EDGE_DEADLOCK, EDGE_BEHIND };

struct edge {
    int from, to;
    enum edge_kind kind;
    char *label;
    int owner, wait, deadlock;
    int count, deadlocks;
    char *whose;
};

struct edges {
    struct edge *e;
    int n, cap;
    int failed; /* out of memory: the graph is not written */
};

static void edge_add(struct edges *es, int from, int to, enum edge_kind kind, const char *label,
                     int owner, int wait, int deadlock)
{
    if (es->failed)
        return;
    if (es->n == es->cap) {
        int cap = es->cap ? 2 * es->cap : 64;
        struct edge *m = realloc(es->e, (size_t)cap * sizeof *m);
        if (!m) {
            es->failed = 1;
            return;
        }
        es->e = m;
        es->cap = cap;
    }
    char *l = strdup(label);
    if (!l) {
        es->failed = 1;
        return;
    }
    es->e[es->n++] = (struct edge){from, to, kind, l, owner, wait, deadlock, 1, 1, NULL};
}

static int by_ends_and_words(const void *x, const void *y)
{
    const struct edge *a = x, *b = y;
    if (a->from != b->from)
        return (a->from > b->from) - (a->from < b->from);
    if (a->to != b->to)
        return (a->to > b->to) - (a->to < b->to);
    if (a->kind != b->kind)
        return (a->kind > b->kind) - (a->kind < b->kind);
    int c = strcmp(a->label, b->label);
    if (c)
        return c;
    if (a->owner != b->owner)
        return (a->owner > b->owner) - (a->owner < b->owner);
    return (a->wait > b->wait) - (a->wait < b->wait);
}

static int same_edge(const struct edge *a, const struct edge *b)
{
    return a->from == b->from && a->to == b->to && a->kind == b->kind &&
           strcmp(a->label, b->label) == 0;
}

/* Whose the edges e[0..n-1] (made one) are, when their owner's node is
 * folded and they are not one of each member's: "ranks [2-15]", "rank 1"
 * (malloc'd), else NULL.  owners[n] is scratch. */
static char *whose(const struct queues_graph *g, const struct edge *e, int n, int *owners)
{
    int m = 0;
    for (int k = 0; k < n; k++)
        if (!m || owners[m - 1] != e[k].owner)
            owners[m++] = e[k].owner;
    if (node_size(g, e[0].owner) == 1 || (m == n && m == node_size(g, e[0].owner)))
        return NULL;
    if (m == 1) {
        char who[48];
        mqdh_process_label(&g->d->procs[owners[0]], who, sizeof who);
        return strdup(who);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fprintf(f, "ranks [");
    print_ranks(f, g->d, owners, m);
    fprintf(f, "]");
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    if (len > RANKS_SHOWN)
        strcpy(buf + RANKS_SHOWN - 4, "...]");
    return buf;
}

/* Make edges with the same ends, kind and words one: counted, with the
 * deadlocks they are in, and said whose they are if not each member's of
 * the node they come from.  0, or -1 out of memory. */
static int edges_merge(struct edges *es, const struct queues_graph *g)
{
    qsort(es->e, (size_t)es->n, sizeof *es->e, by_ends_and_words);
    int nd = g->a ? g->a->ndeadlocks : 0;
    int *owners = malloc(((size_t)es->n + 1) * sizeof *owners);
    int *seen = malloc(((size_t)nd + 1) * sizeof *seen); /* deadlock: the last edge in it */
    if (!owners || !seen) {
        free(owners);
        free(seen);
        return -1;
    }
    for (int k = 0; k < nd; k++)
        seen[k] = -1;
    int m = 0;
    for (int k = 0, end; k < es->n; k = end) {
        struct edge one = es->e[k];
        one.deadlocks = 0;
        for (end = k; end < es->n && same_edge(&es->e[k], &es->e[end]); end++) {
            int dl = es->e[end].deadlock;
            if (dl >= 0 && seen[dl] != m) {
                seen[dl] = m;
                one.deadlocks++;
            }
            if (end > k)
                free(es->e[end].label);
        }
        one.count = end - k;
        one.whose = whose(g, &es->e[k], end - k, owners);
        es->e[m++] = one;
    }
    es->n = m;
    free(owners);
    free(seen);
    return 0;
}

static void edges_free(struct edges *es)
{
    for (int k = 0; k < es->n; k++) {
        free(es->e[k].label);
        free(es->e[k].whose);
    }
    free(es->e);
}

/* Should an edge from process i to process j name the peer?  When either
 * end is a folded node: which member is meant is not in the drawing. */
static int names_peer(const struct queues_graph *g, int i, int j)
{
    return node_size(g, i) > 1 || node_size(g, j) > 1;
}

/* The peer as process i's node reads it: relative to each member's rank
 * if its group was folded so ("rank-1"), else as it is. */
static void peer_words(const struct queues_graph *g, int i, long local, long global, char *buf,
                       size_t len)
{
    int relative = g->fold && node_size(g, i) > 1 && g->fold->relative[i];
    mqdh_peer_text(g->d, i, local, global, relative, buf, len);
}

static void queue_edges(struct edges *es, const struct queues_graph *g, int i)
{
    static const char *const what[MQDH_NQUEUES] = {"send", "recv", "unexpected"};
    const struct mqdh_dump *d = g->d;
    const struct mqdh_process *p = &d->procs[i];
    for (int c = 0; c < p->ncomms; c++) {
        for (int q = 0; q < MQDH_NQUEUES; q++) {
            const struct mqdh_queue *qu = &p->comms[c].queues[q];
            for (int o = 0; qu->state == MQDH_QUEUE_OK && o < qu->nops; o++) {
                const struct mqdh_op *op = &qu->ops[o];
                int got = q == MQDH_UNEXPECTED; /* named by whom it came from */
                long global = got ? op->actual_global_rank : op->desired_global_rank;
                long local = got ? op->actual_local_rank : op->desired_local_rank;
                int peer = mqdh_process_by_global(d, global);
                if (peer < 0) /* ANY_SOURCE (on the node), or not in the dump */
                    continue;
                char label[320], tag[24], who[96] = "";
                long t = got ? op->actual_tag : op->desired_tag;
                if (q != MQDH_UNEXPECTED && op->tag_wild)
                    snprintf(tag, sizeof tag, "ANY");
                else
                    snprintf(tag, sizeof tag, "%ld", t);
                if (names_peer(g, i, peer)) {
                    char pw[80];
                    peer_words(g, i, local, global, pw, sizeof pw);
                    snprintf(who, sizeof who, " %s %s", q == MQDH_SENDS ? "to" : "from", pw);
                }
                snprintf(label, sizeof label, "%s tag %s%s\n%s", what[q], tag, who,
                         p->comms[c].name);
                /* The message's way: from the sender to the receiver. */
                int from = q == MQDH_SENDS ? i : peer, to = q == MQDH_SENDS ? peer : i;
                edge_add(es, g->node[from], g->node[to], (enum edge_kind)q, label, i, -1, -1);
            }
        }
    }
}

/* Wait w's edge words: "waits: recv tag 7", folded with its peer ("from
 * rank-1"); in a folded graph, a deadlock's in front of them, its kind
 * and size ("cycle of 16 processes": edge_write counts them). */
static void wait_words(const struct queues_graph *g, const struct mqdh_wait *w, int deadlock,
                       char *label, size_t len)
{
    const struct mqdh_dump *d = g->d;
    int n = 0;
    if (g->fold && deadlock >= 0)
        n = snprintf(label, len, "%s of %d processes\n",
                     deadlock_kind_name(&g->a->deadlocks[deadlock]),
                     g->a->deadlocks[deadlock].nmembers);
    if (w->kind == MQDH_WAIT_COLLECTIVE) {
        snprintf(label + n, len - (size_t)n, "waits: %s not entered",
                 d->procs[w->from].where_call ? d->procs[w->from].where_call : "?");
        return;
    }
    char tag[24], who[96] = "";
    if (w->tag_unknown)
        snprintf(tag, sizeof tag, "?");
    else if (w->tag_wild)
        snprintf(tag, sizeof tag, "ANY");
    else
        snprintf(tag, sizeof tag, "%ld", w->tag);
    if (!w->any_source && names_peer(g, w->from, w->to)) {
        char pw[80];
        peer_words(g, w->from, w->peer_local, w->peer_global, pw, sizeof pw);
        snprintf(who, sizeof who, " %s %s", w->kind == MQDH_WAIT_SEND ? "to" : "from", pw);
    }
    snprintf(label + n, len - (size_t)n, "waits: %s%s tag %s%s",
             w->kind == MQDH_WAIT_SEND ? "send" : "recv", w->any_source ? " ANY" : "", tag, who);
}

/* The waits to draw: red, those that explain each deadlock, from the
 * waiting process to the one it waits for; orange, the waits of the
 * processes stuck behind them. */
static void wait_edges(struct edges *es, const struct queues_graph *g)
{
    const struct mqdh_analysis *a = g->a;
    for (int k = 0; a && k < a->ndeadlocks; k++) {
        const struct mqdh_deadlock *dl = &a->deadlocks[k];
        for (int e = 0; e < dl->nwaits; e++) {
            const struct mqdh_wait *w = &a->waits[dl->waits[e]];
            char label[320];
            wait_words(g, w, k, label, sizeof label);
            edge_add(es, g->node[w->from], g->node[w->to], EDGE_DEADLOCK, label, w->from,
                     dl->waits[e], k);
        }
    }
    for (int e = 0; a && e < a->nwaits; e++) {
        const struct mqdh_wait *w = &a->waits[e];
        if (!a->stuck[w->from] || g->deadlock[w->from])
            continue;
        char label[320];
        wait_words(g, w, -1, label, sizeof label);
        edge_add(es, g->node[w->from], g->node[w->to], EDGE_BEHIND, label, w->from, e, -1);
    }
}

static void edge_write(FILE *f, const struct queues_graph *g, const struct edge *e)
{
    static const char *const style[] = {"solid", "dashed", "dotted"};
    char label[700], many[40] = "";
    if (e->deadlocks > 1 && g->fold) /* "cycle of 2" made one over many: how many */
        snprintf(many, sizeof many, "%d deadlocks, each a ", e->deadlocks);
    if (e->count > 1)
        snprintf(label, sizeof label, "%s%s\nx%d%s%s", many, e->label, e->count,
                 e->whose ? ": " : "", e->whose ? e->whose : "");
    else if (e->whose) /* one member of a folded node: which */
        snprintf(label, sizeof label, "%s\n(%s)", e->label, e->whose);
    else
        snprintf(label, sizeof label, "%s", e->label);
    switch (e->kind) {
    case EDGE_SEND:
    case EDGE_RECV:
    case EDGE_UNEXPECTED:
        fprintf(f, "  p%d -> p%d [style=%s, color=gray40, fontcolor=gray30, label=", e->from,
                e->to, style[e->kind]);
        dot_string(f, label);
        fprintf(f, "];\n");
        return;
    case EDGE_DEADLOCK:
        fprintf(f, "  p%d -> p%d [color=red, fontcolor=red, penwidth=2.5, constraint=false, "
                   "label=", e->from, e->to);
        break;
    case EDGE_BEHIND:
        fprintf(f, "  p%d -> p%d [color=darkorange, fontcolor=darkorange3, penwidth=1.5, "
                   "label=", e->from, e->to);
        break;
    }
    dot_string(f, label);
    /* The explanation as a tooltip: of the one wait, or, for many of a
     * folded node, relative to each waiting rank. */
    const struct mqdh_wait *w = &g->a->waits[e->wait];
    int relative = e->count > 1 && g->fold && g->fold->relative[w->from];
    char why[WHY_LEN + 16];
    int n = e->count > 1 && !relative ? snprintf(why, sizeof why, "e.g. ") : 0;
    mqdh_explain_wait(g->d, w, relative, why + n, sizeof why - (size_t)n);
    fprintf(f, ", tooltip=");
    dot_string(f, why);
    fprintf(f, "];\n");
}

/* The graph's title: how many processes (and nodes, folded), what the
 * analysis found, and what the edges mean. */
static void graph_title(char *title, size_t len, const struct queues_graph *g)
{
    const struct mqdh_dump *d = g->d;
    const struct mqdh_analysis *a = g->a;
    int n = snprintf(title, len, "message queues of %d processes", d->nprocs);
    if (g->fold) {
        int nodes = 0;
        for (int i = 0; i < d->nprocs; i++)
            nodes += g->node[i] == i;
        n += snprintf(title + n, len - (size_t)n,
                      " (those in the same state folded: %d node%s)", nodes,
                      nodes == 1 ? "" : "s");
    }
    if (!a)
        ;
    else if (a->ndeadlocks)
        n += snprintf(title + n, len - (size_t)n, ": %d deadlock%s (red: waits for)",
                      a->ndeadlocks, a->ndeadlocks == 1 ? "" : "s");
    else
        n += snprintf(title + n, len - (size_t)n, ": no deadlock found");
    snprintf(title + n, len - (size_t)n,
             "\ngrey: the way messages go (solid: pending send, dashed: posted receive, "
             "dotted: unexpected)%s",
             a && a->nbehind ? "; orange: waits of those stuck behind" : "");
}

/* Every node; a job with spawned processes has each MPI_COMM_WORLD in a
 * box (a cluster) of its own (a node's members are in one world). */
static void world_nodes(FILE *f, const struct queues_graph *g)
{
    const struct mqdh_dump *d = g->d;
    int top = 0;
    for (int i = 0; i < d->nprocs; i++)
        if (d->procs[i].world > top)
            top = d->procs[i].world;
    for (int w = top ? -1 : 0; w <= top; w++) {
        int any = 0;
        for (int i = 0; i < d->nprocs; i++) {
            if ((top && d->procs[i].world != w) || g->node[i] != i)
                continue;
            if (top && !any++) {
                char box[64];
                if (w < 0)
                    snprintf(box, sizeof box, "world not known");
                else if (w == 0)
                    snprintf(box, sizeof box, "world 0 (launched)");
                else
                    snprintf(box, sizeof box, "world %d (spawned)", w);
                fprintf(f, "  subgraph cluster_world%d {\n    label=", w + 1);
                dot_string(f, box);
                fprintf(f, "; style=dashed; color=grey50; fontname=\"Helvetica\";\n");
            }
            node(f, g, i);
        }
        if (top && any)
            fprintf(f, "  }\n");
    }
}

/* The whole graph as DOT to f (dot_file's write_dot). */
static int write_queues_dot(FILE *f, const void *arg)
{
    struct queues_graph g = *(const struct queues_graph *)arg;
    struct edges es = {0};
    int rc = -1;
    if (nodes_make(&g) != 0)
        goto out;
    for (int i = 0; i < g.d->nprocs; i++)
        queue_edges(&es, &g, i);
    wait_edges(&es, &g);
    if (es.failed)
        goto out;
    if (edges_merge(&es, &g) != 0)
        goto out;
    char title[400];
    graph_title(title, sizeof title, &g);
    fprintf(f, "digraph mqd {\n"
               "  graph [label=");
    dot_string(f, title);
    fprintf(f, ", labelloc=t, fontname=\"Helvetica\", nodesep=0.6];\n"
               "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
               "fontsize=11];\n"
               "  edge [fontname=\"Helvetica\", fontsize=9];\n");
    world_nodes(f, &g);
    for (int k = 0; k < es.n; k++)
        edge_write(f, &g, &es.e[k]);
    fprintf(f, "}\n");
    rc = ferror(f) ? -1 : 0;
out:
    edges_free(&es);
    nodes_free(&g);
    return rc;
}

int graph_write(const char *path, const struct mqdh_dump *d, const struct mqdh_analysis *a,
                const struct fold *fold, char *err, size_t errlen)
{
    struct queues_graph g = {d, a, fold, NULL, NULL, NULL, NULL};
    return dot_file(path, write_queues_dot, &g, err, errlen);
}
