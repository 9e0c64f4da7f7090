/*
 * test_interface.c - the values a debugger and a DLL exchange at run time.
 *
 * abi_check.c pins the layout at compile time; this checks, as the compiled
 * program sees it, the layout of the structures the host fills for a DLL
 * and the values it compares, table-driven so that a failure names the field.
 */
#define FOR_MPI2 1
#include "mpi_interface.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

struct layout {
    const char *what;
    size_t got, want;
};

#define OFF(type, field, want) {#type "." #field, offsetof(type, field), want}
#define SIZE(type, want) {"sizeof " #type, sizeof(type), want}

static void check_table(const struct layout *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (t[i].got != t[i].want)
            fail_msg("%s is %zu, the ABI says %zu", t[i].what, t[i].got, t[i].want);
    }
}

static void test_interface__communicator_layout(void **state)
{
    (void)state;
    static const struct layout t[] = {
        SIZE(mqs_communicator, 88),
        OFF(mqs_communicator, unique_id, 0),
        OFF(mqs_communicator, local_rank, 8),
        OFF(mqs_communicator, size, 16),
        OFF(mqs_communicator, name, 24),
    };
    check_table(t, sizeof t / sizeof t[0]);
}

static void test_interface__operation_layout(void **state)
{
    (void)state;
    static const struct layout t[] = {
        SIZE(mqs_pending_operation, 416),
        OFF(mqs_pending_operation, status, 0),
        OFF(mqs_pending_operation, desired_local_rank, 8),
        OFF(mqs_pending_operation, desired_global_rank, 16),
        OFF(mqs_pending_operation, tag_wild, 24),
        OFF(mqs_pending_operation, desired_tag, 32),
        OFF(mqs_pending_operation, desired_length, 40),
        OFF(mqs_pending_operation, system_buffer, 48),
        OFF(mqs_pending_operation, buffer, 56),
        OFF(mqs_pending_operation, actual_local_rank, 64),
        OFF(mqs_pending_operation, actual_global_rank, 72),
        OFF(mqs_pending_operation, actual_tag, 80),
        OFF(mqs_pending_operation, actual_length, 88),
        OFF(mqs_pending_operation, extra_text, 96),
    };
    check_table(t, sizeof t / sizeof t[0]);
}

static void test_interface__callback_tables(void **state)
{
    (void)state;
    const size_t p = sizeof(void (*)(void));
    const struct layout t[] = {
        {"basic callbacks (MPI-2)", sizeof(mqs_basic_callbacks), 10 * p},
        {"image callbacks", sizeof(mqs_image_callbacks), 6 * p},
        {"process callbacks (MPI-2)", sizeof(mqs_process_callbacks), 6 * p},
        {"job callbacks", sizeof(mqs_job_callbacks), 1 * p},
        OFF(mqs_basic_callbacks, mqs_put_job_info_fp, 8 * p),
        OFF(mqs_process_callbacks, mqs_fetch_data_fp, 2 * p),
        OFF(mqs_process_callbacks, mqs_get_process_identity_fp, 5 * p),
        OFF(mqs_image_callbacks, mqs_find_type_fp, 3 * p),
        SIZE(mqs_target_type_sizes, 5 * sizeof(int)),
    };
    check_table(t, sizeof t / sizeof t[0]);
}

static void test_interface__values(void **state)
{
    (void)state;
    assert_int_equal(MQS_INTERFACE_COMPATIBILITY, 3);
    assert_int_equal(mqs_first_user_code, 100);
    assert_int_equal(mqs_unexpected_messages, 2);
    assert_int_equal(mqs_st_complete, 2);
    assert_int_equal(MQS_INVALID_PROCESS, -1);
    assert_int_equal(mqs_lang_f90, 'F');
    assert_int_equal(sizeof(mqs_taddr_t), sizeof(void *));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interface__communicator_layout),
        cmocka_unit_test(test_interface__operation_layout),
        cmocka_unit_test(test_interface__callback_tables),
        cmocka_unit_test(test_interface__values),
    };
    return cmocka_run_group_tests_name("interface", tests, NULL, NULL);
}
