/*
 * options.c - mqdump's command line, read into a struct command: every
 * option, its value checked, the one task it asks for (options.h).
 */
#define _GNU_SOURCE
#include "options.h"

#include "agent.h"
#include "save.h"
#include "moved.h"
#include "watcher.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The usage text's options for jobs across hosts and --sentinel's, to f. */
static void usage_more(FILE *f)
{
    fputs("Ranks on other hosts (--job): one agent per host, this mqdump run there.\n"
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
          "Beside a running job, until it ends or is hung (in a batch script, a test\n"
          "harness):\n"
          "      --sentinel          look at the job (--job, --pid, else the one MPI job\n"
          "                          of this user on this node, waited for) every few\n"
          "                          seconds, stopping it for milliseconds; once nothing\n"
          "                          has moved for longer than the job's own past makes\n"
          "                          likely, dump it once, explain and --save it\n"
          "      --interval S        seconds between looks, on average (default 10)\n"
          "      --hung-after S      nothing moving for S seconds is a hang, whatever the\n"
          "                          job did before (default: learned alone)\n"
          "      --explain FILE      the explanation of the hang there, not on stdout\n"
          "      --signal SIG        then send SIG (TERM, KILL, INT, ... or a number) to\n"
          "                          the job's launcher (with --pid: to each process)\n",
          f);
}

void usage(FILE *f)
{
    fputs("usage: mqdump [OPTIONS] --job LAUNCHER_PID\n"
          "       mqdump [OPTIONS] --pid PID [--pid PID ...]\n"
          "       mqdump [--list]\n"
          "       mqdump [OPTIONS] --load FILE\n"
          "       mqdump --sentinel [--job PID] [--save FILE] [--explain FILE]\n"
          "              [--interval S] [--hung-after S] [--signal SIG] [OPTIONS]\n"
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
          "                          (default: one per 64 ranks up to one per CPU with\n"
          "                          mqd's DLL, else 1)\n",
          f);
    usage_more(f);
    fputs("  -v, --verbose           show the DLL's diagnostic messages\n"
          "  -h, --help              this text\n\n"
          "Exit status: 0 every process dumped and the analysis sure (a deadlock or\n"
          "none), 1 some process not dumped (or none, but some unwound) or the analysis\n"
          "cannot tell, 2 nothing dumped or unwound, 64 usage error.  --sentinel: 0 the\n"
          "job ended by itself, never hung; 2 the job could not be watched; 3 hung, and\n"
          "dumped (what could not be written is said).\n",
          f);
}

/* *v from s, all of it a decimal number in [lo, hi]: 0, or -1. */
static int number_in(const char *s, long lo, long hi, long *v)
{
    char *end;
    *v = strtol(s, &end, 10);
    return end != s && !*end && *v >= lo && *v <= hi ? 0 : -1;
}

void command_free(struct command *c)
{
    free(c->sentinel_report);
    mqdh_watch_free(c->watched);
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

/* *v from s, all of it a number in [lo, hi] (decimals allowed): 0, or -1. */
static int seconds_in(const char *s, double lo, double hi, double *v)
{
    char *end;
    *v = strtod(s, &end);
    return end != s && !*end && *v >= lo && *v <= hi ? 0 : -1; /* NaN fails both */
}

/* The sentinel's options that take a value.  0, or EXIT_USAGE (said). */
static int take_sentinel_option(struct command *c, int opt, const char *arg)
{
    switch (opt) {
    case 'I':
        if (seconds_in(arg, 0.1, 3600, &c->interval) == 0)
            return 0;
        fprintf(stderr, "mqdump: --interval takes seconds, 0.1 to 3600\n");
        return EXIT_USAGE;
    case 'H':
        if (seconds_in(arg, 0.1, 604800, &c->hung_after) == 0)
            return 0;
        fprintf(stderr, "mqdump: --hung-after takes seconds, 0.1 to 604800 (a week)\n");
        return EXIT_USAGE;
    case 'X':
        if ((c->signal = signal_number(arg)) != 0)
            return 0;
        fprintf(stderr, "mqdump: --signal takes a signal: TERM, INT, KILL, HUP, QUIT, ABRT, "
                        "USR1, USR2, or a number\n");
        return EXIT_USAGE;
    case 'x':
        if (save_path_usable(arg, "--explain") != 0)
            return EXIT_USAGE;
        c->explain = arg;
        return 0;
    }
    return EXIT_USAGE;
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
    case 'I':
    case 'H':
    case 'X':
    case 'x': return take_sentinel_option(c, opt, arg);
    case 'E': c->sentinel = 1; return 0;
    case 'Y':
        if (save_path_usable(arg, "--save") != 0)
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

/* --sentinel: with --job, --pid or neither, and the views' options; its
 * default interval.  0, or EXIT_USAGE (said). */
static int choose_sentinel(struct command *c)
{
    if (c->load || c->list || c->check || c->watch || c->nargs) {
        fprintf(stderr, "mqdump: --sentinel watches a running job: give it without --load, "
                        "--list, --check-dll, --watch or operands\n");
        return EXIT_USAGE;
    }
    if (c->job && c->npids) {
        fprintf(stderr, "mqdump: --sentinel watches one job: --job or --pid, not both\n");
        return EXIT_USAGE;
    }
    if (c->interval == 0)
        c->interval = 10;
    c->task = TASK_SENTINEL;
    return 0;
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
    if (c->sentinel)
        return choose_sentinel(c);
    if (c->interval > 0 || c->hung_after > 0 || c->signal || c->explain) {
        fprintf(stderr, "mqdump: --interval, --hung-after, --signal and --explain are "
                        "--sentinel's\n");
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
int parse_command_line(int argc, char **argv, struct command *c)
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
        {"sentinel", no_argument, NULL, 'E'},
        {"interval", required_argument, NULL, 'I'},
        {"hung-after", required_argument, NULL, 'H'},
        {"signal", required_argument, NULL, 'X'},
        {"explain", required_argument, NULL, 'x'},
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
