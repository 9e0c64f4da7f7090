/*
 * text.h - mqdump's text views (text.c): the DLL and host lines, every
 * process in full (--full), processes in the same state folded under their
 * ranks (the default), the deadlock report, --stats' line and --list.
 * All on standard output; the dump's strings as the caller gives them
 * (mqdump escapes the dump first: mqdh_dump_escape).
 */
#ifndef MQDUMP_TEXT_H
#define MQDUMP_TEXT_H

#include "mqdhost.h"

/* Which DLL each process was dumped with, and why: one line per choice. */
void text_dlls(const struct mqdh_dump *d);
/* The hosts of a job across nodes, their ranks: one line (none for one). */
void text_hosts(const struct mqdh_dump *d);
/* --full: every process in turn. */
void text_dump(const struct mqdh_dump *d, int stats);
/* The default: processes in the same state folded under their ranks.
 * -1 out of memory (nothing printed). */
int text_folded(const struct mqdh_dump *d, int stats);
/* How text_folded folds d's processes, into out (the caller's, to free
 * with fold_free), for the views that fold them the same way: -1 out of
 * memory (out left empty). */
struct fold;
int text_fold(const struct mqdh_dump *d, struct fold *out);
/* The deadlock report; fold: explanations the same up to the waiting rank
 * once, under the ranks they hold for. */
void text_analysis(const struct mqdh_dump *d, const struct mqdh_analysis *a, int fold);
/* --stats: what mqdump itself took (CPU, peak memory) and how the dump was
 * made (workers, files), one line. */
void text_cost(const struct mqdh_dump *d);
/* --list: the jobs, their program paths and command lines escaped. */
void text_jobs(const struct mqdh_job_info *jobs, int n);

#endif
