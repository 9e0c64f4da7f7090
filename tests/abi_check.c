/*
 * abi_check.c - mpi_interface.h is self-contained and binary compatible.
 *
 * Compiled (not run) four times by `make check`: as C11 and as C++11, each
 * with and without FOR_MPI2, all with -pedantic -Werror.  The header comes
 * first, alone, so a missing include in it fails the build.  The numbers
 * are those of the mpi_interface.h that MPICH and Open MPI ship (x86_64,
 * LP64); a layout change here breaks every real debugger and vendor DLL.
 */
#include "mpi_interface.h"

#include <stddef.h>

#ifdef __cplusplus
#define ABI_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define ABI_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

typedef void (*any_fp)(void);
#define SLOT(i) ((i) * sizeof(any_fp))

ABI_ASSERT(mqs_ok == 0 && mqs_no_information == 1 && mqs_end_of_list == 2, "result codes");
ABI_ASSERT(mqs_first_user_code == 100, "first user code");
ABI_ASSERT(mqs_pending_sends == 0 && mqs_pending_receives == 1 &&
               mqs_unexpected_messages == 2, "queue classes");
ABI_ASSERT(mqs_st_pending == 0 && mqs_st_matched == 1 && mqs_st_complete == 2, "statuses");
ABI_ASSERT(MQS_INVALID_PROCESS == -1, "invalid process");
ABI_ASSERT(mqs_lang_c == 'c' && mqs_lang_cplus == 'C' && mqs_lang_f77 == 'f' &&
               mqs_lang_f90 == 'F', "language codes");
#if MQS_FOR_MPI2_
ABI_ASSERT(MQS_INTERFACE_COMPATIBILITY == 3, "MPI-2 interface version");
#else
ABI_ASSERT(MQS_INTERFACE_COMPATIBILITY == 2, "MPI-1 interface version");
#endif

ABI_ASSERT(sizeof(mqs_target_type_sizes) == 5 * sizeof(int), "type sizes: five ints");
ABI_ASSERT(offsetof(mqs_target_type_sizes, pointer_size) == 4 * sizeof(int), "pointer_size");

#if defined(__x86_64__) || defined(__aarch64__) || defined(__LP64__)
ABI_ASSERT(sizeof(mqs_taddr_t) == 8 && sizeof(mqs_tword_t) == 8, "LP64 taddr/tword");
ABI_ASSERT((mqs_taddr_t)-1 > 0 && (mqs_tword_t)-1 < 0, "taddr unsigned, tword signed");

ABI_ASSERT(sizeof(mqs_communicator) == 88, "mqs_communicator size");
ABI_ASSERT(offsetof(mqs_communicator, unique_id) == 0, "unique_id");
/* mqd's extension (mqd_get_request_info): the same on every LP64 target. */
ABI_ASSERT(offsetof(mqd_request_info, request) == 16, "request");
ABI_ASSERT(offsetof(mqd_request_info, comm) == 24, "comm");
ABI_ASSERT(offsetof(mqd_request_info, peer_local) == 32, "peer_local");
ABI_ASSERT(offsetof(mqd_request_info, sched_tag) == 32 + 3 * sizeof(mqs_tword_t), "sched_tag");
ABI_ASSERT(offsetof(mqd_request_info, text) == 32 + 4 * sizeof(mqs_tword_t), "text");
ABI_ASSERT(offsetof(mqs_communicator, local_rank) == 8, "local_rank");
ABI_ASSERT(offsetof(mqs_communicator, size) == 16, "size");
ABI_ASSERT(offsetof(mqs_communicator, name) == 24, "name");
ABI_ASSERT(sizeof(((mqs_communicator *)0)->name) == 64, "name length");

ABI_ASSERT(sizeof(mqs_pending_operation) == 416, "mqs_pending_operation size");
ABI_ASSERT(offsetof(mqs_pending_operation, status) == 0, "status");
ABI_ASSERT(offsetof(mqs_pending_operation, desired_local_rank) == 8, "desired_local_rank");
ABI_ASSERT(offsetof(mqs_pending_operation, desired_global_rank) == 16, "desired_global_rank");
ABI_ASSERT(offsetof(mqs_pending_operation, tag_wild) == 24, "tag_wild");
ABI_ASSERT(offsetof(mqs_pending_operation, desired_tag) == 32, "desired_tag");
ABI_ASSERT(offsetof(mqs_pending_operation, desired_length) == 40, "desired_length");
ABI_ASSERT(offsetof(mqs_pending_operation, system_buffer) == 48, "system_buffer");
ABI_ASSERT(offsetof(mqs_pending_operation, buffer) == 56, "buffer");
ABI_ASSERT(offsetof(mqs_pending_operation, actual_local_rank) == 64, "actual_local_rank");
ABI_ASSERT(offsetof(mqs_pending_operation, actual_global_rank) == 72, "actual_global_rank");
ABI_ASSERT(offsetof(mqs_pending_operation, actual_tag) == 80, "actual_tag");
ABI_ASSERT(offsetof(mqs_pending_operation, actual_length) == 88, "actual_length");
ABI_ASSERT(offsetof(mqs_pending_operation, extra_text) == 96, "extra_text");
ABI_ASSERT(sizeof(((mqs_pending_operation *)0)->extra_text) == 5 * 64, "extra_text[5][64]");
#endif

/* Callback tables: one pointer per member, in specification order. */
ABI_ASSERT(offsetof(mqs_basic_callbacks, mqs_malloc_fp) == SLOT(0), "malloc");
ABI_ASSERT(offsetof(mqs_basic_callbacks, mqs_free_fp) == SLOT(1), "free");
ABI_ASSERT(offsetof(mqs_basic_callbacks, mqs_dprints_fp) == SLOT(2), "dprints");
ABI_ASSERT(offsetof(mqs_basic_callbacks, mqs_errorstring_fp) == SLOT(3), "errorstring");
ABI_ASSERT(offsetof(mqs_basic_callbacks, mqs_put_image_info_fp) == SLOT(4), "put_image_info");
ABI_ASSERT(offsetof(mqs_basic_callbacks, mqs_get_image_info_fp) == SLOT(5), "get_image_info");
ABI_ASSERT(offsetof(mqs_basic_callbacks, mqs_put_process_info_fp) == SLOT(6), "put_process");
ABI_ASSERT(offsetof(mqs_basic_callbacks, mqs_get_process_info_fp) == SLOT(7), "get_process");

ABI_ASSERT(sizeof(mqs_image_callbacks) == SLOT(6), "image callbacks: 6");
ABI_ASSERT(offsetof(mqs_image_callbacks, mqs_get_type_sizes_fp) == SLOT(0), "get_type_sizes");
ABI_ASSERT(offsetof(mqs_image_callbacks, mqs_find_function_fp) == SLOT(1), "find_function");
ABI_ASSERT(offsetof(mqs_image_callbacks, mqs_find_symbol_fp) == SLOT(2), "find_symbol");
ABI_ASSERT(offsetof(mqs_image_callbacks, mqs_find_type_fp) == SLOT(3), "find_type");
ABI_ASSERT(offsetof(mqs_image_callbacks, mqs_field_offset_fp) == SLOT(4), "field_offset");
ABI_ASSERT(offsetof(mqs_image_callbacks, mqs_sizeof_fp) == SLOT(5), "sizeof");

ABI_ASSERT(offsetof(mqs_process_callbacks, mqs_get_global_rank_fp) == SLOT(0), "global_rank");
ABI_ASSERT(offsetof(mqs_process_callbacks, mqs_get_image_fp) == SLOT(1), "get_image");
ABI_ASSERT(offsetof(mqs_process_callbacks, mqs_fetch_data_fp) == SLOT(2), "fetch_data");
ABI_ASSERT(offsetof(mqs_process_callbacks, mqs_target_to_host_fp) == SLOT(3), "target_to_host");

#if MQS_FOR_MPI2_
ABI_ASSERT(sizeof(mqs_basic_callbacks) == SLOT(10), "basic callbacks: 10 with MPI-2");
ABI_ASSERT(offsetof(mqs_basic_callbacks, mqs_put_job_info_fp) == SLOT(8), "put_job_info");
ABI_ASSERT(offsetof(mqs_basic_callbacks, mqs_get_job_info_fp) == SLOT(9), "get_job_info");
ABI_ASSERT(sizeof(mqs_process_callbacks) == SLOT(6), "process callbacks: 6 with MPI-2");
ABI_ASSERT(offsetof(mqs_process_callbacks, mqs_get_process_job_fp) == SLOT(4), "process_job");
ABI_ASSERT(offsetof(mqs_process_callbacks, mqs_get_process_identity_fp) == SLOT(5), "identity");
ABI_ASSERT(sizeof(mqs_job_callbacks) == SLOT(1), "job callbacks: 1");
ABI_ASSERT(offsetof(mqs_process_location, pid) == 0, "location pid");
ABI_ASSERT(offsetof(mqs_process_location, image_name) == sizeof(long), "image_name");
ABI_ASSERT(offsetof(mqs_process_location, host_name) == sizeof(long) + FILENAME_MAX, "host");
ABI_ASSERT(sizeof(((mqs_process_location *)0)->host_name) == 64, "host_name[64]");
#else
ABI_ASSERT(sizeof(mqs_basic_callbacks) == SLOT(8), "basic callbacks: 8 without MPI-2");
ABI_ASSERT(sizeof(mqs_process_callbacks) == SLOT(4), "process callbacks: 4 without MPI-2");
#endif

/* The entry points have the types a debugger calls them through. */
const char *(*const abi_version_string)(void) = mqs_version_string;
int (*const abi_version_compatibility)(void) = mqs_version_compatibility;
int (*const abi_taddr_width)(void) = mqs_dll_taddr_width;
const char *(*const abi_error_string)(int) = mqs_dll_error_string;
void (*const abi_setup_basic)(const mqs_basic_callbacks *) = mqs_setup_basic_callbacks;
int (*const abi_setup_image)(mqs_image *, const mqs_image_callbacks *) = mqs_setup_image;
int (*const abi_image_has_queues)(mqs_image *, const char **) = mqs_image_has_queues;
void (*const abi_destroy_image)(mqs_image_info *) = mqs_destroy_image_info;
int (*const abi_setup_process)(mqs_process *, const mqs_process_callbacks *) = mqs_setup_process;
int (*const abi_process_has_queues)(mqs_process *, char **) = mqs_process_has_queues;
void (*const abi_destroy_process)(mqs_process_info *) = mqs_destroy_process_info;
int (*const abi_update_comms)(mqs_process *) = mqs_update_communicator_list;
int (*const abi_setup_comm_iter)(mqs_process *) = mqs_setup_communicator_iterator;
int (*const abi_get_comm)(mqs_process *, mqs_communicator *) = mqs_get_communicator;
int (*const abi_next_comm)(mqs_process *) = mqs_next_communicator;
int (*const abi_comm_group)(mqs_process *, int *) = mqs_get_comm_group;
int (*const abi_comm_handle)(mqs_process *, mqs_taddr_t *) = mqd_get_comm_handle;
int (*const abi_op_info)(mqs_process *, unsigned *, mqs_taddr_t *) = mqd_get_operation_info;
int (*const abi_process_state)(mqs_process *, unsigned *) = mqd_get_process_state;
int (*const abi_request_info)(mqs_process *, mqs_taddr_t, mqd_request_info *) =
    mqd_get_request_info;
int (*const abi_comm_nbc_tag)(mqs_process *, mqs_taddr_t, mqs_tword_t *) = mqd_get_comm_nbc_tag;
int (*const abi_setup_op_iter)(mqs_process *, int) = mqs_setup_operation_iterator;
int (*const abi_next_op)(mqs_process *, mqs_pending_operation *) = mqs_next_operation;
#if MQS_FOR_MPI2_
int (*const abi_setup_job)(mqs_job *, const mqs_job_callbacks *) = mqs_setup_job;
int (*const abi_destroy_job)(mqs_job_info *) = mqs_destroy_job_info;
int (*const abi_set_identity)(mqs_process *, int) = mqs_set_process_identity;
int (*const abi_spawn_bp)(mqs_process *, char *, int) = mqs_spawn_breakpoint_name;
int (*const abi_new_iter)(mqs_process *) = mqs_setup_new_process_iterator;
int (*const abi_next_new)(mqs_process *, mqs_process_location *) = next_new_process;
int (*const abi_next_new2)(mqs_process *, mqs_process_location *) = mqs_next_new_process;
#endif
