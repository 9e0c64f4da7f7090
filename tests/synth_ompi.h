/*
 * synth_ompi.h - a synthetic Open MPI target (pml ob1) for testing
 * libmqd_ompi.so without a process, over tests/synth.c's address space,
 * symbols, types and debugger: Open MPI's structures with their fields in
 * another order than Open MPI's (the DLL must take every offset from the
 * debugger), recording what Open MPI 4.1 records (ompi_defs/ompi_defs.h):
 * the communicator table, groups of process pointers (or sentinels),
 * ob1's per-communicator wild and per-peer specific receive lists and
 * unexpected fragments, and the send requests in the PML's free list.
 */
#ifndef MQD_TESTS_SYNTH_OMPI_H
#define MQD_TESTS_SYNTH_OMPI_H

#include "tests/synth.h"

/* This process is vpid `rank` of job SYNTH_OMPI_JOB (or the job given);
 * a member -(v + 1) is vpid v of the other of the two (a spawned or
 * connected job's). */
#define SYNTH_OMPI_JOB 0x5a5a0001u
#define SYNTH_OMPI_OTHER_JOB 0x5a5a0002u

/* A target of rank `rank` whose MPI_Init chose pml `pml` ("ob1", "ucx"),
 * with MPI_COMM_WORLD (cid 0, size world_size), MPI_COMM_SELF (1) and
 * MPI_COMM_NULL (2) in the table. */
struct synth *synth_ompi_new(int big_endian, int ptr_size, const char *pml, int rank,
                             int world_size);
struct synth *synth_ompi_new_in(int big_endian, int ptr_size, const char *pml, unsigned job,
                                int rank, int world_size);
/* Every PML's component in the process (a build with them in libmpi),
 * not only the selected one's plugin. */
void synth_ompi_pmls_built_in(struct synth *s);
/* Members of groups made from now on other than this process are
 * sentinels (ompi/proc/proc.h: not made yet), not ompi_proc_t pointers. */
void synth_ompi_sentinels(struct synth *s, int on);
/* ompi_mpi_state (ompi/runtime/mpiruntime.h: 2 initialized, 3 finalizing). */
void synth_ompi_state(struct synth *s, int state);

/* A communicator in the table (the next slot), this process at rank in
 * its members (world ranks; -(v + 1): the other job's v); name NULL:
 * unnamed (no NAMEISSET, Open MPI's own name in c_name). */
uint64_t synth_ompi_comm(struct synth *s, unsigned cid, const char *name, int rank, int size,
                         const int *members);
/* An intercommunicator and, before it, its local communicator (MPI's own,
 * c_local_comm) of cid local_cid. */
uint64_t synth_ompi_intercomm(struct synth *s, unsigned cid, unsigned local_cid,
                              const char *name, int rank, int lsize, const int *local,
                              int rsize, const int *remote);
/* The communicator of cid (abort if none). */
uint64_t synth_ompi_comm_of(struct synth *s, unsigned cid);
/* Empty slot i of the table (a freed communicator's). */
void synth_ompi_free_slot(struct synth *s, int i);

/* A datatype of that name ("" unnamed) and size. */
uint64_t synth_ompi_datatype(struct synth *s, const char *name, long size);

/* A posted receive on comm (peer -1: MPI_ANY_SOURCE, in the wild list)
 * with ob1's sequence seq; probe: an MPI_Probe's request instead. */
uint64_t synth_ompi_recv(struct synth *s, uint64_t comm, int peer, int tag, long count,
                         uint64_t datatype, uint64_t seq, int probe);
/* An unexpected fragment from src on comm: hdr_type 0x41 MATCH (here
 * bytes of data), 0x42 RNDV (here of msg_length), 0x43 RGET. */
uint64_t synth_ompi_frag(struct synth *s, uint64_t comm, int src, int tag, int hdr_type,
                         long here, long msg_length, unsigned seq);
/* A send request in the PML's free list (element `element`, else the
 * next free one): state (2 active), complete (its req_complete: 0
 * pending, 1 complete, or a waiter's address), mode (pml_constants.h: 0
 * synchronous, 4 standard), bytes its packed size. */
struct synth_ompi_send {
    uint64_t comm;
    int peer, tag;
    long count;
    uint64_t datatype;
    long bytes;
    int mode, state, persistent, element;
    uint64_t complete, seq;
};
uint64_t synth_ompi_send(struct synth *s, const struct synth_ompi_send *a);
/* The free list's element `index` (its allocation chunks as Open MPI
 * makes them: 4, then 8 each). */
uint64_t synth_ompi_free_element(struct synth *s, int index);

#endif
