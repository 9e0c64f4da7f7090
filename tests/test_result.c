/*
 * test_result - the agents' result format (host/job/result_write.c, host/job/result_read.c): a dump written
 * and read back is the same dump; what is not a whole result of this
 * version is refused with the line that is wrong; nothing read can carry a
 * control character; the merge puts each host's processes in their places.
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

/* Two processes with every kind of field, and strings that need escaping. */
static struct mqdh_dump *sample_dump(void)
{
    struct mqdh_dump *d = calloc(1, sizeof *d);
    d->version = MQDH_VERSION;
    d->nprocs = 2;
    d->workers = 3;
    d->files = 9;
    d->procs = calloc(2, sizeof *d->procs);
    for (int i = 0; i < 2; i++) {
        struct mqdh_process *p = &d->procs[i];
        p->pid = 4000 + i;
        p->rank = p->identity = i;
        p->host = strdup("node-b");
        p->image = strdup("/path with spaces/app%1");
        p->dll = strdup("/lib/libmqd_mpich.so");
        p->dll_source = MQDH_DLL_OWN;
        p->dll_why = strdup("mqd's DLL: \"quoted\"\ttab");
        p->where_call = strdup("MPI_Recv");
        p->where_function = strdup("solve");
        p->where_line = 42;
        p->where_tid = 4000 + i;
        p->where_args = MQDH_ARG_SOURCE | MQDH_ARG_TAG;
        p->where_source = -1;
        p->where_tag = 7;
        p->where_comm = 0x84000000ULL;
        p->stats.callbacks = 300;
        p->stats.seconds = 0.25;
        p->ncomms = 1;
        p->mpi_finalized = i;
        p->comms = calloc(1, sizeof *p->comms);
        struct mqdh_comm *c = &p->comms[0];
        c->unique_id = 0xffffffffffffffffULL;
        c->local_rank = i;
        c->size = 7;
        snprintf(c->name, sizeof c->name, "MPI_COMM_WORLD");
        c->group = malloc(7 * sizeof *c->group);
        long g[7] = {0, 1, 2, 3, -1, 5, 9};
        g[i] = i;
        memcpy(c->group, g, sizeof g);
        c->has_handle = 1;
        c->handle = 0x44000000;
        c->queues[MQDH_SENDS].state = MQDH_QUEUE_NO_INFO;
        c->queues[MQDH_UNEXPECTED].state = MQDH_QUEUE_ERROR;
        c->queues[MQDH_UNEXPECTED].error = strdup("cannot read 0x10 (code 1001)");
        struct mqdh_queue *q = &c->queues[MQDH_RECEIVES];
        q->nops = 2;
        q->ops = calloc(2, sizeof *q->ops);
        for (int k = 0; k < 2; k++) {
            struct mqdh_op *o = &q->ops[k];
            o->status = k ? MQDH_OP_UNKNOWN : MQDH_OP_PENDING;
            o->desired_local_rank = -1;
            o->desired_global_rank = -1;
            o->tag_wild = 1;
            o->desired_tag = -1;
            o->desired_length = 1L << 40;
            o->buffer = 0x7ffd00001000ULL;
            o->actual_local_rank = o->actual_global_rank = o->actual_tag = o->actual_length = -1;
            o->collective = k;
            o->maybe_collective = !k && i; /* process 1's first: COLLECTIVE 2 */
            o->request = 0xdeadbeef;
            o->text_address = 2;
            snprintf(o->extra_text[0], sizeof o->extra_text[0], "receive: 8 x MPI_INT");
            snprintf(o->extra_text[1], sizeof o->extra_text[1], "request 0x%x %%", 0x10 + k);
        }
    }
    /* Process 0's stack: its main thread, two frames (one inlined) in an
     * object whose path needs escaping, one with no object; process 1 has
     * none. */
    d->stacks = calloc(2, sizeof *d->stacks);
    struct mqdh_stack *st = &d->stacks[0];
    st->nthreads = 1;
    st->threads = calloc(1, sizeof *st->threads);
    struct mqdh_thread *t = &st->threads[0];
    t->tid = 4000;
    t->call = strdup("MPI_Recv");
    t->entry = 1;
    t->error = strdup("more than 256 frames: cut short");
    t->nframes = 3;
    t->frames = calloc(3, sizeof *t->frames);
    t->frames[0] = (struct mqdh_frame){0xffffffffff600000ULL, NULL, NULL, NULL, 0, 0,
                                       MQDH_FRAME_SYSTEM};
    t->frames[1] = (struct mqdh_frame){0x7f0000001234ULL, strdup("PMPI_Recv"),
                                       strdup("/opt/my mpi/libmpi.so.12"), NULL, 0, 0,
                                       MQDH_FRAME_MPI};
    t->frames[2] = (struct mqdh_frame){0x401000, strdup("solve"), strdup("/path with spaces/app%1"),
                                       strdup("src/solve.c"), 42, 1, MQDH_FRAME_USER};
    /* Process 0's requests were not read; process 1 waits on two, one of
     * them not decoded, and knows its communicator's next collective tag. */
    d->requests = calloc(2, sizeof *d->requests);
    d->requests[0].n = -1;
    d->requests[0].why = strdup("its arguments were not read");
    struct mqdh_requests *rq = &d->requests[1];
    rq->n = 2;
    rq->v = calloc(2, sizeof *rq->v);
    rq->v[0] = (struct mqdh_request){.handle = 0xac000001, .decoded = 1, .kind = MQDH_REQ_RECV,
                                     .comm = 0, .peer_known = 1, .tag_known = 1,
                                     .peer_local = -1, .peer_global = -1, .tag = 7,
                                     .sched_tag = -1, .address = 0x7f0000002000ULL};
    snprintf(rq->v[0].text, sizeof rq->v[0].text, "receive from ANY tag 7");
    rq->v[1] = (struct mqdh_request){.handle = 0xac000002, .comm = -1, .sched_tag = 288,
                                     .sched_receives = 1};
    rq->nbc_ncomms = 1;
    rq->nbc_next_tag = malloc(sizeof *rq->nbc_next_tag);
    rq->nbc_next_tag[0] = 289;
    return d;
}

static char *write_text(const struct mqdh_dump *d, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    assert_non_null(f);
    assert_int_equal(mqdh_result_write(f, d), MQDH_OK);
    fclose(f);
    return buf;
}

static void same_str(const char *a, const char *b)
{
    if (a || b)
        assert_string_equal(a ? a : "(null)", b ? b : "(null)");
}

static void same_stack(const struct mqdh_stack *a, const struct mqdh_stack *b)
{
    assert_int_equal(a->nthreads, b->nthreads);
    for (int t = 0; t < a->nthreads; t++) {
        const struct mqdh_thread *x = &a->threads[t], *y = &b->threads[t];
        assert_int_equal(x->tid, y->tid);
        assert_int_equal(x->entry, y->entry);
        same_str(x->call, y->call);
        same_str(x->error, y->error);
        assert_int_equal(x->nframes, y->nframes);
        for (int k = 0; k < x->nframes; k++) {
            const struct mqdh_frame *f = &x->frames[k], *g = &y->frames[k];
            assert_int_equal(f->pc, g->pc);
            same_str(f->function, g->function);
            same_str(f->module, g->module);
            same_str(f->file, g->file);
            assert_int_equal(f->line, g->line);
            assert_int_equal(f->inlined, g->inlined);
            assert_int_equal(f->kind, g->kind);
        }
    }
}

static void same_dump(const struct mqdh_dump *a, const struct mqdh_dump *b)
{
    assert_int_equal(a->nprocs, b->nprocs);
    assert_int_equal(a->workers, b->workers);
    assert_int_equal(a->files, b->files);
    for (int i = 0; i < a->nprocs; i++) {
        const struct mqdh_process *p = &a->procs[i], *q = &b->procs[i];
        assert_int_equal(p->pid, q->pid);
        assert_int_equal(p->rank, q->rank);
        assert_int_equal(p->identity, q->identity);
        assert_string_equal(p->host, q->host);
        assert_string_equal(p->image, q->image);
        assert_int_equal(p->dll_source, q->dll_source);
        assert_string_equal(p->where_call, q->where_call);
        assert_null(q->where_file);
        assert_int_equal(p->where_line, q->where_line);
        assert_int_equal(p->where_args, q->where_args);
        assert_int_equal(p->where_source, q->where_source);
        assert_int_equal(p->where_comm, q->where_comm);
        assert_int_equal(p->mpi_finalized, q->mpi_finalized);
        assert_int_equal(p->stats.callbacks, q->stats.callbacks);
        assert_true(q->stats.seconds > 0.2499 && q->stats.seconds < 0.2501);
        const struct mqdh_comm *c = &p->comms[0], *e = &q->comms[0];
        assert_int_equal(c->unique_id, e->unique_id);
        assert_string_equal(c->name, e->name);
        assert_memory_equal(c->group, e->group, 7 * sizeof *c->group);
        assert_int_equal(c->handle, e->handle);
        for (int k = 0; k < MQDH_NQUEUES; k++) {
            assert_int_equal(c->queues[k].state, e->queues[k].state);
            assert_int_equal(c->queues[k].nops, e->queues[k].nops);
        }
        assert_string_equal(c->queues[MQDH_UNEXPECTED].error, e->queues[MQDH_UNEXPECTED].error);
        for (int k = 0; k < 2; k++)
            assert_memory_equal(&c->queues[MQDH_RECEIVES].ops[k], &e->queues[MQDH_RECEIVES].ops[k],
                                sizeof(struct mqdh_op));
        same_stack(&a->stacks[i], &b->stacks[i]);
        const struct mqdh_requests *r = &a->requests[i], *t = &b->requests[i];
        assert_int_equal(r->n, t->n);
        same_str(r->why, t->why);
        for (int k = 0; k < r->n; k++)
            assert_memory_equal(&r->v[k], &t->v[k], sizeof r->v[k]);
        assert_int_equal(r->nbc_ncomms, t->nbc_ncomms);
        for (int k = 0; k < r->nbc_ncomms; k++)
            assert_int_equal(r->nbc_next_tag[k], t->nbc_next_tag[k]);
    }
}

static void test_result__written_and_read_back_is_the_same(void **state)
{
    (void)state;
    struct mqdh_dump *d = sample_dump();
    size_t len;
    char *text = write_text(d, &len);
    struct mqdh_dump *back = NULL;
    char err[256];
    if (mqdh_result_read(text, len, &back, err, sizeof err) != MQDH_OK)
        fail_msg("%s\n%s", err, text);
    /* the dll_why's tab comes back as '?': no control character is read */
    assert_string_equal(back->procs[0].dll_why, "mqd's DLL: \"quoted\"?tab");
    free(d->procs[0].dll_why);
    free(d->procs[1].dll_why);
    d->procs[0].dll_why = d->procs[1].dll_why = NULL;
    same_dump(d, back);
    assert_non_null(strstr(text, " 0-3 -1 5 9")); /* runs as runs */
    free(text);
    mqdh_dump_free(back);
    mqdh_dump_free(d);
}

/* Every cut of a whole result is refused: an agent that died mid-write
 * never passes for one with fewer processes. */
static void test_result__every_truncation_is_refused(void **state)
{
    (void)state;
    struct mqdh_dump *d = sample_dump();
    size_t len;
    char *text = write_text(d, &len);
    for (size_t cut = 0; cut < len - 1; cut++) {
        struct mqdh_dump *back = (struct mqdh_dump *)1;
        char err[256];
        int rc = mqdh_result_read(text, cut, &back, err, sizeof err);
        if (rc != MQDH_E_RESULT)
            fail_msg("cut at %zu of %zu: read as a result (%d)", cut, len, rc);
        assert_null(back);
        assert_true(err[0] != '\0');
    }
    free(text);
    mqdh_dump_free(d);
}

static void test_result__bad_records_name_their_line(void **state)
{
    (void)state;
    static const struct {
        const char *text, *says;
    } cases[] = {
        {"", "not an mqd result"},
        {"\x1b[2Jmqd", "not an mqd result (it begins '?[2Jmqd')"},
        {"mqd-result 2\n", "result format 2"},
        {"mqd-result 1\ndump 1 1 1\nend 1\n", "the end counts 1 processes, and 0 came"},
        {"mqd-result 1\ndump 1 1 1\np 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nend 1\n",
         "line 3: pid '0' is not a number"},
        {"mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 x\nend 1\n",
         "line 3: unexpected field 'x'"},
        {"mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nc 1 0 2 0 0 =W\n"
         "g 2 0-5\n",
         "line 5: member run '0-5' is not A-B"},
        {"mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nc 1 0 2 0 0 =W\n"
         "q 0 ok 2 -\no 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nq 1 ok 0 -\n",
         "line 7: a queue with 1 of its 2 entries"},
        {"mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\ns image =a%zz\nend 1\n",
         "line 4: image has a bad escape"},
        {"mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nc 1 0 2 0 0 =W\n"
         "q 1 ok 0 -\n",
         "line 5: queue 1 where queue 0 comes"},
        {"mqd-result 1\nc 1 0 2 0 0 =W\n", "line 2: a 'c' record before any process"},
        {"mqd-result 1\ndump 0 1 1\nend 0\np 5\n", "a record after the end"},
        {"mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nt 5 2 -1 - -\n"
         "f 1 0 0 0 -1 =main -\nend 1\n",
         "line 6: a thread with 1 of its 2 frames"},
        {"mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nt 5 1 -1 - -\n"
         "f 1 0 0 0 0 =main -\nend 1\n",
         "line 5: module '0' is not a number from -1 to -1"},
        {"mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nt 5 1 1 - -\n",
         "line 4: entry frame 1 of 1"},
        {"mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nf 1 0 0 0 -1 - -\n",
         "line 4: a frame beyond its thread's count"},
        {"mqd-result 1\nm 1 =/lib/x.so\n", "line 2: module 1 where module 0 comes"},
        {"mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nt 5 1 -1 - -\n"
         "f 1 0 3 0 -1 - -\n",
         "line 5: kind '3' is not a number from 0 to 2"},
        {"mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
         "r 1 1 2 0 -1 0 0 0 0 0 -1 0 0 -\nend 1\n",
         "line 4: a request outside an rq record's"},
        {"mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nrq 1 -\n"
         "r 1 1 2 0 0 0 0 0 0 0 -1 0 0 -\nend 1\n",
         "line 5: communicator '0' is not a number from -1 to -1"},
        {"mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nrq 2 -\n"
         "r 1 1 2 0 -1 0 0 0 0 0 -1 0 0 -\nend 1\n",
         "line 6: the rq record counts 2 requests, and 1 came"},
        {"mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nrq 1 -\n"
         "r 1 1 2 0 -1 0 0 0 0 0 -1 0 0 -\nr 1 1 2 0 -1 0 0 0 0 0 -1 0 0 -\n",
         "line 6: more requests than the rq record's 1"},
        {"mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nrq 65 -\n",
         "line 4: requests '65' is not a number from -1 to 64"},
        {"mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nnbc 1 287\n",
         "line 4: communicators '1' is not a number from 0 to 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct mqdh_dump *back = NULL;
        char err[512];
        int rc = mqdh_result_read(cases[i].text, strlen(cases[i].text), &back, err, sizeof err);
        if (rc != MQDH_E_RESULT || back || !strstr(err, cases[i].says))
            fail_msg("case %zu: rc %d, '%s', wanted '%s'", i, rc, err, cases[i].says);
    }
    /* Records and string keys of a later version are skipped. */
    const char *later = "mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
                        "s colour =blue\nz what a later version says\nend 1\n";
    struct mqdh_dump *back = NULL;
    char err[256];
    assert_int_equal(mqdh_result_read(later, strlen(later), &back, err, sizeof err), MQDH_OK);
    assert_int_equal(back->procs[0].pid, 5);
    mqdh_dump_free(back);
}

/* Each host's processes go to their places by (host, pid); what the front
 * end knows (rank, host) stays; a pid on another host is not taken. */
static void test_result__merge_places_by_host_and_pid(void **state)
{
    (void)state;
    struct mqdh_dump *into = calloc(1, sizeof *into);
    into->nprocs = 3;
    into->procs = calloc(3, sizeof *into->procs);
    const char *hosts[3] = {"node-a", "node-b", "node-c"};
    for (int i = 0; i < 3; i++) {
        into->procs[i].pid = 4000; /* the same pid on every host */
        into->procs[i].rank = into->procs[i].identity = 10 + i;
        into->procs[i].host = strdup(hosts[i]);
        into->procs[i].error = strdup("placeholder");
    }
    struct mqdh_dump *from = sample_dump(); /* pids 4000, 4001 on node-b */
    struct mqdh_dump *list[1] = {from};
    assert_int_equal(mqdh_dump_merge(into, list, 1), 1);
    assert_int_equal(from->nprocs, 0);
    assert_string_equal(into->procs[0].error, "placeholder");
    assert_string_equal(into->procs[2].error, "placeholder");
    assert_null(into->procs[1].error);
    assert_int_equal(into->procs[1].rank, 11);
    assert_string_equal(into->procs[1].host, "node-b");
    assert_string_equal(into->procs[1].where_call, "MPI_Recv");
    /* Its stack came with it; process 1 of from (pid 4001) is no place's. */
    assert_non_null(into->stacks);
    assert_int_equal(into->stacks[1].nthreads, 1);
    assert_int_equal(into->stacks[1].threads[0].tid, 4000);
    assert_int_equal(into->stacks[0].nthreads, 0);
    assert_null(from->stacks);
    assert_int_equal(mqdh_process_by_global(into, 11), 1);
    mqdh_dump_free(from);
    mqdh_dump_free(into);
}

/*
 * A small result makes no more than a bounded multiple of its own size in
 * memory (issue 45, finding 3): one line "g 8388608 0-8388607" is a 64 MB
 * group, a frame copies its module's path, so 1.4 kB made 1 GB.  Refused,
 * saying why; a world of 10,000 in one run still reads.
 */
static void test_result__memory_is_bounded_by_the_input(void **state)
{
    (void)state;
    char text[16384], *at = text;
    at += sprintf(at, "mqd-result 1\ndump 20 1 1\n");
    for (int i = 0; i < 20; i++)
        at += sprintf(at, "p %d 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\nc 1 0 8388608 0 0 =W\n"
                          "g 8388608 0-8388607\nq 0 ok 0 -\nq 1 ok 0 -\nq 2 ok 0 -\n", 100 + i);
    at += sprintf(at, "end 20\n");
    struct mqdh_dump *back = NULL;
    char err[512] = "";
    int rc = mqdh_result_read(text, (size_t)(at - text), &back, err, sizeof err);
    if (rc != MQDH_E_RESULT || back || !strstr(err, "a group would take the result past the") ||
        !strstr(err, "line 11:"))
        fail_msg("%zu bytes: rc %d, '%s'", (size_t)(at - text), rc, err);
    /* Frames: each copies its module's 4 kB path, one line of 18 bytes. */
    at = text;
    char path[4000];
    memset(path, 'x', sizeof path - 1);
    path[sizeof path - 1] = '\0';
    at += sprintf(at, "mqd-result 1\nm 0 =/%s\ndump 1 1 1\n"
                      "p 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", path);
    size_t head = (size_t)(at - text);
    size_t len = head + 200000 * 17 + 64;
    char *big = malloc(len);
    assert_non_null(big);
    memcpy(big, text, head);
    at = big + head;
    for (int t = 0; t < 400; t++) {
        at += sprintf(at, "t %d 500 -1 - -\n", t + 1);
        for (int f = 0; f < 500; f++)
            at += sprintf(at, "f 1 0 0 0 0 - -\n");
    }
    at += sprintf(at, "end 1\n");
    rc = mqdh_result_read(big, (size_t)(at - big), &back, err, sizeof err);
    if (rc != MQDH_E_RESULT || back || !strstr(err, "a frame's module would take the result"))
        fail_msg("%zu bytes of frames: rc %d, '%s'", (size_t)(at - big), rc, err);
    free(big);
    /* A real world's group, one run: read. */
    const char *world = "mqd-result 1\ndump 1 1 1\np 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
                        "c 1 0 10000 0 0 =MPI_COMM_WORLD\ng 10000 0-9999\n"
                        "q 0 ok 0 -\nq 1 ok 0 -\nq 2 ok 0 -\nend 1\n";
    assert_int_equal(mqdh_result_read(world, strlen(world), &back, err, sizeof err), MQDH_OK);
    assert_int_equal(back->procs[0].comms[0].group[9999], 9999);
    mqdh_dump_free(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_result__written_and_read_back_is_the_same),
        cmocka_unit_test(test_result__every_truncation_is_refused),
        cmocka_unit_test(test_result__bad_records_name_their_line),
        cmocka_unit_test(test_result__merge_places_by_host_and_pid),
        cmocka_unit_test(test_result__memory_is_bounded_by_the_input),
    };
    return cmocka_run_group_tests_name("result", tests, NULL, NULL);
}
