/*
 * agent.c - mqdump --agent (agent.h).  Public libmqdhost API only.
 */
#define _GNU_SOURCE
#include "agent.h"

#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Watch the channel from a thread of its own (none if one cannot be
 * made: the ranks are then let go after the dump). */
static void watch_channel_start(void)
{
    main_thread = pthread_self();
    pthread_t w;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* signals are the main thread's */
    int watching = pthread_create(&w, NULL, watch_channel, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (watching)
        pthread_detach(w);
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

/* Dump pids[0..n-1] (ranks[]) of this host, host, and write the result:
 * agent_run's status. */
static int dump_share(const char *host, const pid_t *pids, const int *ranks, int n,
                      struct mqdh_options *o)
{
    const char **hosts = calloc((size_t)n, sizeof *hosts);
    if (!hosts)
        return EXIT_FATAL;
    for (int i = 0; i < n; i++)
        hosts[i] = host;
    watch_channel_start();
    o->as_agent = 1; /* it starts no agent of its own */
    struct mqdh_dump *d = NULL;
    int status = EXIT_FATAL;
    int rc = mqdh_dump_processes(pids, ranks, hosts, n, o, &d);
    if (d && mqdh_result_write(stdout, d) == MQDH_OK)
        status = EXIT_OK;
    else if (!d)
        fprintf(stderr, "mqdump: --agent: %s\n", mqdh_strerror(rc));
    mqdh_dump_free(d);
    free(hosts);
    return status;
}

/*
 * --agent HOST PID:RANK...: dump this host's share of a job for a front
 * end on another host, and write the result (mqdh_result_write) to
 * standard output.  The ranks are let go before it is written.  EXIT_OK
 * when the result was written (whatever it holds), EXIT_FATAL when not,
 * EXIT_USAGE for arguments that are not PID:RANK.
 */
int agent_run(const char *host, char **args, int nargs, struct mqdh_options *o)
{
    if (nargs < 1) {
        fprintf(stderr, "mqdump: --agent takes its host's ranks as PID:RANK arguments\n");
        return EXIT_USAGE;
    }
    int status = EXIT_FATAL;
    pid_t *pids = calloc((size_t)nargs, sizeof *pids);
    int *ranks = calloc((size_t)nargs, sizeof *ranks);
    if (!pids || !ranks)
        goto out;
    for (int i = 0; i < nargs; i++) {
        if (pid_rank(args[i], &pids[i], &ranks[i]) != 0) {
            fprintf(stderr, "mqdump: --agent: '%s' is not PID:RANK\n", args[i]);
            status = EXIT_USAGE;
            goto out;
        }
    }
    status = dump_share(host, pids, ranks, nargs, o);
out:
    free(pids);
    free(ranks);
    return status;
}

/* Host word's "PID:RANK,PID:RANK..." (after its '=') into pids, ranks
 * (malloc'd), *n of them; 0, or -1 (said) if it is not that. */
static int share_of(char *word, pid_t **pids, int **ranks, int *n)
{
    char *list = strchr(word, '=') + 1;
    int max = 1;
    for (const char *c = list; *c; c++)
        max += *c == ',';
    *pids = calloc((size_t)max, sizeof **pids);
    *ranks = calloc((size_t)max, sizeof **ranks);
    *n = 0;
    if (!*pids || !*ranks)
        return -1;
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (pid_rank(t, &(*pids)[*n], &(*ranks)[*n]) != 0) {
            fprintf(stderr, "mqdump: --agent-any: '%s' is not PID:RANK\n", t);
            return -1;
        }
        ++*n;
    }
    return *n ? 0 : -1;
}

int agent_run_any(char **args, int nargs, struct mqdh_options *o)
{
    if (nargs < 1) {
        fprintf(stderr, "mqdump: --agent-any takes every host's ranks as "
                        "HOST=PID:RANK[,PID:RANK...] arguments\n");
        return EXIT_USAGE;
    }
    const char **names = calloc((size_t)nargs, sizeof *names);
    char **copies = calloc((size_t)nargs, sizeof *copies);
    pid_t *pids = NULL;
    int *ranks = NULL, n = 0, status = EXIT_FATAL;
    if (!names || !copies)
        goto out;
    for (int i = 0; i < nargs; i++) {
        char *eq = strchr(args[i], '=');
        if (!eq || eq == args[i] || !(copies[i] = strndup(args[i], (size_t)(eq - args[i])))) {
            fprintf(stderr, "mqdump: --agent-any: '%s' is not HOST=PID:RANK[,PID:RANK...]\n",
                    args[i]);
            status = EXIT_USAGE;
            goto out;
        }
        names[i] = copies[i];
    }
    int late = 0, me = mqdh_host_find(names, nargs, &late);
    if (me < 0) {
        char here[256] = "?";
        gethostname(here, sizeof here - 1);
        fprintf(stderr, "mqdump: --agent-any: this host (%s) is none of the %d host%s given "
                        "(%s%s)%s\n", here, nargs, nargs == 1 ? "" : "s", names[0],
                nargs > 1 ? ", ..." : "", late ? ": some names were not looked up in time" : "");
        goto out;
    }
    if (share_of(args[me], &pids, &ranks, &n) != 0) {
        status = EXIT_USAGE;
        goto out;
    }
    status = dump_share(names[me], pids, ranks, n, o);
out:
    for (int i = 0; copies && i < nargs; i++)
        free(copies[i]);
    free(copies);
    free(names);
    free(pids);
    free(ranks);
    return status;
}
