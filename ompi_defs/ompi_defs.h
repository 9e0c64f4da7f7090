/*
 * ompi_defs.h - what mqd's DLL for Open MPI (libmqd_ompi.so) knows of Open
 * MPI's internals: the symbols it reads, each field as a path through the
 * debug information, the type sizes, and the constants, each with the
 * line of Open MPI 4.1.4's source it mirrors (paths relative to the
 * release tarball, which Debian's openmpi 4.1.4-3 source package holds).
 *
 * The DLL reads pml ob1's own matching structures (its per-communicator
 * lists of posted receives and unexpected fragments), the request free
 * list for the sends (ob1 keeps no list of them), and the communicator
 * table, groups and process names of the MPI layer.  dll/ompi.h says how.
 */
#ifndef MQD_OMPI_DEFS_H
#define MQD_OMPI_DEFS_H

/* ---------------------------------------------------------------- symbols */

/* ompi/communicator/communicator.h:128: every communicator, by index. */
#define OMPI_SYM_COMM_LIST "ompi_mpi_communicators"
/* ompi/communicator/comm_init.c:56-61: the predefined communicators. */
#define OMPI_SYM_COMM_WORLD "ompi_mpi_comm_world"
#define OMPI_SYM_COMM_NULL "ompi_mpi_comm_null"
/* ompi/mca/pml/base/pml_base_request.h:44-45: the PML's requests. */
#define OMPI_SYM_SEND_REQUESTS "mca_pml_base_send_requests"
/* ompi/mca/pml/base/pml_base_frame.c:84: the PML chosen at MPI_Init. */
#define OMPI_SYM_PML_COMPONENT "mca_pml_base_selected_component"
/* Each PML component's (ompi/mca/pml/{ob1,ucx,cm}/pml_*_component.c): a
 * process whose components are loaded as plugins (mca_pml_*.so, Debian's
 * and most builds) keeps only the selected PML's; a build with them in
 * libmpi has all three, and its selected one says. */
#define OMPI_SYM_PML_OB1 "mca_pml_ob1_component"
#define OMPI_SYM_PML_UCX "mca_pml_ucx_component"
#define OMPI_SYM_PML_CM "mca_pml_cm_component"
/* ompi/proc/proc.c:53: this process's ompi_proc_t (its name). */
#define OMPI_SYM_LOCAL_PROC "ompi_proc_local_proc"
/* MPI_REQUEST_NULL is its address (mpi.h as 4.1.4 installs it: 855, 986). */
#define OMPI_SYM_REQUEST_NULL "ompi_request_null"
/* ompi/runtime/mpiruntime.h:54 (ompi_mpi_state_t, :74-88). */
#define OMPI_SYM_STATE "ompi_mpi_state"
/* ompi/runtime/ompi_mpi_init.c (OMPI_VERSION as a string: "4.1.4"). */
#define OMPI_SYM_VERSION "ompi_version_string"
/* A field only Open MPI 5 has (v5.0.9 ompi/communicator/communicator.h:
 * c_index, the local index ob1 keys on, beside an extended context id and
 * a c_name that is a pointer): a DWARF with it is 5's. */
#define OMPI_FIELD_5_ONLY "ompi_communicator_t:c_index"
/* What a debugger stops on after MPI_Comm_spawn: orterun's
 * (orte/orted/orted-mpir/orted_mpir_breakpoint.c:50). */
#define OMPI_SPAWN_BREAKPOINT "MPIR_Breakpoint"

/*
 * Classes (OBJ_CLASS_INSTANCE, opal/class/opal_object.h): each a static
 * opal_class_t whose cls_sizeof is the size of its objects, exported by
 * every build (Debian's too).  With a known layout, each must say the
 * size the layout says: X(SYMBOL, SIZE_ID, CLASS), ob1's (in
 * mca_pml_ob1.so, which only a process running ob1 has loaded) once ob1
 * is the PML.
 */
#define OMPI_CLASS_SIZES(X)                                                                  \
    X("ompi_communicator_t_class", SZ_COMM, COMMON)                                          \
    X("ompi_group_t_class", SZ_GROUP, COMMON)                                                \
    X("ompi_proc_t_class", SZ_PROC, COMMON)                                                  \
    X("ompi_request_t_class", SZ_REQUEST, COMMON)                                            \
    X("ompi_datatype_t_class", SZ_DATATYPE, COMMON)                                          \
    X("mca_pml_base_request_t_class", SZ_BASE_REQ, COMMON)                                   \
    X("mca_pml_base_send_request_t_class", SZ_BASE_SEND, COMMON)                             \
    X("mca_pml_base_recv_request_t_class", SZ_BASE_RECV, COMMON)                             \
    X("opal_list_t_class", SZ_LIST, COMMON)                                                  \
    X("opal_list_item_t_class", SZ_LIST_ITEM, COMMON)                                        \
    X("opal_free_list_t_class", SZ_FREE_LIST, COMMON)                                        \
    X("opal_free_list_item_t_class", SZ_FL_ITEM, COMMON)                                     \
    X("opal_pointer_array_t_class", SZ_PTR_ARRAY, COMMON)                                    \
    X("mca_pml_ob1_comm_t_class", SZ_OB1_COMM, OB1)                                          \
    X("mca_pml_ob1_comm_proc_t_class", SZ_OB1_PROC, OB1)                                     \
    X("mca_pml_ob1_recv_frag_t_class", SZ_RECV_FRAG, OB1)                                    \
    X("mca_pml_ob1_recv_request_t_class", SZ_RECV_REQ, OB1)                                  \
    X("mca_pml_ob1_send_request_t_class", SZ_SEND_REQ, OB1)

/* ---------------------------------------------------------------- fields */

/*
 * Fields: X(ID, CLASS, PATH), each step of PATH "TYPE:FIELD", as
 * mqd_path_offset resolves it.  CLASS: COMMON, what every process needs;
 * OB1, what the queues of pml ob1 need; OPTIONAL, read when there.
 *
 *   ompi/communicator/communicator.h:136-196 (ompi_communicator_t):
 *     c_name :138, c_contextid :139, c_my_rank :140, c_flags :141,
 *     c_local_group :150, c_remote_group :151, c_local_comm :153,
 *     c_f_to_c_index :169, c_pml_comm :186, c_nbc_tag :196
 *   opal/class/opal_pointer_array.h:43-65: size :56, addr :64
 *   ompi/group/group.h:83-99: grp_proc_count :85, grp_my_rank :86,
 *     grp_proc_pointers :88, grp_flags :91
 *   ompi/proc/proc.h (ompi_proc_t: super); opal/util/proc.h:84-98
 *     (opal_proc_t: proc_name :88); opal/dss/dss_types.h:46-49
 *     (opal_process_name_t: jobid :47, vpid :48)
 *   opal/class/opal_object.h:194-205 (obj_class :200), :151-163
 *     (opal_class_t: cls_sizeof :162)
 *   opal/class/opal_list.h:101-115 (opal_list_next :106, opal_list_prev
 *     :108), :151-158 (opal_list_sentinel :155, opal_list_length :157)
 *   opal/class/opal_free_list.h:54-97: fl_num_allocated :62,
 *     fl_num_per_alloc :64, fl_frag_size :68, fl_frag_alignment :70,
 *     fl_frag_class :76, fl_allocations :88
 *   ompi/mca/pml/ob1/pml_ob1_comm.h:56-64 (mca_pml_ob1_comm_t:
 *     wild_receives :59, procs :61, num_procs :62), :34-46
 *     (mca_pml_ob1_comm_proc_t: ompi_proc :36, expected_sequence :37,
 *     frags_cant_match :43, specific_receives :44, unexpected_frags :45)
 *   ompi/mca/pml/base/pml_base_request.h:61-79 (mca_pml_base_request_t:
 *     req_ompi :64, req_pml_complete :65, req_free_called :66, req_type
 *     :67, req_comm :68, req_datatype :69, req_addr :73, req_count :74,
 *     req_peer :75, req_tag :76, req_sequence :78)
 *   ompi/request/request.h:125-139 (ompi_request_t: req_type :127,
 *     req_status :128, req_complete :129, req_state :130,
 *     req_persistent :131); ompi/include/mpi.h.in:439-449 (MPI_SOURCE
 *     :440, MPI_TAG :441, _ucount :448)
 *   ompi/mca/pml/base/pml_base_sendreq.h:42-47 (req_base :43,
 *     req_bytes_packed :45, req_send_mode :46); pml_base_recvreq.h:38-41
 *     (req_base :39); ob1's requests begin with them
 *     (pml_ob1_recvreq.h:42 req_recv, pml_ob1_sendreq.h:46 req_send)
 *   ompi/mca/pml/ob1/pml_ob1_recvfrag.h:41-50 (hdr :43, num_segments :44,
 *     segments :47); opal/mca/btl/btl.h:426-431 (seg_addr :428,
 *     seg_len :430)
 *   ompi/mca/pml/ob1/pml_ob1_hdr.h:61-64 (hdr_type :62), :81-90 (hdr_ctx
 *     :83, hdr_src :84, hdr_tag :85, hdr_seq :86), :136-140
 *     (hdr_msg_length :138), :409-418 (the union)
 *   ompi/datatype/ompi_datatype.h:69-85 (super :70, name :81);
 *     opal/datatype/opal_datatype.h:110-115 (size :115)
 *   opal/mca/mca.h:291-330 (mca_component_name :314);
 *     ompi/mca/pml/pml.h:108-113 (pmlm_version :109)
 */
#define OMPI_BASE_REQ(f) "mca_pml_base_request_t:" f
#define OMPI_REQ(f) "mca_pml_base_request_t:req_ompi/ompi_request_t:" f
#define OMPI_HDR "mca_pml_ob1_recv_frag_t:hdr/mca_pml_ob1_hdr_t:"
#define OMPI_FIELDS(X)                                                                       \
    X(PA_SIZE, COMMON, "opal_pointer_array_t:size")                                          \
    X(PA_ADDR, COMMON, "opal_pointer_array_t:addr")                                          \
    X(COMM_NAME, COMMON, "ompi_communicator_t:c_name")                                       \
    X(COMM_CID, COMMON, "ompi_communicator_t:c_contextid")                                   \
    X(COMM_RANK, COMMON, "ompi_communicator_t:c_my_rank")                                    \
    X(COMM_FLAGS, COMMON, "ompi_communicator_t:c_flags")                                     \
    X(COMM_LGROUP, COMMON, "ompi_communicator_t:c_local_group")                              \
    X(COMM_RGROUP, COMMON, "ompi_communicator_t:c_remote_group")                             \
    X(COMM_LOCAL_COMM, COMMON, "ompi_communicator_t:c_local_comm")                           \
    X(COMM_PML, COMMON, "ompi_communicator_t:c_pml_comm")                                    \
    X(COMM_NBC_TAG, OPTIONAL, "ompi_communicator_t:c_nbc_tag")                               \
    X(GROUP_SIZE, COMMON, "ompi_group_t:grp_proc_count")                                     \
    X(GROUP_MY_RANK, COMMON, "ompi_group_t:grp_my_rank")                                     \
    X(GROUP_PROCS, COMMON, "ompi_group_t:grp_proc_pointers")                                 \
    X(PROC_JOBID, COMMON, "ompi_proc_t:super/opal_proc_t:proc_name/opal_process_name_t:jobid") \
    X(PROC_VPID, COMMON, "ompi_proc_t:super/opal_proc_t:proc_name/opal_process_name_t:vpid")   \
    X(OBJ_CLASS, COMMON, "opal_object_t:obj_class")                                          \
    X(CLASS_SIZEOF, COMMON, "opal_class_t:cls_sizeof")                                       \
    X(ITEM_NEXT, COMMON, "opal_list_item_t:opal_list_next")                                  \
    X(LIST_SENTINEL, COMMON, "opal_list_t:opal_list_sentinel")                               \
    X(LIST_LENGTH, COMMON, "opal_list_t:opal_list_length")                                   \
    X(REQ_TYPE, COMMON, OMPI_REQ("req_type"))                                                \
    X(REQ_COMPLETE, COMMON, OMPI_REQ("req_complete"))                                        \
    X(REQ_STATE, COMMON, OMPI_REQ("req_state"))                                              \
    X(REQ_PERSISTENT, COMMON, OMPI_REQ("req_persistent"))                                    \
    X(REQ_PML_COMPLETE, COMMON, OMPI_BASE_REQ("req_pml_complete"))                           \
    X(REQ_PML_TYPE, COMMON, OMPI_BASE_REQ("req_type"))                                       \
    X(REQ_COMM, COMMON, OMPI_BASE_REQ("req_comm"))                                           \
    X(REQ_DATATYPE, COMMON, OMPI_BASE_REQ("req_datatype"))                                   \
    X(REQ_ADDR, COMMON, OMPI_BASE_REQ("req_addr"))                                           \
    X(REQ_COUNT, COMMON, OMPI_BASE_REQ("req_count"))                                         \
    X(REQ_PEER, COMMON, OMPI_BASE_REQ("req_peer"))                                           \
    X(REQ_TAG, COMMON, OMPI_BASE_REQ("req_tag"))                                             \
    X(REQ_SEQUENCE, COMMON, OMPI_BASE_REQ("req_sequence"))                                   \
    X(SEND_BYTES, COMMON, "mca_pml_base_send_request_t:req_bytes_packed")                    \
    X(SEND_MODE, COMMON, "mca_pml_base_send_request_t:req_send_mode")                        \
    X(DT_SIZE, COMMON, "ompi_datatype_t:super/opal_datatype_t:size")                         \
    X(DT_NAME, COMMON, "ompi_datatype_t:name")                                               \
    X(PML_NAME, COMMON,                                                                      \
      "mca_pml_base_component_t:pmlm_version/mca_base_component_t:mca_component_name")       \
    X(FL_NUM_ALLOCATED, OB1, "opal_free_list_t:fl_num_allocated")                            \
    X(FL_NUM_PER_ALLOC, OB1, "opal_free_list_t:fl_num_per_alloc")                            \
    X(FL_FRAG_SIZE, OB1, "opal_free_list_t:fl_frag_size")                                    \
    X(FL_FRAG_ALIGNMENT, OB1, "opal_free_list_t:fl_frag_alignment")                          \
    X(FL_FRAG_CLASS, OB1, "opal_free_list_t:fl_frag_class")                                  \
    X(FL_ALLOCATIONS, OB1, "opal_free_list_t:fl_allocations")                                \
    X(RECV_BASE, OB1, "mca_pml_ob1_recv_request_t:req_recv/mca_pml_base_recv_request_t:req_base") \
    X(SEND_BASE, OB1, "mca_pml_ob1_send_request_t:req_send/mca_pml_base_send_request_t:req_base") \
    X(SEND_SEND, OB1, "mca_pml_ob1_send_request_t:req_send")                                 \
    X(OB1_WILD, OB1, "mca_pml_ob1_comm_t:wild_receives")                                     \
    X(OB1_PROCS, OB1, "mca_pml_ob1_comm_t:procs")                                            \
    X(OB1_NUM_PROCS, OB1, "mca_pml_ob1_comm_t:num_procs")                                    \
    X(OB1P_PROC, OB1, "mca_pml_ob1_comm_proc_t:ompi_proc")                                   \
    X(OB1P_SPECIFIC, OB1, "mca_pml_ob1_comm_proc_t:specific_receives")                       \
    X(OB1P_UNEXPECTED, OB1, "mca_pml_ob1_comm_proc_t:unexpected_frags")                      \
    X(OB1P_CANT_MATCH, OB1, "mca_pml_ob1_comm_proc_t:frags_cant_match")                      \
    X(FRAG_HDR_TYPE, OB1, OMPI_HDR "hdr_common/mca_pml_ob1_common_hdr_t:hdr_type")           \
    X(FRAG_HDR_CTX, OB1, OMPI_HDR "hdr_match/mca_pml_ob1_match_hdr_t:hdr_ctx")               \
    X(FRAG_HDR_SRC, OB1, OMPI_HDR "hdr_match/mca_pml_ob1_match_hdr_t:hdr_src")               \
    X(FRAG_HDR_TAG, OB1, OMPI_HDR "hdr_match/mca_pml_ob1_match_hdr_t:hdr_tag")               \
    X(FRAG_HDR_SEQ, OB1, OMPI_HDR "hdr_match/mca_pml_ob1_match_hdr_t:hdr_seq")               \
    X(FRAG_MSG_LENGTH, OB1, OMPI_HDR "hdr_rndv/mca_pml_ob1_rendezvous_hdr_t:hdr_msg_length") \
    X(FRAG_NUM_SEGMENTS, OB1, "mca_pml_ob1_recv_frag_t:num_segments")                        \
    X(FRAG_SEGMENTS, OB1, "mca_pml_ob1_recv_frag_t:segments")                                \
    X(SEG_ADDR, OB1, "mca_btl_base_segment_t:seg_addr")                                      \
    X(SEG_LEN, OB1, "mca_btl_base_segment_t:seg_len")                                        \
    X(MATCH_HDR_PADDING, OPTIONAL, "mca_pml_ob1_match_hdr_t:hdr_padding")

/* Type sizes: X(ID, CLASS, TYPE). */
#define OMPI_SIZES(X)                                                                        \
    X(SZ_COMM, COMMON, "ompi_communicator_t")                                                \
    X(SZ_GROUP, COMMON, "ompi_group_t")                                                      \
    X(SZ_PROC, COMMON, "ompi_proc_t")                                                        \
    X(SZ_REQUEST, COMMON, "ompi_request_t")                                                  \
    X(SZ_DATATYPE, COMMON, "ompi_datatype_t")                                                \
    X(SZ_BASE_REQ, COMMON, "mca_pml_base_request_t")                                         \
    X(SZ_BASE_SEND, COMMON, "mca_pml_base_send_request_t")                                   \
    X(SZ_BASE_RECV, COMMON, "mca_pml_base_recv_request_t")                                   \
    X(SZ_LIST, COMMON, "opal_list_t")                                                        \
    X(SZ_LIST_ITEM, COMMON, "opal_list_item_t")                                              \
    X(SZ_PTR_ARRAY, COMMON, "opal_pointer_array_t")                                          \
    X(SZ_PML_COMPONENT, COMMON, "mca_pml_base_component_t")                                  \
    X(SZ_FREE_LIST, OB1, "opal_free_list_t")                                                 \
    X(SZ_FL_ITEM, OB1, "opal_free_list_item_t")                                              \
    X(SZ_OB1_COMM, OB1, "mca_pml_ob1_comm_t")                                                \
    X(SZ_OB1_PROC, OB1, "mca_pml_ob1_comm_proc_t")                                           \
    X(SZ_RECV_FRAG, OB1, "mca_pml_ob1_recv_frag_t")                                          \
    X(SZ_RECV_REQ, OB1, "mca_pml_ob1_recv_request_t")                                        \
    X(SZ_SEND_REQ, OB1, "mca_pml_ob1_send_request_t")                                        \
    X(SZ_SEGMENT, OB1, "mca_btl_base_segment_t")                                             \
    X(SZ_RNDV_HDR, OB1, "mca_pml_ob1_rendezvous_hdr_t")

/* ---------------------------------------------------------------- constants */

/* ompi/communicator/communicator.h:52-56 (c_flags). */
#define OMPI_COMM_INTER 0x1u
/* MPI_Comm_get_name gives c_name only with NAMEISSET (ompi/mpi/c/
 * comm_get_name.c:74): every other communicator has Open MPI's own name
 * there ("MPI COMMUNICATOR 4 DUP FROM 0", ompi/communicator/comm.c:1025). */
#define OMPI_COMM_NAMEISSET 0x2u
#define OMPI_COMM_INTRINSIC 0x4u
#define OMPI_COMM_ISFREED 0x10u
/* ompi/communicator/comm_init.c:130: MPI_COMM_WORLD's context id, and
 * :215 MPI_COMM_NULL's. */
#define OMPI_CID_WORLD 0u
#define OMPI_CID_NULL 2u

/* ompi/include/mpi.h.in:497-500. */
#define OMPI_ANY_SOURCE (-1)
#define OMPI_PROC_NULL (-2)
#define OMPI_ANY_TAG (-1)

/* ompi/request/request_dbg.h:37-47 (ompi_request_state_t), request.h:
 * 156-178 (REQUEST_PENDING (void *)0, REQUEST_COMPLETED (void *)1; a
 * waiter stores its sync object there while it waits). */
enum { OMPI_REQUEST_INVALID = 0, OMPI_REQUEST_INACTIVE = 1, OMPI_REQUEST_ACTIVE = 2,
       OMPI_REQUEST_CANCELLED = 3 };
#define OMPI_REQUEST_COMPLETED 1u
/* ompi/request/request_dbg.h:22-32 (ompi_request_type_t). */
enum { OMPI_REQUEST_PML = 0, OMPI_REQUEST_IO = 1, OMPI_REQUEST_GEN = 2, OMPI_REQUEST_WIN = 3,
       OMPI_REQUEST_COLL = 4, OMPI_REQUEST_NULL = 5, OMPI_REQUEST_NOOP = 6,
       OMPI_REQUEST_COMM = 7, OMPI_REQUEST_MAX = 8 };
/* ompi/mca/pml/base/pml_base_request_dbg.h:23-31 (mca_pml_base_request_type_t:
 * after the two, the probes' four). */
enum { OMPI_PML_REQUEST_SEND = 1, OMPI_PML_REQUEST_RECV = 2, OMPI_PML_REQUEST_LAST = 6 };
/* ompi/mca/pml/pml_constants.h:30-37 (mca_pml_base_send_mode_t). */
enum { OMPI_SEND_SYNCHRONOUS = 0, OMPI_SEND_COMPLETE = 1, OMPI_SEND_BUFFERED = 2,
       OMPI_SEND_READY = 3, OMPI_SEND_STANDARD = 4 };

/* ompi/mca/pml/ob1/pml_ob1_hdr.h:41-43 (MCA_BTL_TAG_PML 0x40,
 * opal/mca/btl/btl.h:180): a first fragment's header type. */
#define OMPI_OB1_HDR_MATCH 0x41
#define OMPI_OB1_HDR_RNDV 0x42
#define OMPI_OB1_HDR_RGET 0x43
/* ompi/mca/pml/ob1/pml_ob1_hdr.h:91-95 (OMPI_PML_OB1_MATCH_HDR_LEN): a
 * match header's bytes on the wire, 14 (16 with heterogeneous support,
 * which adds hdr_padding): the end of hdr_seq. */
#define OMPI_OB1_HDR_SEQ_BYTES 2
#define OMPI_OB1_HDR_PADDING_BYTES 2

/*
 * Collective tags (ompi/mca/coll/base/coll_tags.h:27-50): the blocking
 * collectives' fixed ones (ALLGATHER -10 ... SCATTERV -26), then libnbc's
 * per-communicator sequence, from NONBLOCKING_BASE -27 down to
 * NONBLOCKING_END, -(INT_MAX / 2) + 1, where it wraps
 * (ompi_coll_base_nbc_reserve_tags, ompi/mca/coll/base/coll_base_util.h:
 * 70-83: each nonblocking collective takes the communicator's c_nbc_tag
 * and moves it one down; libnbc's schedule sends and receives with it,
 * ompi/mca/coll/libnbc/nbc.c:462, :497, :710).
 */
#define OMPI_COLL_TAG_FIRST (-10)
#define OMPI_COLL_TAG_LAST (-26)
#define OMPI_NBC_TAG_BASE (-27)
#define OMPI_NBC_TAG_END (-(0x7fffffff / 2) + 1)

/* ompi/proc/proc.h:382-409: a group's member not made yet is a sentinel,
 * bit 0 set, its name within: bits 1-15 the local jobid, 16-31 the job
 * family, 32-63 the vpid (64-bit targets only). */
#define OMPI_PROC_SENTINEL 0x1u

/* ompi/runtime/mpiruntime.h:74-88 (ompi_mpi_state_t). */
enum { OMPI_STATE_INIT_COMPLETED = 2, OMPI_STATE_FINALIZE_STARTED = 3 };

#endif
