/*
 * test_threads.c - two dumps at once, in two threads of one program.
 *
 * Two real MPICH jobs (ring and comms, 4 ranks each) are dumped at once
 * from two threads, several times (the first time loading mqd's DLL in
 * both at once), then one after the other; each concurrent dump must
 * equal its job's serial one field by field, and every
 * rank of both jobs must be running and untraced afterwards.  Built with
 * -fsanitize=thread, host library and mqd's DLL included (make check
 * builds it in its own tree): ThreadSanitizer ends the program with an
 * error if the two sessions share anything unguarded.
 *
 * And one job of 8 ranks dumped by one session on 4 workers, which share
 * its program's image (host/protocol/images.c): the first rank sets it up
 * alone, the others are set up on it at once, and each dump must equal the
 * one-worker one.
 *
 * The DLL is the one a user gets: mqd's own, found beside the program
 * (../lib), with no option given.
 */
#define _GNU_SOURCE
#include "joblaunch.h"
#include "procstate.h"

#include "mqdhost.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

enum { ROUNDS = 4 };

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

#define DIFF(cond, ...)                                                                       \
    do {                                                                                      \
        if (cond) {                                                                           \
            snprintf(why, len, __VA_ARGS__);                                                  \
            return -1;                                                                        \
        }                                                                                     \
    } while (0)

static int same_op(const struct mqdh_op *a, const struct mqdh_op *b, char *why, size_t len)
{
    DIFF(a->status != b->status || a->desired_local_rank != b->desired_local_rank ||
             a->desired_global_rank != b->desired_global_rank || a->tag_wild != b->tag_wild ||
             a->desired_tag != b->desired_tag || a->desired_length != b->desired_length ||
             a->system_buffer != b->system_buffer || a->buffer != b->buffer ||
             a->actual_local_rank != b->actual_local_rank ||
             a->actual_global_rank != b->actual_global_rank || a->actual_tag != b->actual_tag ||
             a->actual_length != b->actual_length || a->collective != b->collective ||
             a->request != b->request || a->text_address != b->text_address ||
             memcmp(a->extra_text, b->extra_text, sizeof a->extra_text) != 0,
         "an operation differs (tag %ld / %ld)", a->desired_tag, b->desired_tag);
    return 0;
}

static int same_comm(const struct mqdh_comm *a, const struct mqdh_comm *b, char *why, size_t len)
{
    DIFF(a->unique_id != b->unique_id || a->local_rank != b->local_rank || a->size != b->size ||
             strcmp(a->name, b->name) != 0 || a->has_handle != b->has_handle ||
             a->handle != b->handle || !same_str(a->group_error, b->group_error) ||
             !a->group != !b->group,
         "communicator %s differs", a->name);
    for (long m = 0; a->group && m < a->size; m++)
        DIFF(a->group[m] != b->group[m], "%s: group member %ld differs", a->name, m);
    for (int q = 0; q < MQDH_NQUEUES; q++) {
        const struct mqdh_queue *x = &a->queues[q], *y = &b->queues[q];
        DIFF(x->state != y->state || x->nops != y->nops || !same_str(x->error, y->error),
             "%s: queue %d differs (%d / %d entries)", a->name, q, x->nops, y->nops);
        for (int o = 0; o < x->nops; o++)
            if (same_op(&x->ops[o], &y->ops[o], why, len) != 0)
                return -1;
    }
    return 0;
}

/* Is process p where q is (the blocking call and its caller)? */
static int same_where(const struct mqdh_process *p, const struct mqdh_process *q)
{
    return same_str(p->where_call, q->where_call) &&
           same_str(p->where_function, q->where_function) &&
           same_str(p->where_file, q->where_file) && p->where_line == q->where_line &&
           p->where_args == q->where_args && p->where_comm == q->where_comm;
}

/*
 * 0 if b is a's dump again (statistics aside); else -1 and why.  With
 * settling set, a process of b may be elsewhere than in a: a rank says
 * ready once its queues are in place and only then enters its blocking
 * call, so a dump taken at once may find it on its way there (its
 * queues must still be the same).
 */
static int same_dump(const struct mqdh_dump *a, const struct mqdh_dump *b, int settling,
                     char *why, size_t len)
{
    DIFF(a->nprocs != b->nprocs, "%d processes, then %d", a->nprocs, b->nprocs);
    for (int i = 0; i < a->nprocs; i++) {
        const struct mqdh_process *p = &a->procs[i], *q = &b->procs[i];
        DIFF(p->pid != q->pid || p->rank != q->rank || p->world != q->world ||
                 p->identity != q->identity || !same_str(p->image, q->image) ||
                 !same_str(p->dll, q->dll) || p->dll_source != q->dll_source ||
                 !same_str(p->dll_why, q->dll_why) || !same_str(p->error, q->error) ||
                 (!settling && !same_where(p, q)) || p->ncomms != q->ncomms,
             "process %d (pid %d) differs (in %s, then %s)", i, (int)p->pid,
             p->where_call ? p->where_call : "no MPI call",
             q->where_call ? q->where_call : "no MPI call");
        if (settling && !same_where(p, q))
            printf("process %d (pid %d) was still on its way to %s\n", i, (int)p->pid,
                   p->where_call ? p->where_call : "its blocking call");
        for (int c = 0; c < p->ncomms; c++)
            if (same_comm(&p->comms[c], &q->comms[c], why, len) != 0)
                return -1;
    }
    return 0;
}

/* A dump worth comparing: every process read, with queue entries. */
static void assert_useful(const struct mqdh_dump *d, int np)
{
    assert_int_equal(d->nprocs, np);
    int ops = 0;
    for (int i = 0; i < d->nprocs; i++) {
        const struct mqdh_process *p = &d->procs[i];
        if (p->error)
            fail_msg("pid %d: %s", (int)p->pid, p->error);
        assert_int_equal(p->dll_source, MQDH_DLL_OWN);
        assert_non_null(p->where_call);
        assert_true(p->ncomms >= 1);
        for (int c = 0; c < p->ncomms; c++)
            for (int q = 0; q < MQDH_NQUEUES; q++)
                ops += p->comms[c].queues[q].nops;
    }
    assert_true(ops >= np);
}

struct run {
    const struct job *job;
    struct mqdh_dump *d;
    int rc;
};

static void *dump_job(void *arg)
{
    struct run *r = arg;
    r->rc = mqdh_dump_processes(r->job->ranks, NULL, NULL, r->job->np, NULL, &r->d);
    return NULL;
}

static void test_threads__two_jobs_dumped_at_once(void **state)
{
    (void)state;
    static const char *const samples[2] = {"ring", "comms"};
    struct job jobs[2];
    struct mqdh_dump *serial[2];
    char err[512];
    for (int j = 0; j < 2; j++)
        if (job_start(&jobs[j], samples[j], 4, err, sizeof err) != 0)
            fail_msg("%s: %s", samples[j], err);
    /* Round 0 runs first, before this program has loaded any DLL: the two
     * sessions race to load mqd's DLL too. */
    struct run runs[ROUNDS][2];
    for (int round = 0; round < ROUNDS; round++) {
        pthread_t t[2];
        for (int j = 0; j < 2; j++) {
            runs[round][j] = (struct run){.job = &jobs[j]};
            assert_int_equal(pthread_create(&t[j], NULL, dump_job, &runs[round][j]), 0);
        }
        for (int j = 0; j < 2; j++)
            assert_int_equal(pthread_join(t[j], NULL), 0);
    }
    for (int j = 0; j < 2; j++) {
        assert_int_equal(mqdh_dump_processes(jobs[j].ranks, NULL, NULL, 4, NULL, &serial[j]),
                         MQDH_OK);
        assert_useful(serial[j], 4);
    }
    for (int round = 0; round < ROUNDS; round++) {
        for (int j = 0; j < 2; j++) {
            assert_int_equal(runs[round][j].rc, MQDH_OK);
            /* Round 0 starts as soon as every rank said ready. */
            if (same_dump(serial[j], runs[round][j].d, round == 0, err, sizeof err) != 0)
                fail_msg("%s, round %d: %s", samples[j], round, err);
            mqdh_dump_free(runs[round][j].d);
        }
    }
    for (int j = 0; j < 2; j++) {
        for (int r = 0; r < jobs[j].np; r++)
            if (proc_released(jobs[j].ranks[r], err, sizeof err) != 0)
                fail_msg("%s rank %d: %s", samples[j], r, err);
        mqdh_dump_free(serial[j]);
        assert_int_equal(job_stop(&jobs[j]), 0);
    }
    printf("two jobs of 4 ranks dumped at once %d times, each equal to its serial dump\n",
           ROUNDS);
}

static void test_threads__workers_share_one_image(void **state)
{
    (void)state;
    struct job job;
    char err[512];
    if (job_start(&job, "ring", 8, err, sizeof err) != 0)
        fail_msg("ring: %s", err);
    struct mqdh_options one = {.size = sizeof one, .jobs = 1}, four = one;
    four.jobs = 4;
    struct mqdh_dump *serial = NULL;
    assert_int_equal(mqdh_dump_processes(job.ranks, NULL, NULL, job.np, &one, &serial),
                     MQDH_OK);
    assert_useful(serial, job.np);
    for (int round = 0; round < ROUNDS; round++) {
        struct mqdh_dump *d = NULL;
        assert_int_equal(mqdh_dump_processes(job.ranks, NULL, NULL, job.np, &four, &d),
                         MQDH_OK);
        assert_int_equal(d->workers, 4);
        if (same_dump(serial, d, 0, err, sizeof err) != 0)
            fail_msg("round %d: %s", round, err);
        mqdh_dump_free(d);
    }
    for (int r = 0; r < job.np; r++)
        if (proc_released(job.ranks[r], err, sizeof err) != 0)
            fail_msg("rank %d: %s", r, err);
    mqdh_dump_free(serial);
    assert_int_equal(job_stop(&job), 0);
    printf("a ring of 8 ranks dumped on 4 workers %d times, each equal to one worker's\n",
           ROUNDS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads__two_jobs_dumped_at_once),
        cmocka_unit_test(test_threads__workers_share_one_image),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
