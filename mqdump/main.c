/* mqdump - show the MPI message queues of stopped or hung processes.  Uses only the public
 * libmqdhost API (mqdhost.h); the views are in text.c, json.c, graph.c and stacks.c
 * (mqdump.h).  main reads the command line into a struct command (options.c), then does the
 * one task it asks for: dump processes and show them, list the jobs of this node, check a
 * DLL, or serve a front end as its agent (agent.c). */
#define _GNU_SOURCE
#include "agent.h"
#include "common.h"
#include "mqdump.h"
#include "options.h"
#include "meter.h"
#include "save.h"
#include "moved.h"
#include "watcher.h"
#include "dot.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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

/*
 * mqdump lives for one dump: it allocates as it reads and frees at the
 * end.  glibc's defaults suit a long-lived server instead: each worker
 * thread gets an arena of its own, grown a page at a time (an mprotect
 * each: thousands per dump) and trimmed when freed (madvise), and the main
 * heap grows 128 kB at a time.  One arena for every thread, grown 16 MB at
 * a time (address space, not memory: a page costs only once touched), big
 * blocks from the heap rather than a mapping each, nothing given back
 * before the exit.  Output to a file or a pipe in 64 kB writes, not 4 kB. */
static void tune_heap(void)
{
    static char out[1 << 16];
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, out, _IOFBF, sizeof out);
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_TOP_PAD, 16 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
}

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
    if (!c->json && c->sentinel_report)
        sentinel_text(c);
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
    if (*out && mqdh_watch_compare(first, *out, c->watch, t1 - t0, &c->watched) != MQDH_OK)
        fprintf(stderr, "mqdump: comparing the two looks ran out of memory\n");
    mqdh_dump_free(first);
    return rc;
}

/*
 * libmqdhost fetches missing DWARF through debuginfod when DEBUGINFOD_URLS
 * says where; its client waits 90 s for a silent server by default, and
 * takes any size.  A hung job's user waits less: 5 s without progress, no
 * retries (elfutils 0.188's client tries twice more), 20 s and 512 MB a
 * file, unless they chose otherwise (the library bounds all fetches of a
 * dump besides).  As root, the client's cache - $DEBUGINFOD_CACHE_PATH,
 * else under $XDG_CACHE_HOME or $HOME, which sudo -E may have kept as the
 * user's - is root's own unless it passes the trust rule: root never
 * writes into, nor reads debug information from, a directory another user
 * controls.
 */
static void debuginfod_settings(void)
{
    if (!getenv("DEBUGINFOD_URLS"))
        return;
    setenv("DEBUGINFOD_TIMEOUT", "5", 0);
    setenv("DEBUGINFOD_RETRY_LIMIT", "0", 0);
    setenv("DEBUGINFOD_MAXTIME", "20", 0);
    setenv("DEBUGINFOD_MAXSIZE", "536870912", 0);
    if (geteuid() != 0)
        return;
    const char *cache = getenv("DEBUGINFOD_CACHE_PATH"), *xdg = getenv("XDG_CACHE_HOME"),
               *home = getenv("HOME");
    char dir[4096], why[1024];
    if (cache && *cache)
        snprintf(dir, sizeof dir, "%s", cache);
    else if (xdg && *xdg)
        snprintf(dir, sizeof dir, "%s", xdg);
    else
        snprintf(dir, sizeof dir, "%s/.cache", home && *home ? home : "/");
    /* The cache, or the nearest directory of its path that is there. */
    for (char *slash; access(dir, F_OK) != 0 && (slash = strrchr(dir, '/')) && slash > dir;)
        *slash = '\0';
    if (mqdh_path_trusted(dir, "keep its debuginfod cache there", why, sizeof why) ==
        MQDH_OK)
        return;
    struct passwd *pw = getpwuid(0);
    char own[4096];
    snprintf(own, sizeof own, "%s/.cache/debuginfod_client", pw && pw->pw_dir ? pw->pw_dir : "/root");
    fprintf(stderr, "mqdump: debuginfod's cache is %s instead: %s\n", own, why);
    setenv("DEBUGINFOD_CACHE_PATH", own, 1);
}

/* The processes of c->job's job (its user first: its table names only that
 * user's processes, and no other is touched, here or by the agents:
 * mqdh_options.owner).  --sentinel waits, an interval at a time, for a job
 * whose ranks are not all there yet, for as long as its launcher is.  0,
 * or EXIT_FATAL (said), or EXIT_OK for a job that ended first (said). */
static int job_processes(struct command *c, pid_t **pids, int **ranks, char ***hosts, int *n)
{
    char err[512], how[1200] = ""; /* ranks not from a table: how they were found */
    int rc = mqdh_job_owner(c->job, &c->o.owner, err, sizeof err);
    c->o.owner_set = 1;
    c->o.owner_pid = c->job;
    while (rc == MQDH_OK &&
           (rc = mqdh_job_ranks_how(c->job, pids, ranks, hosts, n, how, sizeof how, err,
                                    sizeof err)) == MQDH_E_JOB &&
           c->sentinel) {
        if (!sentinel_job_starting(c)) {
            say("--sentinel: the job ended before its ranks could be looked at: ", err);
            return EXIT_OK;
        }
    }
    if (rc != MQDH_OK) {
        say("", err);
        return EXIT_FATAL;
    }
    if (how[0])
        say("", how);
    /* A table's entries come first, entry i rank i: world 0, of its size. */
    for (c->o.table_ranks = 0; !how[0] && c->o.table_ranks < *n &&
                               (*ranks)[c->o.table_ranks] == c->o.table_ranks;)
        c->o.table_ranks++;
    return 0;
}

/* The text or JSON view of a dump, to the file f stands for, not to stdout
 * (--explain FILE, through dot_file). */
struct shown {
    struct command *c;
    struct mqdh_dump *d;
    int *status;
};

static int show_into(FILE *f, const void *arg)
{
    const struct shown *s = arg;
    fflush(stdout);
    int out = dup(1);
    if (out < 0 || dup2(fileno(f), 1) < 0) {
        if (out >= 0)
            close(out);
        return -1;
    }
    *s->status = show(s->c, s->d);
    int bad = fflush(stdout) != 0;
    dup2(out, 1);
    close(out);
    return bad ? -1 : 0;
}

/*
 * --sentinel's end: the hung job's last look saved (--save), explained (on
 * stdout, or in --explain's file) and the job signalled (--signal).  The
 * exit status: EXIT_HUNG, EXIT_OK (the job ended by itself) or EXIT_FATAL
 * (it could not be watched).
 */
static int sentinel_end(struct command *c, struct mqdh_dump *d, enum watch_end end,
                        const pid_t *pids, int n)
{
    if (end != WATCH_HUNG || !d)
        return end == WATCH_ENDED ? EXIT_OK : EXIT_FATAL;
    char err[4600];
    if (c->save && save_dump(c->save, d, c->argc, c->argv, c->job, err, sizeof err) != 0)
        say("--save: ", err);
    else if (c->save)
        say("--sentinel: the hung job's dump saved in ", c->save);
    int status = 0;
    struct shown s = {c, d, &status};
    if (!c->explain)
        show(c, d);
    else if (dot_file(c->explain, show_into, &s, err, sizeof err) != 0)
        say("--explain: ", err);
    else
        say("--sentinel: the hang explained in ", c->explain);
    if (c->signal)
        sentinel_signal(c, pids, n);
    return EXIT_HUNG;
}

/* --pid, --job or --sentinel: dump the processes and show them.  Returns
 * the exit status. */
static int dump(struct command *c)
{
    pid_t *pids = c->pids;
    int *ranks = NULL, npids = c->npids, status;
    char **hosts = NULL;
    if (c->job && (status = job_processes(c, &pids, &ranks, &hosts, &npids)) != 0)
        return status;
    debuginfod_settings();
    struct mqdh_dump *d = NULL;
    struct held_stderr held;
    /* On the terminal, never in --json's output there. */
    struct progress *pr = c->quiet || c->watch || c->sentinel || (c->json && isatty(1))
                              ? NULL
                              : progress_start();
    c->o.progress = pr ? progress_note : NULL;
    c->o.progress_arg = pr;
    int looks = c->save || c->watch || c->sentinel; /* compared, later or again */
    c->o.no_cpu = !looks;
    c->o.brief_mpi_frames = !(looks || c->stacks || c->stacks_graph); /* whole stacks show them */
    hold_stderr(&held);
    enum watch_end end = WATCH_FAILED;
    int rc = MQDH_OK;
    if (c->sentinel)
        end = sentinel_looks(c, pids, ranks, (const char *const *)hosts, npids,
                             held.saved >= 0 ? held.saved : 2, &d);
    else
        rc = c->watch ? watch_looks(c, pids, ranks, (const char *const *)hosts, npids, &d)
                      : mqdh_dump_processes(pids, ranks, (const char *const *)hosts, npids,
                                            &c->o, &d);
    progress_stop(pr);
    c->o.progress = NULL;
    c->o.progress_arg = NULL;
    release_stderr(&held, c->o.verbose);
    if (c->sentinel) {
        status = sentinel_end(c, d, end, pids, npids);
    } else if (!d) {
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
    case TASK_SENTINEL: {
        int status = c->job || c->npids ? 0 : sentinel_find_job(c);
        return status ? status : dump(c);
    }
    }
    return EXIT_FATAL;
}

int main(int argc, char **argv)
{
    tune_heap();
    prefer_latency();
    catch_fatal_signals();
    struct command c = {.task = TASK_DUMP, .o = MQDH_OPTIONS_INIT};
    int status = parse_command_line(argc, argv, &c);
    if (status == 0)
        status = run(&c);
    command_free(&c);
    return status;
}
