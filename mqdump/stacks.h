/*
 * stacks.h - mqdump --stacks: where every process is, all stacks merged
 * into one call tree (mqdh_stack_tree), as text, as a JSON member, and
 * (--stacks-graph) as a picture in STAT's style (stacks.c).
 */
#ifndef MQDUMP_STACKS_H
#define MQDUMP_STACKS_H

#include "mqdhost.h"

#include <stddef.h>

/* The merged tree t of d (full: nothing folded), as text on standard
 * output. */
void text_stacks(const struct mqdh_dump *d, const struct mqdh_stack_tree *t, int full);

/* The tree as the JSON object's "stacks" member, on standard output (after
 * other members: it starts with a comma). */
void json_stacks(const struct mqdh_dump *d, const struct mqdh_stack_tree *t, int full);

/* The tree as a picture to path (dot_file): 0, or -1 with the reason in
 * err[errlen]. */
int stacks_graph_write(const char *path, const struct mqdh_dump *d,
                       const struct mqdh_stack_tree *t, char *err, size_t errlen);

#endif
