/* dlldump.c - a DLL driven as a debugger drives it; see dlldump.h. */
#define _GNU_SOURCE
#include "tests/dlldump.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

struct mqdh__dll *dlldump_dll;

int dlldump_load(const char *name)
{
    char path[4096], err[512];
    const char *b = getenv("MQD_BUILD");
    snprintf(path, sizeof path, "%s/lib/%s", b && *b ? b : "build", name);
    if (mqdh__dll_load(path, &synth_callbacks()->basic, &dlldump_dll, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- a dump */

const mqs_image_callbacks *dlldump_image_cb;
const mqs_process_callbacks *dlldump_process_cb;

/* The specification's flow, as a debugger runs it. */
void dlldump_process(struct synth *s, struct result *r, int update_only)
{
    mqs_process *p = synth_process(s);
    if (!dlldump_image_cb)
        dlldump_image_cb = &synth_callbacks()->image;
    if (!dlldump_process_cb)
        dlldump_process_cb = &synth_callbacks()->process;
    if (!update_only) {
        const char *msg = NULL;
        char *pmsg = NULL;
        memset(r, 0, sizeof *r);
        if ((r->rc = dlldump_dll->setup_image(synth_image(s), dlldump_image_cb)) != mqs_ok)
            return;
        if ((r->rc = dlldump_dll->image_has_queues(synth_image(s), &msg)) != mqs_ok) {
            r->why = msg;
            return;
        }
        if ((r->rc = dlldump_dll->setup_process(p, dlldump_process_cb)) != mqs_ok)
            return;
        if ((r->rc = dlldump_dll->process_has_queues(p, &pmsg)) != mqs_ok) {
            r->why = pmsg;
            return;
        }
    } else {
        memset(r->comms, 0, sizeof r->comms);
        r->ncomms = 0;
        r->rc = mqs_ok;
    }
    if ((r->rc = dlldump_dll->update_communicator_list(p)) != mqs_ok)
        return;
    int rc = dlldump_dll->setup_communicator_iterator(p);
    while (rc == mqs_ok && r->ncomms < 16) {
        struct rcomm *c = &r->comms[r->ncomms];
        if ((rc = dlldump_dll->get_communicator(p, &c->c)) != mqs_ok)
            break;
        r->ncomms++;
        c->handle_rc = dlldump_dll->get_comm_handle ? dlldump_dll->get_comm_handle(p, &c->handle)
                                                    : mqs_no_information;
        c->group_rc = c->c.size <= 16 && dlldump_dll->get_comm_group
                          ? dlldump_dll->get_comm_group(p, c->group)
                          : mqs_no_information;
        for (int q = 0; q < 3; q++) {
            c->qrc[q] = dlldump_dll->setup_operation_iterator(p, q);
            if (c->qrc[q] != mqs_ok && c->qrc[q] != mqs_end_of_list) {
                if (!r->rc && c->qrc[q] != mqs_no_information) /* an answer, not a failure */
                    r->rc = c->qrc[q];
                continue;
            }
            unsigned f;
            mqs_taddr_t req;
            if (dlldump_dll->get_operation_info(p, &f, &req) != mqs_no_information)
                fail_msg("operation information before any operation");
            while (c->nops[q] < 8 && dlldump_dll->next_operation(p, &c->ops[q][c->nops[q]]) == mqs_ok) {
                if (dlldump_dll->get_operation_info(p, &f, &req) != mqs_ok)
                    f = 0xdead, req = 0;
                c->flags[q][c->nops[q]] = f;
                c->request[q][c->nops[q]++] = req;
            }
        }
        rc = dlldump_dll->next_communicator(p);
    }
    if (rc != mqs_ok && rc != mqs_end_of_list && !r->rc)
        r->rc = rc;
}

void dlldump_release(struct synth *s)
{
    mqs_process_info *pi = synth_callbacks()->basic.mqs_get_process_info_fp(synth_process(s));
    mqs_image_info *ii = synth_callbacks()->basic.mqs_get_image_info_fp(synth_image(s));
    if (pi)
        dlldump_dll->destroy_process_info(pi);
    if (ii)
        dlldump_dll->destroy_image_info(ii);
    synth_callbacks()->basic.mqs_put_process_info_fp(synth_process(s), NULL);
    synth_callbacks()->basic.mqs_put_image_info_fp(synth_image(s), NULL);
}

void dlldump_begin_job(int *job, struct synth *const *procs, const int *identity, int n)
{
    static struct result first; /* the later dumps are the tests' */
    assert_int_equal(dlldump_dll->setup_job((mqs_job *)job, &synth_callbacks()->job), mqs_ok);
    for (int i = 0; i < n; i++) {
        synth_join_job(procs[i], identity[i]);
        dlldump_process(procs[i], &first, 0);
        assert_int_equal(first.rc, mqs_ok);
        assert_int_equal(dlldump_dll->set_process_identity(synth_process(procs[i]), identity[i]),
                         mqs_ok);
    }
}

void dlldump_end_job(int *job, struct synth *const *procs, int n)
{
    const struct synth_host *h = synth_callbacks();
    for (int i = 0; i < n; i++)
        dlldump_release(procs[i]);
    mqs_job_info *info = h->basic.mqs_get_job_info_fp((mqs_job *)job);
    assert_int_equal(dlldump_dll->destroy_job_info(info), mqs_ok);
    h->basic.mqs_put_job_info_fp((mqs_job *)job, NULL);
    synth_leave_jobs();
}

const struct rcomm *dlldump_comm_named(const struct result *r, const char *name)
{
    for (int i = 0; i < r->ncomms; i++)
        if (strcmp(r->comms[i].c.name, name) == 0)
            return &r->comms[i];
    fail_msg("no communicator \"%s\" (%d shown)", name, r->ncomms);
    return NULL;
}

/* The DLL's code for the error whose message starts with prefix. */
int dlldump_code(const char *prefix)
{
    for (int c = mqs_first_user_code; c < mqs_first_user_code + 64; c++)
        if (strncmp(dlldump_dll->dll_error_string(c), prefix, strlen(prefix)) == 0)
            return c;
    fail_msg("no DLL error starts with \"%s\"", prefix);
    return -1;
}


int dlldump_fail_each_malloc(struct synth *s, const struct dlldump_check *check)
{
    struct result r;
    long before = synth_live_blocks(), c0 = synth_malloc_calls();
    dlldump_process(s, &r, 0);
    if (r.rc != mqs_ok)
        fail_msg("dump failed: %s", dlldump_dll->dll_error_string(r.rc));
    if (check)
        check->fn(&r, check->arg);
    dlldump_release(s);
    long total = synth_malloc_calls() - c0;
    assert_true(total > 5);
    assert_int_equal(synth_live_blocks(), before);
    int failures = 0;
    for (long k = 1; k <= total; k++) {
        synth_fail_malloc_at(k);
        dlldump_process(s, &r, 0);
        synth_fail_malloc_at(0);
        if (r.rc != mqs_ok) {
            failures++;
            if (!strstr(dlldump_dll->dll_error_string(r.rc), "out of memory"))
                fail_msg("malloc failure %ld of %ld: code %d (%s)", k, total, r.rc,
                         dlldump_dll->dll_error_string(r.rc));
        }
        dlldump_release(s);
        if (synth_live_blocks() != before)
            fail_msg("malloc failure %ld of %ld leaked %ld blocks", k, total,
                     synth_live_blocks() - before);
    }
    assert_true(failures > 0);
    return failures;
}
