/*
 * mqdump.h - the parts of mqdump: the command (main.c) and its views, one
 * file each (text.c, json.c, graph.c), all over the public libmqdhost API.
 * The views write to standard output, the graph to its file.
 */
#ifndef MQDUMP_H
#define MQDUMP_H

#include "mqdhost.h"

#include <stdio.h>
#include <sys/resource.h>

/* The word for an operation's status, in every view. */
static inline const char *status_name(enum mqdh_op_status s)
{
    switch (s) {
    case MQDH_OP_PENDING: return "pending";
    case MQDH_OP_MATCHED: return "matched";
    case MQDH_OP_COMPLETE: return "complete";
    case MQDH_OP_UNKNOWN: break;
    }
    return "unknown";
}

/* Room for one wait's explanation (mqdh_explain_wait). */
enum { WHY_LEN = 1024 };

/* ---------------------------------------------------------------- text.c */

/* "0-3,5,7-8": ascending process indexes, as their ranks (pids if none);
 * a spawned world's after "world W: ". */
void print_ranks(FILE *f, const struct mqdh_dump *d, const int *idx, int n);

/* Which DLL each process was dumped with, and why: one line per choice. */
void text_dlls(const struct mqdh_dump *d);
/* The hosts of a job across nodes, their ranks: one line (none for one). */
void text_hosts(const struct mqdh_dump *d);
/* --full: every process in turn. */
void text_dump(const struct mqdh_dump *d, int stats);
/* The default: processes in the same state folded under their ranks.
 * -1 out of memory (nothing printed). */
int text_folded(const struct mqdh_dump *d, int stats);
/* The deadlock report; fold: explanations the same up to the waiting rank
 * once, under the ranks they hold for. */
void text_analysis(const struct mqdh_dump *d, const struct mqdh_analysis *a, int fold);
/* --list. */
void text_jobs(const struct mqdh_job_info *jobs, int n);

/* ---------------------------------------------------------------- json.c */

/* A JSON string, or null. */
void json_string(const char *s);
/* The "processes" member, after the object's opening brace; stacks: each
 * process's threads and frames too. */
void json_dump(const struct mqdh_dump *d, int stats, int stacks);
/* The "deadlock" member, after json_dump. */
void json_analysis(const struct mqdh_dump *d, const struct mqdh_analysis *a);

/* What mqdump has taken so far: CPU seconds and peak memory. */
struct own_cost {
    double user, system;
    long rss_kb;
};

static inline struct own_cost own_cost(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (struct own_cost){(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
                             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
                             ru.ru_maxrss};
}

/* --stats: what mqdump itself took (CPU, peak memory) and how the dump was
 * made (workers, files): a JSON member, or a line of text. */
void json_cost(const struct mqdh_dump *d);
void text_cost(const struct mqdh_dump *d);
/* --list --json: a whole object. */
void json_jobs(const struct mqdh_job_info *jobs, int n);

/* ---------------------------------------------------------------- graph.c */

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

/*
 * Write a picture to path: DOT, or, when path ends in .svg, .png or .pdf,
 * the DOT to PATH.dot and the picture rendered from it by Graphviz dot.
 * write_dot(f, arg) writes the DOT (0, or -1 on a write error).  0, or -1
 * with the reason in err[errlen] (a DOT file written is kept).  Each file
 * is made new beside its place and renamed into it: a symlink there is
 * replaced, never followed, and another user's file in a sticky directory
 * is left alone (an error).
 */
int graph_file(const char *path, int (*write_dot)(FILE *f, const void *arg), const void *arg,
               char *err, size_t errlen);

/* A DOT string: quotes and backslashes escaped, newlines as \n. */
void dot_string(FILE *f, const char *s);

/* ---------------------------------------------------------------- stacks.c */

/* A path's last component ("sample.c" of "samples/sample.c"); NULL stays
 * NULL. */
const char *base_name(const char *path);

/*
 * Process i's call path as the merged tree shows it, into buf[len]: "main
 * at ring.c:44 > sample_block at sample.c:63 > MPI_Waitall
 * (libmpi.so.12)"; no_user_line: the innermost frame of the program's own
 * code without its line.  Returns its number of frames (0: no stack).
 */
int call_path(const struct mqdh_dump *d, int i, int no_user_line, char *buf, size_t len);
/* --stacks: the merged tree t of d (full: nothing folded), as text. */
void text_stacks(const struct mqdh_dump *d, const struct mqdh_stack_tree *t, int full);
/* The "stacks" member (after others: it starts with a comma). */
void json_stacks(const struct mqdh_dump *d, const struct mqdh_stack_tree *t, int full);
/* A process's threads and their frames, as a JSON array. */
void json_process_stack(const struct mqdh_stack *st);
/* --stacks-graph: the tree as a picture in STAT's style (graph_file). */
int stacks_graph_write(const char *path, const struct mqdh_dump *d,
                       const struct mqdh_stack_tree *t, char *err, size_t errlen);

#endif
