/*
 * graph.h - what in a wait-for graph can never go on, and what causes it.
 *
 * cycles.c knows vertices and edges, never MPI: analyze.c makes the graph
 * from the waits of a dump (waits.h) and reads the answer back into the
 * analysis.  The answer is the greatest fixpoint of "cannot go on", the
 * strongly connected components of what holds the stuck (Tarjan's
 * algorithm), and those components no such edge leaves: the causes, each
 * a cycle, or a knot when a member waits on alternatives.
 */
#ifndef MQDH__CYCLES_H
#define MQDH__CYCLES_H

/* Vertex `from` cannot go on until vertex `to` acts. */
struct mqdh__edge {
    int from, to;
    /* from's edges with the same group are alternatives (an OR: any one
     * of them met frees that group); its groups are all needed (an AND).
     * Numbered from 0 for each vertex. */
    int group;
    /* Met never, whatever `to` does: it holds from as an edge to a vertex
     * that can never go on does.  A vertex that a held group of a stuck
     * vertex reaches by such an edge is where the waits end, and is stuck
     * itself. */
    int never;
};

struct mqdh__graph {
    int n;
    /* Per vertex: it waits, so it is stuck unless its edges show it free
     * (a vertex that waits on no edge is free). */
    const int *waiting;
    int nedges;
    /* Each vertex's edges one after another (edges of a vertex are
     * contiguous), in any order of vertices. */
    const struct mqdh__edge *edges;
};

/* A set of vertices that can never go on, which no edge that holds them
 * leaves. */
struct mqdh__cause {
    int knot;     /* a member waits on alternatives (else: a cycle) */
    int nmembers;
    int *members; /* ascending */
    int nedges;
    int *edges;   /* the edges that hold them, by member */
};

struct mqdh__hang {
    /* Per vertex (the caller's, of g->n, zeroed): 1 if it can never go on. */
    int *stuck;
    /* Per edge (the caller's, of g->nedges, zeroed): 1 for an edge of a
     * cause, that explains it. */
    int *in_cause;
    int ncauses;
    struct mqdh__cause *causes; /* in the order of their lowest member */
    int nbehind;
    int *behind; /* stuck, but only waiting on a cause; ascending */
};

/*
 * Find what in g can never go on, into h (its stuck and in_cause arrays
 * given, zeroed; its causes and behind are made here and belong to the
 * caller, freed with mqdh__hang_free).  MQDH_OK, or MQDH_E_NOMEM with h
 * holding nothing to free.
 */
int mqdh__graph_hang(const struct mqdh__graph *g, struct mqdh__hang *h);

/* Free h's causes and behind (not its stuck and in_cause). */
void mqdh__hang_free(struct mqdh__hang *h);

#endif
