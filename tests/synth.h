/*
 * synth.h - a synthetic MPICH target for testing the debug DLL without a
 * process: a fake address space of either byte order and pointer width,
 * its own symbol and type tables, MPICH-shaped structures built in it,
 * and a debugger's callbacks over all that (with mqs_malloc failures on
 * demand and a count of what the DLL has not freed).
 */
#ifndef MQD_TESTS_SYNTH_H
#define MQD_TESTS_SYNTH_H

#define FOR_MPI2 1
#include "mpi_interface.h"

#include <stdint.h>

struct synth;

/*
 * The MPICH generations (mpich_defs/mpich_defs.h), each recording what the
 * real library records:
 *   SYNTH_CH3_402   4.0.2 ch3: ch3's own request lists, MPIR_Sendq.
 *   SYNTH_DEBUGQ    4.0.3-4.3 ch4: flat MPIR_Debugq lists, sends and posted
 *                   receives under the plain receive context, unexpected
 *                   messages under the wire context with cc 1 and their
 *                   size in the status; no groups (made lazily), the
 *                   members in ch4's rank maps.
 *   SYNTH_DEBUGQ_5  5.0 ch4: the same lists, int contexts (no
 *                   MPIR_Context_id_t), MPIR_Pmap groups naming worlds.
 *   SYNTH_CH3_DQ    4.0.3-4.3 ch3: receives in ch3's own lists only, sends
 *                   in the debug queue under the plain context (the wire
 *                   context in the request's match), no groups.
 *   SYNTH_CH3_DQ_5  5.0 ch3: the same, with int contexts and MPIR_Pmap
 *                   groups (a 2-byte match context all the same).
 *   SYNTH_CH4_STOCK 4.0.2 ch4 without debugger support (Debian's ch4:ucx):
 *                   no communicator list, no send queue; MPIDIG's posted
 *                   and unexpected lists under MPIDI_global's VCIs, the
 *                   communicators in their object pool (MPIR_Comm_mem, the
 *                   world and self as MPIR_Process's builtins), the
 *                   requests in theirs (MPIR_Request_mem), the pending
 *                   schedules on all_schedules.  Its globals are named
 *                   (the library's debug symbols found).
 *   SYNTH_CH4_STOCK_5 5.0.1 ch4 (ch4:ofi) built the same way: the same,
 *                   with 5.0's contexts, groups and worlds, a receive's
 *                   source and tag in its status (no u.recv.source or
 *                   u.recv.tag), the request kinds 4.1 renumbered, and
 *                   n_total_vcis VCIs.
 * Every generation but 4.0.2 ch3 names its device in MPII_Version_device.
 */
enum synth_gen { SYNTH_CH3_402, SYNTH_DEBUGQ, SYNTH_DEBUGQ_5, SYNTH_CH3_DQ, SYNTH_CH3_DQ_5,
                 SYNTH_CH4_STOCK, SYNTH_CH4_STOCK_5 };

/* An intercommunicator's send context (the remote side's receive
 * context) in a synthetic target, for one made with receive context ctx. */
#define SYNTH_INTER_SEND(ctx) ((unsigned)(ctx) + 0x1000u)

/* A target: big_endian or not, pointers of ptr_size (4 or 8) bytes. */
struct synth *synth_new_gen(int big_endian, int ptr_size, enum synth_gen gen);
struct synth *synth_new(int big_endian, int ptr_size); /* SYNTH_CH3_402 */
void synth_free(struct synth *s);
/* This process's rank in its world (MPIR_Process.rank; 1 unless set), and
 * the global rank the debugger's MPI-1 callback gives (0 unless set). */
void synth_world_rank(struct synth *s, int rank);
/* 4.x: communicators built afterwards have groups, as MPICH makes them
 * lazily (MPI_Comm_group, a collective); 4.x ch4's hold lupids. */
void synth_made_groups(struct synth *s);

/*
 * Another MPI's shapes (tests/synth_ompi.c): a target with no type or
 * symbol yet, and its types built field by field, each field aligned
 * naturally (at most 8); an alias names a field at another's offset plus
 * extra (a union's members); synth_type_end rounds the size up to 8, or
 * sets size if it is > 0.
 */
struct synth *synth_new_blank(int big_endian, int ptr_size);
int synth_ptr_size(const struct synth *s);
void synth_type_begin(struct synth *s, const char *name);
void synth_type_field(struct synth *s, const char *field, int size);
void synth_type_alias(struct synth *s, const char *field, const char *of, int extra);
void synth_type_end(struct synth *s, int size);

/* Target memory: allocate (zeroed) and store integers in target order. */
uint64_t synth_alloc(struct synth *s, int size);
void synth_put(struct synth *s, uint64_t addr, uint64_t value, int size);
void synth_put_bytes(struct synth *s, uint64_t addr, const void *bytes, int n);
/* A field of a synthetic type: its offset (tests fail if unknown). */
int synth_off(struct synth *s, const char *type, const char *field);
int synth_sizeof(struct synth *s, const char *type);
void synth_symbol(struct synth *s, const char *name, uint64_t addr);
/* A symbol's address (0 if there is none). */
uint64_t synth_symbol_at(struct synth *s, const char *name);
/* s's process has owner's image, as a debugger gives processes of one
 * program: its symbols are owner's (build both alike), its memory its own. */
void synth_share_image(struct synth *s, struct synth *owner);
/* Forget symbol name (a build that does not have it). */
void synth_drop_symbol(struct synth *s, const char *name);
/* The pointer stored at a symbol, in target order; -1 if no such symbol. */
int synth_read_ptr(struct synth *s, const char *symbol, uint64_t *value);
/* Forget a type (its field lookups then fail), as a build without it. */
void synth_drop_type(struct synth *s, const char *type);
/* Forget one field of a type (a build without it). */
void synth_drop_field(struct synth *s, const char *type, const char *field);
/* Forget every type: a libmpi.so stripped of its DWARF (symbols stay). */
void synth_drop_all_types(struct synth *s);
/* Count the debugger's type lookups of names holding part (NULL: stop),
 * and how many there were so far. */
void synth_watch_types(struct synth *s, const char *part);
int synth_types_watched(const struct synth *s);
/* What the DLL last said through mqs_dprints ("" if nothing yet). */
const char *synth_last_dprints(void);

/* MPICH shapes, in the target's generation.  Returns addresses in the
 * target (of requests, for the queue functions).  A member's world rank
 * -(r + 1) is rank r of the other world (synth_foreign_group). */
uint64_t synth_comm(struct synth *s, unsigned handle, unsigned ctx, int size, int rank,
                    const char *name, const int *world_ranks);
uint64_t synth_intercomm(struct synth *s, unsigned handle, unsigned ctx, int lsize, int rank,
                         int rsize, const char *name, const int *remote_world);
/* This process's world: its name and rank, where the generation keeps
 * them (ch3's process group in MPIDI_Process, 5.0's MPIR_Worlds[0], ch3's
 * and 4.x ch4's PMI name in pmi_kvs_name), and the other world's name
 * (ch3's group of intercommunicators' remote sides built afterwards,
 * 5.0's MPIR_Worlds[1]; 4.x ch4 keeps none).  ch3 VCs built before either
 * have no group. */
void synth_process_group(struct synth *s, const char *id, int rank);
void synth_foreign_group(struct synth *s, const char *id);
/* A process in MPI_Finalize as MPICH 4.0.2 ch3 leaves it: MPIR_debug_state
 * (created on first use) at state, this process's group of size world_size
 * (world_size < 0: the group is gone, MPIDI_Process.my_pg NULL).  Its
 * communicator list is the caller's (empty, once MPICH has freed them). */
void synth_finalizing(struct synth *s, int state, int world_size);
/* The debugger's MPI-2 job: s is the process of that identity. */
void synth_join_job(struct synth *s, int identity);
void synth_leave_jobs(void);
/* Link comms (newest first, as MPICH does) into MPIR_All_communicators. */
void synth_comm_list(struct synth *s, const uint64_t *comms, int n, int seq);
/* A request in the posted (unexpected=0) or unexpected (1) list. */
uint64_t synth_recv(struct synth *s, unsigned ctx, int rank, int tag, long count,
                    unsigned datatype, int cc, long recv_sz);
void synth_recv_list(struct synth *s, int unexpected, const uint64_t *reqs, int n);
/* A derived datatype of size bytes, in MPIR_Datatype_direct[index] (0-7):
 * its handle. */
unsigned synth_datatype(struct synth *s, int index, long size);
/* A send: MPIR_Sendq entries, given oldest first, linked newest first. */
uint64_t synth_send_req(struct synth *s, long count, unsigned datatype, int cc);
void synth_sendq(struct synth *s, const uint64_t *reqs, const int *ranks, const int *tags,
                 const unsigned *ctxs, int n);

/* SYNTH_CH4_STOCK: what the library keeps beyond the queues.  A
 * communicator's object freed (its reference count 0: MPICH keeps the
 * object and its handle in the pool); the program's handle of a request
 * (its pool, block and index); a send request's destination (the request
 * is in no queue); a nonblocking collective's request on communicator
 * comm with its schedule on the pending list under tag (its send to peer
 * done, its receive from peer not); ch4's VCIs. */
void synth_comm_free(struct synth *s, uint64_t comm);
/* In or past MPI_Finalize (world: MPI_COMM_WORLD's object): 4.0.2 as it
 * is once the world is freed and not yet forgotten; 5.0 as it is at the
 * end: the builtins forgotten, MPIR_world_model_state finalized, no VCIs
 * left. */
void synth_stock_finalized(struct synth *s, uint64_t world);
unsigned synth_request_handle(struct synth *s, uint64_t req);
void synth_send_dest(struct synth *s, uint64_t req, int dest);
/* A persistent send started (pending) on communicator comm (context ctx)
 * to dest with tag, in no queue: its envelope where ch4 keeps it
 * (MPIDI_PREQUEST; 5.0 keeps a context offset, not the context). */
uint64_t synth_persistent_send(struct synth *s, uint64_t comm, unsigned ctx, int dest, int tag);
uint64_t synth_nbc(struct synth *s, uint64_t comm, int tag, int peer, int done);
void synth_vcis(struct synth *s, int n);

/* The debugger's side. */
struct synth_host {
    mqs_basic_callbacks basic;
    mqs_image_callbacks image;
    mqs_process_callbacks process;
    mqs_job_callbacks job;
};
const struct synth_host *synth_callbacks(void);
mqs_image *synth_image(struct synth *s);
mqs_process *synth_process(struct synth *s);
/*
 * How the debugger's type lookup and type sizes behave (synth_callbacks'
 * tables; the tests build the short and NULL-member tables themselves).
 *   SYNTH_HOST_DWARF      finds a struct by tag and by typedef (mqdump)
 *   SYNTH_HOST_GDB        evaluates C type names as gdb does: typedefs and
 *                         "struct TAG", never a bare tag; MPICH's
 *                         MPIDI_VC and MPIDI_VCRT are tags (typedefs X_t)
 *   SYNTH_HOST_OTHER_SIZES reports the type sizes of a target of the other
 *                         pointer width
 */
enum synth_host_kind { SYNTH_HOST_DWARF, SYNTH_HOST_GDB, SYNTH_HOST_OTHER_SIZES };
void synth_host_kind(enum synth_host_kind k);

/* mqs_malloc: fail the n-th call from now (0: never); calls and leaks. */
void synth_fail_malloc_at(long n);
long synth_malloc_calls(void);
long synth_live_blocks(void);

/*
 * For fuzzing (tests/fuzz/fuzz_dll.c): the target's memory in use, to be
 * overwritten in place (base: its first address); a type's field offset
 * (field == the type's field count: its size) or a symbol's address set
 * to anything.  which and field are taken modulo what there is.
 */
unsigned char *synth_memory(struct synth *s, uint64_t *base, uint64_t *len);
/* From now on (seed != 0) one byte of s's memory changes after every
 * read the DLL makes, as in a process that runs on while it is read. */
void synth_unsteady(struct synth *s, uint32_t seed);
/* Targets made from now on have bytes of memory (1 MiB unless set). */
void synth_memory_size(uint64_t bytes);
void synth_patch_type(struct synth *s, unsigned which, unsigned field, int value);
void synth_patch_symbol(struct synth *s, unsigned which, uint64_t addr);

#endif
