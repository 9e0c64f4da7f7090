/*
 * test_json_format.c - mqdump's JSON is the format docs/JSON.md documents.
 *
 * docs/json-schema.json describes every object mqdump writes (format 1),
 * every object in it closed: a member the schema does not list is an
 * error, as is a value of another type (an integer is told from a number
 * with a fraction), a required member missing, or a value outside an
 * enumeration.  tests/schema.c validates against it.
 *
 * Without MPI: the schema keeps to the validator's subset and closes every
 * object, docs/JSON.md names every member the schema has, and the
 * validator finds what it must (a table of documents, good and bad).
 * With the cached MPICH: every sample (samples/ *.expect) runs, and its
 * `mqdump --job PID --json`, and `--json --stacks --stats`, must fit the
 * schema and start with "format"; so must --stacks=full, a dump made with
 * MPICH's own libtvmpich.so, one with a process that is not an MPI
 * program (its error, no "where"), and --list --json.
 *
 * Environment: MQD_BUILD, MQD_MPICH_PREFIX, MQD_SAMPLES_SRC, MQD_TESTS_SRC
 * (docs/ is beside it).
 */
#define _GNU_SOURCE
#include "tests/compare.h"
#include "tests/expect.h"
#include "tests/joblaunch.h"
#include "tests/json.h"
#include "tests/schema.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
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

/* ---------------------------------------------------------------- files */

/* docs/NAME, beside $MQD_TESTS_SRC, into buf. */
static const char *docs_path(char *buf, size_t len, const char *name)
{
    const char *tests = getenv("MQD_TESTS_SRC");
    snprintf(buf, len, "%s/../docs/%s", tests && *tests ? tests : "tests", name);
    return buf;
}

/* The whole of file path (malloc'd), or a failed test. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot read %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (size_t got; (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            buf = realloc(buf, cap *= 2);
            assert_non_null(buf);
        }
    }
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static struct json *schema;

static int load_schema(void **state)
{
    (void)state;
    char path[PATH_MAX], err[512];
    char *text = slurp(docs_path(path, sizeof path, "json-schema.json"));
    schema = json_parse(text, err, sizeof err);
    free(text);
    if (!schema) {
        fprintf(stderr, "%s: %s\n", path, err);
        return -1;
    }
    return 0;
}

static int free_schema(void **state)
{
    (void)state;
    json_free(schema);
    return 0;
}

/* ---------------------------------------------------------------- the schema and the docs */

static void test_json_format__schema_keeps_to_the_subset_and_closes_objects(void **state)
{
    (void)state;
    char err[512];
    if (schema_check(schema, 1, err, sizeof err) != 0)
        fail_msg("docs/json-schema.json: %s", err);
    assert_non_null(schema_def(schema, "dump"));
    assert_non_null(schema_def(schema, "jobs"));
}

/* Every member name under schema s ("properties", at any depth) that
 * docs/JSON.md does not name in backquotes, into missing (comma
 * separated). */
static void undocumented(const struct json *s, const char *doc, char *missing, size_t len)
{
    if (!s || (s->kind != JSON_OBJECT && s->kind != JSON_ARRAY))
        return;
    const struct json *props = json_get(s, "properties");
    for (int i = 0; props && i < props->n; i++) {
        char quoted[128];
        snprintf(quoted, sizeof quoted, "`%s`", props->keys[i]);
        if (!strstr(doc, quoted) && !strstr(missing, quoted)) {
            size_t at = strlen(missing);
            snprintf(missing + at, len - at, "%s%s", at ? ", " : "", quoted);
        }
    }
    for (int i = 0; i < s->n; i++)
        undocumented(&s->items[i], doc, missing, len);
}

static void test_json_format__docs_name_every_member(void **state)
{
    (void)state;
    char path[PATH_MAX], missing[4096] = "";
    char *doc = slurp(docs_path(path, sizeof path, "JSON.md"));
    undocumented(schema, doc, missing, sizeof missing);
    /* The versioning rule and the format's number are there too. */
    int has_rule = strstr(doc, "\"format\": 1") != NULL;
    free(doc);
    if (missing[0])
        fail_msg("docs/JSON.md does not document %s", missing);
    assert_true(has_rule);
}

/* ---------------------------------------------------------------- the validator */

/* A process as mqdump writes one, with `extra` after its pid. */
#define PROCESS(extra)                                                                        \
    "{\"pid\": 4242" extra ", \"rank\": 0, \"world\": 0, \"identity\": 0, \"host\": \"n1\", "  \
    "\"image\": \"/a.out\", \"dll\": null, \"dll_source\": \"none\", \"dll_why\": null, "      \
    "\"error\": null, \"where\": null, \"user_frame\": null, \"communicators\": []}"
#define OP(status)                                                                            \
    "{\"status\": \"" status "\", \"desired_local_rank\": 1, \"desired_global_rank\": 1, "     \
    "\"tag_wild\": false, \"desired_tag\": 7, \"desired_length\": 32, \"system_buffer\": "     \
    "false, \"buffer\": 18446744073709551615, \"actual_local_rank\": -1, "                    \
    "\"actual_global_rank\": -1, \"actual_tag\": -1, \"actual_length\": -1, \"extra_text\": " \
    "[\"receive: 8 x MPI_INT\"], \"collective\": false, \"request\": 0}"
#define COMM(ops)                                                                             \
    "{\"name\": \"MPI_COMM_WORLD\", \"unique_id\": 1, \"local_rank\": 0, \"size\": 2, "        \
    "\"handle\": null, \"group\": [0, 1], \"group_error\": null, \"pending_sends\": [], "      \
    "\"pending_receives\": [" ops "], \"unexpected_messages\": null, \"queue_errors\": []}"

static const struct validator_case {
    const char *def;  /* the schema's $defs member; NULL: the whole schema */
    const char *text;
    const char *says; /* NULL: valid; else in the error */
} validator_cases[] = {
    {"dump", "{\"format\": 1, \"processes\": []}", NULL},
    {NULL, "{\"format\": 1, \"processes\": [" PROCESS("") "]}", NULL},
    {"dump",
     "{\"format\": 1, \"processes\": [{\"pid\": 1, \"rank\": 0, \"world\": 0, \"identity\": 0, "
     "\"host\": null, \"image\": null, \"dll\": null, \"dll_source\": \"mqd\", \"dll_why\": "
     "null, \"error\": null, \"where\": {\"call\": \"MPI_Recv\", \"function\": \"f\", "
     "\"file\": null, \"line\": 0, \"thread\": 1, \"args\": {\"source\": -1, \"comm\": 4, "
     "\"comm_name\": null}, \"args_why\": null, \"args_from\": null}, \"user_frame\": null, \"stats\": "
     "{\"callbacks\": 1, \"fetches\": 1, \"bytes\": 8, \"syscalls\": 1, \"seconds\": 0.5e-3}, "
     "\"communicators\": [" COMM(OP("matched")) "]}], \"cost\": {\"user_seconds\": 0.010000, "
     "\"system_seconds\": 0, \"max_rss_kb\": 9000, \"workers\": 2, \"files\": 5}}",
     NULL},
    {"jobs",
     "{\"format\": 1, \"jobs\": [{\"launcher\": 5, \"ranks\": 2, \"uid\": 0, \"command\": "
     "\"mpiexec -n 2 ./a\\u0007\", \"program\": null}]}",
     NULL},
    {"dump", "{\"format\": 2, \"processes\": []}", "at /format: not the one value"},
    {"dump", "{\"format\": 1.0, \"processes\": []}", "at /format: a number where"},
    {"dump", "{\"processes\": []}", "required member \"format\" missing"},
    {"dump", "{\"format\": 1, \"processes\": [], \"extra\": 0}", "at /extra: member \"extra\" is "
                                                                 "not in the schema"},
    {"dump", "{\"format\": 1, \"format\": 1, \"processes\": []}", "given twice"},
    {"dump", "{\"format\": 1, \"processes\": [" PROCESS(", \"rss\": 1") "]}",
     "at /processes/0/rss: member \"rss\""},
    {"dump", "{\"format\": 1, \"processes\": [" PROCESS("") ", " PROCESS("") ", 7]}",
     "at /processes/2: an integer where the schema allows only object"},
    {"dump",
     "{\"format\": 1, \"processes\": [{\"pid\": \"4242\", \"rank\": 0, \"world\": 0, "
     "\"identity\": 0, \"host\": null, \"image\": null, \"dll\": null, \"dll_source\": \"none\", "
     "\"dll_why\": null, \"error\": null, \"where\": null, \"user_frame\": null, "
     "\"communicators\": []}]}",
     "at /processes/0/pid: a string where the schema allows only integer"},
    {"dump",
     "{\"format\": 1, \"processes\": [{\"pid\": 4242, \"rank\": 0, \"world\": 0, "
     "\"identity\": 0, \"host\": null, \"image\": null, \"dll\": null, \"dll_source\": \"none\", "
     "\"dll_why\": null, \"error\": null, \"where\": \"MPI_Recv\", \"user_frame\": null, "
     "\"communicators\": []}]}",
     "at /processes/0/where: a string where"},
    {"dump",
     "{\"format\": 1, \"processes\": [{\"pid\": 4242, \"rank\": 0, \"world\": 0, "
     "\"identity\": 0, \"host\": null, \"image\": null, \"dll\": null, \"dll_source\": \"none\", "
     "\"dll_why\": null, \"error\": null, \"user_frame\": null, \"communicators\": []}]}",
     "at /processes/0: required member \"where\" missing"},
    {"dump",
     "{\"format\": 1, \"processes\": [{\"pid\": 4242, \"rank\": 0, \"world\": 0, "
     "\"identity\": 0, \"host\": null, \"image\": null, \"dll\": null, \"dll_source\": \"own\", "
     "\"dll_why\": null, \"error\": null, \"where\": null, \"user_frame\": null, "
     "\"communicators\": []}]}",
     "at /processes/0/dll_source: not one of the values"},
    {"dump",
     "{\"format\": 1, \"processes\": [{\"pid\": 4242, \"rank\": -2, \"world\": 0, "
     "\"identity\": 0, \"host\": null, \"image\": null, \"dll\": null, \"dll_source\": \"none\", "
     "\"dll_why\": null, \"error\": null, \"where\": null, \"user_frame\": null, "
     "\"communicators\": []}]}",
     "at /processes/0/rank: less than the schema's minimum -1"},
    {"dump",
     "{\"format\": 1, \"processes\": [{\"pid\": 1, \"rank\": 0, \"world\": 0, \"identity\": 0, "
     "\"host\": null, \"image\": null, \"dll\": null, \"dll_source\": \"mqd\", \"dll_why\": "
     "null, \"error\": null, \"where\": null, \"user_frame\": null, \"communicators\": "
     "[" COMM(OP("pending") ", " OP("waiting")) "]}]}",
     "at /processes/0/communicators/0/pending_receives/1/status: not one of"},
    {"dump",
     "{\"format\": 1, \"processes\": [{\"pid\": 1, \"rank\": 0, \"world\": 0, \"identity\": 0, "
     "\"host\": null, \"image\": null, \"dll\": null, \"dll_source\": \"mqd\", \"dll_why\": "
     "null, \"error\": null, \"where\": null, \"user_frame\": null, \"stats\": {\"callbacks\": "
     "1.5, \"fetches\": 1, \"bytes\": 8, \"syscalls\": 1, \"seconds\": 1}, \"communicators\": "
     "[]}]}",
     "at /processes/0/stats/callbacks: a number where the schema allows only integer"},
    {"dump", "{\"format\": 1, \"processes\": [" PROCESS(", \"host\": \"x\ny\"") "]}",
     "a control character in a string"},
    {"dump", "{\"format\": 1, \"processes\": []} {}", "text after the document"},
    {"dump", "{\"format\": 1, \"processes\": [],}", "a comma before the end of an object"},
    {"jobs", "{\"format\": 1, \"jobs\": [{\"launcher\": 5, \"ranks\": 2, \"command\": null, "
             "\"program\": null}]}",
     "at /jobs/0: required member \"uid\" missing"},
    {NULL, "{\"format\": 1, \"jobs\": [], \"processes\": []}", "not in the schema"},
};

static void test_json_format__validator_finds_what_it_must(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof validator_cases / sizeof validator_cases[0]; i++) {
        const struct validator_case *c = &validator_cases[i];
        const struct json *s = c->def ? schema_def(schema, c->def) : schema;
        char err[1024];
        assert_non_null(s);
        int rc = schema_validate(schema, s, c->text, err, sizeof err);
        if (!c->says && rc != 0)
            fail_msg("case %zu: valid, but: %s", i, err);
        if (c->says && (rc == 0 || !strstr(err, c->says)))
            fail_msg("case %zu: want \"%s\", got %s", i, c->says, rc ? err : "valid");
    }
}

/* ---------------------------------------------------------------- mqdump's own output */

/* A job or a process a test started, ended however the test ends
 * (stop_started). */
static struct job job;
static int job_running;
static pid_t bystander;

static int stop_started(void **state)
{
    (void)state;
    if (job_running)
        job_stop(&job);
    job_running = 0;
    if (bystander > 0) {
        kill(bystander, SIGKILL);
        waitpid(bystander, NULL, 0);
    }
    bystander = 0;
    return 0;
}

/* Run mqdump with args (NULL-terminated); its stdout (malloc'd) into *out,
 * its exit status (128+N for signal N) returned. */
static int run_mqdump(char **out, const char *const *args)
{
    /* a JSON dump says its processes' errors on stderr: not read */
    int rc = job_run_mqdump(args, NULL, out, NULL);
    assert_true(rc >= 0 && *out);
    return rc;
}

/* What a dump's JSON must hold beyond the schema. */
enum { WITH_STACKS = 1, WITH_STATS = 2 };

/*
 * mqdump args (NULL-terminated) must exit 0 or 1 (a process not dumped, or
 * the analysis unsure: still a whole object) with JSON that fits $defs
 * member def, starts with its "format", and (want) has the members
 * --stacks and --stats add.  0, or -1 with why in msg.
 */
static int check_json(const char *def, const char *const *args, unsigned want, char *msg,
                      size_t len)
{
    char *out, err[1024];
    int rc = run_mqdump(&out, args), bad = 0;
    static const char start[] = "{\"format\": 1, ";
    if (rc != 0 && rc != 1) {
        snprintf(msg, len, "mqdump exited %d", rc);
        bad = 1;
    } else if (schema_validate(schema, schema_def(schema, def), out, err, sizeof err) != 0) {
        snprintf(msg, len, "%s", err);
        bad = 1;
    } else if (strncmp(out, start, sizeof start - 1) != 0) {
        snprintf(msg, len, "\"format\" is not its first member: %.40s", out);
        bad = 1;
    }
    struct json *j = !bad && want ? json_parse(out, err, sizeof err) : NULL;
    if (j) {
        const struct json *procs = json_get(j, "processes");
        int threads = 1, stats = 1;
        for (int i = 0; i < procs->n; i++) {
            threads &= json_get(&procs->items[i], "threads") != NULL;
            stats &= json_get(&procs->items[i], "stats") != NULL;
        }
        if ((want & WITH_STACKS) && (!json_get(j, "stacks") || !threads))
            bad = 1, snprintf(msg, len, "--stacks: no \"stacks\", or a process without "
                                        "\"threads\"");
        if ((want & WITH_STATS) && (!json_get(j, "cost") || !stats))
            bad = 1, snprintf(msg, len, "--stats: no \"cost\", or a process without \"stats\"");
    }
    json_free(j);
    free(out);
    return bad ? -1 : 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The samples (every samples/NAME.expect), by name: *names (malloc'd, as
 * each name is) of the count returned. */
static int sample_names(char ***names)
{
    const char *dir = getenv("MQD_SAMPLES_SRC");
    DIR *dp = opendir(dir && *dir ? dir : "samples");
    assert_non_null(dp);
    int n = 0;
    *names = NULL;
    for (struct dirent *e; (e = readdir(dp)) != NULL;) {
        size_t l = strlen(e->d_name);
        if (l <= 7 || strcmp(e->d_name + l - 7, ".expect") != 0)
            continue;
        *names = realloc(*names, (size_t)(n + 1) * sizeof **names);
        assert_non_null(*names);
        (*names)[n++] = strndup(e->d_name, l - 7);
    }
    closedir(dp);
    qsort(*names, (size_t)n, sizeof **names, by_name);
    return n;
}

/* Start sample name with the ranks its .expect says. */
static void start_sample(const char *name)
{
    char err[512];
    struct expect e;
    if (expect_load_sample(name, &e, err, sizeof err) != 0)
        fail_msg("%s", err);
    int np = e.np;
    expect_free(&e);
    if (job_start(&job, name, np, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
    job_running = 1;
}

static void stop_sample(void)
{
    job_running = 0;
    assert_int_equal(job_stop(&job), 0);
}

static void test_json_format__every_sample_fits_the_schema(void **state)
{
    (void)state;
    char **names;
    int n = sample_names(&names);
    assert_true(n >= 20);
    const struct mpich_allowances *all = compare_mpich_allowed();
    for (int s = 0; s < n; s++) {
        if (compare_sample_returns(all, names[s])) { /* nothing to dump: it ends */
            free(names[s]);
            continue;
        }
        start_sample(names[s]);
        char pid[16], msg[1200];
        snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
        const char *plain[] = {"--job", pid, "--json", NULL};
        const char *more[] = {"--job", pid, "--json", "--stacks", "--stats", NULL};
        if (check_json("dump", plain, 0, msg, sizeof msg) != 0)
            fail_msg("%s: mqdump --job %s --json: %s", names[s], pid, msg);
        if (check_json("dump", more, WITH_STACKS | WITH_STATS, msg, sizeof msg) != 0)
            fail_msg("%s: mqdump --job %s --json --stacks --stats: %s", names[s], pid, msg);
        stop_sample();
        free(names[s]);
    }
    free(names);
}

static void test_json_format__other_outputs_fit_the_schema(void **state)
{
    (void)state;
    char pid[16], rank0[16], other[16], tv[PATH_MAX], msg[1200];
    const char *prefix = getenv("MQD_MPICH_PREFIX");
    snprintf(tv, sizeof tv, "%s/lib/libtvmpich.so", prefix ? prefix : "");
    start_sample("hidden");
    snprintf(pid, sizeof pid, "%d", (int)job.mpiexec);
    snprintf(rank0, sizeof rank0, "%d", (int)job.ranks[0]);
    /* A process that is no MPI program: its error, and no "where".  It
     * execs, so that it holds none of this test's descriptors (the job's
     * stdin among them: the job would never end). */
    bystander = fork();
    assert_true(bystander >= 0);
    if (bystander == 0) {
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, 0);
        dup2(devnull, 1);
        dup2(devnull, 2);
        execlp("sleep", "sleep", "600", (char *)NULL);
        _exit(127);
    }
    snprintf(other, sizeof other, "%d", (int)bystander);
    static const struct {
        const char *def, *what;
        unsigned want;
    } cases[] = {
        {"dump", "--stacks=full", WITH_STACKS},
        {"dump", "libtvmpich.so", 0},
        {"dump", "a process not dumped", 0},
        {"jobs", "--list", 0},
    };
    const char *const args[][10] = {
        {"--job", pid, "--json", "--stacks=full", NULL},
        {"--job", pid, "--json", "--dll", tv, "--stats", NULL},
        {"--pid", rank0, "--pid", other, "--json", "--stacks", NULL},
        {"--list", "--json", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (check_json(cases[i].def, args[i], cases[i].want, msg, sizeof msg) != 0)
            fail_msg("%s: %s", cases[i].what, msg);
    stop_sample();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_format__schema_keeps_to_the_subset_and_closes_objects),
        cmocka_unit_test(test_json_format__docs_name_every_member),
        cmocka_unit_test(test_json_format__validator_finds_what_it_must),
        cmocka_unit_test_teardown(test_json_format__every_sample_fits_the_schema,
                                  stop_started),
        cmocka_unit_test_teardown(test_json_format__other_outputs_fit_the_schema,
                                  stop_started),
    };
    return cmocka_run_group_tests_name("json_format", tests, load_schema, free_schema);
}
