/*
 * mqdump - show the MPI message queues of stopped or hung processes.
 * Uses only the public libmqdhost API (mqdhost.h); the views are in
 * text.c, json.c, graph.c and stacks.c (mqdump.h).
 *
 * main reads the command line into a struct command, then does the one
 * task it asks for: dump processes and show them, list the jobs of this
 * node, check a DLL, or serve a front end as its agent (agent.c).
 */
#define _GNU_SOURCE
#include "agent.h"
#include "common.h"
#include "mqdump.h"
#include "progress.h"
#include "save.h"
#include "watch.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>


static void usage(FILE *f)
{
    fputs("usage: mqdump [OPTIONS] --job LAUNCHER_PID\n"
          "       mqdump [OPTIONS] --pid PID [--pid PID ...]\n"
          "       mqdump [--list]\n"
          "       mqdump [OPTIONS] --load FILE\n"
          "       mqdump --check-dll PATH\n"
          "       mqdump --agent HOST [--owner UID] [OPTIONS] PID:RANK ...\n"
          "       mqdump --agent-any [--owner UID] [OPTIONS] HOST=PID:RANK[,...] ...\n"
          "                                             (run by mqdump itself)\n"
          "Show the MPI message queues of processes, and who waits for whom.\n\n"
          "  -j, --job PID           every rank of the job this launcher (mpiexec) runs,\n"
          "                          and the processes they spawned (MPI_Comm_spawn)\n"
          "  -p, --pid PID           a process to dump (repeatable)\n"
          "  -l, --list              the MPI jobs on this node (also: no arguments)\n"
          "  -d, --dll PATH          the debug DLL to use (default: $MQD_DLL, else mqd's\n"
          "                          own for MPICH or Open MPI, else the one the process\n"
          "                          names)\n"
          "      --target-dll        use the DLL the process names (MPIR_dll_name), not\n"
          "                          mqd's own\n"
          "      --trust-target-dll  load a DLL that fails the ownership and permission\n"
          "                          checks: one the process names, or as root --dll's\n"
          "      --check-dll PATH    load and validate a debug DLL, print its version\n"
          "      --full              every process in full, not processes in the same\n"
          "                          state folded together under their ranks (in the\n"
          "                          text and in --graph's nodes)\n"
          "      --json              one JSON object instead of text\n"
          "      --graph FILE        the queues and deadlocks as a Graphviz graph: DOT,\n"
          "                          or SVG/PNG/PDF (by FILE's suffix) rendered by dot\n"
          "      --stacks[=full]     where every process is: all stacks merged into one\n"
          "                          call tree from main, branches labelled with their\n"
          "                          ranks (full: the MPI library's frames too)\n"
          "      --stacks-graph FILE that tree as a Graphviz graph (as --graph does)\n"
          "      --save FILE         keep the dump in FILE too (text, docs/RESULT.md),\n"
          "                          stacks included, to be shown again with --load\n"
          "      --load FILE         show a dump saved by --save, with any view, instead\n"
          "                          of dumping a job\n"
          "  -q, --quiet             no progress on stderr (shown on a terminal when a\n"
          "                          dump takes over a second)\n"
          "      --watch S           look twice, S seconds apart (the processes running in\n"
          "                          between), and say what moved: stacks, queues, CPU\n"
          "                          time outside MPI's progress loop; or that nothing did\n"
          "      --stats             per process: DLL callbacks, bytes, system calls, time;\n"
          "                          and what mqdump itself took (CPU, memory, workers)\n"
          "      --timeout S         seconds the debug DLL has for each process (default\n"
          "                          30; 0: no limit): a DLL that takes longer, or\n"
          "                          crashes, is given up on for that process\n"
          "      --jobs N            N threads set up and read the processes at once\n"
          "                          (default: one per CPU with mqd's DLL, else 1)\n"
          "Ranks on other hosts (--job): one agent per host, this mqdump run there.\n"
          "      --remote TEMPLATE   how to run it on a host, {host} replaced (default:\n"
          "                          $MQD_REMOTE, else 'ssh -o BatchMode=yes {host}'); e.g.\n"
          "                          'srun --overlap --jobid=ID -N1 -n1 -w {host}' or\n"
          "                          'pdsh -N -w {host}'; or on all hosts at once, {hosts}\n"
          "                          replaced by their names comma-joined, {nhosts} by\n"
          "                          their count, each agent picking its host's ranks:\n"
          "                          'srun --overlap --jobid=ID -N{nhosts} -n{nhosts}\n"
          "                          --label -w {hosts}' or 'pdsh -R ssh -w {hosts}'\n"
          "      --agent-path PATH   the agent on those hosts (default: $MQD_AGENT, else\n"
          "                          this mqdump's own path)\n"
          "      --remote-timeout S  seconds each command running agents has (default 60)\n"
          "      --fanout N          agents started at once (default 256)\n"
          "      --local-only        start no agent: other hosts' ranks are not dumped\n"
          "  -v, --verbose           show the DLL's diagnostic messages\n"
          "  -h, --help              this text\n\n"
          "Exit status: 0 every process dumped and the analysis sure (a deadlock or\n"
          "none), 1 some process not dumped or the analysis cannot tell, 2 nothing\n"
          "dumped, 64 usage error.\n",
          f);
}

/* *v from s, all of it a decimal number in [lo, hi]: 0, or -1. */
static int number_in(const char *s, long lo, long hi, long *v)
{
    char *end;
    *v = strtol(s, &end, 10);
    return end != s && !*end && *v >= lo && *v <= hi ? 0 : -1;
}

/* "LEADmsgTAIL" on stderr, msg escaped: the library's messages quote what
 * processes, launchers, agents and DLLs hold. */
static void say_line(const char *lead, const char *msg, const char *tail)
{
    size_t need = mqdh_escape(NULL, 0, msg);
    char *e = malloc(need + 1);
    if (e)
        mqdh_escape(e, need + 1, msg);
    fprintf(stderr, "%s%s%s\n", lead, e ? e : "(out of memory)", tail);
    free(e);
}

/* "mqdump: PREFIXmsg" on stderr, msg escaped. */
static void say(const char *prefix, const char *msg)
{
    char lead[96];
    snprintf(lead, sizeof lead, "mqdump: %s", prefix);
    say_line(lead, msg, "");
}

/* Process pid's error on stderr (a JSON dump's stdout holds the rest). */
static void shown_error(pid_t pid, const char *error)
{
    char prefix[48];
    snprintf(prefix, sizeof prefix, "process %d: ", (int)pid);
    say(prefix, error);
}

/* ---------------------------------------------------------------- signals, scheduling */

/* Interrupted mid-dump: let every process go, then die of the signal. */
static void on_fatal_signal(int sig)
{
    mqdh_release_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Let every process go on the signals that end mqdump (on_fatal_signal). */
static void catch_fatal_signals(void)
{
    static const int fatal[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigfillset(&sa.sa_mask);
        sigaction(fatal[i], &sa, NULL);
    }
}

/*
 * Ask the scheduler for short slices (sched_setattr's sched_runtime for a
 * normal task, Linux 6.12 and later; older kernels ignore it).  Until the
 * ranks are stopped, and again once they are let go, mqdump competes with
 * every rank of the node spinning in MPI's progress loop, and it needs
 * the CPU for moments only: with a short slice it gets them soon after it
 * wakes, rather than after a turn of every rank.  Its share of the CPU,
 * its nice value and its policy stay as they were.
 */
static void prefer_latency(void)
{
    struct { /* the kernel's struct sched_attr (linux/sched/types.h), version 1 */
        uint32_t size, sched_policy;
        uint64_t sched_flags;
        int32_t sched_nice;
        uint32_t sched_priority;
        uint64_t sched_runtime, sched_deadline, sched_period;
    } at;
    memset(&at, 0, sizeof at);
    if (syscall(SYS_sched_getattr, 0, &at, (unsigned)sizeof at, 0U) != 0 ||
        at.sched_policy != 0 /* SCHED_OTHER */)
        return;
    at.size = sizeof at;
    at.sched_flags = 0;
    at.sched_runtime = 100 * 1000; /* ns: the least the kernel grants */
    (void)syscall(SYS_sched_setattr, 0, &at, 0U); /* refused: all stays as it was */
}

/* ---------------------------------------------------------------- --agent */

/* ---------------------------------------------------------------- the command line */

/* What the command line asks for. */
enum task {
    TASK_DUMP,      /* --pid or --job: dump the processes and show them */
    TASK_LIST,      /* --list, or no argument at all */
    TASK_CHECK_DLL, /* --check-dll PATH */
    TASK_AGENT,     /* --agent HOST PID:RANK ... */
    TASK_HELP,      /* --help */
    TASK_LOAD,      /* --load FILE: show a saved dump */
};

/* The command line, read (parse_command_line). */
struct command {
    enum task task;
    pid_t *pids;      /* --pid's, each once (malloc'd; command_free) */
    int npids;
    pid_t job;        /* --job's launcher; 0: none */
    int json, stats, full, list;
    int stacks;       /* --stacks; stack_flags: =full's MQDH_STACKS_FULL */
    unsigned stack_flags;
    const char *check, *graph, *stacks_graph, *agent_host; /* NULL: not given */
    int agent_any;    /* --agent-any: the agent of whichever host of the table this is */
    char **args;      /* the operands (--agent's PID:RANK), argv's */
    int nargs;
    const char *save, *load; /* --save FILE, --load FILE; NULL: not given */
    int quiet;               /* -q: no progress */
    int watch;               /* --watch S: seconds between two looks; 0: one look */
    struct watch *watched;   /* what moved between them (watch.h); NULL: not watched */
    int argc;                /* the command line, for what a saved dump says of itself */
    char **argv;
    struct mqdh_options o;
};

static void command_free(struct command *c)
{
    watch_free(c->watched);
    free(c->pids);
}

/* Is pid one of pids[0..n-1]? */
static int listed(const pid_t *pids, int n, pid_t pid)
{
    for (int i = 0; i < n; i++)
        if (pids[i] == pid)
            return 1;
    return 0;
}

/* --pid P: P added to the command's processes, once.  0, or EXIT_FATAL
 * out of memory. */
static int add_pid(struct command *c, pid_t pid)
{
    if (listed(c->pids, c->npids, pid))
        return 0; /* --pid P --pid P: P once */
    pid_t *np = realloc(c->pids, (size_t)(c->npids + 1) * sizeof *np);
    if (!np)
        return EXIT_FATAL;
    c->pids = np;
    c->pids[c->npids++] = pid;
    return 0;
}

/* The options that take a number, the range each allows, and what is
 * said of another. */
static const struct number_option {
    int opt;
    long lo, hi;
    const char *complaint;
} number_options[] = {
    {'W', 1, 1024, "--jobs takes a number of threads, 1 to 1024"},
    {'U', 0, 4294967294L, "--owner takes a user id"},
    {'O', 1, 86400, "--remote-timeout takes a number, 1 to 86400"},
    {'N', 1, 4096, "--fanout takes a number, 1 to 4096"},
    {'t', 0, 86400, "--timeout takes a number of seconds, 0 to 86400"},
    {'w', 1, 3600, "--watch takes a number of seconds, 1 to 3600"},
};

/* Option opt (one of number_options) with its value arg.  0, or
 * EXIT_USAGE (said). */
static int take_number(struct command *c, int opt, const char *arg)
{
    const struct number_option *no = number_options;
    while (no->opt != opt) /* take_option calls it for these options alone */
        no++;
    long v;
    if (number_in(arg, no->lo, no->hi, &v) != 0) {
        fprintf(stderr, "mqdump: %s\n", no->complaint);
        return EXIT_USAGE;
    }
    switch (opt) {
    case 'W': c->o.jobs = (int)v; break;
    case 'U': /* --agent's: the launcher's user, whose processes alone it dumps */
        c->o.owner_set = 1;
        c->o.owner = (uid_t)v;
        break;
    case 'O': c->o.remote_timeout = (int)v; break;
    case 'N': c->o.fanout = (int)v; break;
    case 't': c->o.dll_timeout = v ? (int)v : -1; break;
    case 'w': c->watch = (int)v; break;
    }
    return 0;
}

/* Option opt (getopt_long's) with its value arg, if it takes one.  0, or
 * the exit status of a bad one (said). */
static int take_option(struct command *c, int opt, const char *arg)
{
    long v;
    switch (opt) {
    case 'p':
    case 'j':
        if (number_in(arg, 1, 0x7fffffff, &v) != 0) {
            fprintf(stderr, "mqdump: '%s' is not a process id\n", arg);
            return EXIT_USAGE;
        }
        if (opt == 'p')
            return add_pid(c, (pid_t)v);
        c->job = (pid_t)v;
        return 0;
    case 's':
        if (arg && strcmp(arg, "full") != 0) {
            fprintf(stderr, "mqdump: --stacks takes no value but 'full' (--stacks=full)\n");
            return EXIT_USAGE;
        }
        c->stacks = 1;
        c->stack_flags = arg ? MQDH_STACKS_FULL : 0;
        return 0;
    case 'W':
    case 'U':
    case 'O':
    case 'N':
    case 'w':
    case 't': return take_number(c, opt, arg);
    case 'd': c->o.dll = arg; return 0;
    case 'Y':
        if (save_path_usable(arg) != 0)
            return EXIT_USAGE;
        c->save = arg;
        return 0;
    case 'Z': c->load = arg; return 0;
    case 'q': c->quiet = 1; return 0;
    case 'C': c->check = arg; return 0;
    case 'G': c->graph = arg; return 0;
    case 'g': c->stacks_graph = arg; return 0;
    case 'A': c->agent_host = arg; return 0;
    case 'K': c->agent_any = 1; return 0;
    case 'R': c->o.remote = arg; return 0;
    case 'P': c->o.agent_path = arg; return 0;
    case 'T': c->o.trust_target_dll = 1; return 0;
    case 'D': c->o.target_dll = 1; return 0;
    case 'L': c->o.local_only = 1; return 0;
    case 'v': c->o.verbose = 1; return 0;
    case 'J': c->json = 1; return 0;
    case 'S': c->stats = 1; return 0;
    case 'F': c->full = 1; return 0;
    case 'l': c->list = 1; return 0;
    case 'h': c->task = TASK_HELP; return 0;
    default: /* getopt_long has said what */
        usage(stderr);
        return EXIT_USAGE;
    }
}

/* Which task the options and operands ask for, once all are read
 * (no_arguments: the command line was "mqdump" alone).  0, or EXIT_USAGE
 * for options that do not go together (said). */
static int choose_task(struct command *c, int no_arguments)
{
    if (c->agent_host || c->agent_any) {
        if (c->agent_host && c->agent_any) {
            fprintf(stderr, "mqdump: --agent names its host, --agent-any finds it: give one\n");
            return EXIT_USAGE;
        }
        if (c->npids || c->job || c->check || c->list || c->json || c->graph || c->full ||
            c->stacks || c->stacks_graph || c->save || c->load) {
            fprintf(stderr, "mqdump: --agent takes PID:RANK arguments and DLL options only\n");
            return EXIT_USAGE;
        }
        c->task = TASK_AGENT;
        return 0;
    }
    if (c->o.owner_set) {
        fprintf(stderr, "mqdump: --owner is --agent's (--job passes its launcher's user on)\n");
        return EXIT_USAGE;
    }
    if (c->load) {
        if (c->npids || c->job || c->check || c->list || c->save || c->nargs) {
            fprintf(stderr, "mqdump: --load shows a saved dump: give it without --job, --pid, "
                            "--list, --check-dll, --save or operands\n");
            return EXIT_USAGE;
        }
        c->task = TASK_LOAD;
        return 0;
    }
    if (c->check && c->nargs == 0 && c->npids == 0 && c->job == 0) {
        c->task = TASK_CHECK_DLL;
        return 0;
    }
    if (c->nargs > 0 && !c->list) {
        fprintf(stderr, "mqdump: unexpected argument '%s' (a pid goes after --job or --pid)\n",
                c->args[0]);
        usage(stderr);
        return EXIT_USAGE;
    }
    if (c->list || no_arguments) {
        if (c->npids || c->job || c->check || c->nargs > 0 || c->save) {
            fprintf(stderr, "mqdump: --list takes no other argument\n");
            return EXIT_USAGE;
        }
        c->task = TASK_LIST;
        return 0;
    }
    if ((c->npids == 0) == (c->job == 0) || c->check) {
        fprintf(stderr, "mqdump: give --pid (one or more), --job, or --check-dll alone\n");
        usage(stderr);
        return EXIT_USAGE;
    }
    c->task = TASK_DUMP;
    return 0;
}

/*
 * Read argv into c (c->o as MQDH_OPTIONS_INIT leaves it).  0, or the exit
 * status of a bad command line (said on stderr, c to be freed).  Options
 * are taken in order, so the first bad one, or --help, ends the reading.
 */
static int parse_command_line(int argc, char **argv, struct command *c)
{
    static const struct option longopts[] = {
        {"pid", required_argument, NULL, 'p'},  {"job", required_argument, NULL, 'j'},
        {"dll", required_argument, NULL, 'd'},  {"trust-target-dll", no_argument, NULL, 'T'},
        {"json", no_argument, NULL, 'J'},       {"stats", no_argument, NULL, 'S'},
        {"verbose", no_argument, NULL, 'v'},    {"help", no_argument, NULL, 'h'},
        {"check-dll", required_argument, NULL, 'C'},
        {"full", no_argument, NULL, 'F'},
        {"graph", required_argument, NULL, 'G'},
        {"list", no_argument, NULL, 'l'},
        {"target-dll", no_argument, NULL, 'D'},
        {"jobs", required_argument, NULL, 'W'},
        {"agent", required_argument, NULL, 'A'},
        {"agent-any", no_argument, NULL, 'K'},
        {"remote", required_argument, NULL, 'R'},
        {"agent-path", required_argument, NULL, 'P'},
        {"remote-timeout", required_argument, NULL, 'O'},
        {"fanout", required_argument, NULL, 'N'},
        {"timeout", required_argument, NULL, 't'},
        {"local-only", no_argument, NULL, 'L'},
        {"stacks", optional_argument, NULL, 's'},
        {"stacks-graph", required_argument, NULL, 'g'},
        {"owner", required_argument, NULL, 'U'},
        {"save", required_argument, NULL, 'Y'},
        {"load", required_argument, NULL, 'Z'},
        {"quiet", no_argument, NULL, 'q'},
        {"watch", required_argument, NULL, 'w'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    c->argc = argc;
    c->argv = argv;
    while ((opt = getopt_long(argc, argv, "p:j:d:lvhq", longopts, NULL)) != -1) {
        int rc = take_option(c, opt, optarg);
        if (rc != 0 || c->task == TASK_HELP)
            return rc;
    }
    c->args = argv + optind;
    c->nargs = argc - optind;
    int rc = choose_task(c, argc == 1);
    if (rc == 0 && c->watch && c->task != TASK_DUMP) {
        fprintf(stderr, "mqdump: --watch looks at a job twice: it goes with --job or --pid\n");
        return EXIT_USAGE;
    }
    return rc;
}

/* ---------------------------------------------------------------- the tasks */

/* The wait-for analysis of d, or NULL (said on stderr). */
static struct mqdh_analysis *analyze(const struct mqdh_dump *d)
{
    struct mqdh_analysis *a = NULL;
    if (mqdh_analyze(d, &a) != MQDH_OK)
        fprintf(stderr, "mqdump: the wait-for analysis ran out of memory\n");
    return a;
}

/* The merged call tree of d's stacks, or NULL (said on stderr). */
static struct mqdh_stack_tree *stack_tree(const struct mqdh_dump *d, unsigned flags)
{
    struct mqdh_stack_tree *tree = NULL;
    if (mqdh_stack_tree(d, flags, &tree) != MQDH_OK) {
        fprintf(stderr, "mqdump: merging the stacks ran out of memory\n");
        return NULL;
    }
    return tree;
}

/* d's strings escaped in place, for the views that show them to people
 * (mqdh_dump_escape). */
static void escape_dump(struct mqdh_dump *d)
{
    if (mqdh_dump_escape(d) != MQDH_OK)
        fprintf(stderr, "mqdump: escaping what the processes hold ran out of memory\n");
}

/* --list: the MPI jobs on this node.  Returns the exit status. */
static int list_jobs(int json)
{
    struct mqdh_job_info *jobs = NULL;
    int n = 0;
    if (mqdh_list_jobs(&jobs, &n) != MQDH_OK) {
        fprintf(stderr, "mqdump: cannot read /proc: %s\n", mqdh_strerror(MQDH_E_NOMEM));
        return EXIT_FATAL;
    }
    if (json)
        json_jobs(jobs, n);
    else
        text_jobs(jobs, n);
    mqdh_jobs_free(jobs, n);
    return EXIT_OK;
}

/* --check-dll PATH: load and validate a DLL (trusting: even one that
 * fails the ownership and permission checks, --trust-target-dll), print
 * its version (escaped: the DLL chose it).  Returns the exit status. */
static int check_dll(const char *path, int trusting)
{
    char version[512], shown[1024], err[1024];
    int mpi2 = 0;
    if (mqdh_dll_check_trusting(path, trusting, version, sizeof version, &mpi2, err,
                                sizeof err) != MQDH_OK) {
        say("", err);
        return EXIT_FATAL;
    }
    mqdh_escape(shown, sizeof shown, version);
    printf("%s: %s\n  usable: the %s protocol\n", path, shown,
           mpi2 ? "MPI-2 (jobs and process identities)" : "MPI-1");
    return EXIT_OK;
}

/*
 * How the dump went: EXIT_OK if every process was dumped, EXIT_PARTIAL if
 * some were, or none but some were unwound (an MPI that keeps no queues
 * for debuggers: where each is, and the analysis from the calls, are
 * there), EXIT_FATAL if none was either.  json: each error is said once
 * on stderr, with how many processes have it (the text views show it with
 * the processes).
 */
static int dump_status(const struct mqdh_dump *d, int json)
{
    int failed = 0, seen = 0;
    for (int i = 0; i < d->nprocs; i++) {
        const struct mqdh_process *p = &d->procs[i];
        seen += process_unwound(d, i);
        if (!p->error)
            continue;
        failed++;
        if (!json)
            continue;
        int same = 0, earlier = 0; /* said at its first process only */
        for (int j = 0; j < d->nprocs; j++)
            if (d->procs[j].error && strcmp(d->procs[j].error, p->error) == 0) {
                same++;
                earlier |= j < i;
            }
        if (earlier)
            continue;
        if (same == 1) {
            shown_error(p->pid, p->error);
        } else {
            char prefix[64];
            snprintf(prefix, sizeof prefix, "%d processes: ", same);
            say(prefix, p->error);
        }
    }
    if (failed == 0)
        return EXIT_OK;
    return failed < d->nprocs || seen ? EXIT_PARTIAL : EXIT_FATAL;
}

/* --json: the dump as read (JSON escapes by its own grammar), the
 * analysis, the stacks' tree and the cost as one object. */
static void show_json(const struct command *c, const struct mqdh_dump *d,
                      const struct mqdh_analysis *a)
{
    struct mqdh_stack_tree *tree = NULL;
    if (c->stacks && d->stacks)
        tree = stack_tree(d, c->stack_flags);
    json_begin();
    json_processes(d, c->stats, c->stacks);
    if (a)
        json_analysis(d, a);
    if (tree)
        json_stacks(d, tree, c->stack_flags & MQDH_STACKS_FULL);
    if (c->watched)
        watch_json(d, c->watched);
    if (c->stats)
        json_cost(d);
    json_end();
    mqdh_stack_tree_free(tree);
}

/* The text views, of the dump escaped: the DLLs and hosts, the processes
 * (folded, unless --full; --stacks: the tree in their place), the
 * analysis and the cost. */
static void show_text(const struct command *c, const struct mqdh_dump *d,
                      const struct mqdh_analysis *a, const struct mqdh_stack_tree *tree)
{
    text_dlls(d);
    text_hosts(d);
    if (c->full || (!(c->stacks && tree) && text_folded(d, c->stats) != 0))
        text_dump(d, c->stats);
    if (c->stacks && tree)
        text_stacks(d, tree, c->stack_flags & MQDH_STACKS_FULL);
    if (a)
        text_analysis(d, a, !c->full);
    if (c->stats)
        text_cost(d);
}

/* --stacks-graph and --graph, from the dump escaped (their labels): the
 * exit status so far, EXIT_PARTIAL if it was EXIT_OK and one was not
 * written (said). */
static int write_graphs(const struct command *c, const struct mqdh_dump *d,
                        const struct mqdh_analysis *a, const struct mqdh_stack_tree *tree,
                        int status)
{
    char err[4600];
    if (c->stacks_graph && tree &&
        stacks_graph_write(c->stacks_graph, d, tree, err, sizeof err) != 0) {
        say("--stacks-graph: ", err);
        if (status == EXIT_OK)
            status = EXIT_PARTIAL;
    }
    if (!c->graph)
        return status;
    /* Processes folded as the text view folds them, unless --full. */
    struct fold fold = {0};
    int rc = -1;
    if (!c->full && text_fold(d, &fold) != 0)
        snprintf(err, sizeof err, "out of memory");
    else
        rc = graph_write(c->graph, d, a, c->full ? NULL : &fold, err, sizeof err);
    fold_free(&fold);
    if (rc != 0) {
        say("--graph: ", err);
        if (status == EXIT_OK)
            status = EXIT_PARTIAL;
    }
    return status;
}

/*
 * Show dump d as the command asks, and return the exit status.  JSON shows
 * the dump as read; every other view shows it escaped (its strings are
 * the targets', the launcher's and the agents'), the analysis made from
 * it too, and so does every line on stderr after it.
 */
static int show(const struct command *c, struct mqdh_dump *d)
{
    int status = dump_status(d, c->json);
    if (!c->json)
        escape_dump(d);
    struct mqdh_analysis *a = analyze(d);
    if (status == EXIT_OK && (!a || a->verdict == MQDH_VERDICT_UNKNOWN))
        status = EXIT_PARTIAL;
    if ((c->stacks || c->stacks_graph) && !d->stacks)
        fprintf(stderr, "mqdump: no process could be unwound: no stacks to show\n");
    if (c->json) {
        show_json(c, d, a);
        escape_dump(d);
        if (c->graph) { /* its labels, from the dump escaped */
            mqdh_analysis_free(a);
            a = analyze(d);
        }
    }
    struct mqdh_stack_tree *tree = NULL;
    if (((c->stacks && !c->json) || c->stacks_graph) && d->stacks)
        tree = stack_tree(d, c->stack_flags);
    if (!c->json)
        show_text(c, d, a, tree);
    if (!c->json && c->watched)
        watch_text(d, c->watched);
    status = write_graphs(c, d, a, tree, status);
    mqdh_stack_tree_free(tree);
    mqdh_analysis_free(a);
    return status;
}

/*
 * What is written on stderr while a dump runs, by DLLs among others (Open
 * MPI's prints a WARNING of several lines for each process whose libmpi has
 * no debug information), held back in a temporary file and shown once the
 * dump is done: each distinct line once, escaped, with how many times it
 * was written (--verbose: every line).  A thousand ranks then say it once.
 */
struct held_stderr {
    int saved; /* the real stderr, -1 if nothing is held */
    FILE *tmp;
};

static void hold_stderr(struct held_stderr *h)
{
    fflush(stderr);
    h->saved = -1;
    h->tmp = tmpfile();
    if (!h->tmp)
        return; /* written as it comes, then */
    h->saved = dup(2);
    if (h->saved < 0 || dup2(fileno(h->tmp), 2) < 0) {
        if (h->saved >= 0)
            close(h->saved);
        h->saved = -1;
        fclose(h->tmp);
        h->tmp = NULL;
    }
}

static void release_stderr(struct held_stderr *h, int verbose)
{
    if (!h->tmp)
        return;
    fflush(stderr);
    dup2(h->saved, 2);
    close(h->saved);
    rewind(h->tmp);
    struct said {
        char *line;
        int n;
    } *v = NULL;
    int n = 0, cap = 0;
    char *line = NULL;
    size_t len = 0;
    ssize_t got;
    while ((got = getline(&line, &len, h->tmp)) > 0) {
        if (line[got - 1] == '\n')
            line[got - 1] = '\0';
        int k = 0;
        while (!verbose && k < n && strcmp(v[k].line, line) != 0)
            k++;
        if (k < n && !verbose) {
            v[k].n++;
            continue;
        }
        if (n == cap) {
            struct said *m = realloc(v, (size_t)(cap ? 2 * cap : 16) * sizeof *m);
            if (!m)
                break;
            v = m;
            cap = cap ? 2 * cap : 16;
        }
        if (!(v[n].line = strdup(line)))
            break;
        v[n++].n = 1;
    }
    for (int k = 0; k < n; k++) {
        char times[48] = "";
        if (v[k].n > 1)
            snprintf(times, sizeof times, " (written %d times)", v[k].n);
        say_line("", v[k].line, times);
        free(v[k].line);
    }
    free(v);
    free(line);
    fclose(h->tmp);
}

/* Seconds on the monotonic clock. */
static double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * --watch S: a first look, S seconds with every process running (each
 * call of mqdh_dump_processes lets every process go before it returns),
 * and a second look, which is the dump shown (*out; NULL as
 * mqdh_dump_processes leaves it); what moved between them in c->watched.
 * Returns the second look's code, or the first's if it made no dump.
 */
static int watch_looks(struct command *c, const pid_t *pids, const int *ranks,
                       const char *const *hosts, int n, struct mqdh_dump **out)
{
    struct mqdh_dump *first = NULL;
    double t0 = monotonic_seconds();
    int rc = mqdh_dump_processes(pids, ranks, hosts, n, &c->o, &first);
    if (!first) {
        *out = NULL;
        return rc;
    }
    struct timespec ts = {.tv_sec = c->watch};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    double t1 = monotonic_seconds();
    rc = mqdh_dump_processes(pids, ranks, hosts, n, &c->o, out);
    if (*out && !(c->watched = watch_compare(first, *out, c->watch, t1 - t0)))
        fprintf(stderr, "mqdump: comparing the two looks ran out of memory\n");
    mqdh_dump_free(first);
    return rc;
}

/* --pid or --job: dump the processes and show them.  Returns the exit
 * status. */
static int dump(struct command *c)
{
    pid_t *pids = c->pids;
    int *ranks = NULL, npids = c->npids;
    char **hosts = NULL;
    if (c->job) {
        char err[512];
        /* Its table names only its user's processes: no other is touched
         * (mqdh_options.owner), here or by the agents. */
        int rc = mqdh_job_owner(c->job, &c->o.owner, err, sizeof err);
        char how[1200] = ""; /* ranks not from a table: how they were found */
        if (rc == MQDH_OK)
            rc = mqdh_job_ranks_how(c->job, &pids, &ranks, &hosts, &npids, how, sizeof how,
                                    err, sizeof err);
        c->o.owner_set = 1;
        c->o.owner_pid = c->job;
        if (rc != MQDH_OK) {
            say("", err);
            return EXIT_FATAL;
        }
        if (how[0])
            say("", how);
    }
    /* libdw fetches missing DWARF through debuginfod when DEBUGINFOD_URLS
     * says where; its client waits 90 s for a silent server by default.
     * A hung job's user waits less: 5 s without progress, and no retries
     * (elfutils 0.188's client tries twice more), unless they chose
     * otherwise. */
    if (getenv("DEBUGINFOD_URLS")) {
        setenv("DEBUGINFOD_TIMEOUT", "5", 0);
        setenv("DEBUGINFOD_RETRY_LIMIT", "0", 0);
    }
    struct mqdh_dump *d = NULL;
    struct held_stderr held;
    /* On the terminal, never in --json's output there. */
    struct progress *pr = c->quiet || c->watch || (c->json && isatty(1)) ? NULL : progress_start();
    c->o.progress = pr ? progress_note : NULL;
    c->o.progress_arg = pr;
    hold_stderr(&held);
    int rc = c->watch ? watch_looks(c, pids, ranks, (const char *const *)hosts, npids, &d)
                      : mqdh_dump_processes(pids, ranks, (const char *const *)hosts, npids,
                                            &c->o, &d);
    progress_stop(pr);
    c->o.progress = NULL;
    c->o.progress_arg = NULL;
    release_stderr(&held, c->o.verbose);
    int status;
    if (!d) {
        fprintf(stderr, "mqdump: %s\n", mqdh_strerror(rc));
        status = EXIT_FATAL;
    } else {
        char err[4600]; /* saved as read: show escapes d */
        int unsaved = c->save && save_dump(c->save, d, c->argc, c->argv, c->job, err,
                                           sizeof err) != 0;
        if (unsaved)
            say("--save: ", err);
        status = show(c, d);
        if (unsaved && status == EXIT_OK)
            status = EXIT_PARTIAL;
    }
    mqdh_dump_free(d);
    if (c->job)
        mqdh_job_free(pids, ranks, hosts, npids);
    return status;
}

/* --load FILE: a saved dump shown as the live one was (what it is said
 * on stderr first).  Returns the exit status. */
static int load(const struct command *c)
{
    struct mqdh_dump *d = NULL;
    struct mqdh_saved *about = NULL;
    char err[4600];
    if (load_dump(c->load, &d, &about, err, sizeof err) != 0) {
        say("", err);
        return EXIT_FATAL;
    }
    if (!c->quiet)
        say_saved(c->load, about);
    int status = show(c, d);
    mqdh_dump_free(d);
    mqdh_saved_free(about);
    return status;
}

/* The task c asks for, done.  Returns the exit status. */
static int run(struct command *c)
{
    switch (c->task) {
    case TASK_HELP:
        usage(stdout);
        return EXIT_OK;
    case TASK_AGENT:
        return c->agent_any ? agent_run_any(c->args, c->nargs, &c->o)
                            : agent_run(c->agent_host, c->args, c->nargs, &c->o);
    case TASK_CHECK_DLL: return check_dll(c->check, c->o.trust_target_dll);
    case TASK_LIST: return list_jobs(c->json);
    case TASK_DUMP: return dump(c);
    case TASK_LOAD: return load(c);
    }
    return EXIT_FATAL;
}

int main(int argc, char **argv)
{
    prefer_latency();
    catch_fatal_signals();
    struct command c = {.task = TASK_DUMP, .o = MQDH_OPTIONS_INIT};
    int status = parse_command_line(argc, argv, &c);
    if (status == 0)
        status = run(&c);
    command_free(&c);
    return status;
}
