/*
 * test_stacks - the merged call tree (host/analysis/calltree.c) of a dump made by
 * hand: paths merge from main outward and part where the frames differ,
 * each node labelled with the processes through it in order; the MPI
 * library's frames fold into the call the program made (and a system
 * library's into the function called) unless MQDH_STACKS_FULL; threads
 * other than the one shown go in a tree of their own; a process without a
 * stack is left out.
 */
#define _GNU_SOURCE
#include "mqdhost.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define EXE "/home/u/app"
#define MPI "/opt/mpich/lib/libmpi.so.12"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"

struct f {
    const char *function, *module, *file;
    int line, inlined;
};

static enum mqdh_frame_kind kind_of(const char *module)
{
    return strcmp(module, MPI) == 0 ? MQDH_FRAME_MPI
           : strncmp(module, "/usr/", 5) == 0 ? MQDH_FRAME_SYSTEM
                                                : MQDH_FRAME_USER;
}

/* A thread of frames fs (innermost first, n of them). */
static void thread(struct mqdh_stack *st, pid_t tid, const char *call, const struct f *fs, int n)
{
    st->threads = realloc(st->threads, (size_t)(st->nthreads + 1) * sizeof *st->threads);
    assert_non_null(st->threads);
    struct mqdh_thread *t = &st->threads[st->nthreads++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->call = call ? strdup(call) : NULL;
    t->entry = -1;
    t->frames = calloc((size_t)n, sizeof *t->frames);
    t->nframes = n;
    for (int i = 0; i < n; i++) {
        struct mqdh_frame *fr = &t->frames[i];
        fr->pc = 0x1000 + (uint64_t)i;
        fr->function = strdup(fs[i].function);
        fr->module = strdup(fs[i].module);
        fr->file = fs[i].file ? strdup(fs[i].file) : NULL;
        fr->line = fs[i].line;
        fr->inlined = fs[i].inlined;
        fr->kind = kind_of(fs[i].module);
        if (fr->kind == MQDH_FRAME_MPI)
            t->entry = i; /* the outermost */
    }
}

static const struct f waiting[] = {
    {"__poll", LIBC, NULL, 0, 0},
    {"MPIDI_CH3I_Progress", MPI, "ch3_progress.c", 360, 0},
    {"internal_Waitall", MPI, "waitall.c", 80, 1},
    {"PMPI_Waitall", MPI, "waitall.c", 140, 0},
    {"exchange", EXE, "app.c", 30, 1},
    {"solve", EXE, "app.c", 50, 0},
    {"main", EXE, "app.c", 70, 0},
    {"__libc_start_main", LIBC, NULL, 0, 0},
    {"_start", EXE, NULL, 0, 0},
};
/* the same, stopped elsewhere in the MPI library */
static const struct f waiting_deeper[] = {
    {"MPID_nem_tcp_connpoll", MPI, "socksm.c", 1765, 0},
    {"MPIDI_CH3I_Progress", MPI, "ch3_progress.c", 360, 0},
    {"internal_Waitall", MPI, "waitall.c", 80, 1},
    {"PMPI_Waitall", MPI, "waitall.c", 140, 0},
    {"exchange", EXE, "app.c", 30, 1},
    {"solve", EXE, "app.c", 50, 0},
    {"main", EXE, "app.c", 70, 0},
    {"__libc_start_main", LIBC, NULL, 0, 0},
    {"_start", EXE, NULL, 0, 0},
};
static const struct f computing[] = {
    {"clock_nanosleep", LIBC, NULL, 0, 0},
    {"nanosleep", LIBC, NULL, 0, 0},
    {"relax", EXE, "app.c", 12, 1},
    {"solve", EXE, "app.c", 48, 0},
    {"main", EXE, "app.c", 70, 0},
    {"__libc_start_main", LIBC, NULL, 0, 0},
    {"_start", EXE, NULL, 0, 0},
};
static const struct f helper[] = {
    {"epoll_wait", LIBC, NULL, 0, 0},
    {"watchdog", EXE, "app.c", 90, 0},
    {"start_thread", LIBC, NULL, 0, 0},
    {"clone3", LIBC, NULL, 0, 0},
};

#define N(a) ((int)(sizeof a / sizeof a[0]))

/*
 * Six processes, ranks 0-5: 0, 1, 2 and 4 waiting in MPI_Waitall (stopped
 * at different places inside MPICH), 3 computing in relax, 5 not unwound;
 * 1 and 3 have a watchdog thread each, 3 two of them.
 */
static struct mqdh_dump *job(void)
{
    struct mqdh_dump *d = calloc(1, sizeof *d);
    d->version = MQDH_VERSION;
    d->nprocs = 6;
    d->procs = calloc(6, sizeof *d->procs);
    d->stacks = calloc(6, sizeof *d->stacks);
    for (int i = 0; i < 6; i++) {
        struct mqdh_process *p = &d->procs[i];
        p->pid = 100 + i;
        p->rank = i;
        if (i == 3 || i == 5)
            continue;
        p->where_call = strdup("MPI_Waitall");
        p->where_tid = p->pid;
    }
    thread(&d->stacks[0], 100, "MPI_Waitall", waiting, N(waiting));
    thread(&d->stacks[1], 101, "MPI_Waitall", waiting_deeper, N(waiting_deeper));
    thread(&d->stacks[1], 111, NULL, helper, N(helper));
    thread(&d->stacks[2], 102, "MPI_Waitall", waiting, N(waiting));
    thread(&d->stacks[3], 103, NULL, computing, N(computing));
    thread(&d->stacks[3], 113, NULL, helper, N(helper));
    thread(&d->stacks[3], 114, NULL, helper, N(helper));
    thread(&d->stacks[4], 104, "MPI_Waitall", waiting_deeper, N(waiting_deeper));
    return d;
}

/* The dump and its stacks, as mqdh_dump_free frees them. */
static void free_job(struct mqdh_dump *d)
{
    mqdh_dump_free(d);
}

/* Node i is function (file:line) under parent, through processes want. */
static void node_is(const struct mqdh_stack_tree *t, int i, int parent, const char *function,
                    int line, const char *want)
{
    assert_true(i < t->nnodes);
    const struct mqdh_stack_node *n = &t->nodes[i];
    char procs[64] = "";
    for (int k = 0; k < n->nprocs; k++)
        snprintf(procs + strlen(procs), sizeof procs - strlen(procs), "%s%d", k ? "," : "",
                 n->procs[k]);
    if (n->parent != parent || strcmp(n->function, function) != 0 || n->line != line ||
        strcmp(procs, want) != 0)
        fail_msg("node %d: %s:%d under %d through [%s]; wanted %s:%d under %d through [%s]", i,
                 n->function, n->line, n->parent, procs, function, line, parent, want);
    assert_int_equal(n->depth, parent < 0 ? 0 : t->nodes[parent].depth + 1);
}

static void test_stacks__folded_tree(void **state)
{
    (void)state;
    struct mqdh_dump *d = job();
    struct mqdh_stack_tree *t = NULL;
    assert_int_equal(mqdh_stack_tree(d, 0, &t), MQDH_OK);
    assert_int_equal(t->nprocs, 5); /* 5 has no stack */
    assert_int_equal(t->nshown, 7);
    node_is(t, 0, -1, "main", 70, "0,1,2,3,4");
    node_is(t, 1, 0, "solve", 50, "0,1,2,4");
    node_is(t, 2, 1, "exchange", 30, "0,1,2,4");
    assert_true(t->nodes[2].inlined);
    node_is(t, 3, 2, "MPI_Waitall", 0, "0,1,2,4"); /* wherever inside MPICH */
    assert_true(t->nodes[3].folded);
    assert_int_equal(t->nodes[3].kind, MQDH_FRAME_MPI);
    assert_null(t->nodes[3].file);
    node_is(t, 4, 0, "solve", 48, "3");
    node_is(t, 5, 4, "relax", 12, "3");
    node_is(t, 6, 5, "nanosleep", 0, "3"); /* the function the program called */
    assert_true(t->nodes[6].folded);
    assert_int_equal(t->nodes[6].kind, MQDH_FRAME_SYSTEM);
    /* The watchdog threads, from their start function. */
    node_is(t, 7, -1, "watchdog", 90, "1,3");
    assert_int_equal(t->nodes[7].nthreads, 3);
    node_is(t, 8, 7, "epoll_wait", 0, "1,3");
    assert_int_equal(t->nnodes, 9);
    assert_int_equal(t->nothers, 3);
    mqdh_stack_tree_free(t);
    free_job(d);
}

static void test_stacks__full_tree(void **state)
{
    (void)state;
    struct mqdh_dump *d = job();
    struct mqdh_stack_tree *t = NULL;
    assert_int_equal(mqdh_stack_tree(d, MQDH_STACKS_FULL, &t), MQDH_OK);
    node_is(t, 3, 2, "PMPI_Waitall", 140, "0,1,2,4");
    node_is(t, 4, 3, "internal_Waitall", 80, "0,1,2,4");
    node_is(t, 5, 4, "MPIDI_CH3I_Progress", 360, "0,1,2,4");
    node_is(t, 6, 5, "__poll", 0, "0,2"); /* parted: stopped at two places */
    node_is(t, 7, 5, "MPID_nem_tcp_connpoll", 1765, "1,4");
    node_is(t, 8, 0, "solve", 48, "3");
    mqdh_stack_tree_free(t);
    free_job(d);
}

static void test_stacks__paths_and_user_frames(void **state)
{
    (void)state;
    struct mqdh_dump *d = job();
    const struct mqdh_frame *uf = mqdh_user_frame(d, 3);
    assert_non_null(uf);
    assert_string_equal(uf->function, "relax");
    assert_int_equal(uf->line, 12);
    assert_string_equal(mqdh_user_frame(d, 0)->function, "exchange");
    assert_null(mqdh_user_frame(d, 5));
    assert_null(mqdh_shown_thread(d, 5));
    assert_int_equal(mqdh_shown_thread(d, 1)->tid, 101);
    /* The thread in MPI is the one shown, not the main thread. */
    d->procs[1].where_tid = 111;
    assert_int_equal(mqdh_shown_thread(d, 1)->tid, 111);
    struct mqdh_path_frame path[2];
    const struct mqdh_thread *th = &d->stacks[0].threads[0];
    assert_int_equal(mqdh_thread_path(th, 1, 0, path, 2), 4); /* only 2 written */
    assert_string_equal(path[0].function, "main");
    assert_string_equal(path[1].function, "solve");
    assert_int_equal(mqdh_thread_path(th, 1, MQDH_STACKS_FULL, NULL, 0), 7);
    struct mqdh_stack_tree *t = (struct mqdh_stack_tree *)1;
    struct mqdh_dump none = {.nprocs = 0};
    assert_int_equal(mqdh_stack_tree(&none, 0, &t), MQDH_E_USAGE);
    assert_null(t);
    free_job(d);
}

/*
 * The program's own code is outside its MPI call: a library the MPI
 * library calls (UCX under /opt, its kind the program's) is not it.  A
 * process outside MPI in such a library is at work there.
 */
static void test_stacks__user_frame_outside_the_call(void **state)
{
    (void)state;
    static const struct f in_ucx[] = {
        {"ucp_worker_progress", "/opt/ucx/lib/libucp.so.0", NULL, 0, 0},
        {"MPIDI_progress_test", MPI, "ch4_progress.c", 100, 0},
        {"PMPI_Waitall", MPI, "waitall.c", 140, 0},
        {"exchange", EXE, "app.c", 30, 0},
        {"main", EXE, "app.c", 70, 0},
    };
    static const struct f in_blas[] = {
        {"dgemm_kernel", "/opt/openblas/lib/libopenblas.so.0", NULL, 0, 0},
        {"solve", EXE, "app.c", 48, 0},
        {"main", EXE, "app.c", 70, 0},
    };
    struct mqdh_dump *d = calloc(1, sizeof *d);
    assert_non_null(d);
    d->version = MQDH_VERSION;
    d->nprocs = 2;
    d->procs = calloc(2, sizeof *d->procs);
    d->stacks = calloc(2, sizeof *d->stacks);
    for (int i = 0; i < 2; i++) {
        d->procs[i].pid = 200 + i;
        d->procs[i].rank = i;
    }
    d->procs[0].where_call = strdup("MPI_Waitall");
    d->procs[0].where_tid = 200;
    thread(&d->stacks[0], 200, "MPI_Waitall", in_ucx, N(in_ucx));
    thread(&d->stacks[1], 201, NULL, in_blas, N(in_blas));
    assert_int_equal(d->stacks[0].threads[0].entry, 2);
    assert_string_equal(mqdh_user_frame(d, 0)->function, "exchange");
    assert_string_equal(mqdh_user_frame(d, 1)->function, "dgemm_kernel");
    free_job(d);
}

/* A job of 20,000 processes, each stopped at its own line: one path each,
 * found by hash, not by comparing every sibling. */
static void test_stacks__many_places(void **state)
{
    (void)state;
    enum { NP = 20000 };
    struct mqdh_dump *d = calloc(1, sizeof *d);
    d->nprocs = NP;
    d->procs = calloc(NP, sizeof *d->procs);
    d->stacks = calloc(NP, sizeof *d->stacks);
    for (int i = 0; i < NP; i++) {
        struct f fs[] = {{"work", EXE, "app.c", 1000 + i, 0}, {"main", EXE, "app.c", 7, 0}};
        d->procs[i].pid = 1000 + i;
        d->procs[i].rank = i;
        thread(&d->stacks[i], 1000 + i, NULL, fs, 2);
    }
    struct mqdh_stack_tree *t = NULL;
    assert_int_equal(mqdh_stack_tree(d, 0, &t), MQDH_OK);
    assert_int_equal(t->nnodes, NP + 1);
    assert_int_equal(t->nodes[0].nprocs, NP);
    for (int i = 1; i <= NP; i++)
        assert_int_equal(t->nodes[i].line, 1000 + i - 1); /* by rank */
    mqdh_stack_tree_free(t);
    free_job(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stacks__folded_tree),
        cmocka_unit_test(test_stacks__full_tree),
        cmocka_unit_test(test_stacks__paths_and_user_frames),
        cmocka_unit_test(test_stacks__user_frame_outside_the_call),
        cmocka_unit_test(test_stacks__many_places),
    };
    return cmocka_run_group_tests_name("stacks", tests, NULL, NULL);
}
