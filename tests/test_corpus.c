/*
 * test_corpus.c - every fuzz target's committed seeds (tests/fuzz/corpus/
 * NAME) replayed through the target, built without libFuzzer
 * (tests/fuzz/replay.c): each input must run to its end, with no crash,
 * no failed check and, in a sanitized build, no report.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

/* Replay corpus NAME; its output's count of inputs must be > 0. */
static void replay(const char *name)
{
    char cmd[8192], corpus[4096];
    snprintf(corpus, sizeof corpus, "%s/fuzz/corpus/%s", env_or("MQD_TESTS_SRC", "tests"), name);
    snprintf(cmd, sizeof cmd, "%s/tests/replay_%s %s 2>&1", env_or("MQD_BUILD", "build"), name,
             corpus);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[4096];
    long inputs = -1;
    while (fgets(line, sizeof line, p)) {
        const char *at = strstr(line, ": ");
        if (strstr(line, "inputs replayed") && at)
            inputs = strtol(at + 2, NULL, 10);
        else
            fputs(line, stderr); /* a finding's report */
    }
    int st = pclose(p);
    printf("replay_%s: %ld inputs, exit %d\n", name, inputs,
           WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("replay_%s failed on %s", name, corpus);
    assert_true(inputs > 0);
}

static void test_corpus__dll(void **state)
{
    (void)state;
    replay("dll");
}

static void test_corpus__result(void **state)
{
    (void)state;
    replay("result");
}

static void test_corpus__expect(void **state)
{
    (void)state;
    replay("expect");
}

static void test_corpus__proc(void **state)
{
    (void)state;
    replay("proc");
}

static void test_corpus__text(void **state)
{
    (void)state;
    replay("text");
}

static void test_corpus__image(void **state)
{
    (void)state;
    replay("image");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus__dll),    cmocka_unit_test(test_corpus__result),
        cmocka_unit_test(test_corpus__expect), cmocka_unit_test(test_corpus__proc),
        cmocka_unit_test(test_corpus__image),  cmocka_unit_test(test_corpus__text),
    };
    return cmocka_run_group_tests_name("corpus", tests, NULL, NULL);
}
