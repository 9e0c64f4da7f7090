/*
 * stacks.c - mqdump's views of where every rank is: the merged call tree
 * (--stacks, as text, in the JSON, and --stacks-graph as a Graphviz
 * picture in STAT's style).  Public libmqdhost API only (mqdh_stack_tree).
 */
#define _GNU_SOURCE
#include "stacks.h"

#include "common.h"
#include "dot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void node_words(char *buf, size_t len, const struct mqdh_stack_node *n)
{
    mqdh_frame_words(buf, len, n->function, n->file, n->line, n->module, n->inlined);
}

/* ---------------------------------------------------------------- text */

static void text_nodes(const struct mqdh_dump *d, const struct mqdh_stack_tree *t, int from,
                       int to)
{
    char words[400];
    int col = 0;
    for (int i = from; i < to; i++) {
        node_words(words, sizeof words, &t->nodes[i]);
        int w = 2 * t->nodes[i].depth + (int)strlen(words);
        if (w > col)
            col = w;
    }
    if (col > 70)
        col = 70;
    for (int i = from; i < to; i++) {
        const struct mqdh_stack_node *n = &t->nodes[i];
        node_words(words, sizeof words, n);
        int w = printf("%*s%s", 2 * n->depth, "", words);
        printf("%*s[", w < col + 2 ? col + 2 - w : 1, "");
        print_ranks(stdout, d, n->procs, n->nprocs);
        printf("]");
        if (n->nthreads > n->nprocs)
            printf(" (%d threads)", n->nthreads);
        printf("\n");
    }
}

void text_stacks(const struct mqdh_dump *d, const struct mqdh_stack_tree *t, int full)
{
    printf("\nwhere every process is: %d stack%s merged from main%s\n", t->nprocs,
           t->nprocs == 1 ? "" : "s",
           full ? ", every frame"
                : " (library frames folded into the call the program made; --stacks=full "
                  "shows them)");
    if (t->nprocs < d->nprocs)
        printf("(%d process%s not unwound: see each one's error)\n", d->nprocs - t->nprocs,
               d->nprocs - t->nprocs == 1 ? "" : "es");
    text_nodes(d, t, 0, t->nshown);
    if (t->nothers) {
        printf("\nother threads (%d): from each one's start\n", t->nothers);
        text_nodes(d, t, t->nshown, t->nnodes);
    }
}

/* ---------------------------------------------------------------- JSON */

/* Nodes [from, to) as nested objects with their children. */
static void json_nodes(const struct mqdh_dump *d, const struct mqdh_stack_tree *t, int from,
                       int to)
{
    printf("[");
    for (int i = from; i < to; i++) {
        const struct mqdh_stack_node *n = &t->nodes[i];
        if (i > from) {
            /* Close the nodes the previous one was inside, down to n's level. */
            for (int k = t->nodes[i - 1].depth; k >= n->depth; k--)
                printf("]}");
            if (n->depth <= t->nodes[i - 1].depth)
                printf(",");
        }
        printf("{\"function\":");
        json_string(n->function);
        printf(",\"module\":");
        json_string(n->module);
        printf(",\"file\":");
        json_string(n->file);
        printf(",\"line\":%d,\"inlined\":%s,\"kind\":\"%s\",\"folded\":%s,\"threads\":%d",
               n->line, n->inlined ? "true" : "false", frame_kind_name(n->kind),
               n->folded ? "true" : "false", n->nthreads);
        printf(",\"ranks\":[");
        for (int k = 0; k < n->nprocs; k++)
            printf("%s%d", k ? "," : "", d->procs[n->procs[k]].rank);
        printf("],\"processes\":[");
        for (int k = 0; k < n->nprocs; k++)
            printf("%s%d", k ? "," : "", n->procs[k]);
        printf("],\"children\":[");
    }
    for (int k = to > from ? t->nodes[to - 1].depth : -1; k >= 0; k--)
        printf("]}");
    printf("]");
}

void json_stacks(const struct mqdh_dump *d, const struct mqdh_stack_tree *t, int full)
{
    printf(",\"stacks\":{\"folded\":%s,\"processes\":%d,\"shown\":", full ? "false" : "true",
           t->nprocs);
    json_nodes(d, t, 0, t->nshown);
    printf(",\"other_threads\":%d,\"others\":", t->nothers);
    json_nodes(d, t, t->nshown, t->nnodes);
    printf("}");
}

/* ---------------------------------------------------------------- Graphviz */

/* A DOT string of what print_ranks writes, cut after about 60 characters. */
static void dot_ranks(FILE *f, const struct mqdh_dump *d, const struct mqdh_stack_node *n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return;
    fprintf(m, "%d:[", n->nprocs);
    print_ranks(m, d, n->procs, n->nprocs);
    fprintf(m, "]");
    if (fclose(m) != 0) {
        free(buf);
        return;
    }
    if (len > 64)
        strcpy(buf + 58, "...]");
    fprintf(f, "\"%s\"", buf); /* digits, brackets, commas, "world", "pid" only */
    free(buf);
}

struct stacks_graph {
    const struct mqdh_dump *d;
    const struct mqdh_stack_tree *t;
};

/*
 * STAT's picture: a node per frame, an edge into it labelled with how many
 * processes take it and which; where the processes part ways the nodes
 * are coloured by the share they hold, so the odd one out stands out.
 */
static int write_stacks_dot(FILE *f, const void *arg)
{
    const struct stacks_graph *g = arg;
    const struct mqdh_stack_tree *t = g->t;
    fprintf(f, "digraph stacks {\n"
               "  graph [rankdir=TB, fontname=\"Helvetica\"];\n"
               "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#e8eef7\", "
               "fontname=\"Helvetica\"];\n"
               "  edge [fontname=\"Helvetica\", fontsize=10];\n"
               "  root [label=\"%d processes\", shape=ellipse, fillcolor=white];\n",
               t->nprocs);
    if (t->nothers)
        fprintf(f, "  others [label=\"their other threads (%d)\", shape=ellipse, "
                   "fillcolor=white];\n", t->nothers);
    for (int i = 0; i < t->nnodes; i++) {
        const struct mqdh_stack_node *n = &t->nodes[i];
        char words[400], label[900];
        mqdh_frame_words(words, sizeof words, n->function, NULL, 0,
                    n->kind != MQDH_FRAME_USER ? n->module : NULL, n->inlined);
        if (n->file)
            snprintf(label, sizeof label, "%s\n%s:%d", words, base_name(n->file), n->line);
        else
            snprintf(label, sizeof label, "%s", words);
        const char *fill = n->kind == MQDH_FRAME_MPI      ? "#d6eaf8"
                           : n->kind == MQDH_FRAME_SYSTEM ? "#eeeeee"
                           : n->nprocs * 2 < t->nprocs    ? "#f9d29b" /* the few */
                                                          : "#e8eef7";
        fprintf(f, "  n%d [label=", i);
        dot_string(f, label);
        fprintf(f, ", fillcolor=\"%s\"];\n", fill);
        if (n->parent >= 0)
            fprintf(f, "  n%d -> n%d [label=", n->parent, i);
        else
            fprintf(f, "  %s -> n%d [label=", i < t->nshown ? "root" : "others", i);
        dot_ranks(f, g->d, n);
        fprintf(f, "];\n");
    }
    fprintf(f, "}\n");
    return ferror(f) ? -1 : 0;
}

int stacks_graph_write(const char *path, const struct mqdh_dump *d,
                       const struct mqdh_stack_tree *t, char *err, size_t errlen)
{
    struct stacks_graph g = {d, t};
    return dot_file(path, write_stacks_dot, &g, err, errlen);
}
