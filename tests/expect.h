/*
 * expect.h - read a sample's SAMPLE.expect: the queue state it promises.
 *
 * Format (samples/README.md): '#' starts a comment; lines are
 *   np N
 *   world W N                       (W >= 1: the W-th spawn's N processes)
 *   comm RANK|* NAME|- SIZE LOCAL_RANK [remote REMOTE_SIZE]
 *   op RANK COMM|- QUEUE STATUS PEER GPEER TAG BYTES [coll]
 *   where RANK|* CALL
 *   deadlock cycle|knot RANK,RANK,...   or   deadlock none
 *   behind RANK,RANK,...
 *   wait FROM TO recv|send|collective
 * with QUEUE one of send, recv, unexpected; STATUS pending, matched,
 * complete; PEER, GPEER and TAG a number or ANY.  A RANK (and a GPEER) is
 * "R" for rank R of the launched world and "W:R" for rank R of world W.
 */
#ifndef MQD_TESTS_EXPECT_H
#define MQD_TESTS_EXPECT_H

#define EXPECT_ANY (-1L)
#define EXPECT_ALL_RANKS (-1)

/* A process as a number: rank R of world W is W * EXPECT_WORLD + R. */
#define EXPECT_WORLD 4096
#define EXPECT_MAX_WORLDS 16

enum expect_queue { EXPECT_SEND, EXPECT_RECV, EXPECT_UNEXPECTED };

struct expect_comm {
    int rank; /* a process (EXPECT_WORLD); EXPECT_ALL_RANKS for '*' */
    char name[64]; /* "" for an unnamed user communicator ('-') */
    long size, local_rank;
    long remote_size; /* an intercommunicator's remote group; -1 if intra */
};

struct expect_op {
    int rank; /* a process (EXPECT_WORLD); gpeer too */
    char comm[64];
    enum expect_queue queue;
    int status; /* enum mqs_status; EXPECT_NOT_RECORDED: complete or pending */
    long peer, gpeer, tag, bytes; /* EXPECT_ANY for ANY */
    int coll; /* MPI's own traffic for a collective ("coll") */
};

/* An unexpected message at a rank past MPI_Finalize: "complete" or
 * "pending", or not there at all (expect_finalize_returns). */
#define EXPECT_NOT_RECORDED 3

/* The MPI call a rank is blocked in once the sample is in its state. */
#define EXPECT_MAX_ARGS 5

struct expect_where {
    int rank; /* EXPECT_ALL_RANKS for '*' */
    char call[64];
    /* Past MPI_Finalize: in no MPI call (call ""), its MPI finalized
     * (expect_finalize_returns). */
    int finalized;
    /* The call's arguments read from its frame: "source" 1, "comm"
     * MPI_COMM_WORLD (a communicator's name), ... */
    int nargs;
    char arg[EXPECT_MAX_ARGS][8];
    char value[EXPECT_MAX_ARGS][64];
};

/* One deadlock the analysis must report: its kind and its ranks ("0,1"). */
enum { EXPECT_END = 2 }; /* knot: an end (MQDH_DEADLOCK_END) */
struct expect_deadlock {
    int knot; /* 0 cycle, 1 knot, EXPECT_END end */
    char ranks[256];
};

/* One edge of a reported deadlock. */
struct expect_wait {
    int from, to;
    char kind[16];
};

struct expect {
    int np;                            /* world 0's processes */
    int nworlds;                       /* 1 + the spawned worlds */
    int world_size[EXPECT_MAX_WORLDS]; /* world_size[0] is np */
    int ncomms, nops, nwheres, ndeadlocks, nwaits;
    struct expect_comm *comms;
    struct expect_op *ops;
    struct expect_where *wheres;
    struct expect_deadlock *deadlocks; /* none with analysed set: none found */
    struct expect_wait *waits;
    int analysed;                      /* a deadlock line says what to find */
    char behind[256];                  /* "" if none */
};

/*
 * Parse path into *out.  Returns 0, or -1 with a message naming the file and
 * line in err[errlen].  *out belongs to the caller: expect_free() it.
 */
int expect_load(const char *path, struct expect *out, char *err, int errlen);
void expect_free(struct expect *e);
/*
 * For an MPI whose MPI_Finalize returns at once (MPICH 4.1 and later under
 * ch4): a rank e has in MPI_Finalize is instead past it, in no MPI call
 * with its MPI finalized; it waits for nobody (its waits go), and a
 * deadlock it is in becomes an end: those ranks and the ones with a wait
 * on them, the others of it behind it.  A complete unexpected message at
 * such a rank may show as pending: MPI_Finalize has destroyed the pool of
 * the request parts that record its arrival (4.2.3 ch4: MPIDIG_am_finalize,
 * mpidig_init.c:174).  It may also be missing: a message that arrives after
 * MPI_Finalize has returned is never taken in (and one taken in before
 * makes 5.0's MPI_Finalize fail: MPIR_Comm_delete_internal, "being freed
 * has 1 unmatched message(s)"), so whether it is there is a race.
 */
void expect_finalize_returns(struct expect *e);

/* The same for sample name: $MQD_SAMPLES_SRC/NAME.expect (default
 * samples/). */
int expect_load_sample(const char *name, struct expect *out, char *err, int errlen);

/* All the job's processes: np plus every spawned world's. */
int expect_nprocs(const struct expect *e);

/* The n-th process of the job (0 <= n < expect_nprocs), world by world. */
int expect_process(const struct expect *e, int n);

/* A process as a file writes it, "R" or "W:R", into buf[len]; buf. */
const char *expect_process_text(int key, char *buf, int len);

#endif
