/*
 * fuzz_dll.c - mqd's DLLs, loaded as a debugger loads them, against a
 * synthetic target made from the fuzz input: libmqd_mpich.so on an MPICH
 * one (tests/synth.c), libmqd_ompi.so on an Open MPI one with pml ob1
 * (tests/synth_ompi.c), its generation, byte order and pointer width, the
 * communicators and queues
 * built in it, then its memory, symbol addresses and type answers
 * overwritten by the input's patches, some of them between a first and a
 * second walk (communicators that change or vanish while the debugger
 * looks).  Every entry point is driven the way a debugger drives it, the
 * MPI-2 job included; mqs_malloc may be made to fail at any call.
 *
 * Checked on every input: no crash and no sanitizer report (the build's
 * ASan and UBSan), every list ends (at most MQD_MAX_LIST entries, as the
 * DLL promises), every error code has a message, and every block the DLL
 * took through mqs_malloc is back once its infos are destroyed.
 *
 * With the kind byte's top bit, the target's memory changes by a byte
 * after every read (a rank that runs on while it is read).
 *
 * The kind byte's low three bits: 0 to 4 an MPICH generation, 5 to 7 Open
 * MPI.
 *
 * Input: 6 bytes of shape (below), then patch records, each an opcode
 * byte and its operands:
 *   op % 4 == 0  memory: offset (2 bytes, modulo the memory in use),
 *                length (1 byte, modulo 17), that many bytes
 *   op % 4 == 1  symbol: which (1 byte), address (4 bytes: below 2^31 an
 *                offset into the memory in use, else as it is)
 *   op % 4 == 2  type: which (1), field (1), value (2 bytes, signed)
 *   op % 4 == 3  the patches after this one apply between the two walks
 */
#include "host/protocol/loader.h"
#include "tests/synth.h"
#include "tests/synth_ompi.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the DLL promises of a list (dll/target.h MQD_MAX_LIST). */
enum { MAX_LIST = 1 << 20 };

/* The DLL under test for this input: MPICH's or Open MPI's. */
static struct mqdh__dll *dll, *mpich_dll, *ompi_dll;

struct input {
    const uint8_t *p;
    size_t n;
};

static unsigned byte(struct input *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

static unsigned word(struct input *in, int bytes)
{
    unsigned v = 0;
    for (int i = 0; i < bytes; i++)
        v |= byte(in) << (8 * i);
    return v;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Load $ENV_NAME, or NAME in ../lib from the program (BUILD/fuzz/bin/
 * fuzz_dll, BUILD/tests/replay_dll: BUILD/lib), into *out. */
static void load(const char *env_name, const char *name, const char *self,
                 struct mqdh__dll **out)
{
    char path[4096], err[512];
    const char *env = getenv(env_name), *slash = strrchr(self, '/');
    if (env && *env)
        snprintf(path, sizeof path, "%s", env);
    else
        snprintf(path, sizeof path, "%.*s/../lib/%s", slash ? (int)(slash - self) : 1,
                 slash ? self : ".", name);
    if (mqdh__dll_load(path, &synth_callbacks()->basic, out, err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_dll: %s\n", err);
        exit(1);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    synth_memory_size(128 * 1024); /* ample for what an input builds; less to clear */
    load("MQD_FUZZ_DLL", "libmqd_mpich.so", (*argv)[0], &mpich_dll);
    load("MQD_FUZZ_OMPI_DLL", "libmqd_ompi.so", (*argv)[0], &ompi_dll);
    return 0;
}

/* A finding: the harness stops, as a sanitizer would. */
static void finding(const char *what)
{
    fprintf(stderr, "fuzz_dll: %s\n", what);
    abort();
}

static void check_code(int rc)
{
    if (rc != mqs_ok && rc != mqs_end_of_list && rc != mqs_no_information) {
        const char *m = dll->dll_error_string(rc);
        if (!m || !*m)
            finding("an error code without a message");
    }
}

/* One walk of every communicator and queue, as a debugger's window
 * refresh does. */
static void walk(mqs_process *p)
{
    check_code(dll->update_communicator_list(p));
    int rc = dll->setup_communicator_iterator(p);
    check_code(rc);
    long comms = 0;
    while (rc == mqs_ok) {
        if (++comms > MAX_LIST)
            finding("a communicator list that does not end");
        mqs_communicator c;
        memset(&c, 0, sizeof c);
        check_code(rc = dll->get_communicator(p, &c));
        if (rc != mqs_ok)
            break;
        if (memchr(c.name, '\0', sizeof c.name) == NULL)
            finding("a communicator name without its terminator");
        if (dll->get_comm_group) {
            int g[64];
            if (c.size > 0 && c.size <= 64)
                check_code(dll->get_comm_group(p, g));
        }
        mqs_taddr_t h;
        if (dll->get_comm_handle)
            check_code(dll->get_comm_handle(p, &h));
        mqs_tword_t nbc = 0;
        if (dll->get_comm_nbc_tag) {
            int trc = dll->get_comm_nbc_tag(p, c.unique_id, &nbc);
            check_code(trc);
            if (trc == mqs_ok && nbc < 287)
                finding("a next nonblocking collective's tag below MPICH's first");
        }
        for (int q = 0; q < 3; q++) {
            int qrc = dll->setup_operation_iterator(p, q);
            check_code(qrc);
            if (qrc != mqs_ok)
                continue;
            long ops = 0;
            mqs_pending_operation op;
            unsigned flags;
            mqs_taddr_t req;
            while ((qrc = dll->next_operation(p, &op)) == mqs_ok) {
                if (++ops > MAX_LIST)
                    finding("a queue that does not end");
                if (dll->get_operation_info)
                    check_code(dll->get_operation_info(p, &flags, &req));
            }
            check_code(qrc);
        }
        rc = dll->next_communicator(p);
        check_code(rc);
    }
    /* The requests behind a few handles: the first of pool 0's blocks (the
     * synthetic target's), the null and a pre-completed one, none at all. */
    static const unsigned handles[] = {0xec000000u, 0xec000001u, 0xec000005u, 0xec100000u,
                                       0x6c000002u, 0x2c000000u, 0x84000001u, 0xac000000u};
    for (size_t i = 0; dll->get_request_info && i < sizeof handles / sizeof handles[0]; i++) {
        mqd_request_info info;
        check_code(dll->get_request_info(p, handles[i], &info));
        if (memchr(info.text, '\0', sizeof info.text) == NULL)
            finding("a request's text without its terminator");
    }
}

/* The image and process set up, as a debugger does before a walk;
 * 0 if the DLL said the process has queues. */
static int setup(struct synth *s, int identity, int mpi2)
{
    const struct synth_host *h = synth_callbacks();
    const char *msg = NULL;
    char *pmsg = NULL;
    int rc = dll->setup_image(synth_image(s), &h->image);
    check_code(rc);
    if (rc != mqs_ok)
        return -1;
    check_code(rc = dll->image_has_queues(synth_image(s), &msg));
    if (rc != mqs_ok)
        return -1;
    check_code(rc = dll->setup_process(synth_process(s), &h->process));
    if (rc != mqs_ok)
        return -1;
    if (mpi2 && dll->set_process_identity)
        check_code(dll->set_process_identity(synth_process(s), identity));
    check_code(rc = dll->process_has_queues(synth_process(s), &pmsg));
    return rc == mqs_ok ? 0 : -1;
}

static void release(struct synth *s)
{
    const mqs_basic_callbacks *b = &synth_callbacks()->basic;
    mqs_process_info *pi = b->mqs_get_process_info_fp(synth_process(s));
    mqs_image_info *ii = b->mqs_get_image_info_fp(synth_image(s));
    if (pi)
        dll->destroy_process_info(pi);
    if (ii)
        dll->destroy_image_info(ii);
    b->mqs_put_process_info_fp(synth_process(s), NULL);
    b->mqs_put_image_info_fp(synth_image(s), NULL);
}

enum { DT_INT = 0x4c000405, DT_DOUBLE = 0x4c00080b };

/* A rank's communicators and queues, their number and values from the
 * input. */
static void build(struct synth *s, struct input *in, unsigned flags, int world_rank)
{
    static const int world[] = {0, 1, 2, 3}, pair[] = {1, 3}, half[] = {2, 3};
    uint64_t comms[10];
    int nc = 0;
    if (flags & 2)
        synth_made_groups(s);
    if (flags & 4)
        synth_process_group(s, "kvs_1234_0", world_rank);
    if (flags & 8)
        synth_foreign_group(s, "kvs_1234_1");
    synth_world_rank(s, world_rank);
    unsigned shape = byte(in);
    comms[nc++] = synth_comm(s, 0x44000000u, 0, 4, world_rank, "MPI_COMM_WORLD", world);
    comms[nc++] = synth_comm(s, 0x44000001u, 16, 1, 0, "MPI_COMM_SELF", pair);
    for (unsigned i = 0; i < (shape & 7); i++)
        comms[nc++] = synth_comm(s, 0x84000000u + i, 32 + 16 * i, 2, (int)(i & 1),
                                 i & 1 ? "" : "mqd-fuzz", i & 2 ? half : pair);
    if (flags & 1)
        comms[nc++] = synth_intercomm(s, 0x84000007u, 200, 2, 0, 2, "mqd-inter", half);
    synth_comm_list(s, comms, nc, nc);
    unsigned counts = byte(in);
    uint64_t reqs[8];
    for (int u = 0; u < 2; u++) {
        int n = (int)((counts >> (4 * u)) & 7);
        for (int i = 0; i < n; i++) {
            unsigned v = word(in, 2);
            int rank = v & 3 ? (int)(v & 3) : -2; /* MPI_ANY_SOURCE */
            int tag = v & 4 ? -1 : (int)(v >> 8);
            unsigned ctx = (unsigned)(v >> 3 & 3) * 16 + (v & 0x20 ? 1 : 0);
            reqs[i] = synth_recv(s, ctx, rank, tag, (long)(v >> 6 & 15),
                                 v & 0x40 ? DT_DOUBLE : DT_INT,
                                 (int)(v >> 7 & 1), u ? (long)(v >> 4) : 0);
        }
        synth_recv_list(s, u, reqs, n);
    }
    int ns = (int)(byte(in) & 7);
    int ranks[8], tags[8];
    unsigned ctxs[8];
    for (int i = 0; i < ns; i++) {
        unsigned v = word(in, 2);
        reqs[i] = synth_send_req(s, (long)(v >> 4), v & 1 ? DT_DOUBLE : DT_INT, (int)(v >> 1 & 1));
        ranks[i] = (int)(v >> 2 & 3);
        tags[i] = (int)(v >> 8);
        ctxs[i] = v & 0x2000 ? SYNTH_INTER_SEND(200) : (unsigned)(v >> 14 & 1);
    }
    synth_sendq(s, reqs, ranks, tags, ctxs, ns);
    if (flags & 16)
        synth_finalizing(s, (int)(shape >> 3 & 3), shape & 0x20 ? -1 : 4);
}

/* An Open MPI rank (pml ob1) of world_rank in 4, its communicators and
 * queues, their number and values from the input. */
static void build_ompi(struct synth *s, struct input *in, unsigned flags, int world_rank)
{
    static const int world[] = {0, 1, 2, 3}, pair[] = {1, 3}, other[] = {-1, -2};
    uint64_t comms[8];
    int nc = 0;
    synth_ompi_sentinels(s, (flags & 2) != 0);
    unsigned shape = byte(in);
    comms[nc++] = synth_ompi_comm_of(s, 0);
    for (unsigned i = 0; i < (shape & 3); i++)
        comms[nc++] = synth_ompi_comm(s, 3 + i, i & 1 ? NULL : "mqd-fuzz", world_rank & 1, 2,
                                      i & 2 ? world + 2 : pair);
    if (flags & 1)
        comms[nc++] = synth_ompi_intercomm(s, 7, 6, "mqd-inter", world_rank & 1, 2, pair, 2,
                                           flags & 8 ? other : world + 2);
    uint64_t dt[2] = {synth_ompi_datatype(s, "MPI_INT", 4), synth_ompi_datatype(s, "", 24)};
    unsigned counts = byte(in);
    for (int i = 0; i < (int)(counts & 7); i++) { /* receives and probes */
        unsigned v = word(in, 2);
        int peer = (int)(v & 1) - (v & 2 ? 1 : 0), tag = v & 4 ? -1 : (int)(v >> 8) - 40;
        synth_ompi_recv(s, comms[(v >> 3) % (unsigned)nc], peer, tag, (long)(v >> 5 & 7),
                        dt[v >> 11 & 1], v >> 4, (int)(v >> 12 & 1));
    }
    for (int i = 0; i < (int)(counts >> 3 & 7); i++) { /* unexpected fragments */
        unsigned v = word(in, 2);
        synth_ompi_frag(s, comms[(v >> 3) % (unsigned)nc], (int)(v & 1),
                        (int)(v >> 8) - 40, 0x41 + (int)(v >> 1 & 3) % 3, (long)(v >> 4 & 15),
                        (long)(v >> 6), v >> 12);
    }
    for (int i = 0; i < (int)(byte(in) & 7); i++) { /* sends */
        unsigned v = word(in, 2);
        const struct synth_ompi_send a = {
            .comm = comms[(v >> 3) % (unsigned)nc], .peer = (int)(v & 1),
            .tag = (int)(v >> 8) - 40, .count = (long)(v >> 4 & 15), .datatype = dt[v >> 2 & 1],
            .bytes = (long)(v >> 4 & 15) * 4, .mode = (int)(v >> 5 & 3) * 2,
            .state = (int)(v >> 7 & 3), .complete = v >> 15, .seq = v >> 9};
        synth_ompi_send(s, &a);
    }
    if (flags & 16)
        synth_ompi_state(s, 3);
}

/* Apply patch records until the input ends or one says "later";
 * returns 1 if there are patches left for later. */
static int patch(struct synth *s, struct input *in)
{
    uint64_t base, used;
    unsigned char *mem = synth_memory(s, &base, &used);
    while (in->n) {
        unsigned op = byte(in);
        switch (op % 4) {
        case 0: {
            unsigned off = word(in, 2) % (unsigned)used, len = byte(in) % 17;
            for (unsigned i = 0; i < len; i++) {
                unsigned b = byte(in);
                if (off + i < used)
                    mem[off + i] = (unsigned char)b;
            }
            break;
        }
        case 1: {
            unsigned which = byte(in), a = word(in, 4);
            synth_patch_symbol(s, which, a < 0x80000000u ? base + a % (used + 64) : a);
            break;
        }
        case 2: {
            unsigned which = byte(in), field = byte(in);
            synth_patch_type(s, which, field, (int)(int16_t)word(in, 2));
            break;
        }
        default:
            return 1;
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct input in = {data, size};
    unsigned kind = byte(&in), flags = byte(&in);
    /* kind & 7: 6 and 7 Open MPI's target, else MPICH's generation kind % 6 */
    enum synth_gen gen = (enum synth_gen)(kind % 6);
    int big = kind >> 3 & 1, ptr = kind & 0x10 ? 4 : 8, ompi = (kind & 7) >= 6;
    synth_host_kind((enum synth_host_kind)((kind >> 5 & 3) % 3));
    dll = ompi ? ompi_dll : mpich_dll;
    struct synth *s = ompi ? synth_ompi_new(big, ptr, flags & 4 ? "ucx" : "ob1", 1, 4)
                           : synth_new_gen(big, ptr, gen);
    struct synth *peer = NULL;
    if (ompi)
        build_ompi(s, &in, flags, 1);
    else
        build(s, &in, flags, 1);
    int mpi2 = (flags & 32) && dll->setup_job;
    if (mpi2) { /* the rank and a peer, in the debugger's job */
        struct input none = {NULL, 0};
        peer = ompi ? synth_ompi_new(big, ptr, "ob1", 3, 4) : synth_new_gen(big, ptr, gen);
        if (ompi)
            build_ompi(peer, &none, flags, 3);
        else
            build(peer, &none, flags, 3);
        synth_join_job(s, 1);
        synth_join_job(peer, 3);
    }
    if (flags & 64)
        synth_drop_all_types(s);
    if (flags & 128)
        synth_fail_malloc_at((long)(byte(&in) % 64) + 1);
    int later = patch(s, &in);
    if (kind & 0x80) /* memory that changes between reads, after the patches */
        synth_unsteady(s, (uint32_t)size * 2654435761u | 1u);
    const mqs_basic_callbacks *b = &synth_callbacks()->basic;
    mqs_job *job = NULL;
    if (mpi2) {
        job = synth_callbacks()->process.mqs_get_process_job_fp(synth_process(s));
        check_code(dll->setup_job(job, &synth_callbacks()->job));
        if (setup(peer, 3, 1) == 0)
            walk(synth_process(peer));
    }
    if (setup(s, 1, mpi2) == 0) {
        walk(synth_process(s));
        if (later) { /* the target moved on: the debugger looks again */
            patch(s, &in);
            walk(synth_process(s));
        }
    }
    release(s);
    if (peer)
        release(peer);
    if (job) {
        mqs_job_info *ji = b->mqs_get_job_info_fp(job);
        if (ji)
            dll->destroy_job_info(ji);
        b->mqs_put_job_info_fp(job, NULL);
    }
    synth_fail_malloc_at(0);
    synth_leave_jobs();
    synth_free(s);
    synth_free(peer);
    if (synth_live_blocks() != 0)
        finding("mqs_malloc blocks the DLL has not freed");
    return 0;
}
