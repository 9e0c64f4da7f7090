/*
 * stacks.c - mqdump's views of where every rank is: the merged call tree
 * (--stacks, as text, in the JSON, and --stacks-graph as a Graphviz
 * picture in STAT's style), and the call path the other views show for a
 * process.  Public libmqdhost API only (mqdh_stack_tree).
 */
#define _GNU_SOURCE
#include "mqdump.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *base_name(const char *path)
{
    const char *b = path ? strrchr(path, '/') : NULL;
    return b ? b + 1 : path;
}

static const char *kind_name(enum mqdh_frame_kind k)
{
    switch (k) {
    case MQDH_FRAME_USER: return "user";
    case MQDH_FRAME_MPI: return "mpi";
    case MQDH_FRAME_SYSTEM: break;
    }
    return "system";
}

/*
 * A frame as people read it, into buf[len]: "sample_block at sample.c:63",
 * "relax (inlined) at hidden.c:20", "MPI_Waitall (libmpi.so.12)", "solve
 * (a.out)" without line information.
 */
static void frame_words(char *buf, size_t len, const char *function, const char *file, int line,
                        const char *module, int inlined)
{
    int n = snprintf(buf, len, "%s%s", function ? function : "??", inlined ? " (inlined)" : "");
    if (n < 0 || (size_t)n >= len)
        return;
    if (file)
        snprintf(buf + n, len - (size_t)n, " at %s:%d", base_name(file), line);
    else if (module)
        snprintf(buf + n, len - (size_t)n, " (%s)", base_name(module));
}

static void node_words(char *buf, size_t len, const struct mqdh_stack_node *n)
{
    frame_words(buf, len, n->function, n->file, n->line, n->module, n->inlined);
}

int call_path(const struct mqdh_dump *d, int i, int no_user_line, char *buf, size_t len)
{
    enum { SHOWN = 64 }; /* a recursion deeper than that: its innermost frames */
    const struct mqdh_thread *t = mqdh_shown_thread(d, i);
    struct mqdh_path_frame path[MQDH_PATH_MAX_FRAMES];
    int n = t ? mqdh_thread_path(t, t == &d->stacks[i].threads[0], 0, path,
                                 MQDH_PATH_MAX_FRAMES)
              : 0;
    if (n > MQDH_PATH_MAX_FRAMES)
        n = MQDH_PATH_MAX_FRAMES;
    /* The innermost of the program's own frames, its line left out. */
    const struct mqdh_frame *unlined = no_user_line ? mqdh_user_frame(d, i) : NULL;
    size_t at = 0;
    buf[0] = '\0';
    int from = n > SHOWN ? n - SHOWN : 0;
    for (int k = from; k < n && at < len; k++) {
        char f[300];
        const struct mqdh_path_frame *pf = &path[k];
        frame_words(f, sizeof f, pf->function, pf->frame == unlined ? NULL : pf->file, pf->line,
                    pf->folded ? pf->frame->module : NULL, pf->folded ? 0 : pf->frame->inlined);
        int w = snprintf(buf + at, len - at, "%s%s", k > from ? " > " : from ? "... > " : "", f);
        if (w < 0)
            break;
        at += (size_t)w;
    }
    return n - from;
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
               n->line, n->inlined ? "true" : "false", kind_name(n->kind),
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

void json_process_stack(const struct mqdh_stack *st)
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
                   f->inlined ? "true" : "false", kind_name(f->kind));
        }
        printf("]}");
    }
    printf("]");
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
        frame_words(words, sizeof words, n->function, NULL, 0,
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
    return graph_file(path, write_stacks_dot, &g, err, errlen);
}
