/* mqdump_graph.h - mqdump --graph (mqdump_graph.c). */
#ifndef MQDUMP_GRAPH_H
#define MQDUMP_GRAPH_H

#include "mqdhost.h"

#include <stdio.h>

/* The graph of dump d, its analysis a (may be NULL), as DOT to f.  0, or
 * -1 on a write error. */
int graph_write_dot(FILE *f, const struct mqdh_dump *d, const struct mqdh_analysis *a);

/*
 * Write the graph to path: DOT, or, when path ends in .svg, .png or .pdf,
 * the DOT to PATH.dot and the picture rendered from it by Graphviz dot.
 * 0, or -1 with the reason in err[errlen] (a DOT file written is kept).
 */
int graph_write(const char *path, const struct mqdh_dump *d, const struct mqdh_analysis *a,
                char *err, size_t errlen);

#endif
