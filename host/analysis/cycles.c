/*
 * cycles.c - what in a wait-for graph can never go on, and what causes it
 * (graph.h).
 *
 * Stuck is the greatest fixpoint of "cannot go on": a vertex that waits is
 * stuck until shown free, and it is free when one of its AND groups has
 * no edge that holds it (an edge holds when it is never met or its target
 * is stuck).  The causes are the strongly connected components, found
 * with Tarjan's algorithm, of the graph of what holds the stuck, that no
 * edge of it leaves: cycles when every edge in them is needed, knots when
 * some are alternatives.  The other stuck vertices are behind a cause.
 *
 * One run is a list of phases over one set of arrays (struct work), each
 * phase named and each array with one meaning.
 */
#include "analysis/cycles.h"

#include "mqdhost.h"

#include <stdlib.h>
#include <string.h>

/* Tarjan's algorithm, without recursion (its depth would be the job's
 * size). */
struct tarjan {
    int *index, *low, *on_stack, *stack, *comp;
    int **adj, *nadj; /* the graph walked: each vertex's distinct targets */
    int *path, *edge; /* the vertices being visited, and each one's next edge */
    int next, sp, ncomp;
};

/* The arrays of one run of mqdh__graph_hang. */
struct work {
    const struct mqdh__graph *g;
    struct mqdh__hang *h;
    /* Each vertex's edges, edges[first[v] .. first[v] + count[v]), and how
     * many groups they have (0 .. ngroups[v] - 1). */
    int *first, *count, *ngroups;
    /* The edges into each vertex: by_target[into[v] .. into[v + 1]),
     * ascending. */
    int *into, *by_target;
    /* The fixpoint's work list: vertices found free, in that order. */
    int *queue;
    /* The components of what holds the stuck (the graph in t.adj). */
    struct tarjan t;
    /* Per component: no edge leaves it, it is a cause (until made one). */
    int *is_cause;
    /* Each component's members, ascending: cmembers[cstart[c] .. cstart[c + 1]). */
    int *cstart, *cmembers;
};

/* ---------------------------------------------------------------- edges */

/* Each vertex's edges (they are contiguous) and their groups; the edges
 * into each vertex (a counting sort by target). */
static void index_edges(struct work *w)
{
    const struct mqdh__graph *g = w->g;
    for (int e = g->nedges - 1; e >= 0; e--) {
        const struct mqdh__edge *x = &g->edges[e];
        w->first[x->from] = e;
        w->count[x->from]++;
        if (x->group + 1 > w->ngroups[x->from])
            w->ngroups[x->from] = x->group + 1;
    }
    for (int e = 0; e < g->nedges; e++)
        w->into[g->edges[e].to + 1]++;
    for (int v = 0; v < g->n; v++)
        w->into[v + 1] += w->into[v];
    /* Each edge at the start of its target's range, which moves on by one:
     * into[v] ends where into[v + 1] began, and is moved back after. */
    for (int e = 0; e < g->nedges; e++)
        w->by_target[w->into[g->edges[e].to]++] = e;
    for (int v = g->n; v > 0; v--)
        w->into[v] = w->into[v - 1];
    w->into[0] = 0;
}

/* Does edge e hold its vertex: never met, or to a stuck vertex? */
static int edge_holds(const struct work *w, int e)
{
    const struct mqdh__edge *x = &w->g->edges[e];
    return w->h->stuck[x->to] || x->never;
}

/* Is group grp of vertex v held only by edges that hold (and has one)? */
static int group_held(const struct work *w, int v, int grp)
{
    int any = 0;
    for (int e = w->first[v]; e < w->first[v] + w->count[v]; e++) {
        if (w->g->edges[e].group != grp)
            continue;
        any = 1;
        if (!edge_holds(w, e))
            return 0;
    }
    return any;
}

/* Is vertex v held: is one of its groups held? */
static int held(const struct work *w, int v)
{
    for (int grp = 0; grp < w->ngroups[v]; grp++)
        if (group_held(w, v, grp))
            return 1;
    return 0;
}

/* ---------------------------------------------------------------- stuck */

/*
 * The greatest fixpoint: a waiting vertex with edges is stuck until shown
 * free.  A vertex found free may free those that wait for it: a work
 * list, so that a vertex is looked at again only when one it waits for is
 * freed (a pass over all until nothing changes is quadratic on a chain).
 */
static void fixpoint(struct work *w)
{
    const struct mqdh__graph *g = w->g;
    int *stuck = w->h->stuck, nq = 0;
    for (int v = 0; v < g->n; v++)
        stuck[v] = g->waiting[v] && w->count[v] > 0;
    for (int v = 0; v < g->n; v++)
        if (stuck[v] && !held(w, v)) {
            stuck[v] = 0;
            w->queue[nq++] = v;
        }
    for (int k = 0; k < nq; k++) {
        int f = w->queue[k];
        for (int x = w->into[f]; x < w->into[f + 1]; x++) {
            int v = g->edges[w->by_target[x]].from;
            if (stuck[v] && !held(w, v)) {
                stuck[v] = 0;
                w->queue[nq++] = v;
            }
        }
    }
}

/* A vertex that a held group of a stuck one reaches by an edge never met
 * is part of the hang even if it waits for nobody stuck itself: it is
 * where the waits end. */
static void add_ends(struct work *w)
{
    int *stuck = w->h->stuck;
    for (int v = 0; v < w->g->n; v++)
        for (int e = w->first[v]; stuck[v] && e < w->first[v] + w->count[v]; e++) {
            const struct mqdh__edge *x = &w->g->edges[e];
            if (x->never && group_held(w, v, x->group))
                stuck[x->to] = 1;
        }
}

/* ---------------------------------------------------------------- components */

/* The graph of what holds the stuck: the edges of their held groups,
 * marked in_cause for now, and each stuck vertex's distinct targets.
 * 0, or -1 out of memory. */
static int hold_graph(struct work *w)
{
    struct tarjan *t = &w->t;
    for (int v = 0; v < w->g->n; v++) {
        t->index[v] = -1;
        if (!w->h->stuck[v])
            continue;
        t->adj[v] = malloc((size_t)(w->count[v] ? w->count[v] : 1) * sizeof *t->adj[v]);
        if (!t->adj[v])
            return -1;
        for (int e = w->first[v]; e < w->first[v] + w->count[v]; e++) {
            const struct mqdh__edge *x = &w->g->edges[e];
            if (!group_held(w, v, x->group))
                continue;
            w->h->in_cause[e] = 1;
            int dup = 0;
            for (int k = 0; k < t->nadj[v]; k++)
                dup |= t->adj[v][k] == x->to;
            if (!dup)
                t->adj[v][t->nadj[v]++] = x->to;
        }
    }
    return 0;
}

static void tarjan_visit(struct tarjan *t, int v)
{
    t->index[v] = t->low[v] = t->next++;
    t->stack[t->sp++] = v;
    t->on_stack[v] = 1;
}

/* Tarjan's strongly connected components reachable from root. */
static void strongconnect(struct tarjan *t, int root)
{
    int depth = 0;
    tarjan_visit(t, root);
    t->path[0] = root;
    t->edge[0] = 0;
    while (depth >= 0) {
        int v = t->path[depth];
        if (t->edge[depth] < t->nadj[v]) {
            int w = t->adj[v][t->edge[depth]++];
            if (t->index[w] < 0) {
                tarjan_visit(t, w);
                t->path[++depth] = w;
                t->edge[depth] = 0;
            } else if (t->on_stack[w] && t->index[w] < t->low[v]) {
                t->low[v] = t->index[w];
            }
            continue;
        }
        if (t->low[v] == t->index[v]) {
            int w;
            do {
                w = t->stack[--t->sp];
                t->on_stack[w] = 0;
                t->comp[w] = t->ncomp;
            } while (w != v);
            t->ncomp++;
        }
        if (--depth >= 0 && t->low[v] < t->low[t->path[depth]])
            t->low[t->path[depth]] = t->low[v];
    }
}

/* Every stuck vertex's component. */
static void components(struct work *w)
{
    for (int v = 0; v < w->g->n; v++)
        if (w->h->stuck[v] && w->t.index[v] < 0)
            strongconnect(&w->t, v);
}

/* ---------------------------------------------------------------- causes */

/* Which components no edge leaves (is_cause), and the stuck vertices
 * outside them (behind).  0, or -1 out of memory. */
static int find_leaves(struct work *w)
{
    const struct tarjan *t = &w->t;
    struct mqdh__hang *h = w->h;
    int n = w->g->n;
    w->is_cause = malloc((size_t)(t->ncomp ? t->ncomp : 1) * sizeof *w->is_cause);
    h->behind = calloc((size_t)(n ? n : 1), sizeof *h->behind);
    if (!w->is_cause || !h->behind)
        return -1;
    for (int c = 0; c < t->ncomp; c++)
        w->is_cause[c] = 1;
    for (int v = 0; v < n; v++)
        for (int k = 0; h->stuck[v] && k < t->nadj[v]; k++)
            if (t->comp[t->adj[v][k]] != t->comp[v])
                w->is_cause[t->comp[v]] = 0;
    for (int v = 0; v < n; v++)
        if (h->stuck[v] && !w->is_cause[t->comp[v]])
            h->behind[h->nbehind++] = v;
    return 0;
}

/* Each component's members in vertex order (a counting sort by
 * component).  0, or -1 out of memory. */
static int group_members(struct work *w)
{
    const struct tarjan *t = &w->t;
    int n = w->g->n;
    w->cstart = calloc((size_t)t->ncomp + 1, sizeof *w->cstart);
    w->cmembers = malloc((size_t)(n ? n : 1) * sizeof *w->cmembers);
    if (!w->cstart || !w->cmembers)
        return -1;
    for (int v = 0; v < n; v++)
        if (w->h->stuck[v])
            w->cstart[t->comp[v] + 1]++;
    for (int c = 0; c < t->ncomp; c++)
        w->cstart[c + 1] += w->cstart[c];
    /* As index_edges: each start moves on as its members come, then back. */
    for (int v = 0; v < n; v++)
        if (w->h->stuck[v])
            w->cmembers[w->cstart[t->comp[v]]++] = v;
    for (int c = t->ncomp; c > 0; c--)
        w->cstart[c] = w->cstart[c - 1];
    w->cstart[0] = 0;
    return 0;
}

/* Does edge e of vertex v have an alternative: another edge of its group,
 * to another vertex? */
static int has_alternative(const struct work *w, int v, int e)
{
    const struct mqdh__edge *x = &w->g->edges[e];
    for (int f = w->first[v]; f < w->first[v] + w->count[v]; f++)
        if (w->g->edges[f].group == x->group && w->g->edges[f].to != x->to)
            return 1;
    return 0;
}

/* Component c as a cause: its members, and the edges that hold them.
 * 0, or -1 out of memory. */
static int make_cause(struct work *w, int c, struct mqdh__cause *cause)
{
    int nm = w->cstart[c + 1] - w->cstart[c], ne = 0;
    for (int k = w->cstart[c]; k < w->cstart[c + 1]; k++) {
        int v = w->cmembers[k];
        for (int e = w->first[v]; e < w->first[v] + w->count[v]; e++)
            ne += w->h->in_cause[e];
    }
    cause->members = malloc((size_t)nm * sizeof *cause->members);
    cause->edges = malloc((size_t)(ne ? ne : 1) * sizeof *cause->edges);
    if (!cause->members || !cause->edges)
        return -1;
    for (int k = w->cstart[c]; k < w->cstart[c + 1]; k++) {
        int v = w->cmembers[k];
        cause->members[cause->nmembers++] = v;
        for (int e = w->first[v]; e < w->first[v] + w->count[v]; e++) {
            if (!w->h->in_cause[e])
                continue;
            cause->edges[cause->nedges++] = e;
            if (has_alternative(w, v, e))
                cause->knot = 1;
        }
    }
    return 0;
}

/* The causes, in the order of their lowest member; then the edges out of
 * vertices behind them are no longer marked: they explain no cause.
 * 0, or -1 out of memory. */
static int make_causes(struct work *w)
{
    struct mqdh__hang *h = w->h;
    int ncauses = 0;
    for (int c = 0; c < w->t.ncomp; c++)
        ncauses += w->is_cause[c];
    h->causes = calloc((size_t)(ncauses ? ncauses : 1), sizeof *h->causes);
    if (!h->causes)
        return -1;
    for (int v = 0; v < w->g->n; v++) {
        if (!h->stuck[v] || !w->is_cause[w->t.comp[v]])
            continue;
        int c = w->t.comp[v];
        w->is_cause[c] = 0; /* made */
        if (make_cause(w, c, &h->causes[h->ncauses++]) != 0)
            return -1;
    }
    for (int k = 0; k < h->nbehind; k++) {
        int v = h->behind[k];
        for (int e = w->first[v]; e < w->first[v] + w->count[v]; e++)
            h->in_cause[e] = 0;
    }
    return 0;
}

/* ---------------------------------------------------------------- a run */

static int work_alloc(struct work *w)
{
    size_t n = (size_t)(w->g->n ? w->g->n : 1);
    size_t ne = (size_t)(w->g->nedges ? w->g->nedges : 1);
    struct tarjan *t = &w->t;
    w->first = calloc(n, sizeof *w->first);
    w->count = calloc(n, sizeof *w->count);
    w->ngroups = calloc(n, sizeof *w->ngroups);
    w->into = calloc(n + 1, sizeof *w->into);
    w->by_target = calloc(ne, sizeof *w->by_target);
    w->queue = calloc(n, sizeof *w->queue);
    t->index = malloc(n * sizeof *t->index);
    t->low = calloc(n, sizeof *t->low);
    t->on_stack = calloc(n, sizeof *t->on_stack);
    t->stack = calloc(n, sizeof *t->stack);
    t->comp = calloc(n, sizeof *t->comp);
    t->adj = calloc(n, sizeof *t->adj);
    t->nadj = calloc(n, sizeof *t->nadj);
    t->path = calloc(n, sizeof *t->path);
    t->edge = calloc(n, sizeof *t->edge);
    return w->first && w->count && w->ngroups && w->into && w->by_target && w->queue &&
                   t->index && t->low && t->on_stack && t->stack && t->comp && t->adj &&
                   t->nadj && t->path && t->edge
               ? 0
               : -1;
}

static void work_free(struct work *w)
{
    struct tarjan *t = &w->t;
    for (int v = 0; t->adj && v < w->g->n; v++)
        free(t->adj[v]);
    free(t->adj);
    free(t->nadj);
    free(t->index);
    free(t->low);
    free(t->on_stack);
    free(t->stack);
    free(t->comp);
    free(t->path);
    free(t->edge);
    free(w->first);
    free(w->count);
    free(w->ngroups);
    free(w->into);
    free(w->by_target);
    free(w->queue);
    free(w->is_cause);
    free(w->cstart);
    free(w->cmembers);
}

int mqdh__graph_hang(const struct mqdh__graph *g, struct mqdh__hang *h)
{
    struct work w = {.g = g, .h = h};
    h->ncauses = h->nbehind = 0;
    h->causes = NULL;
    h->behind = NULL;
    int ok = work_alloc(&w) == 0;
    if (ok) {
        index_edges(&w);
        fixpoint(&w);
        add_ends(&w);
    }
    ok = ok && hold_graph(&w) == 0;
    if (ok)
        components(&w);
    ok = ok && find_leaves(&w) == 0 && group_members(&w) == 0 && make_causes(&w) == 0;
    work_free(&w);
    if (!ok) {
        mqdh__hang_free(h);
        return MQDH_E_NOMEM;
    }
    return MQDH_OK;
}

void mqdh__hang_free(struct mqdh__hang *h)
{
    for (int c = 0; h->causes && c < h->ncauses; c++) {
        free(h->causes[c].members);
        free(h->causes[c].edges);
    }
    free(h->causes);
    free(h->behind);
    h->causes = NULL;
    h->behind = NULL;
    h->ncauses = h->nbehind = 0;
}
