/*
 * dlldump.h - one of mqd's DLLs driven as a debugger drives it, against a
 * synthetic target (tests/synth.h): the specification's flow from
 * mqs_setup_image to the last operation, every communicator and queue
 * recorded, with mqd_get_operation_info after each operation.  Shared by
 * the synthetic tests of each backend (test_dll_synth: MPICH,
 * test_dll_ompi: Open MPI).
 */
#ifndef MQD_TESTS_DLLDUMP_H
#define MQD_TESTS_DLLDUMP_H

#include "host/protocol/loader.h"
#include "tests/synth.h"

/* The DLL under test, loaded by dlldump_load. */
extern struct mqdh__dll *dlldump_dll;
/* The image and process callback tables handed over: the synthetic
 * host's while NULL (a host-personality test puts others). */
extern const mqs_image_callbacks *dlldump_image_cb;
extern const mqs_process_callbacks *dlldump_process_cb;

/* Load $MQD_BUILD/lib/NAME over the synthetic host's basic callbacks: 0,
 * or -1 (said on stderr). */
int dlldump_load(const char *name);

struct rcomm {
    mqs_communicator c;
    int nops[3];
    int qrc[3];
    mqs_pending_operation ops[3][8];
    /* mqd_get_operation_info after each (flags 0xdead if it failed). */
    unsigned flags[3][8];
    mqs_taddr_t request[3][8];
    /* mqd_get_comm_handle's and mqs_get_comm_group's answers (the group
     * for communicators of up to 16 members). */
    int handle_rc, group_rc;
    mqs_taddr_t handle;
    int group[16];
};

struct result {
    int rc;          /* first failure, or mqs_ok */
    const char *why; /* the DLL's message for it, if any */
    int ncomms;
    struct rcomm comms[16];
};

/* Dump process s into r; update_only: only mqs_update_communicator_list
 * and the walks (a later stop of the same process). */
void dlldump_process(struct synth *s, struct result *r, int update_only);
/* Destroy what the DLL hung on s's image and process. */
void dlldump_release(struct synth *s);
/*
 * The debugger's MPI-2 job over procs[0..n-1], set up as a debugger does:
 * the job (*job its handle), then each process joined, dumped once (which
 * must succeed) and named identity[i].  dlldump_end_job releases each
 * process and then the job.
 */
void dlldump_begin_job(int *job, struct synth *const *procs, const int *identity, int n);
void dlldump_end_job(int *job, struct synth *const *procs, int n);
/* r's communicator of that name (the test fails if none). */
const struct rcomm *dlldump_comm_named(const struct result *r, const char *name);
/* The DLL's code for the error whose message starts with prefix. */
int dlldump_code(const char *prefix);

/* What a whole dump of a target must show (fn(r, arg), failing the test
 * if it does not). */
struct dlldump_check {
    void (*fn)(const struct result *r, void *arg);
    void *arg;
};
/*
 * Dump s whole (check, if not NULL, on it), then again with mqs_malloc
 * failing at each of that dump's calls in turn: each dump must succeed or
 * say "out of memory", and leave no block allocated once released.
 * Returns how many said it (the test fails otherwise).
 */
int dlldump_fail_each_malloc(struct synth *s, const struct dlldump_check *check);

#endif
