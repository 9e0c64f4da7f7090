/*
 * graph.c - mqdump --graph: the job's message queues as a Graphviz
 * graph, its deadlocks highlighted.  Public libmqdhost API only.
 *
 * Nodes are processes (filled by what the analysis says of them); grey
 * edges are queue entries in the direction the message goes (solid: a
 * pending send, dashed: a posted receive, dotted: an unexpected message),
 * labelled with their tags; red edges are the waits that explain a
 * deadlock, from the waiting process to the one it waits for.  A job with
 * spawned processes has each of its MPI_COMM_WORLDs in a box of its own.
 */
#define _GNU_SOURCE
#include "graph.h"

#include "common.h"
#include "dot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void node(FILE *f, const struct mqdh_dump *d, const struct mqdh_analysis *a, int i,
                 const int *in_deadlock)
{
    const struct mqdh_process *p = &d->procs[i];
    char label[1024], who[48];
    int n = 0;
    mqdh_process_label(p, who, sizeof who);
    n += snprintf(label + n, sizeof label - (size_t)n, "%s\npid %d", who, (int)p->pid);
    if (p->where_call)
        n += snprintf(label + n, sizeof label - (size_t)n, "\n%s", p->where_call);
    if (p->where_file)
        n += snprintf(label + n, sizeof label - (size_t)n, "\n%s:%d", base_name(p->where_file),
                      p->where_line);
    /* Receives from MPI_ANY_SOURCE have no one edge: listed on the node. */
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
    if (in_deadlock[i])
        fill = "#f4a6a6";
    else if (a && a->stuck[i])
        fill = "#f8d49a";
    else if (a && a->activity[i] == MQDH_ACT_RUNNING)
        fill = "#c8e6c0";
    else if (a && a->activity[i] == MQDH_ACT_UNKNOWN)
        fill = "#dddddd";
    fprintf(f, "  p%d [label=", i);
    dot_string(f, label);
    fprintf(f, ", fillcolor=\"%s\"%s];\n", fill, in_deadlock[i] ? ", color=red, penwidth=2" : "");
}

static void queue_edges(FILE *f, const struct mqdh_dump *d, int i)
{
    static const char *const style[MQDH_NQUEUES] = {"solid", "dashed", "dotted"};
    static const char *const what[MQDH_NQUEUES] = {"send", "recv", "unexpected"};
    const struct mqdh_process *p = &d->procs[i];
    for (int c = 0; c < p->ncomms; c++) {
        for (int q = 0; q < MQDH_NQUEUES; q++) {
            const struct mqdh_queue *qu = &p->comms[c].queues[q];
            for (int o = 0; qu->state == MQDH_QUEUE_OK && o < qu->nops; o++) {
                const struct mqdh_op *op = &qu->ops[o];
                long g = q == MQDH_UNEXPECTED ? op->actual_global_rank : op->desired_global_rank;
                int peer = mqdh_process_by_global(d, g);
                if (peer < 0) /* ANY_SOURCE (on the node), or not in the dump */
                    continue;
                char label[160], tag[24];
                long t = q == MQDH_UNEXPECTED ? op->actual_tag : op->desired_tag;
                if (q != MQDH_UNEXPECTED && op->tag_wild)
                    snprintf(tag, sizeof tag, "ANY");
                else
                    snprintf(tag, sizeof tag, "%ld", t);
                snprintf(label, sizeof label, "%s tag %s\n%s", what[q], tag, p->comms[c].name);
                /* The message's way: from the sender to the receiver. */
                int from = q == MQDH_SENDS ? i : peer, to = q == MQDH_SENDS ? peer : i;
                fprintf(f, "  p%d -> p%d [style=%s, color=gray40, fontcolor=gray30, label=", from,
                        to, style[q]);
                dot_string(f, label);
                fprintf(f, "];\n");
            }
        }
    }
}

/* The graph's title: how many processes, what the analysis found, and
 * what the grey edges mean. */
static void graph_title(char *title, size_t len, const struct mqdh_dump *d,
                        const struct mqdh_analysis *a)
{
    if (!a)
        snprintf(title, len, "message queues of %d processes", d->nprocs);
    else if (a->ndeadlocks)
        snprintf(title, len, "message queues of %d processes: %d deadlock%s (red: waits for)",
                 d->nprocs, a->ndeadlocks, a->ndeadlocks == 1 ? "" : "s");
    else
        snprintf(title, len, "message queues of %d processes: no deadlock found", d->nprocs);
    strncat(title, "\ngrey: the way messages go (solid: pending send, dashed: posted receive, "
                   "dotted: unexpected)", len - strlen(title) - 1);
}

/* Every process's node; a job with spawned processes has each
 * MPI_COMM_WORLD in a box (a cluster) of its own. */
static void world_nodes(FILE *f, const struct mqdh_dump *d, const struct mqdh_analysis *a,
                        const int *in_deadlock)
{
    int top = 0;
    for (int i = 0; i < d->nprocs; i++)
        if (d->procs[i].world > top)
            top = d->procs[i].world;
    for (int w = top ? -1 : 0; w <= top; w++) {
        int any = 0;
        for (int i = 0; i < d->nprocs; i++) {
            if (top && d->procs[i].world != w)
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
            node(f, d, a, i, in_deadlock);
        }
        if (top && any)
            fprintf(f, "  }\n");
    }
}

/* The red edges: the waits that explain each deadlock, from the waiting
 * process to the one it waits for, their explanations as tooltips. */
static void deadlock_edges(FILE *f, const struct mqdh_dump *d, const struct mqdh_analysis *a)
{
    for (int k = 0; a && k < a->ndeadlocks; k++) {
        const struct mqdh_deadlock *dl = &a->deadlocks[k];
        for (int e = 0; e < dl->nwaits; e++) {
            const struct mqdh_wait *w = &a->waits[dl->waits[e]];
            char label[160];
            if (w->kind == MQDH_WAIT_COLLECTIVE)
                snprintf(label, sizeof label, "waits: %s not entered",
                         d->procs[w->from].where_call ? d->procs[w->from].where_call : "?");
            else if (w->tag_wild)
                snprintf(label, sizeof label, "waits: %s%s tag ANY",
                         w->kind == MQDH_WAIT_SEND ? "send" : "recv",
                         w->any_source ? " ANY" : "");
            else
                snprintf(label, sizeof label, "waits: %s%s tag %ld",
                         w->kind == MQDH_WAIT_SEND ? "send" : "recv",
                         w->any_source ? " ANY" : "", w->tag);
            fprintf(f, "  p%d -> p%d [color=red, fontcolor=red, penwidth=2.5, constraint=false, "
                       "label=", w->from, w->to);
            dot_string(f, label);
            fprintf(f, ", tooltip=");
            char why[WHY_LEN];
            mqdh_explain_wait(d, w, 0, why, sizeof why);
            dot_string(f, why);
            fprintf(f, "];\n");
        }
    }
}

struct queues_graph {
    const struct mqdh_dump *d;
    const struct mqdh_analysis *a; /* may be NULL */
};

/* The whole graph as DOT to f (dot_file's write_dot). */
static int write_queues_dot(FILE *f, const void *arg)
{
    const struct queues_graph *g = arg;
    const struct mqdh_dump *d = g->d;
    const struct mqdh_analysis *a = g->a;
    int *in_deadlock = calloc((size_t)d->nprocs + 1, sizeof *in_deadlock);
    if (!in_deadlock)
        return -1;
    for (int k = 0; a && k < a->ndeadlocks; k++)
        for (int m = 0; m < a->deadlocks[k].nmembers; m++)
            in_deadlock[a->deadlocks[k].members[m]] = 1;
    char title[256];
    graph_title(title, sizeof title, d, a);
    fprintf(f, "digraph mqd {\n"
               "  graph [label=");
    dot_string(f, title);
    fprintf(f, ", labelloc=t, fontname=\"Helvetica\", nodesep=0.6];\n"
               "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
               "fontsize=11];\n"
               "  edge [fontname=\"Helvetica\", fontsize=9];\n");
    world_nodes(f, d, a, in_deadlock);
    for (int i = 0; i < d->nprocs; i++)
        queue_edges(f, d, i);
    deadlock_edges(f, d, a);
    fprintf(f, "}\n");
    free(in_deadlock);
    return ferror(f) ? -1 : 0;
}

int graph_write(const char *path, const struct mqdh_dump *d, const struct mqdh_analysis *a,
                char *err, size_t errlen)
{
    struct queues_graph g = {d, a};
    return dot_file(path, write_queues_dot, &g, err, errlen);
}
