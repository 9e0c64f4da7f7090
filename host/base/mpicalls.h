/*
 * mpicalls.h - the MPI calls mqd knows, in one table (mpicalls.c): how
 * each waits, how it behaves, and where the MPI standard's C binding
 * takes the arguments the analysis reads.  The unwinder (target/) reads
 * a call's arguments by it, the analysis judges the call by it.
 */
#ifndef MQDH__MPICALLS_H
#define MQDH__MPICALLS_H

/*
 * How a call waits (analysis/waits*.c have what each kind waits for):
 *
 *   MPI_Waitall, MPI_Sendrecv      every pending operation is needed (AND)
 *   MPI_Recv, MPI_Send, MPI_Wait   one of them is (OR over the candidates;
 *                                  exact when there is one)
 *   MPI_Waitany, MPI_Waitsome      any one of them (OR)
 *   a collective                   every member of its communicator that is
 *                                  not in the same collective (AND)
 */
enum mqdh__call_kind {
    MQDH__CALL_NOT_MPI,
    MQDH__CALL_RETURNS,  /* MPI_Test, MPI_Iprobe, MPI_Comm_rank, ...: not blocked */
    MQDH__CALL_ONE_RECV, /* one receive */
    MQDH__CALL_ONE_SEND, /* one send */
    MQDH__CALL_ONE,      /* one request, either */
    MQDH__CALL_ALL,
    MQDH__CALL_ANY,
    MQDH__CALL_PROBE,    /* waits for a message the queues do not show */
    MQDH__CALL_COLLECTIVE,
    /*
     * MPI_Finalize: after it a process sends, receives and joins nothing
     * again, so a point-to-point wait on it can never be met; and it is
     * collective over MPI_COMM_WORLD (MPI-4.0 11.2.2: it returns once every
     * process of the world has called it), so it waits for every member
     * not in it yet.
     */
    MQDH__CALL_FINALIZE,
    MQDH__CALL_ABORT /* terminal too, and waits for nobody */
};

/* How a call behaves beyond its kind. */
enum {
    MQDH__MPI_SYNC = 1u << 0,     /* a send complete only once matched (MPI_Ssend) */
    MQDH__MPI_BUFFERED = 1u << 1, /* a send that returns once buffered (MPI_Bsend) */
    MQDH__MPI_MATCHED = 1u << 2,  /* receives a message matched already (MPI_Mrecv) */
    MQDH__MPI_BOTH = 1u << 3,     /* sends and receives (MPI_Sendrecv*) */
    MQDH__MPI_ROOTED = 1u << 4,   /* a root argument every member gives alike */
    MQDH__MPI_REQUESTS = 1u << 5  /* waits on the requests it is given (MPI_Wait*) */
};

/*
 * The arguments the host reads of a call, by index: source, dest, tag,
 * root, comm, and MPI_Wait*'s count and array of requests (the host's
 * own, read for the requests behind them).
 */
enum {
    MQDH__AT_SOURCE,
    MQDH__AT_DEST,
    MQDH__AT_TAG,
    MQDH__AT_ROOT,
    MQDH__AT_COMM,
    MQDH__AT_COUNT,
    MQDH__AT_REQUEST,
    MQDH__NARGS
};

struct mqdh__mpi_call {
    const char *name;
    enum mqdh__call_kind kind;
    unsigned flags;             /* MQDH__MPI_* */
    signed char at[MQDH__NARGS]; /* each argument's 0-based position; -1: none */
};

/* Call `name` ("MPI_Recv") in the table, or NULL: one mqd does not know
 * (MPI_Neighbor_* calls not listed are collectives all the same). */
const struct mqdh__mpi_call *mqdh__mpi_call(const char *name);

/* The kind of MPI call `call` (NULL: not in MPI; one not in the table
 * returns at once). */
enum mqdh__call_kind mqdh__call_kind(const char *call);

/* Whether call has all of flags (MQDH__MPI_*); 0 for NULL or a call not
 * in the table. */
int mqdh__call_is(const char *call, unsigned flags);

#endif
