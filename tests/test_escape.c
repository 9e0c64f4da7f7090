/*
 * test_escape.c - strings that others choose, made fit to show
 * (host/base/escape.c), and host names checked before they are used
 * (host/job/hosts.c): table-driven, each case what a hostile target, launcher
 * or agent could write.
 */
#define _GNU_SOURCE
#include "mqdhost.h"
#include "host/job/hosts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static const struct {
    const char *in, *out;
} escapes[] = {
    {"n1.cluster", "n1.cluster"},
    {"", ""},
    {"evil\nDEADLOCK: forged line\033[31m", "evil\\nDEADLOCK: forged line\\e[31m"},
    {"tab\there\rback\\slash", "tab\\there\\rback\\\\slash"},
    {"bell\a del\x7f nul-less \x01", "bell\\x07 del\\x7f nul-less \\x01"},
    {"caf\xc3\xa9 \xe2\x9c\x93", "caf\xc3\xa9 \xe2\x9c\x93"},      /* UTF-8 kept */
    {"csi\xc2\x9b" "31m", "csi\\u009b31m"},                           /* C1 control */
    {"abc\xe2\x80\xae" "cba", "abc\\u202ecba"},                       /* RLO */
    {"line\xe2\x80\xa8sep", "line\\u2028sep"},                        /* U+2028 */
    {"lone\xc3", "lone\\xc3"},                                        /* cut short */
    {"over\xc0\xaflong", "over\\xc0\\xaflong"},                       /* overlong '/' */
    {"sur\xed\xa0\x80gate", "sur\\xed\\xa0\\x80gate"},                /* U+D800 */
    {"big\xf4\x90\x80\x80", "big\\xf4\\x90\\x80\\x80"},               /* > U+10FFFF */
    {"stray\x80", "stray\\x80"},
};

static void test_escape__table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof escapes / sizeof escapes[0]; i++) {
        char buf[256];
        size_t need = mqdh_escape(buf, sizeof buf, escapes[i].in);
        if (strcmp(buf, escapes[i].out) != 0)
            fail_msg("case %zu: \"%s\", not \"%s\"", i, buf, escapes[i].out);
        assert_int_equal(need, strlen(escapes[i].out));
        assert_int_equal(mqdh_escape(NULL, 0, escapes[i].in), need);
    }
}

/* Cut short, the output stops after the last whole escape or character
 * that fits, is NUL-terminated, and the length returned is the whole's. */
static void test_escape__truncation_keeps_units_whole(void **state)
{
    (void)state;
    const char *in = "ab\ncaf\xc3\xa9\033";
    const char *whole = "ab\\ncaf\xc3\xa9\\e";
    static const size_t ends[] = {0, 1, 2, 4, 5, 6, 7, 9, 11}; /* where units end */
    for (size_t len = 1; len <= strlen(whole) + 1; len++) {
        char buf[64];
        memset(buf, 'X', sizeof buf);
        assert_int_equal(mqdh_escape(buf, len, in), strlen(whole));
        size_t fit = 0;
        for (size_t u = 0; u < sizeof ends / sizeof ends[0]; u++)
            if (ends[u] < len)
                fit = ends[u];
        assert_int_equal(strlen(buf), fit);
        assert_memory_equal(buf, whole, fit);
    }
    assert_int_equal(mqdh_escape(NULL, 0, NULL), 0);
}

/* Every string of a dump escaped in place, heap and array ones alike. */
static void test_escape__dump_in_place(void **state)
{
    (void)state;
    struct mqdh_dump *d = calloc(1, sizeof *d);
    assert_non_null(d);
    d->nprocs = 1;
    d->procs = calloc(1, sizeof *d->procs);
    d->stacks = calloc(1, sizeof *d->stacks);
    assert_non_null(d->procs);
    assert_non_null(d->stacks);
    struct mqdh_process *p = &d->procs[0];
    p->host = strdup("evil\nDEADLOCK: forged");
    p->error = strdup("host evil\033[2J: no agent");
    p->image = strdup("/plain/path");
    p->ncomms = 1;
    p->comms = calloc(1, sizeof *p->comms);
    assert_non_null(p->comms);
    /* a name that grows past its array: cut at a whole escape */
    memset(p->comms[0].name, '\n', sizeof p->comms[0].name - 1);
    p->comms[0].queues[MQDH_RECEIVES].nops = 1;
    p->comms[0].queues[MQDH_RECEIVES].ops = calloc(1, sizeof(struct mqdh_op));
    assert_non_null(p->comms[0].queues[MQDH_RECEIVES].ops);
    snprintf(p->comms[0].queues[MQDH_RECEIVES].ops[0].extra_text[0], 64, "x\033]0;title\a");
    d->stacks[0].nthreads = 1;
    d->stacks[0].threads = calloc(1, sizeof(struct mqdh_thread));
    assert_non_null(d->stacks[0].threads);
    struct mqdh_thread *t = &d->stacks[0].threads[0];
    t->nframes = 1;
    t->frames = calloc(1, sizeof(struct mqdh_frame));
    assert_non_null(t->frames);
    t->frames[0].function = strdup("f\x9b");
    t->frames[0].file = strdup("src/\xe2\x80\xae" "c.main");
    assert_int_equal(mqdh_dump_escape(d), MQDH_OK);
    assert_string_equal(p->host, "evil\\nDEADLOCK: forged");
    assert_string_equal(p->error, "host evil\\e[2J: no agent");
    assert_string_equal(p->image, "/plain/path");
    assert_int_equal(strlen(p->comms[0].name), 62); /* 31 whole "\n" */
    assert_int_equal(strspn(p->comms[0].name, "\\n"), 62);
    assert_string_equal(p->comms[0].queues[MQDH_RECEIVES].ops[0].extra_text[0],
                        "x\\e]0;title\\x07");
    assert_string_equal(t->frames[0].function, "f\\x9b");
    assert_string_equal(t->frames[0].file, "src/\\u202ec.main");
    mqdh_dump_free(d);
}

static const struct {
    const char *name;
    int ok;
    const char *says; /* part of the reason */
} hosts[] = {
    {"n1", 1, NULL},
    {"node-01.cluster.example", 1, NULL},
    {"gpu_3", 1, NULL},
    {"10.1.2.3", 1, NULL},
    {"fe80::1", 1, NULL},
    {"[2001:db8::7]", 1, NULL},
    {"-oProxyCommand=/home/u/evil", 0, "starts with '-'"},
    {"evil\nDEADLOCK: forged line\033[31m", 0, "other than letters"},
    {"a b", 0, "other than letters"},
    {"host;rm", 0, "other than letters"},
    {"$(id)", 0, "other than letters"},
    {".hidden", 0, "starts with '.'"},
    {"", 0, "empty"},
    {"[::1", 0, "other than letters"},
};

static void test_escape__host_names(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++) {
        char why[256] = "";
        int rc = mqdh__host_name_check(hosts[i].name, why, sizeof why);
        if ((rc == 0) != hosts[i].ok)
            fail_msg("host %zu: %s (%s)", i, rc == 0 ? "taken" : "refused", why);
        if (!hosts[i].ok && !strstr(why, hosts[i].says))
            fail_msg("host %zu: \"%s\" does not say \"%s\"", i, why, hosts[i].says);
    }
    char long_name[300];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    char why[256];
    assert_int_not_equal(mqdh__host_name_check(long_name, why, sizeof why), 0);
    assert_non_null(strstr(why, "longer than 253"));
    /* A name that is no host name is never taken for this host. */
    assert_int_equal(mqdh__host_is_local("-oProxyCommand=x"), 0);
    assert_int_equal(mqdh__host_is_local("localhost\nDEADLOCK"), 0);
    assert_int_equal(mqdh__host_is_local("localhost"), 1);
    /* An address is compared with this host's own (read only when a name
     * needs them): the loopback is here, a documentation address not. */
    assert_int_equal(mqdh__host_is_local("127.0.0.1"), 1);
    assert_int_equal(mqdh__host_is_local("192.0.2.1"), 0);
    const char *mixed[] = {"localhost", "127.0.0.1"};
    int local[2] = {0, 0};
    assert_int_equal(mqdh__hosts_local(mixed, 2, 5.0, local, NULL), 0);
    assert_int_equal(local[0], 1);
    assert_int_equal(local[1], 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape__table),
        cmocka_unit_test(test_escape__truncation_keeps_units_whole),
        cmocka_unit_test(test_escape__dump_in_place),
        cmocka_unit_test(test_escape__host_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
