/*
 * mqdump - show the MPI message queues of stopped or hung processes.
 * Uses only the public libmqdhost API (mqdhost.h); the views are in
 * text.c, json.c and graph.c.
 *
 * Exit status: 0 every process dumped and the analysis conclusive (a
 * deadlock, or none), 1 some process not dumped or the analysis cannot
 * tell, 2 none dumped (or no job found), 64 usage error.
 */
#define _GNU_SOURCE
#include "mqdump.h"

#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fputs("usage: mqdump [OPTIONS] --job LAUNCHER_PID\n"
          "       mqdump [OPTIONS] --pid PID [--pid PID ...]\n"
          "       mqdump [--list]\n"
          "       mqdump --check-dll PATH\n"
          "       mqdump --agent HOST [--owner UID] [OPTIONS] PID:RANK ...\n"
          "                                             (run by mqdump itself)\n"
          "Show the MPI message queues of processes, and who waits for whom.\n\n"
          "  -j, --job PID           every rank of the job this launcher (mpiexec) runs,\n"
          "                          and the processes they spawned (MPI_Comm_spawn)\n"
          "  -p, --pid PID           a process to dump (repeatable)\n"
          "  -l, --list              the MPI jobs on this node (also: no arguments)\n"
          "  -d, --dll PATH          the debug DLL to use (default: $MQD_DLL, else mqd's\n"
          "                          own for MPICH, else the one the process names)\n"
          "      --target-dll        use the DLL the process names (MPIR_dll_name), not\n"
          "                          mqd's own\n"
          "      --trust-target-dll  load a DLL that fails the ownership and permission\n"
          "                          checks: one the process names, or as root --dll's\n"
          "      --check-dll PATH    load and validate a debug DLL, print its version\n"
          "      --full              every process in full, not processes in the same\n"
          "                          state folded together under their ranks\n"
          "      --json              one JSON object instead of text\n"
          "      --graph FILE        the queues and deadlocks as a Graphviz graph: DOT,\n"
          "                          or SVG/PNG/PDF (by FILE's suffix) rendered by dot\n"
          "      --stacks[=full]     where every process is: all stacks merged into one\n"
          "                          call tree from main, branches labelled with their\n"
          "                          ranks (full: the MPI library's frames too)\n"
          "      --stacks-graph FILE that tree as a Graphviz graph (as --graph does)\n"
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
          "                          'pdsh -N -w {host}'\n"
          "      --agent-path PATH   the agent on those hosts (default: $MQD_AGENT, else\n"
          "                          this mqdump's own path)\n"
          "      --remote-timeout S  seconds each host's agent has (default 60)\n"
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

/* "mqdump: PREFIXmsg" on stderr, msg escaped: the library's messages
 * quote what processes, launchers and agents hold. */
static void say(const char *prefix, const char *msg)
{
    size_t need = mqdh_escape(NULL, 0, msg);
    char *e = malloc(need + 1);
    if (e)
        mqdh_escape(e, need + 1, msg);
    fprintf(stderr, "mqdump: %s%s\n", prefix, e ? e : "(out of memory)");
    free(e);
}

/* Process pid's error on stderr (a JSON dump's stdout holds the rest). */
static void shown_error(pid_t pid, const char *error)
{
    char prefix[48];
    snprintf(prefix, sizeof prefix, "process %d: ", (int)pid);
    say(prefix, error);
}

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

/* --list: the MPI jobs on this node.  Returns the exit status. */
static int list_jobs(int json)
{
    struct mqdh_job_info *jobs = NULL;
    int n = 0;
    if (mqdh_list_jobs(&jobs, &n) != MQDH_OK) {
        fprintf(stderr, "mqdump: cannot read /proc: %s\n", mqdh_strerror(MQDH_E_NOMEM));
        return 2;
    }
    if (json)
        json_jobs(jobs, n);
    else
        text_jobs(jobs, n);
    mqdh_jobs_free(jobs, n);
    return 0;
}

/* Interrupted mid-dump: let every process go, then die of the signal. */
static void on_fatal_signal(int sig)
{
    mqdh_release_all();
    signal(sig, SIG_DFL);
    raise(sig);
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

/*
 * An agent's channel is its standard output (a pipe or socket to ssh,
 * srun, ...).  Should it close - the front end stopped it, or died, or the
 * connection broke - nobody will read the result: let the ranks go now
 * rather than after the dump, through the signal handler on the thread
 * that holds them (ptrace lets only that thread detach).
 */
static pthread_t main_thread;
static void *watch_channel(void *arg)
{
    (void)arg;
    struct pollfd pf = {.fd = STDOUT_FILENO, .events = 0};
    for (;;) {
        int n = poll(&pf, 1, -1);
        if (n > 0 && (pf.revents & (POLLERR | POLLHUP | POLLNVAL))) {
            pthread_kill(main_thread, SIGPIPE);
            return NULL;
        }
    }
}

/* Is pid one of pids[0..n-1]? */
static int listed(const pid_t *pids, int n, pid_t pid)
{
    for (int i = 0; i < n; i++)
        if (pids[i] == pid)
            return 1;
    return 0;
}

/* "PID:RANK" into pid and rank; 0, or -1 if it is not that. */
static int pid_rank(const char *arg, pid_t *pid, int *rank)
{
    char *end;
    long p = strtol(arg, &end, 10);
    if (end == arg || *end != ':' || p <= 0 || p > 0x7fffffff)
        return -1;
    const char *r = end + 1;
    long k = strtol(r, &end, 10);
    if (end == r || *end || k < -1 || k > INT_MAX)
        return -1;
    *pid = (pid_t)p;
    *rank = (int)k;
    return 0;
}

/*
 * --agent HOST PID:RANK...: dump this host's share of a job for a front
 * end on another host, and write the result (mqdh_result_write) to
 * standard output.  The ranks are let go before it is written.  Exit 0
 * when the result was written (whatever it holds), 2 when not, 64 usage.
 */
static int agent(const char *host, char **args, int nargs, struct mqdh_options *o)
{
    if (nargs < 1) {
        fprintf(stderr, "mqdump: --agent takes its host's ranks as PID:RANK arguments\n");
        return 64;
    }
    pid_t *pids = calloc((size_t)nargs, sizeof *pids);
    int *ranks = calloc((size_t)nargs, sizeof *ranks);
    const char **hosts = calloc((size_t)nargs, sizeof *hosts);
    if (!pids || !ranks || !hosts) {
        free(pids);
        free(ranks);
        free(hosts);
        return 2;
    }
    for (int i = 0; i < nargs; i++) {
        hosts[i] = host;
        if (pid_rank(args[i], &pids[i], &ranks[i]) != 0) {
            fprintf(stderr, "mqdump: --agent: '%s' is not PID:RANK\n", args[i]);
            free(pids);
            free(ranks);
            free(hosts);
            return 64;
        }
    }
    main_thread = pthread_self();
    pthread_t w;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* signals are the main thread's */
    int watching = pthread_create(&w, NULL, watch_channel, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (watching)
        pthread_detach(w);
    o->as_agent = 1; /* it starts no agent of its own */
    struct mqdh_dump *d = NULL;
    int rc = mqdh_dump_processes(pids, ranks, hosts, nargs, o, &d);
    int status = 2;
    if (d && mqdh_result_write(stdout, d) == MQDH_OK)
        status = 0;
    else if (!d)
        fprintf(stderr, "mqdump: --agent: %s\n", mqdh_strerror(rc));
    mqdh_dump_free(d);
    free(pids);
    free(ranks);
    free(hosts);
    return status;
}

int main(int argc, char **argv)
{
    prefer_latency();
    static const int fatal[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigfillset(&sa.sa_mask);
        sigaction(fatal[i], &sa, NULL);
    }
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
        {"remote", required_argument, NULL, 'R'},
        {"agent-path", required_argument, NULL, 'P'},
        {"remote-timeout", required_argument, NULL, 'O'},
        {"fanout", required_argument, NULL, 'N'},
        {"timeout", required_argument, NULL, 't'},
        {"local-only", no_argument, NULL, 'L'},
        {"stacks", optional_argument, NULL, 's'},
        {"stacks-graph", required_argument, NULL, 'g'},
        {"owner", required_argument, NULL, 'U'},
        {NULL, 0, NULL, 0},
    };
    pid_t *pids = NULL;
    int npids = 0, json = 0, stats = 0, full = 0, list = 0, stacks = 0, opt;
    unsigned stack_flags = 0;
    long job = 0;
    const char *check = NULL, *graph = NULL, *agent_host = NULL, *stacks_graph = NULL;
    struct mqdh_options o = MQDH_OPTIONS_INIT;

    while ((opt = getopt_long(argc, argv, "p:j:d:lvh", longopts, NULL)) != -1) {
        long v;
        switch (opt) {
        case 'p':
        case 'j':
            if (number_in(optarg, 1, 0x7fffffff, &v) != 0) {
                fprintf(stderr, "mqdump: '%s' is not a process id\n", optarg);
                return 64;
            }
            if (opt == 'j') {
                job = v;
                break;
            }
            if (listed(pids, npids, (pid_t)v))
                break; /* --pid P --pid P: P once */
            pid_t *np = realloc(pids, (size_t)(npids + 1) * sizeof *np);
            if (!np)
                return 2;
            pids = np;
            pids[npids++] = (pid_t)v;
            break;
        case 'd':
            o.dll = optarg;
            break;
        case 'C':
            check = optarg;
            break;
        case 'T':
            o.trust_target_dll = 1;
            break;
        case 'J':
            json = 1;
            break;
        case 'S':
            stats = 1;
            break;
        case 'F':
            full = 1;
            break;
        case 'G':
            graph = optarg;
            break;
        case 's':
            if (optarg && strcmp(optarg, "full") != 0) {
                fprintf(stderr, "mqdump: --stacks takes no value but 'full' (--stacks=full)\n");
                free(pids);
                return 64;
            }
            stacks = 1;
            stack_flags = optarg ? MQDH_STACKS_FULL : 0;
            break;
        case 'g':
            stacks_graph = optarg;
            break;
        case 'l':
            list = 1;
            break;
        case 'D':
            o.target_dll = 1;
            break;
        case 'v':
            o.verbose = 1;
            break;
        case 'W':
            if (number_in(optarg, 1, 1024, &v) != 0) {
                fprintf(stderr, "mqdump: --jobs takes a number of threads, 1 to 1024\n");
                free(pids);
                return 64;
            }
            o.jobs = (int)v;
            break;
        case 'A':
            agent_host = optarg;
            break;
        case 'U': /* --agent's: the launcher's user, whose processes alone it dumps */
            if (number_in(optarg, 0, 4294967294L, &v) != 0) {
                fprintf(stderr, "mqdump: --owner takes a user id\n");
                free(pids);
                return 64;
            }
            o.owner_set = 1;
            o.owner = (uid_t)v;
            break;
        case 'R':
            o.remote = optarg;
            break;
        case 'P':
            o.agent_path = optarg;
            break;
        case 'L':
            o.local_only = 1;
            break;
        case 'O':
        case 'N':
            if (number_in(optarg, 1, opt == 'O' ? 86400 : 4096, &v) != 0) {
                fprintf(stderr, "mqdump: --%s takes a number, 1 to %d\n",
                        opt == 'O' ? "remote-timeout" : "fanout", opt == 'O' ? 86400 : 4096);
                free(pids);
                return 64;
            }
            if (opt == 'O')
                o.remote_timeout = (int)v;
            else
                o.fanout = (int)v;
            break;
        case 't':
            if (number_in(optarg, 0, 86400, &v) != 0) {
                fprintf(stderr, "mqdump: --timeout takes a number of seconds, 0 to 86400\n");
                free(pids);
                return 64;
            }
            o.dll_timeout = v ? (int)v : -1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 64;
        }
    }
    if (agent_host) {
        if (npids || job || check || list || json || graph || full || stacks || stacks_graph) {
            fprintf(stderr, "mqdump: --agent takes PID:RANK arguments and DLL options only\n");
            free(pids);
            return 64;
        }
        return agent(agent_host, argv + optind, argc - optind, &o);
    }
    if (o.owner_set) {
        fprintf(stderr, "mqdump: --owner is --agent's (--job passes its launcher's user on)\n");
        free(pids);
        return 64;
    }
    if (check && optind == argc && npids == 0 && job == 0) {
        char version[512], shown[1024], err[1024];
        int mpi2 = 0;
        if (mqdh_dll_check_trusting(check, o.trust_target_dll, version, sizeof version, &mpi2,
                                    err, sizeof err) != MQDH_OK) {
            say("", err);
            return 2;
        }
        mqdh_escape(shown, sizeof shown, version);
        printf("%s: %s\n  usable: the %s protocol\n", check, shown,
               mpi2 ? "MPI-2 (jobs and process identities)" : "MPI-1");
        return 0;
    }
    if (optind < argc && !list) {
        fprintf(stderr, "mqdump: unexpected argument '%s' (a pid goes after --job or --pid)\n",
                argv[optind]);
        usage(stderr);
        free(pids);
        return 64;
    }
    if (list || (argc == 1)) {
        if (npids || job || check || optind < argc) {
            fprintf(stderr, "mqdump: --list takes no other argument\n");
            free(pids);
            return 64;
        }
        return list_jobs(json);
    }
    if ((npids == 0) == (job == 0) || check) {
        fprintf(stderr, "mqdump: give --pid (one or more), --job, or --check-dll alone\n");
        usage(stderr);
        free(pids);
        return 64;
    }
    int *ranks = NULL;
    char **hosts = NULL;
    if (job) {
        char err[512];
        /* Its table names only its user's processes: no other is touched
         * (mqdh_options.owner), here or by the agents. */
        int rc = mqdh_job_owner((pid_t)job, &o.owner, err, sizeof err);
        if (rc == MQDH_OK)
            rc = mqdh_job_ranks((pid_t)job, &pids, &ranks, &hosts, &npids, err, sizeof err);
        o.owner_set = 1;
        o.owner_pid = (pid_t)job;
        if (rc != MQDH_OK) {
            say("", err);
            return 2;
        }
    }
    struct mqdh_dump *d = NULL;
    int rc = mqdh_dump_processes(pids, ranks, (const char *const *)hosts, npids, &o, &d);
    int status;
    if (!d) {
        fprintf(stderr, "mqdump: %s\n", mqdh_strerror(rc));
        status = 2;
    } else {
        int failed = 0;
        for (int i = 0; i < d->nprocs; i++) {
            if (d->procs[i].error) {
                failed++;
                if (json)
                    shown_error(d->procs[i].pid, d->procs[i].error);
            }
        }
        status = failed == 0 ? 0 : failed < d->nprocs ? 1 : 2;
        /* JSON escapes by its own grammar: it shows the dump as read.  The
         * other views show it escaped (the strings are the target's,
         * the launcher's and the agents'), the analysis made from it
         * too, and so does every line on stderr after it. */
        if (!json && mqdh_dump_escape(d) != MQDH_OK)
            fprintf(stderr, "mqdump: escaping what the processes hold ran out of memory\n");
        struct mqdh_analysis *a = analyze(d);
        if (status == 0 && (!a || a->verdict == MQDH_VERDICT_UNKNOWN))
            status = 1;
        struct mqdh_stack_tree *tree = NULL;
        if ((stacks || stacks_graph) && !d->stacks)
            fprintf(stderr, "mqdump: no process could be unwound: no stacks to show\n");
        if (json) {
            if (stacks && d->stacks)
                tree = stack_tree(d, stack_flags);
            json_dump(d, stats, stacks);
            if (a)
                json_analysis(d, a);
            if (tree && stacks)
                json_stacks(d, tree, stack_flags & MQDH_STACKS_FULL);
            if (stats)
                json_cost(d);
            printf("}\n");
            mqdh_stack_tree_free(tree);
            tree = NULL;
            if (mqdh_dump_escape(d) != MQDH_OK)
                fprintf(stderr, "mqdump: escaping what the processes hold ran out of memory\n");
            if (graph) { /* its labels, from the dump escaped */
                mqdh_analysis_free(a);
                a = analyze(d);
            }
        }
        if ((stacks || stacks_graph) && d->stacks)
            tree = stack_tree(d, stack_flags);
        if (!json) {
            text_dlls(d);
            text_hosts(d);
            /* --stacks: the tree in place of the queues, unless --full. */
            if (full || (!(stacks && tree) && text_folded(d, stats) != 0))
                text_dump(d, stats);
            if (stacks && tree)
                text_stacks(d, tree, stack_flags & MQDH_STACKS_FULL);
            if (a)
                text_analysis(d, a, !full);
            if (stats)
                text_cost(d);
        }
        char serr[4600];
        if (stacks_graph && tree && stacks_graph_write(stacks_graph, d, tree, serr,
                                                       sizeof serr) != 0) {
            say("--stacks-graph: ", serr);
            if (status == 0)
                status = 1;
        }
        mqdh_stack_tree_free(tree);
        char gerr[4600];
        if (graph && graph_write(graph, d, a, gerr, sizeof gerr) != 0) {
            say("--graph: ", gerr);
            if (status == 0)
                status = 1;
        }
        mqdh_analysis_free(a);
    }
    mqdh_dump_free(d);
    if (job)
        mqdh_job_free(pids, ranks, hosts, npids);
    else
        free(pids);
    return status;
}
