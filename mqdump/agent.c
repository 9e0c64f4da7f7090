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
    const char **hosts = calloc((size_t)nargs, sizeof *hosts);
    if (!pids || !ranks || !hosts)
        goto out;
    for (int i = 0; i < nargs; i++) {
        hosts[i] = host;
        if (pid_rank(args[i], &pids[i], &ranks[i]) != 0) {
            fprintf(stderr, "mqdump: --agent: '%s' is not PID:RANK\n", args[i]);
            status = EXIT_USAGE;
            goto out;
        }
    }
    watch_channel_start();
    o->as_agent = 1; /* it starts no agent of its own */
    struct mqdh_dump *d = NULL;
    int rc = mqdh_dump_processes(pids, ranks, hosts, nargs, o, &d);
    if (d && mqdh_result_write(stdout, d) == MQDH_OK)
        status = EXIT_OK;
    else if (!d)
        fprintf(stderr, "mqdump: --agent: %s\n", mqdh_strerror(rc));
    mqdh_dump_free(d);
out:
    free(pids);
    free(ranks);
    free(hosts);
    return status;
}
