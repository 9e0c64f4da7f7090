/*
 * graph.h - mqdump --graph: the job's message queues and deadlocks as a
 * Graphviz graph (graph.c).
 */
#ifndef MQDUMP_GRAPH_H
#define MQDUMP_GRAPH_H

#include "mqdhost.h"

#include <stddef.h>

struct fold;

/*
 * The graph of dump d and its analysis a (may be NULL) to path: DOT, or,
 * when path ends in .svg, .png or .pdf, the DOT to PATH.dot and the
 * picture rendered from it (dot_file: each made new and renamed into
 * place).  fold (borrowed; NULL: one node per process): how d's processes
 * fold (text_fold), those folded together, in one world and with the same
 * part in the analysis, drawn as one node under their ranks.  0, or -1
 * with the reason in err[errlen] (a DOT file written is kept).
 */
int graph_write(const char *path, const struct mqdh_dump *d, const struct mqdh_analysis *a,
                const struct fold *fold, char *err, size_t errlen);

#endif
