/*
 * verdict.c - the text view of the analysis (text.h's text_analysis): the
 * verdict, each deadlock with its waits explained (folded: the same
 * explanation relative to the waiting rank once, under the ranks it holds
 * for), what is stuck behind it, the processes that hold a job up, and
 * what the analysis could not see.  Public libmqdhost API only.
 */
#define _GNU_SOURCE
#include "text.h"

#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Deadlock dl's waits, those whose explanations read the same relative to
 * the waiting rank once, under the ranks they hold for.  -1 out of memory
 * (nothing printed).
 */
static int fold_waits(const struct mqdh_dump *d, const struct mqdh_analysis *a,
                      const struct mqdh_deadlock *dl)
{
    size_t n = (size_t)dl->nwaits + 1;
    char (*rel)[WHY_LEN] = malloc(n * sizeof *rel);
    char *done = calloc(n, 1);
    int *who = malloc(n * sizeof *who);
    if (!rel || !done || !who) {
        free(rel);
        free(done);
        free(who);
        return -1;
    }
    for (int e = 0; e < dl->nwaits; e++)
        mqdh_explain_wait(d, &a->waits[dl->waits[e]], 1, rel[e], sizeof rel[e]);
    for (int e = 0; e < dl->nwaits; e++) {
        if (done[e])
            continue;
        int k = 0;
        for (int f = e; f < dl->nwaits; f++) {
            int from = a->waits[dl->waits[f]].from;
            if (done[f] || strcmp(rel[e], rel[f]) != 0)
                continue;
            done[f] = 1;
            if (!k || who[k - 1] != from)
                who[k++] = from;
        }
        if (k == 1) {
            char why[WHY_LEN];
            mqdh_explain_wait(d, &a->waits[dl->waits[e]], 0, why, sizeof why);
            printf("  %s\n", why);
        } else {
            printf("  [");
            print_ranks(stdout, d, who, k);
            printf("] %s\n", rel[e]);
        }
    }
    free(rel);
    free(done);
    free(who);
    return 0;
}

/*
 * The processes not blocked in MPI that blocked ones wait on, directly or
 * through others, and where each is: what holds a job up that is not
 * deadlocked (a rank computing, or looping on MPI_Test).  The first 8
 * such processes, each with the processes it holds up.  -1 out of memory.
 */
enum { HOLDERS_SHOWN = 8 };

static int text_holders(const struct mqdh_dump *d, const struct mqdh_analysis *a)
{
    int n = a->nprocs, rc = -1, shown = 0;
    int *start = calloc((size_t)n + 2, sizeof *start);
    int *by = malloc(((size_t)a->nwaits + 1) * sizeof *by); /* waiters, by whom they wait on */
    int *seen = calloc((size_t)n + 1, sizeof *seen);
    int *queue = malloc(((size_t)n + 1) * sizeof *queue);
    if (!start || !by || !seen || !queue)
        goto out;
    /* Who waits on each process: the waits by their `to`. */
    for (int e = 0; e < a->nwaits; e++)
        start[a->waits[e].to + 2]++;
    for (int i = 0; i < n; i++)
        start[i + 2] += start[i + 1];
    for (int e = 0; e < a->nwaits; e++)
        by[start[a->waits[e].to + 1]++] = a->waits[e].from;
    for (int h = 0; h < n && shown < HOLDERS_SHOWN; h++) {
        if (a->activity[h] != MQDH_ACT_RUNNING && a->activity[h] != MQDH_ACT_IN_MPI)
            continue;
        if (start[h] == start[h + 1])
            continue; /* nobody waits on it */
        int len = 0, mark = h + 1; /* seen[x] == mark: reached from h */
        seen[h] = mark;
        queue[len++] = h;
        for (int k = 0; k < len; k++)
            for (int e = start[queue[k]]; e < start[queue[k] + 1]; e++)
                if (seen[by[e]] != mark) {
                    seen[by[e]] = mark;
                    queue[len++] = by[e];
                }
        qsort(queue + 1, (size_t)len - 1, sizeof *queue, compare_ints);
        if (shown++ == 0)
            printf("held up by processes not blocked in MPI (waited on, directly or through "
                   "others):\n");
        const struct mqdh_process *p = &d->procs[h];
        const struct mqdh_frame *uf = mqdh_user_frame(d, h);
        char who[48];
        mqdh_process_label(p, who, sizeof who);
        printf("  %s, ", who);
        if (p->where_call) {
            printf("in %s (it returns)", p->where_call);
            if (p->where_file)
                printf(" at %s:%d", p->where_file, p->where_line);
        } else if (uf) {
            print_at_work(stdout, p, uf, NULL);
        } else {
            printf("not in MPI");
        }
        printf(", holds up ranks [");
        print_ranks(stdout, d, queue + 1, len - 1);
        printf("]\n");
    }
    rc = 0;
out:
    free(start);
    free(by);
    free(seen);
    free(queue);
    return rc;
}

/* How many of d's processes were unwound. */
static int unwound(const struct mqdh_dump *d)
{
    int n = 0;
    for (int i = 0; i < d->nprocs; i++)
        n += process_unwound(d, i);
    return n;
}

/*
 * The deadlock section.  fold: explanations that are the same up to the
 * waiting rank are printed once, under the ranks they hold for.
 */
void text_analysis(const struct mqdh_dump *d, const struct mqdh_analysis *a, int fold)
{
    printf("\n");
    for (int k = 0; k < a->ndeadlocks; k++) {
        const struct mqdh_deadlock *dl = &a->deadlocks[k];
        printf("DEADLOCK: a%s %s of %d process%s, ranks [", dl->knot == MQDH_DEADLOCK_END ? "n" : "",
               deadlock_kind_name(dl), dl->nmembers, dl->nmembers == 1 ? "" : "es");
        print_ranks(stdout, d, dl->members, dl->nmembers);
        printf("]%s\n", dl->knot == MQDH_DEADLOCK_END
                            ? " (waits on processes past MPI_Finalize, which never act again)"
                        : dl->knot ? " (some wait for any one of several: all of those are in it)"
                                   : " (every wait in it is needed)");
        if (!fold || fold_waits(d, a, dl) != 0) {
            for (int e = 0; e < dl->nwaits; e++) {
                char why[WHY_LEN];
                mqdh_explain_wait(d, &a->waits[dl->waits[e]], 0, why, sizeof why);
                printf("  %s\n", why);
            }
        }
    }
    if (a->nbehind) {
        printf("also stuck, waiting on %s: ranks [", a->ndeadlocks == 1 ? "it" : "them");
        print_ranks(stdout, d, a->behind, a->nbehind);
        printf("]\n");
    }
    int blocked = 0, free_ = 0, unknown = 0;
    for (int i = 0; i < a->nprocs; i++) {
        blocked += a->activity[i] == MQDH_ACT_BLOCKED;
        free_ += a->activity[i] == MQDH_ACT_RUNNING || a->activity[i] == MQDH_ACT_IN_MPI;
        unknown += a->activity[i] == MQDH_ACT_UNKNOWN;
    }
    switch (a->verdict) {
    case MQDH_VERDICT_DEADLOCK:
        break;
    case MQDH_VERDICT_NONE:
        printf("no deadlock found: %d of %d processes blocked in MPI, %d not blocked, "
               "%d waits\n", blocked, a->nprocs, free_, a->nwaits);
        break;
    case MQDH_VERDICT_UNKNOWN:
        if (unknown == a->nprocs) {
            int seen = unwound(d);
            if (seen == 0)
                printf("cannot tell whether the job is deadlocked: no process could be "
                       "dumped or unwound\n");
            else
                printf("cannot tell whether the job is deadlocked: no process's message "
                       "queues could be read (%d of %d processes unwound: where each is, is "
                       "above)\n", seen, a->nprocs);
        } else
            printf("cannot tell whether the job is deadlocked: no deadlock among what could "
                   "be seen, but for %d of %d processes what they wait for (or where they "
                   "are) could not be seen\n", a->nblind, a->nprocs);
        break;
    }
    if (a->ncalls_only && a->verdict != MQDH_VERDICT_UNKNOWN)
        printf("from the calls: %d of %d processes show no message queues (their MPI keeps "
               "none for debuggers), so what they wait for is read from the calls they are "
               "blocked in and those calls' arguments; this holds once the job has stopped "
               "moving (a message no queue showed would by then have reached its rank)\n",
               a->ncalls_only, a->nprocs);
    if (a->verdict != MQDH_VERDICT_DEADLOCK)
        text_holders(d, a);
    if (a->nunseen) {
        printf("the analysis could not see%s:\n",
               a->ndeadlocks ? " (none of it can undo the deadlock)" : "");
        for (int i = 0; i < a->nunseen; i++)
            printf("  %s\n", a->unseen[i]);
    }
}
