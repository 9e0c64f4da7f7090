/*
 * moved.c - mqdump --watch S: what moved between two looks at the same
 * processes (mqdh_watch_compare), as text and as JSON (moved.h).
 */
#define _GNU_SOURCE
#include "moved.h"

#include "common.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- text */

static const char *const queue_words[MQDH_NQUEUES] = {"send to", "receive from",
                                                      "unexpected message from"};

/* s escaped (it is the target's), to f. */
static void put_escaped(FILE *f, const char *s)
{
    size_t need = mqdh_escape(NULL, 0, s);
    char *e = malloc(need + 1);
    if (e)
        mqdh_escape(e, need + 1, s);
    fputs(e ? e : "?", f);
    free(e);
}

static void text_change(const struct mqdh_dump *d, int i, const struct mqdh_change *c)
{
    printf("    ");
    if (c->queue < 0) {
        printf("communicator \"");
        put_escaped(stdout, c->comm);
        printf("\" %s\n", c->what == MQDH_CHANGE_COMM_NEW ? "created" : "gone");
        return;
    }
    char peer[128];
    mqdh_peer_text(d, i, c->op.desired_local_rank, c->op.desired_global_rank, 0, peer,
                   sizeof peer);
    printf("%s %s", queue_words[c->queue], peer);
    if (c->op.tag_wild)
        printf(" tag ANY");
    else
        printf(" tag %ld", c->op.desired_tag);
    printf(", %ld bytes", c->op.desired_length);
    if (c->op.request)
        printf(", request 0x%" PRIx64, c->op.request);
    printf(" (");
    put_escaped(stdout, c->comm);
    printf("): ");
    switch (c->what) {
    case MQDH_CHANGE_APPEARED: printf("appeared, %s", status_name(c->op.status)); break;
    case MQDH_CHANGE_GONE: printf("gone (was %s)", status_name(c->op.status)); break;
    case MQDH_CHANGE_STATUS:
        printf("%s -> %s", status_name(c->status_before), status_name(c->op.status));
        break;
    case MQDH_CHANGE_LENGTH:
        printf("%ld -> %ld bytes moved", c->length_before, c->op.actual_length);
        break;
    case MQDH_CHANGE_COMM_NEW:
    case MQDH_CHANGE_COMM_GONE: break;
    }
    if (c->count_before != c->count_after)
        printf("; %d -> %d entries", c->count_before, c->count_after);
    printf("\n");
}

/* Where a thread was at both looks, in words, as "X at both looks" or
 * "X, then Y". */
static void text_where_both(const char *before, const char *after)
{
    if (before == after || (before && after && strcmp(before, after) == 0)) {
        put_escaped(stdout, after);
        printf(" at both looks");
        return;
    }
    put_escaped(stdout, before);
    printf(", then ");
    put_escaped(stdout, after);
}

static void text_moved(const struct mqdh_dump *d, int i, const struct mqdh_moves *wp)
{
    char label[96];
    mqdh_process_label(&d->procs[i], label, sizeof label);
    printf("  %s (pid %d): %s\n", label, (int)d->procs[i].pid,
           wp->moved ? "moved" : "may have moved");
    if (wp->cpu_known && wp->cpu_other >= MQDH_WATCH_NOISE_SECONDS) {
        printf("    CPU %.3f s outside MPI's progress loop", wp->cpu_other);
        if (wp->cpu_tid) {
            printf(": thread %d, ", (int)wp->cpu_tid);
            text_where_both(wp->cpu_before, wp->cpu_after);
        }
        printf("\n");
    }
    if (wp->maybe) {
        printf("    CPU %.3f s in ", wp->cpu_mpi);
        put_escaped(stdout, wp->poll_call ? wp->poll_call : "an MPI call");
        printf(" at both looks, a call that returns by itself: the program may have run "
               "between the looks\n");
    }
    if (wp->stack_changed) {
        printf("    stack: thread %d at frame %d: ", (int)wp->stack_tid, wp->stack_frame);
        put_escaped(stdout, wp->frame_before ? wp->frame_before : "(none)");
        printf(", now ");
        put_escaped(stdout, wp->frame_after ? wp->frame_after : "(none)");
        printf("\n");
    }
    if (wp->threads_started || wp->threads_ended)
        printf("    threads: %d started, %d ended\n", wp->threads_started, wp->threads_ended);
    for (int k = 0; k < wp->nchanges; k++)
        text_change(d, i, &wp->changes[k]);
}

/* What the watch says of a process, in the order the observation names them. */
enum seen_as { SEEN_MOVED, SEEN_MAYBE, SEEN_STILL, SEEN_UNSEEN, SEEN_KINDS };

static enum seen_as seen_as(const struct mqdh_moves *wp)
{
    return wp->moved ? SEEN_MOVED : wp->maybe ? SEEN_MAYBE : !wp->seen ? SEEN_UNSEEN : SEEN_STILL;
}

/* The processes seen as `as` into idx: how many. */
static int processes_in(const struct mqdh_watch *w, enum seen_as as, int *idx)
{
    int n = 0;
    for (int i = 0; i < w->nprocs; i++)
        if (seen_as(&w->procs[i]) == as)
            idx[n++] = i;
    return n;
}

/* The last line: "Observation over S s: ranks [1] moved; ranks [0,2] did
 * not", or that nothing moved anywhere. */
static void text_observation(const struct mqdh_dump *d, const struct mqdh_watch *w, int *idx)
{
    static const char *const lead[SEEN_KINDS] = {"", "", "", "cannot tell for "},
                             *tail[SEEN_KINDS] = {" moved", " may have moved", " did not", ""};
    printf("Observation over %g s: ", w->seconds);
    if (mqdh_watch_nothing_moved(w)) {
        printf("no progress anywhere: every stack and queue the same, no CPU spent outside "
               "MPI's progress loop\n");
        return;
    }
    const char *sep = "";
    for (int as = 0; as < SEEN_KINDS; as++) {
        int n = processes_in(w, (enum seen_as)as, idx);
        if (!n)
            continue;
        printf("%s%sranks [", sep, lead[as]);
        print_ranks(stdout, d, idx, n);
        printf("]%s", tail[as]);
        sep = "; ";
    }
    printf("\n");
}

void watch_text(const struct mqdh_dump *d, const struct mqdh_watch *w)
{
    int *idx = malloc((size_t)(w->nprocs ? w->nprocs : 1) * sizeof *idx);
    if (!idx)
        return;
    printf("Watched %g s (two looks %.1f s apart, the processes running between them):\n",
           w->seconds, w->elapsed);
    for (int as = SEEN_MOVED; as <= SEEN_MAYBE; as++) {
        int n = processes_in(w, (enum seen_as)as, idx);
        for (int k = 0; k < n; k++)
            text_moved(d, idx[k], &w->procs[idx[k]]);
    }
    int nstill = processes_in(w, SEEN_STILL, idx);
    if (nstill) {
        double mpi = 0;
        for (int k = 0; k < nstill; k++)
            mpi += w->procs[idx[k]].cpu_mpi;
        printf("  unchanged: ranks [");
        print_ranks(stdout, d, idx, nstill);
        printf("] (same stacks and queues; CPU %.3f s, all inside their MPI calls)\n", mpi);
    }
    int nunseen = processes_in(w, SEEN_UNSEEN, idx);
    for (int k = 0; k < nunseen; k++) {
        char label[96];
        mqdh_process_label(&d->procs[idx[k]], label, sizeof label);
        printf("  %s (pid %d): not compared: %s\n", label, (int)d->procs[idx[k]].pid,
               w->procs[idx[k]].why);
    }
    text_observation(d, w, idx);
    free(idx);
}

/* ---------------------------------------------------------------- JSON */

static const char *change_name(enum mqdh_change_what what)
{
    switch (what) {
    case MQDH_CHANGE_APPEARED: return "appeared";
    case MQDH_CHANGE_GONE: return "gone";
    case MQDH_CHANGE_STATUS: return "status";
    case MQDH_CHANGE_LENGTH: return "length";
    case MQDH_CHANGE_COMM_NEW: return "communicator_created";
    case MQDH_CHANGE_COMM_GONE: return "communicator_gone";
    }
    return "?";
}

static const char *const queue_names[MQDH_NQUEUES] = {"pending_sends", "pending_receives",
                                                      "unexpected_messages"};

static void json_change(const struct mqdh_change *c, int first)
{
    printf("%s\n      {\"change\": \"%s\", \"communicator\": ", first ? "" : ",",
           change_name(c->what));
    json_string(c->comm);
    if (c->queue < 0) {
        printf(", \"queue\": null, \"operation\": null, \"status_before\": null, "
               "\"actual_length_before\": null, \"entries_before\": null, \"entries\": null}");
        return;
    }
    const struct mqdh_op *o = &c->op;
    printf(", \"queue\": \"%s\", \"operation\": {\"status\": \"%s\", "
           "\"desired_local_rank\": %ld, \"desired_global_rank\": %ld, \"tag_wild\": %s, "
           "\"desired_tag\": %ld, \"desired_length\": %ld, \"request\": %" PRIu64
           ", \"actual_length\": %ld}, \"status_before\": ",
           queue_names[c->queue], status_name(o->status), o->desired_local_rank,
           o->desired_global_rank, o->tag_wild ? "true" : "false", o->desired_tag,
           o->desired_length, o->request, o->actual_length);
    if (c->what == MQDH_CHANGE_STATUS || c->what == MQDH_CHANGE_LENGTH)
        printf("\"%s\", \"actual_length_before\": %ld", status_name(c->status_before),
               c->length_before);
    else
        printf("null, \"actual_length_before\": null");
    printf(", \"entries_before\": %d, \"entries\": %d}", c->count_before, c->count_after);
}

static void json_watch_proc(const struct mqdh_dump *d, int i, const struct mqdh_moves *wp)
{
    printf("%s\n  {\"process\": %d, \"rank\": %d, \"pid\": %d, \"seen\": %s, \"why\": ",
           i ? "," : "", i, d->procs[i].rank, (int)d->procs[i].pid, wp->seen ? "true" : "false");
    json_string(wp->why);
    printf(", \"moved\": %s, \"may_have_moved\": %s, \"polling_call\": ",
           wp->moved ? "true" : "false", wp->maybe ? "true" : "false");
    json_string(wp->poll_call);
    printf(",\n   \"cpu\": ");
    if (wp->cpu_known) {
        printf("{\"in_mpi_seconds\": %.6f, \"outside_seconds\": %.6f, \"thread\": ",
               wp->cpu_mpi, wp->cpu_other);
        if (wp->cpu_tid)
            printf("%d", (int)wp->cpu_tid);
        else
            printf("null");
        printf(", \"before\": ");
        json_string(wp->cpu_before);
        printf(", \"after\": ");
        json_string(wp->cpu_after);
        printf("}");
    } else {
        printf("null");
    }
    printf(",\n   \"stack\": {\"changed\": %s, \"thread\": ", wp->stack_changed ? "true" : "false");
    if (wp->stack_changed)
        printf("%d, \"frame\": %d", (int)wp->stack_tid, wp->stack_frame);
    else
        printf("null, \"frame\": null");
    printf(", \"before\": ");
    json_string(wp->frame_before);
    printf(", \"after\": ");
    json_string(wp->frame_after);
    printf(", \"threads_started\": %d, \"threads_ended\": %d},\n   \"queues_compared\": %s, "
           "\"queue_changes\": [",
           wp->threads_started, wp->threads_ended, wp->queues ? "true" : "false");
    for (int k = 0; k < wp->nchanges; k++)
        json_change(&wp->changes[k], k == 0);
    printf("]}");
}

void watch_json(const struct mqdh_dump *d, const struct mqdh_watch *w)
{
    printf(",\n\"watch\": {\"seconds\": %g, \"elapsed\": %.3f, \"nothing_moved\": %s, "
           "\"processes\": [",
           w->seconds, w->elapsed, mqdh_watch_nothing_moved(w) ? "true" : "false");
    for (int i = 0; i < w->nprocs; i++)
        json_watch_proc(d, i, &w->procs[i]);
    printf("\n]}");
}
