/*
 * mpich_defs.h - what mqd knows of MPICH's internals, per generation.
 *
 * Symbols, and the struct fields the DLL reads, written as paths through
 * the debug information: "T1:f1/T2:f2" is field f1 of type T1, which has
 * type T2, whose field f2 is wanted; the offset is the sum.  Each step is
 * one mqs_find_type + mqs_field_offset, as any debugger offers them (no
 * debugger-specific dotted names).
 *
 * Generations (chosen per process from MPII_Version_device, the symbols
 * and the types the debug information has; docs/DLL.md "MPICH generations"):
 *   MPICH_GEN_CH3_SENDQ   MPICH up to 4.0.2 with the ch3 device:
 *                      communicators on MPIR_All_communicators, sends on
 *                      MPIR_Sendq_head (MPIR_Sendq), receives on ch3's own
 *                      posted and unexpected request lists, whose heads are
 *                      reached through MPID_Recvq_{posted,unexpected}_head_ptr.
 *   MPICH_GEN_CH3_DEBUGQ  ch3 from 4.0.3 on (5.0 included): MPIR_Sendq_head
 *                      is a list of MPIR_Debugq entries, but a blocking
 *                      MPI_Recv is never entered in MPIR_Recvq_head (ch3's
 *                      mpid_recv.c does so only inside MPL_DBG_STMT):
 *                      receives and unexpected messages from ch3's own lists
 *                      as in 4.0.2, sends from the debug queue, ranks
 *                      through the connection tables.
 *   MPICH_GEN_CH4_4X      4.0.3 to 4.3 with ch4: three flat lists of
 *                      MPIR_Debugq {req, tag, rank, context_id, buf, count,
 *                      next, prev}, newest first, on MPIR_Sendq_head,
 *                      MPIR_Recvq_head and MPIR_Unexpq_head; groups with an
 *                      lrank_to_lpid table, made lazily (often NULL).
 *   MPICH_GEN_CH4_STOCK   4.0.2 with ch4 as distributions build it (no
 *                      --enable-debuginfo: no MPIR_All_communicators, no
 *                      MPIR_Sendq, no MPID_Recvq_* pointers): MPIDIG's own
 *                      posted and unexpected lists, read from MPIDI_global
 *                      (src/mpid/ch4/src/ch4_types.h:278-307, per_vci[i].
 *                      posted_list and unexp_list, which mpidig_recv.h:277
 *                      and mpidig_pt2pt_callbacks.c:390 fill), the
 *                      communicators from their object pools (MPIR_Comm_mem,
 *                      src/mpi/comm/commutil.c:24, and MPIR_Process's
 *                      comm_world and comm_self, builtin_comms.c:20,51),
 *                      no record of sends at all.  Its globals are hidden
 *                      symbols: found by name where the library's debug
 *                      symbols are found, else from the known build
 *                      (stock_builds.h).
 *   MPICH_GEN_CH4_STOCK_5X 5.0 with ch4 built the same way: the same lists,
 *                      found the same way (its debug symbols needed: no
 *                      known build), but 5.0's groups, contexts and worlds
 *                      (as MPICH_GEN_CH4_5X below).  From 4.3 on, MPIDIG
 *                      matches a receive on its status.MPI_SOURCE and
 *                      MPI_TAG (mpidig_recvq.h:107-109, MPIDIG_prepare_recv_req
 *                      in mpidig_recv.h:19-21), where 4.0.2 to 4.2 kept them in
 *                      MPIDIG_REQUEST(req, u.recv): read where the DWARF
 *                      has them.
 *   MPICH_GEN_CH4_5X      5.0 with ch4: the same lists; contexts are plain
 *                      int (MPIR_Context_id_t is gone); groups carry an
 *                      MPIR_Pmap (an lpid table or offset/stride/blocksize),
 *                      an lpid being world index << 32 | world rank, with
 *                      the world's PMI namespace in MPIR_Worlds[index].
 * In the debug queues (4.0.3+) sends and posted receives carry the
 * communicator's plain receive context (src/mpi/debugger/dbginit.c,
 * MPII_Sendq_enqueue/MPII_Recvq_enqueue callers): an intercommunicator's
 * sends are found by its receive context, and the collective bit is only
 * on unexpected entries (the wire context).  ch3 keeps the collective
 * offset in each request's match context, which the ch3 generations read.
 */
#ifndef MQD_MPICH_DEFS_H
#define MQD_MPICH_DEFS_H

enum mpich_generation {
    MPICH_GEN_NONE,       /* no queues a debugger can read */
    MPICH_GEN_CH3_SENDQ,  /* ch3, sends in MPIR_Sendq (4.0.2 and older) */
    MPICH_GEN_CH3_DEBUGQ, /* ch3, sends in MPIR_Debugq (4.0.3 and later) */
    MPICH_GEN_CH4_4X,     /* ch4 4.0.3 to 4.3: debug queues, lpid groups, rank maps */
    MPICH_GEN_CH4_5X,     /* ch4 5.0: debug queues, MPIR_Pmap groups, worlds */
    MPICH_GEN_CH4_MPIDIG, /* ch4 4.0.2: MPIR_Sendq, MPIDIG's own receive lists */
    MPICH_GEN_CH4_STOCK,  /* ch4 4.x without debugger support: MPIDIG's lists */
    MPICH_GEN_CH4_STOCK_5X /* ch4 5.0 without debugger support: MPIDIG's lists */
};

/* Symbols. */
#define MPICH_SYM_COMM_LIST "MPIR_All_communicators"
#define MPICH_SYM_SENDQ "MPIR_Sendq_head"
#define MPICH_SYM_POSTED_PTR "MPID_Recvq_posted_head_ptr"         /* ch3 */
#define MPICH_SYM_UNEXPECTED_PTR "MPID_Recvq_unexpected_head_ptr" /* ch3 */
#define MPICH_SYM_RECVQ "MPIR_Recvq_head"                          /* 4.0.3+ */
#define MPICH_SYM_UNEXPQ "MPIR_Unexpq_head"                        /* 4.0.3+ */
#define MPICH_SYM_DATATYPE_DIRECT "MPIR_Datatype_direct"
#define MPICH_SYM_VERSION "MPII_Version_string"
#define MPICH_SYM_DEVICE "MPII_Version_device"
#define MPICH_SYM_CONFIGURE "MPII_Version_configure"
#define MPICH_SYM_CH3_PROCESS "MPIDI_Process" /* ch3: this process's group */
#define MPICH_SYM_DEBUG_STATE "MPIR_debug_state" /* src/mpi/debugger/dbginit.c */
#define MPICH_SYM_WORLDS "MPIR_Worlds"            /* 5.0: the worlds lpids name */
#define MPICH_SYM_PROCESS "MPIR_Process"          /* 5.0: this process's world rank */
/* 4.x ch4: the PMI name of this process's world, static in src/util/
 * mpir_pmi.c (a local symbol): a char * under PMI-1 and PMI-2, the start of
 * a pmix_proc_t (its nspace) under PMIx. */
#define MPICH_SYM_PMI1_KVS "pmi_kvs_name"
#define MPICH_SYM_PMI2_JOBID "pmi_jobid"
#define MPICH_SYM_PMIX_PROC "pmix_proc"
#define MPICH_SPAWN_BREAKPOINT "MPIR_Breakpoint"
/* Globals every build has, exported or not (hidden in a build without
 * debugger support; MPICH_GEN_CH4_STOCK and the requests behind handles):
 * ch4's device state (src/mpid/ch4/src/ch4_globals.c), the object pools of
 * communicators, requests and datatypes (src/mpi/comm/commutil.c:24,
 * src/mpi/request/mpir_request.c, src/mpi/datatype/typeutil.c), and the
 * pending nonblocking collectives' schedules (4.0.2: a static of
 * src/mpid/common/sched/mpidu_sched.c:138). */
#define MPICH_SYM_CH4_GLOBAL "MPIDI_global"
#define MPICH_SYM_COMM_MEM "MPIR_Comm_mem"
#define MPICH_SYM_REQUEST_MEM "MPIR_Request_mem"
#define MPICH_SYM_DATATYPE_MEM "MPIR_Datatype_mem"
#define MPICH_SYM_SCHEDULES "all_schedules"
/* Whether MPI_Finalize has ended (src/mpi/init/mpir_init.c, an atomic int:
 * MPICH_WORLD_MODEL_FINALIZED, src/mpi/init/mpi_init.h:81-83, 4.0 to 5.0),
 * where a build without debugger support has no MPIR_debug_state. */
#define MPICH_SYM_WORLD_MODEL "MPIR_world_model_state"
#define MPICH_WORLD_MODEL_FINALIZED 2

/*
 * Fields: X(ID, CLASS, PATH).  A generation needs the fields and sizes of
 * its classes (dll/mpich_layout.c, gen_needs): COMMON every generation's;
 * CH3 ch3's device (connection tables, requests' match and user fields);
 * DATATYPES the datatype objects (MPIR_Datatype), which only a derived
 * datatype's size needs, looked up when one is read (mpich__late: its
 * DWARF is past libmpi's first units); VCS ch3's connection tables and
 * connections (MPIDI_VCRT, MPIDI_VC),
 * which only a communicator other than the world and self needs, looked
 * up when one does (mpich__late: their DWARF is in ch3's units, the last
 * of libmpi's); SENDQ the MPIR_Sendq of 4.0.2; DEBUGQ the MPIR_Debugq of
 * 4.0.3+;
 * GROUP_LPIDS 4.x groups (lrank_to_lpid); GROUP_PMAP 5.0 groups
 * (MPIR_Pmap); CH4_RANK_MAPS ch4's rank maps (MPIR_Comm.dev.ch4.map,
 * optional as a whole: 4.x ch4 makes groups lazily, and the map is how a
 * communicator without one names its members); CH4_REQ, optional,
 * where ch4's requests keep what the debug queues do not (each request's
 * datatype: the active-message part MPIDIG_REQUEST for shared memory and
 * active messages, the OFI part for the netmod's own sends and receives,
 * dev.type telling which holds it; an unexpected message's progress, in
 * its MPIDIG_req_ext_t); MPIDIG 4.0.2 ch4's receive lists, MPIDIG's own
 * (src/mpid/ch4/src/mpidig_recvq.c exports MPID_Recvq_posted_head_ptr and
 * MPID_Recvq_unexpected_head_ptr as &MPIDI_global.per_vci[0].posted_list
 * and .unexp_list: requests linked through MPIR_Request.next by
 * MPIDIG_enqueue_request's DL_APPEND, matched on MPIDIG_REQUEST(req,
 * u.recv.context_id) and, to 4.2, MPIDIG_URECV's u.recv.source and tag;
 * 4.3 on, on the request's status, an OPTIONAL field).  A field a process's
 * generation needs and the debug information lacks stops the DLL with its
 * name.  The rest are optional: CH3_OPTIONAL ch3's MPIDI_Process (its
 * process group and rank there, which name processes across jobs for
 * MPI-2 identities: without them, peers outside MPI_COMM_WORLD are -1)
 * and its match parts; PGS the process groups' own fields, looked up
 * when a process reads another group, has no PMI name to name its own by,
 * or has only its own left by MPI_Finalize (mpich__late: MPIDI_PG_t's
 * DWARF is in ch3's units, deep in libmpi; a process's own group's id is
 * its PMI name, mpich_keys.c);
 * WORLDS 5.0's worlds (MPIR_World); OPTIONAL any generation's (statuses,
 * MPI_TAG_UB and the like).  COMM_LIST is the communicator list of a
 * build with debugger support (src/mpi/debugger/dbginit.c:490, compiled
 * only with it).  MPIR_Comm_list's and MPIR_Sendq's fields (dbginit.c),
 * MPIDU_Sched_state's head and MPIDI_Process_t's two fields, the DLL
 * places from their declarations instead of asking the debugger
 * (dll/mpich_layout.c, declared): their DWARF is deep in libmpi's units,
 * a walk of most of them to find.
 * STOCK what MPICH_GEN_CH4_STOCK reads instead of the debugger's lists: ch4's
 * per-VCI list heads (ch4_types.h:241-307), MPIR_Process's builtin
 * communicators (src/include/mpir_process.h:48-52) and a communicator's
 * reference count (an object in use has one, mpir_objects.h:422);
 * STOCK_OPTIONAL what of it 4.1 on adds (n_total_vcis), looked up only
 * for a stock process (OPTIONAL's are every process's: a ch3 library has
 * no MPIDI_CH4_Global_t, and asking costs a walk of every file's DWARF).
 * POOLS the object allocators (src/include/mpir_objects.h:437-459):
 * STOCK's communicators are found in theirs, every generation's requests
 * behind the program's handles in theirs.
 * REQUESTS, optional in every generation, what the request behind a
 * program's handle says beyond the queues' fields (mqd_get_request_info):
 * its communicator (mpir_request.h:185), the tag a communicator's next
 * nonblocking collective will take (mpir_comm.h:200 next_sched_tag,
 * MPIDU_Sched_next_tag at mpidu_sched.c:164-165; mqd_get_comm_nbc) and
 * the head of the list of pending schedules.  SCHEDS, looked up only when
 * a process has a schedule on that list (mpich__late): a
 * nonblocking collective's schedule with its tag
 * (src/mpid/common/sched/mpidu_sched.h:119-131, on the list
 * all_schedules, mpidu_sched.c:138 and 588) and its entries
 * (mpidu_sched.h:22-118: each a send to dest or a receive from src, its
 * status; idx the first not yet complete).  CH4_REQUESTS, with REQUESTS
 * in ch4's generations: a ch4 persistent request's envelope
 * (src/mpid/ch4/include/mpidpre.h:212-220) and an MPIDIG send's
 * destination (mpidpre.h:193-195).
 * The DLL looks up only the classes of the generation the symbols
 * announce: a type no file defines costs a debugger that indexes DWARF a
 * walk of every file's (libc's debug file included).
 * MPIR_Pmap's union has no type name to look up: map (and stride.offset)
 * are at its start, stride.stride 8 bytes in, stride.blocksize 16 (5.0.x
 * has it when MPIR_Pmap is big enough to hold it).
 */
#define MPICH_FIELDS(X)                                                                       \
    X(COMML_SEQ, COMM_LIST, "MPIR_Comm_list:sequence_number")                                 \
    X(COMML_HEAD, COMM_LIST, "MPIR_Comm_list:head")                                           \
    X(COMM_HANDLE, COMMON, "MPIR_Comm:handle")                                                \
    X(COMM_CTX, COMMON, "MPIR_Comm:context_id")                                               \
    X(COMM_RCTX, COMMON, "MPIR_Comm:recvcontext_id")                                          \
    X(COMM_RSIZE, COMMON, "MPIR_Comm:remote_size")                                            \
    X(COMM_RANK, COMMON, "MPIR_Comm:rank")                                                    \
    X(COMM_LSIZE, COMMON, "MPIR_Comm:local_size")                                             \
    X(COMM_KIND, COMMON, "MPIR_Comm:comm_kind")                                               \
    X(COMM_NAME, COMMON, "MPIR_Comm:name")                                                    \
    X(COMM_NEXT, COMM_LIST, "MPIR_Comm:comm_next")                                            \
    X(COMM_LGROUP, COMMON, "MPIR_Comm:local_group")                                           \
    X(COMM_RGROUP, COMMON, "MPIR_Comm:remote_group")                                          \
    X(COMM_VCRT, CH3, "MPIR_Comm:dev/MPIDI_CH3I_comm_t:vcrt")                                 \
    X(COMM_LVCRT, CH3, "MPIR_Comm:dev/MPIDI_CH3I_comm_t:local_vcrt")                          \
    X(VCRT_SIZE, VCS, "MPIDI_VCRT:size")                                                      \
    X(VCRT_TABLE, VCS, "MPIDI_VCRT:vcr_table")                                                \
    X(VC_LPID, VCS, "MPIDI_VC:lpid")                                                          \
    X(VC_PG, VCS, "MPIDI_VC:pg")                                                              \
    X(VC_PG_RANK, VCS, "MPIDI_VC:pg_rank")                                                    \
    X(PG_ID, PGS, "MPIDI_PG_t:id")                                                            \
    X(PG_SIZE, PGS, "MPIDI_PG_t:size")                                                        \
    X(PROC_MY_PG, CH3_OPTIONAL, "MPIDI_Process_t:my_pg")                                      \
    X(PROC_MY_PG_RANK, CH3_OPTIONAL, "MPIDI_Process_t:my_pg_rank")                            \
    X(GROUP_SIZE, COMMON, "MPIR_Group:size")                                                  \
    X(GROUP_MAP, GROUP_LPIDS, "MPIR_Group:lrank_to_lpid")                                     \
    X(PMAP_LPID, GROUP_LPIDS, "MPII_Group_pmap_t:lpid")                                       \
    X(GROUP_PMAP, GROUP_PMAP, "MPIR_Group:pmap")                                              \
    X(PMAPS_USE_MAP, GROUP_PMAP, "MPIR_Pmap:use_map")                                         \
    X(PMAPS_U, GROUP_PMAP, "MPIR_Pmap:u")                                                     \
    X(COMM_MAP, CH4_RANK_MAPS, "MPIR_Comm:dev/MPIDI_Devcomm_t:ch4.map")                       \
    X(COMM_LMAP, CH4_RANK_MAPS, "MPIR_Comm:dev/MPIDI_Devcomm_t:ch4.local_map")                \
    X(RMAP_MODE, CH4_RANK_MAPS, "MPIDI_rank_map_t:mode")                                      \
    X(RMAP_AVTID, CH4_RANK_MAPS, "MPIDI_rank_map_t:avtid")                                    \
    X(RMAP_SIZE, CH4_RANK_MAPS, "MPIDI_rank_map_t:size")                                      \
    X(RMAP_OFFSET, CH4_RANK_MAPS, "MPIDI_rank_map_t:reg.stride.offset")                       \
    X(RMAP_STRIDE, CH4_RANK_MAPS, "MPIDI_rank_map_t:reg.stride.stride")                       \
    X(RMAP_BLOCK, CH4_RANK_MAPS, "MPIDI_rank_map_t:reg.stride.blocksize")                     \
    X(RMAP_LPID, CH4_RANK_MAPS, "MPIDI_rank_map_t:irreg.lut.lpid")                            \
    X(RMAP_GPID, CH4_RANK_MAPS, "MPIDI_rank_map_t:irreg.mlut.gpid")                           \
    X(WORLD_NS, WORLDS, "MPIR_World:namespace")                                               \
    X(PROC_RANK, OPTIONAL, "MPIR_Process_t:rank")                                             \
    X(PROC_SIZE, OPTIONAL, "MPIR_Process_t:size")                                             \
    X(PROC_WORLD_ID, OPTIONAL, "MPIR_Process_t:world_id")                                     \
    X(PROC_TAG_UB, OPTIONAL, "MPIR_Process_t:attrs.tag_ub")                                   \
    X(MATCH_CTX, CH3_OPTIONAL, "MPIDI_Message_match_parts_t:context_id")                      \
    X(REQ_HANDLE, COMMON, "MPIR_Request:handle")                                              \
    X(REQ_KIND, COMMON, "MPIR_Request:kind")                                                  \
    X(REQ_CC, COMMON, "MPIR_Request:cc")                                                      \
    X(REQ_CC_PTR, OPTIONAL, "MPIR_Request:cc_ptr")                                            \
    X(REQ_ST_SOURCE, OPTIONAL, "MPIR_Request:status/MPI_Status:MPI_SOURCE")                   \
    X(REQ_ST_TAG, OPTIONAL, "MPIR_Request:status/MPI_Status:MPI_TAG")                         \
    X(REQ_ST_COUNT_LO, OPTIONAL, "MPIR_Request:status/MPI_Status:count_lo")                   \
    X(REQ_ST_COUNT_HI, OPTIONAL, "MPIR_Request:status/MPI_Status:count_hi_and_cancelled")     \
    X(REQ_NEXT, CH3, "MPIR_Request:next")                                                     \
    X(REQ_MATCH_TAG, CH3,                                                                     \
      "MPIR_Request:dev/MPIDI_Request:match/MPIDI_Message_match:parts/"                       \
      "MPIDI_Message_match_parts_t:tag")                                                      \
    X(REQ_MATCH_RANK, CH3,                                                                    \
      "MPIR_Request:dev/MPIDI_Request:match/MPIDI_Message_match:parts/"                       \
      "MPIDI_Message_match_parts_t:rank")                                                     \
    X(REQ_MATCH_CTX, CH3,                                                                     \
      "MPIR_Request:dev/MPIDI_Request:match/MPIDI_Message_match:parts/"                       \
      "MPIDI_Message_match_parts_t:context_id")                                               \
    X(REQ_USER_BUF, CH3, "MPIR_Request:dev/MPIDI_Request:user_buf")                           \
    X(REQ_USER_COUNT, CH3, "MPIR_Request:dev/MPIDI_Request:user_count")                       \
    X(REQ_DATATYPE, CH3, "MPIR_Request:dev/MPIDI_Request:datatype")                           \
    X(REQ_DATATYPE_PTR, CH3, "MPIR_Request:dev/MPIDI_Request:datatype_ptr")                   \
    X(REQ_RECV_SZ, CH3, "MPIR_Request:dev/MPIDI_Request:recv_data_sz")                        \
    X(REQ_TMPBUF, CH3, "MPIR_Request:dev/MPIDI_Request:tmpbuf")                               \
    X(SENDQ_REQ, SENDQ, "MPIR_Sendq:sreq")                                                    \
    X(SENDQ_TAG, SENDQ, "MPIR_Sendq:tag")                                                     \
    X(SENDQ_RANK, SENDQ, "MPIR_Sendq:rank")                                                   \
    X(SENDQ_CTX, SENDQ, "MPIR_Sendq:context_id")                                              \
    X(SENDQ_NEXT, SENDQ, "MPIR_Sendq:next")                                                   \
    X(DQ_REQ, DEBUGQ, "MPIR_Debugq:req")                                                      \
    X(DQ_TAG, DEBUGQ, "MPIR_Debugq:tag")                                                      \
    X(DQ_RANK, DEBUGQ, "MPIR_Debugq:rank")                                                    \
    X(DQ_CTX, DEBUGQ, "MPIR_Debugq:context_id")                                               \
    X(DQ_BUF, DEBUGQ, "MPIR_Debugq:buf")                                                      \
    X(DQ_COUNT, DEBUGQ, "MPIR_Debugq:count")                                                  \
    X(DQ_NEXT, DEBUGQ, "MPIR_Debugq:next")                                                    \
    X(DT_SIZE, DATATYPES, "MPIR_Datatype:size")                                               \
    X(REQ_DEV_TYPE, CH4_REQ, "MPIR_Request:dev/MPIDI_Devreq_t:type")                          \
    X(REQ_AM_EXT, CH4_REQ, "MPIR_Request:dev/MPIDI_Devreq_t:ch4.am/MPIDIG_req_t:req")         \
    X(REQ_AM_DATATYPE, CH4_REQ,                                                               \
      "MPIR_Request:dev/MPIDI_Devreq_t:ch4.am/MPIDIG_req_t:datatype")                         \
    X(REQ_PREQ_COUNT, CH4_REQ, "MPIR_Request:dev/MPIDI_Devreq_t:ch4.preq/MPIDI_prequest_t:count") \
    X(REQ_PREQ_DATATYPE, CH4_REQ,                                                             \
      "MPIR_Request:dev/MPIDI_Devreq_t:ch4.preq/MPIDI_prequest_t:datatype")                   \
    X(REQ_OFI_DATATYPE, CH4_REQ, "MPIR_Request:dev/MPIDI_Devreq_t:ch4.netmod.ofi.datatype")   \
    X(REQ_SELF_BUF, CH4_REQ, "MPIR_Request:dev/MPIDI_Devreq_t:ch4.self.buf")                  \
    X(REQ_SELF_COUNT, CH4_REQ, "MPIR_Request:dev/MPIDI_Devreq_t:ch4.self.count")              \
    X(REQ_SELF_DATATYPE, CH4_REQ, "MPIR_Request:dev/MPIDI_Devreq_t:ch4.self.datatype")        \
    X(REQ_OFI_AM_REQ, CH4_REQ, "MPIR_Request:dev/MPIDI_Devreq_t:ch4.netmod.ofi.am_req")       \
    X(REQ_OFI_DIRECT_DATATYPE, CH4_REQ,                                                       \
      "MPIR_Request:dev/MPIDI_Devreq_t:ch4.netmod.ofi.direct.datatype")                       \
    X(AMEXT_STATUS, CH4_REQ, "MPIDIG_req_ext_t:status")                                       \
    X(REQ_DL_NEXT, MPIDIG, "MPIR_Request:next")                                               \
    X(REQ_AM_COUNT, MPIDIG, "MPIR_Request:dev/MPIDI_Devreq_t:ch4.am/MPIDIG_req_t:count")      \
    X(REQ_AM_BUF, MPIDIG, "MPIR_Request:dev/MPIDI_Devreq_t:ch4.am/MPIDIG_req_t:buffer")       \
    X(REQ_AM_SOURCE, MPIDIG_URECV,                                                                \
      "MPIR_Request:dev/MPIDI_Devreq_t:ch4.am/MPIDIG_req_t:u.recv.source")                    \
    X(REQ_AM_TAG, MPIDIG_URECV,                                                               \
      "MPIR_Request:dev/MPIDI_Devreq_t:ch4.am/MPIDIG_req_t:u.recv.tag")                       \
    X(REQ_AM_CTX, MPIDIG_RECV,                                                                \
      "MPIR_Request:dev/MPIDI_Devreq_t:ch4.am/MPIDIG_req_t:u.recv.context_id")                \
    X(REQ_DEV_LOCAL, CH4_REQ, "MPIR_Request:dev/MPIDI_Devreq_t:is_local")                 \
    X(CH4G_NVCIS, STOCK, "MPIDI_CH4_Global_t:n_vcis")                                       \
    X(CH4G_PER_VCI, STOCK, "MPIDI_CH4_Global_t:per_vci")                                    \
    X(CH4G_NTOTAL_VCIS, STOCK_OPTIONAL, "MPIDI_CH4_Global_t:n_total_vcis")                   \
    X(VCI_POSTED, STOCK, "MPIDI_per_vci_t:posted_list")                                     \
    X(VCI_UNEXP, STOCK, "MPIDI_per_vci_t:unexp_list")                                       \
    X(OBJ_INDIRECT, POOLS, "MPIR_Object_alloc_t:indirect")                                  \
    X(OBJ_INDIRECT_SIZE, POOLS, "MPIR_Object_alloc_t:indirect_size")                        \
    X(OBJ_KIND, POOLS, "MPIR_Object_alloc_t:kind")                                          \
    X(OBJ_SIZE, POOLS, "MPIR_Object_alloc_t:size")                                          \
    X(OBJ_DIRECT, POOLS, "MPIR_Object_alloc_t:direct")                                      \
    X(OBJ_DIRECT_SIZE, POOLS, "MPIR_Object_alloc_t:direct_size")                            \
    X(PROC_COMM_WORLD, STOCK, "MPIR_Process_t:comm_world")                                  \
    X(PROC_COMM_SELF, STOCK, "MPIR_Process_t:comm_self")                                    \
    X(COMM_REFCOUNT, STOCK, "MPIR_Comm:ref_count")                                          \
    X(REQ_COMM, REQUESTS, "MPIR_Request:comm")                                              \
    X(COMM_NEXT_SCHED_TAG, REQUESTS, "MPIR_Comm:next_sched_tag")                            \
    X(REQ_REFCOUNT, REQUESTS, "MPIR_Request:ref_count")                                     \
    X(REQ_PREQ_RANK, CH4_REQUESTS,                                                            \
      "MPIR_Request:dev/MPIDI_Devreq_t:ch4.preq/MPIDI_prequest_t:rank")                      \
    X(REQ_PREQ_TAG, CH4_REQUESTS,                                                             \
      "MPIR_Request:dev/MPIDI_Devreq_t:ch4.preq/MPIDI_prequest_t:tag")                       \
    X(REQ_PREQ_CTX, CH4_REQUESTS,                                                             \
      "MPIR_Request:dev/MPIDI_Devreq_t:ch4.preq/MPIDI_prequest_t:context_id")                \
    X(REQ_AM_DEST, CH4_REQUESTS,                                                              \
      "MPIR_Request:dev/MPIDI_Devreq_t:ch4.am/MPIDIG_req_t:u.send.dest")                     \
    X(SCHEDS_HEAD, REQUESTS, "MPIDU_Sched_state:head")                                      \
    X(SCHED_TAG, SCHEDS, "MPIDU_Sched:tag")                                                   \
    X(SCHED_REQ, SCHEDS, "MPIDU_Sched:req")                                                   \
    X(SCHED_NEXT, SCHEDS, "MPIDU_Sched:next")                                                 \
    X(SCHED_ENTRIES, SCHEDS, "MPIDU_Sched:entries")                                           \
    X(SCHED_NENTRIES, SCHEDS, "MPIDU_Sched:num_entries")                                      \
    X(SCHED_IDX, SCHEDS, "MPIDU_Sched:idx")                                                   \
    X(SENTRY_TYPE, SCHEDS, "MPIDU_Sched_entry:type")                                          \
    X(SENTRY_STATUS, SCHEDS, "MPIDU_Sched_entry:status")                                      \
    X(SENTRY_RECV_SRC, SCHEDS, "MPIDU_Sched_entry:u/MPIDU_Sched_recv:src")                    \
    X(SENTRY_SEND_DEST, SCHEDS, "MPIDU_Sched_entry:u/MPIDU_Sched_send:dest")

/* Type sizes: X(ID, CLASS, TYPE).  MPIR_Context_id_t is gone in 5.0, where
 * contexts are int: without it, the target's int. */
#define MPICH_SIZES(X)                                                                        \
    X(SZ_CONTEXT_ID, OPTIONAL, "MPIR_Context_id_t")                                           \
    X(SZ_AINT, COMMON, "MPI_Aint")                                                            \
    X(SZ_DATATYPE, DATATYPES, "MPIR_Datatype")                                                \
    X(SZ_RANK, CH3, "MPIDI_Rank_t")                                                           \
    X(SZ_PMAP, GROUP_LPIDS, "MPII_Group_pmap_t")                                              \
    X(SZ_PMAPS, GROUP_PMAP, "MPIR_Pmap")                                                      \
    X(SZ_WORLD, WORLDS, "MPIR_World")                                                         \
    X(SZ_RMAP, CH4_RANK_MAPS, "MPIDI_rank_map_t")                                             \
    X(SZ_MATCH_PARTS, CH3_OPTIONAL, "MPIDI_Message_match_parts_t")                            \
    X(SZ_COMM, COMMON, "MPIR_Comm")                                                           \
    X(SZ_REQUEST, COMMON, "MPIR_Request")                                                     \
    X(SZ_SENDQ, SENDQ, "MPIR_Sendq")                                                          \
    X(SZ_DEBUGQ, DEBUGQ, "MPIR_Debugq")                                                       \
    X(SZ_PER_VCI, STOCK, "MPIDI_per_vci_t")                                                   \
    X(SZ_OBJ_ALLOC, POOLS, "MPIR_Object_alloc_t")                                             \
    X(SZ_SCHED_ENTRY, SCHEDS, "MPIDU_Sched_entry")                                            \
    X(SZ_SCHED, SCHEDS, "MPIDU_Sched")

/* ch4's rank maps (src/mpid/ch4/include/mpidpre.h, MPIDI_rank_map_mode;
 * each _INTRA mode reads as the mode before it): a rank r's lpid is r,
 * r + offset, r * stride + offset, r / blocksize * (stride - blocksize) +
 * r + offset, lut.lpid[r] or mlut.gpid[r]; lpids are world ranks in
 * address table (avtid) 0, the world this process started in.  The map
 * and local_map sit in an anonymous struct (dev.ch4): a debugger must
 * resolve the dotted member names, as mqd's host does. */
enum { MPICH_RMAP_DIRECT = 0, MPICH_RMAP_OFFSET = 2, MPICH_RMAP_STRIDE = 4,
       MPICH_RMAP_STRIDE_BLOCK = 6, MPICH_RMAP_LUT = 8, MPICH_RMAP_MLUT = 10,
       MPICH_RMAP_NONE = 11 };

/* 4.x ch4 groups (made lazily) hold "lupids": the address table's index
 * above the low 24 bits, the lpid in them (MPIDIU_LUPID_CREATE,
 * src/mpid/ch4/src/ch4r_proc.h: 7 avtid bits, a flag bit above). */
enum { MPICH_LUPID_LPID_BITS = 24, MPICH_LUPID_AVTID_MASK = 0x7f };

/* Context ids (src/include/mpir_contextid.h): bit 0 collective traffic,
 * bits 1-2 a node-level sub-communicator, bit 3 an intercommunicator's
 * local communicator; all MPI-internal. */
#define MPICH_CONTEXT_COLL_BIT 0x1u
#define MPICH_CONTEXT_SUBCOMM_MASK 0x6u
#define MPICH_CONTEXT_LOCALCOMM_MASK 0x8u

/* Handles (src/include/mpir_objects.h). */
#define MPICH_HANDLE_KIND(h) (((unsigned)(h) >> 30) & 3u)
#define MPICH_HANDLE_KIND_BUILTIN 1u
#define MPICH_HANDLE_KIND_DIRECT 2u
#define MPICH_HANDLE_INDEX(h) ((unsigned)(h) & 0x03ffffffu)
#define MPICH_BUILTIN_TYPE_SIZE(h) (((unsigned)(h) & 0x0000ff00u) >> 8)
#define MPICH_HANDLE_KIND_INDIRECT 3u
/* An indirect handle's block and index (mpir_objects.h:179-181), and the
 * objects each block of a pool holds (HANDLE_NUM_INDICES, :195). */
#define MPICH_HANDLE_BLOCK(h) (((unsigned)(h) & 0x03fff000u) >> 12)
#define MPICH_HANDLE_BLOCK_INDEX(h) ((unsigned)(h) & 0x00000fffu)
#define MPICH_HANDLE_NUM_INDICES 1024
/* Request handles (src/include/mpir_request.h:257-271): 64 pools (one per
 * VCI), each with blocks of 1024 requests; the pool in bits 20-25, the
 * block in 12-19, the index in 0-11; MPIR_Request_direct is pool 0's
 * direct block.  MPI_REQUEST_NULL (mpi.h) has no object. */
#define MPICH_REQUEST_POOL(h) (((unsigned)(h) & 0x03f00000u) >> 20)
#define MPICH_REQUEST_BLOCK(h) (((unsigned)(h) & 0x000ff000u) >> 12)
#define MPICH_REQUEST_INDEX(h) ((unsigned)(h) & 0x00000fffu)
#define MPICH_REQUEST_NUM_POOLS 64
#define MPICH_REQUEST_NUM_INDICES 1024
#define MPICH_REQUEST_NULL 0x2c000000u
/* ch4's VCIs (MPIDI_CH4_MAX_VCIS, src/mpid/ch4/include/mpidpre.h). */
#define MPICH_CH4_MAX_VCIS 64
#define MPICH_COMM_WORLD_HANDLE 0x44000000u
#define MPICH_COMM_SELF_HANDLE 0x44000001u
#define MPICH_ICOMM_WORLD_HANDLE 0x44000002u
/* MPIR_debug_state (src/include/mpir_debugger.h): MPII_Finalize sets it
 * through MPIR_Debugger_set_aborting(NULL) before MPID_Finalize. */
#define MPICH_DEBUG_ABORTING 2
#define MPICH_ANY_SOURCE (-2)
/* The first tag of a nonblocking collective's schedule (src/include/
 * mpir_tags.h: MPIR_FIRST_NBC_TAG, after the blocking collectives' and
 * hcoll's, the same from 4.0 to 5.0); MPIR_Sched_next_tag counts up from
 * it per communicator. */
#define MPICH_FIRST_NBC_TAG 287
/* A schedule entry's type and status (src/mpid/common/sched/mpidu_sched.h:
 * 28-40, 99-105): a send, a receive (and their pt2pt forms), and whether
 * it is complete. */
enum { MPICH_SCHED_SEND = 1, MPICH_SCHED_RECV = 2, MPICH_SCHED_PT2PT_SEND = 3,
       MPICH_SCHED_PT2PT_RECV = 4, MPICH_SCHED_COMPLETE = 2 };
/* The entries of a schedule the DLL looks at, at most. */
#define MPICH_SCHED_MAX_ENTRIES 4096
#define MPICH_ANY_TAG (-1)

/* ch4's requests (src/mpid/ch4/include/mpidpre.h, 4.1 and later):
 * dev.type MPIDI_REQ_TYPE_AM when the active-message part (MPIDIG_REQUEST)
 * is the request's (MPIDIG_request_init), else NONE (the netmod's or
 * ch4_self.c's own); an MPIDIG_req_ext_t's status bits: UNEXPECTED for an
 * unexpected message (create_unexp_rreq), BUSY while an eager one's data
 * is still coming, RTS for a rendezvous one (its data still at the sender;
 * MPIDIG_send_target_msg_cb, src/mpid/ch4/src/mpidig_pt2pt_callbacks.c). */
#define MPICH_CH4_REQ_TYPE_AM 1
#define MPICH_MPIDIG_REQ_BUSY 0x1u
#define MPICH_MPIDIG_REQ_UNEXPECTED 0x4u
#define MPICH_MPIDIG_REQ_RTS 0x80u
/* 5.0's internal datatypes (src/include/mpir_datatype.h, 0x4c8TCCDD):
 * MPICH swaps a predefined type for one, which keeps the predefined
 * type's index in DD (src/mpi/datatype/typeutil.c, MPIR_Internal_types)
 * and its size in CC; the predefined handle is 0x4c00CCDD.  DD 0: one of
 * MPICH's own, with no user type behind it. */
#define MPICH_DATATYPE_IS_INTERNAL(h) (((unsigned)(h) & 0x4c800000u) == 0x4c800000u)
#define MPICH_DATATYPE_PREDEFINED(h) (0x4c000000u | ((unsigned)(h) & 0xffffu))
/* A handle's object kind (bits 26-29, src/include/mpir_objects.h). */
#define MPICH_HANDLE_OBJECT(h) (((unsigned)(h) >> 26) & 0xfu)
#define MPICH_OBJECT_DATATYPE 0x3u
#define MPICH_OBJECT_COMM 0x1u
#define MPICH_OBJECT_REQUEST 0xbu

/* Request kinds (MPIR_Request_kind_t, src/include/mpir_request.h:58-72,
 * 4.0.2).  4.1 on inserts ENQUEUE (a request enqueued on a GPU stream) at
 * 9, moving GREQUEST, COLL, MPROBE and RMA one up (5.0.1 mpir_request.h:
 * 43-59); the DLL reads those as 4.0.2's numbers (mpich_handles.c), ENQUEUE
 * as MPICH_REQ_ENQUEUE past them.  A builtin request's handle index is its
 * kind (MPII_init_request, mpir_request.c). */
enum { MPICH_REQ_SEND = 1, MPICH_REQ_RECV = 2, MPICH_REQ_PREQUEST_SEND = 3,
       MPICH_REQ_PREQUEST_RECV = 4, MPICH_REQ_PREQUEST_COLL = 5, MPICH_REQ_PART_SEND = 6,
       MPICH_REQ_PART_RECV = 7, MPICH_REQ_PART = 8, MPICH_REQ_GREQUEST = 9,
       MPICH_REQ_COLL = 10, MPICH_REQ_MPROBE = 11, MPICH_REQ_RMA = 12,
       MPICH_REQ_ENQUEUE_41 = 9, MPICH_REQ_ENQUEUE = 13 };

/* Names of the predefined datatypes, for extra_text. */
#define MPICH_DATATYPE_NAMES(X)                                                               \
    X(0x4c000101, "MPI_CHAR") X(0x4c000118, "MPI_SIGNED_CHAR")                                \
    X(0x4c000102, "MPI_UNSIGNED_CHAR") X(0x4c00010d, "MPI_BYTE") X(0x4c00040e, "MPI_WCHAR")   \
    X(0x4c000203, "MPI_SHORT") X(0x4c000204, "MPI_UNSIGNED_SHORT") X(0x4c000405, "MPI_INT")   \
    X(0x4c000406, "MPI_UNSIGNED") X(0x4c000807, "MPI_LONG") X(0x4c000808, "MPI_UNSIGNED_LONG") \
    X(0x4c00040a, "MPI_FLOAT") X(0x4c00080b, "MPI_DOUBLE") X(0x4c00100c, "MPI_LONG_DOUBLE")   \
    X(0x4c000809, "MPI_LONG_LONG") X(0x4c000819, "MPI_UNSIGNED_LONG_LONG")                    \
    X(0x4c00010f, "MPI_PACKED") X(0x8c000000, "MPI_FLOAT_INT") X(0x8c000001, "MPI_DOUBLE_INT") \
    X(0x8c000002, "MPI_LONG_INT") X(0x8c000003, "MPI_SHORT_INT") X(0x4c000816, "MPI_2INT")    \
    X(0x8c000004, "MPI_LONG_DOUBLE_INT") X(0x4c000137, "MPI_INT8_T")                          \
    X(0x4c000238, "MPI_INT16_T") X(0x4c000439, "MPI_INT32_T") X(0x4c00083a, "MPI_INT64_T")    \
    X(0x4c00013b, "MPI_UINT8_T") X(0x4c00023c, "MPI_UINT16_T") X(0x4c00043d, "MPI_UINT32_T")  \
    X(0x4c00083e, "MPI_UINT64_T") X(0x4c00013f, "MPI_C_BOOL") X(0x4c000843, "MPI_AINT")       \
    X(0x4c000844, "MPI_OFFSET") X(0x4c000845, "MPI_COUNT")

#endif
