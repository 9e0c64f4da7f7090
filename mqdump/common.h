/*
 * common.h - what mqdump's views share: the words for a dump's values, a
 * process's call path, a list of ranks, a JSON string, and mqdump's own
 * cost.  Every view (text.c, json.c, graph.c, stacks.c) includes this and
 * its own header, never another view's: the views depend on common.c and
 * dot.c alone, and nothing here depends on a view.
 *
 * Everything here is over the public libmqdhost API only, borrows the dump
 * it is given and keeps nothing.
 */
#ifndef MQDUMP_COMMON_H
#define MQDUMP_COMMON_H

#include "mqdhost.h"

#include <stddef.h>
#include <stdio.h>

/* Room for one wait's explanation (mqdh_explain_wait). */
enum { WHY_LEN = 1024 };

/* The word for an operation's status, in every view: "pending", "matched",
 * "complete", "unknown". */
const char *status_name(enum mqdh_op_status s);

/* The word for whose code a frame is in: "user", "mpi", "system". */
const char *frame_kind_name(enum mqdh_frame_kind k);

/* A path's last component ("sample.c" of "samples/sample.c"); NULL stays
 * NULL.  Borrowed from path. */
const char *base_name(const char *path);

/*
 * Process i's call path as the merged tree shows it, into buf[len]: "main
 * at ring.c:44 > sample_block at sample.c:63 > MPI_Waitall
 * (libmpi.so.12)"; no_user_line: the innermost frame of the program's own
 * code without its line.  Returns its number of frames (0: no stack).
 */
int call_path(const struct mqdh_dump *d, int i, int no_user_line, char *buf, size_t len);

/* "0-3,5,7-8" to f: processes idx[0..n-1] (ascending indexes into d's
 * processes) as their ranks, pids if none; a spawned world's after
 * "world W: ". */
void print_ranks(FILE *f, const struct mqdh_dump *d, const int *idx, int n);

/* s as a JSON string on standard output ("\u00XX" for a control byte and
 * for every byte outside ASCII), or null for NULL. */
void json_string(const char *s);

/* v[0..n-1] as a JSON array of numbers on standard output, "[0, 1, 2]":
 * a communicator's group, as many numbers as it has members, for each
 * process that is in it (printf's parsing of a format, for each number,
 * was most of what a large job's JSON cost). */
void json_longs(const long *v, long n);

/* What mqdump has taken so far: CPU seconds and peak memory (getrusage). */
struct own_cost {
    double user, system;
    long rss_kb;
};
struct own_cost own_cost(void);

/* A process outside MPI, where its own code is at work (uf, its innermost
 * user frame): "not in MPI: in relax at samples/hidden.c:29"; lines, if
 * not NULL, in place of the frame's line (a folded group's). */
void print_at_work(FILE *f, const struct mqdh_process *p, const struct mqdh_frame *uf,
                   const char *lines);
/* A deadlock's kind in one word: "cycle", "knot" or "end". */
const char *deadlock_kind_name(const struct mqdh_deadlock *dl);
/* qsort's comparison of ints, ascending. */
int compare_ints(const void *x, const void *y);

/*
 * How processes fold into groups of the same state, as the folded text
 * view has them (text.c's text_fold makes it, graph.c draws by it), per
 * process: group, the lowest process of its group (itself if alone), and
 * relative, whether that group's peers read relative to each member's
 * rank ("rank-1").  fold_free frees both and accepts a zeroed fold.
 */
struct fold {
    int *group;
    unsigned char *relative;
};
void fold_free(struct fold *f);

/* Was d's process i attached and unwound (where it is is known), dumped
 * or not: in an MPI call, or a thread's stack known. */
int process_unwound(const struct mqdh_dump *d, int i);

#endif
