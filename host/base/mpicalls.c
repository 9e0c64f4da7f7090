/*
 * mpicalls.c - the one table of the MPI calls mqd knows (mpicalls.h).
 *
 * Positions are those of the MPI standard's C bindings (MPI 4.0, section
 * 19 and the chapters' prototypes).  MPI_Sendrecv's sendtag and recvtag
 * are not "tag", as in MPICH's own DWARF (target/args.c reads parameters
 * by name).  A call with no position known (MPI_Mrecv takes a message
 * handle, MPI_Finalize nothing) is still judged by its kind.
 */
#include "base/mpicalls.h"

#include <stddef.h>
#include <string.h>

#define N -1
#define P2P(name, kind, flags, source, dest, tag, comm)                                            \
    {#name, MQDH__CALL_##kind, flags, {source, dest, tag, N, comm, N, N}}
#define COLL(name, flags, root, comm) {#name, MQDH__CALL_COLLECTIVE, flags, {N, N, N, root, comm, N, N}}
#define WAIT(name, kind, count, request)                                                           \
    {#name, MQDH__CALL_##kind, MQDH__MPI_REQUESTS, {N, N, N, N, N, count, request}}

static const struct mqdh__mpi_call calls[] = {
    P2P(MPI_Send, ONE_SEND, 0, N, 3, 4, 5),
    P2P(MPI_Ssend, ONE_SEND, MQDH__MPI_SYNC, N, 3, 4, 5),
    P2P(MPI_Rsend, ONE_SEND, 0, N, 3, 4, 5),
    P2P(MPI_Bsend, ONE_SEND, MQDH__MPI_BUFFERED, N, 3, 4, 5),
    P2P(MPI_Recv, ONE_RECV, 0, 3, N, 4, 5),
    P2P(MPI_Mrecv, ONE_RECV, MQDH__MPI_MATCHED, N, N, N, N),
    P2P(MPI_Sendrecv, ALL, MQDH__MPI_BOTH, 8, 3, N, 10),
    P2P(MPI_Sendrecv_replace, ALL, MQDH__MPI_BOTH, 5, 3, N, 7),
    P2P(MPI_Probe, PROBE, 0, 0, N, 1, 2),
    P2P(MPI_Mprobe, PROBE, 0, 0, N, 1, 2),
    WAIT(MPI_Wait, ONE, N, 0),
    WAIT(MPI_Waitall, ALL, 0, 1),
    WAIT(MPI_Waitany, ANY, 0, 1),
    WAIT(MPI_Waitsome, ANY, 0, 1),
    COLL(MPI_Barrier, 0, N, 0),
    COLL(MPI_Bcast, MQDH__MPI_ROOTED, 3, 4),
    COLL(MPI_Reduce, MQDH__MPI_ROOTED, 5, 6),
    COLL(MPI_Gather, MQDH__MPI_ROOTED, 6, 7),
    COLL(MPI_Gatherv, MQDH__MPI_ROOTED, 7, 8),
    COLL(MPI_Scatter, MQDH__MPI_ROOTED, 6, 7),
    COLL(MPI_Scatterv, MQDH__MPI_ROOTED, 7, 8),
    COLL(MPI_Allreduce, 0, N, 5),
    COLL(MPI_Allgather, 0, N, 6),
    COLL(MPI_Allgatherv, 0, N, 7),
    COLL(MPI_Alltoall, 0, N, 6),
    COLL(MPI_Alltoallv, 0, N, 8),
    COLL(MPI_Alltoallw, 0, N, 8),
    COLL(MPI_Reduce_scatter, 0, N, 5),
    COLL(MPI_Reduce_scatter_block, 0, N, 5),
    COLL(MPI_Scan, 0, N, 5),
    COLL(MPI_Exscan, 0, N, 5),
    COLL(MPI_Neighbor_allgather, 0, N, 6),
    COLL(MPI_Neighbor_allgatherv, 0, N, 7),
    COLL(MPI_Neighbor_alltoall, 0, N, 6),
    COLL(MPI_Neighbor_alltoallv, 0, N, 8),
    COLL(MPI_Neighbor_alltoallw, 0, N, 8),
    COLL(MPI_Comm_dup, 0, N, 0),
    COLL(MPI_Comm_dup_with_info, 0, N, 0),
    COLL(MPI_Comm_split, 0, N, 0),
    COLL(MPI_Comm_split_type, 0, N, 0),
    COLL(MPI_Comm_create, 0, N, 0),
    COLL(MPI_Intercomm_create, 0, N, N),
    COLL(MPI_Intercomm_merge, 0, N, N),
    COLL(MPI_Win_fence, 0, N, N),
    {"MPI_Finalize", MQDH__CALL_FINALIZE, 0, {N, N, N, N, N, N, N}},
    {"MPI_Abort", MQDH__CALL_ABORT, 0, {N, N, N, N, 0, N, N}},
};

const struct mqdh__mpi_call *mqdh__mpi_call(const char *name)
{
    for (size_t i = 0; name && i < sizeof calls / sizeof calls[0]; i++)
        if (strcmp(name, calls[i].name) == 0)
            return &calls[i];
    return NULL;
}

enum mqdh__call_kind mqdh__call_kind(const char *call)
{
    if (!call)
        return MQDH__CALL_NOT_MPI;
    const struct mqdh__mpi_call *c = mqdh__mpi_call(call);
    if (c)
        return c->kind;
    if (strncmp(call, "MPI_Neighbor_", 13) == 0)
        return MQDH__CALL_COLLECTIVE;
    return MQDH__CALL_RETURNS;
}

int mqdh__call_is(const char *call, unsigned flags)
{
    const struct mqdh__mpi_call *c = mqdh__mpi_call(call);
    return c && (c->flags & flags) == flags;
}
