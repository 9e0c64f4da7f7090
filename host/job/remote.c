/*
 * remote.c - other hosts' ranks, through one agent per host.
 *
 * mqd builds no network of its own: an agent (mqdump --agent, the same
 * program on the other host) is started through the remote-execution
 * command the cluster already trusts - ssh, as hydra itself starts its
 * proxies, or srun or pdsh - and its result (result_read.c) is read from
 * its standard output.  Nothing listens on a port; authentication is the
 * command's.  The agents of all hosts run at once, each within its time;
 * what one sends is only ever parsed, never run.
 *
 * A template names {host} (one command per host) or {hosts} (one command
 * for as many hosts as one command line carries: srun over a node list,
 * pdsh -w list).  Then every agent is given every host's share of the
 * table and picks its own (mqdump --agent-any); their outputs come back
 * through the one command, told apart by the label it puts before each
 * line, and each result names its processes' host.
 *
 * Every agent is the leader of a process group of its own, so that one
 * that does not answer in time is stopped with whatever it started; and
 * an agent whose channel closes (the front end killed, ssh stopped) lets
 * its ranks go by itself (mqdump/main.c).
 */
#define _GNU_SOURCE
#include "job/remote.h"

#include "base/clock.h"
#include "base/dump.h"
#include "base/progress.h"
#include "job/agent_command.h"
#include "job/agent_result.h"
#include "job/agents.h"
#include "job/hosts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The agents running, for mqdh__remote_kill_all in a signal handler. */
static atomic_int live[MAX_FANOUT];

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Start agent a: its own process group, its stdin a pipe held open. */
static void start(struct mqdh__remote *r, struct agent *a)
{
    int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1};
    a->pid = -1;
    if (a->why)
        return; /* it cannot start: its reason is given */
    char **argv = mqdh__agent_argv(r, a);
    if (!argv)
        return;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || pipe2(in, O_CLOEXEC) != 0) {
        mqdh__agent_why(&a->why, "cannot make pipes for its agent: %s", strerror(errno));
        goto out;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    posix_spawnattr_init(&at);
    posix_spawnattr_setpgroup(&at, 0);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    pid_t pid;
    int rc = posix_spawn(&pid, r->program, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc != 0) {
        mqdh__agent_why(&a->why, "cannot run '%s': %s", argv[0], strerror(rc));
        goto out;
    }
    a->pid = pid;
    for (int s = 0; s < MAX_FANOUT; s++) {
        int zero = 0;
        if (atomic_compare_exchange_strong(&live[s], &zero, (int)pid)) {
            a->slot = s;
            break;
        }
    }
    a->out = out[0];
    a->err = err[0];
    a->in = in[1];
    out[0] = err[0] = in[1] = -1;
    fcntl(a->out, F_SETFL, O_NONBLOCK);
    fcntl(a->err, F_SETFL, O_NONBLOCK);
    a->deadline = mqdh__monotonic() + r->timeout;
out:
    for (int i = 0; i < 2; i++) {
        close_fd(&out[i]);
        close_fd(&err[i]);
        close_fd(&in[i]);
    }
    for (int i = 0; argv[i]; i++)
        free(argv[i]);
    free(argv);
}

static int running(const struct agent *a)
{
    return a->pid > 0;
}

/* Start agents until fanout run at once. */
static void start_more(struct mqdh__remote *r)
{
    int run = 0;
    for (int i = 0; i < r->na; i++)
        run += running(&r->a[i]);
    while (r->next < r->na && run < r->fanout) {
        start(r, &r->a[r->next++]);
        int started = running(&r->a[r->next - 1]);
        mqdh__progress_step(started ? MQDH__AGENT_STARTED : MQDH__AGENT_OVER, 1, NULL);
        run += started;
    }
}

/* The hosts of the remote processes, in the order they first appear. */
static int gather_hosts(struct mqdh__remote *r, const int *remote, int n)
{
    for (int i = 0; i < n; i++) {
        if (!remote[i])
            continue;
        struct host *h = NULL;
        for (int k = r->nh - 1; k >= 0 && !h; k--) /* ranks come by host: the last one, mostly */
            if (strcmp(r->h[k].name, r->procs[i].host) == 0)
                h = &r->h[k];
        if (!h) {
            h = &r->h[r->nh++];
            *h = (struct host){.name = r->procs[i].host};
        }
        int *ni = realloc(h->idx, (size_t)(h->n + 1) * sizeof *ni);
        if (!ni)
            return -1;
        h->idx = ni;
        h->idx[h->n++] = i;
    }
    return 0;
}

/* Every host an agent can be started for in a command: its own (the
 * per-host form), or as many at once as MAX_TABLE allows (all-hosts). */
static void plan_agents(struct mqdh__remote *r, const char *why_all)
{
    for (int i = 0; i < r->nh; i++) {
        struct host *h = &r->h[i];
        char why[256];
        if (why_all)
            mqdh__agent_why(&h->why, "%s", why_all);
        else if (mqdh__host_name_check(h->name, why, sizeof why) != 0)
            mqdh__agent_why(&h->why, "not a host name, so no agent is started for it: %s", why);
        if (h->why)
            continue;
        struct agent *last = r->na ? &r->a[r->na - 1] : NULL;
        size_t size = mqdh__share_size(h);
        /* Hosts that cannot start are never in a command: a command's
         * hosts are consecutive ones that can. */
        if (r->all && last && last->first + last->nhosts == i && last->table + size <= MAX_TABLE) {
            last->nhosts++;
            last->table += size;
            continue;
        }
        r->a[r->na++] = (struct agent){.first = i, .nhosts = 1, .table = size, .out = -1,
                                       .err = -1, .in = -1, .slot = -1};
    }
}

static void free_hosts(struct mqdh__remote *r)
{
    for (int k = 0; r->h && k < r->nh; k++) {
        free(r->h[k].idx);
        free(r->h[k].why);
    }
    free(r->h);
}

int mqdh__remote_start(const struct mqdh_options *opt, const struct mqdh_process *procs,
                       const int *ranks, const int *remote, int n, struct mqdh__remote **out)
{
    *out = NULL;
    struct mqdh__remote *r = calloc(1, sizeof *r);
    char *why_all = NULL;
    if (!r)
        return MQDH_E_NOMEM;
    r->opt = opt;
    r->procs = procs;
    r->ranks = ranks;
    r->timeout = opt->remote_timeout > 0 ? opt->remote_timeout : DEFAULT_TIMEOUT;
    r->fanout = opt->fanout > 0 ? (opt->fanout < MAX_FANOUT ? opt->fanout : MAX_FANOUT)
                                : DEFAULT_FANOUT;
    const char *t = opt->remote ? opt->remote : getenv("MQD_REMOTE");
    if (!t || !*t)
        t = DEFAULT_REMOTE;
    if (mqdh__command_split(t, &r->words, &r->nwords) != MQDH_OK ||
        !(r->h = calloc((size_t)(n ? n : 1), sizeof *r->h)) ||
        !(r->a = calloc((size_t)(n ? n : 1), sizeof *r->a)) || gather_hosts(r, remote, n) != 0)
        goto nomem;
    char agent_why[1200];
    int have_agent = mqdh__agent_path(opt, r->agent, sizeof r->agent, agent_why, sizeof agent_why) == 0;
    mqdh__command_check(r, have_agent, agent_why, &why_all);
    plan_agents(r, why_all);
    free(why_all);
    mqdh__progress_step(MQDH__AGENTS, r->na, NULL);
    start_more(r);
    *out = r;
    return MQDH_OK;
nomem:
    free_hosts(r);
    free(r->a);
    mqdh__words_free(r->words, r->nwords);
    free(r);
    return MQDH_E_NOMEM;
}

/* Keep the last a->tcap - 1 bytes of its stderr: the end says why it
 * failed (for a command of many hosts, a line a host). */
static void keep_tail(struct agent *a, const char *chunk, size_t g)
{
    if (!a->tail) {
        a->tcap = a->nhosts > 1 ? 65536 : 2048;
        if (!(a->tail = malloc(a->tcap)))
            return;
    }
    if (g >= a->tcap) {
        memcpy(a->tail, chunk + g - a->tcap + 1, a->tcap - 1);
        a->tlen = a->tcap - 1;
    } else {
        if (a->tlen + g >= a->tcap) {
            size_t drop = a->tlen + g - (a->tcap - 1);
            memmove(a->tail, a->tail + drop, a->tlen - drop);
            a->tlen -= drop;
        }
        memcpy(a->tail + a->tlen, chunk, g);
        a->tlen += g;
    }
    a->tail[a->tlen] = '\0';
}

/* Read what fd has; 1 at its end (or an error), else 0. */
static int drain(struct agent *a, int *fd, int is_out)
{
    char chunk[65536];
    for (;;) {
        ssize_t got = read(*fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (got <= 0) {
            close_fd(fd);
            return 1;
        }
        if (!is_out) { /* keep the end of stderr */
            keep_tail(a, chunk, (size_t)got);
            continue;
        }
        if (a->len + (size_t)got > MAX_RESULT) {
            a->too_big = 1;
            close_fd(fd);
            return 1;
        }
        if (a->len + (size_t)got > a->cap) {
            size_t nc = a->cap ? a->cap * 2 : 65536;
            while (nc < a->len + (size_t)got)
                nc *= 2;
            char *nb = realloc(a->buf, nc);
            if (!nb) {
                a->too_big = 1;
                close_fd(fd);
                return 1;
            }
            a->buf = nb;
            a->cap = nc;
        }
        memcpy(a->buf + a->len, chunk, (size_t)got);
        a->len += (size_t)got;
    }
}

static void unlist(struct agent *a)
{
    if (a->slot >= 0)
        atomic_store(&live[a->slot], 0);
    a->slot = -1;
}

/* Reap a if it exits before time `until`: 1 if it did (or cannot be
 * waited for), else 0. */
static int reaped_by(struct agent *a, double until)
{
    for (;;) {
        pid_t w = waitpid(a->pid, &a->status, WNOHANG);
        if (w == a->pid || (w < 0 && errno != EINTR))
            return 1;
        if (mqdh__monotonic() >= until)
            return 0;
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Stop a's process group: asked, then made. */
static void stop(struct agent *a)
{
    kill(-a->pid, SIGTERM);
    if (!reaped_by(a, mqdh__monotonic() + 1.0)) {
        kill(-a->pid, SIGKILL);
        while (waitpid(a->pid, &a->status, 0) < 0 && errno == EINTR)
            ;
    }
    kill(-a->pid, SIGKILL); /* what it left behind in its group */
}

/* a's output is all in, or its time is up: reap it. */
static void reap(struct agent *a)
{
    if (a->timed_out || a->too_big) {
        stop(a);
    } else {
        /* Its output ended; it exits now, or is stopped at its deadline. */
        if (!reaped_by(a, a->deadline)) {
            a->timed_out = 1;
            stop(a);
        }
    }
    unlist(a);
    close_fd(&a->out);
    close_fd(&a->err);
    close_fd(&a->in);
    a->pid = -1;
}

/* Wait for the running agents, starting the rest as they finish. */
static void collect(struct mqdh__remote *r)
{
    struct pollfd *fds = calloc((size_t)(2 * r->na + 1), sizeof *fds);
    int *who = calloc((size_t)(2 * r->na + 1), sizeof *who);
    for (;;) {
        start_more(r);
        int nf = 0, run = 0;
        double t = mqdh__monotonic(), soonest = t + 3600;
        for (int i = 0; i < r->na; i++) {
            struct agent *a = &r->a[i];
            if (!running(a))
                continue;
            run++;
            if (a->deadline <= t) {
                a->timed_out = 1;
                reap(a);
                mqdh__agent_conclude(r, a);
                mqdh__progress_step(MQDH__AGENT_OVER, 1, NULL);
                continue;
            }
            if (a->deadline < soonest)
                soonest = a->deadline;
            if (a->out < 0 && a->err < 0) {
                reap(a);
                mqdh__agent_conclude(r, a);
                mqdh__progress_step(MQDH__AGENT_OVER, 1, NULL);
                continue;
            }
            if (!fds)
                continue;
            if (a->out >= 0) {
                fds[nf] = (struct pollfd){.fd = a->out, .events = POLLIN};
                who[nf++] = i * 2;
            }
            if (a->err >= 0) {
                fds[nf] = (struct pollfd){.fd = a->err, .events = POLLIN};
                who[nf++] = i * 2 + 1;
            }
        }
        if (!run && r->next >= r->na)
            break;
        if (!nf)
            continue;
        int ms = (int)((soonest - mqdh__monotonic()) * 1000) + 1;
        int got = poll(fds, (nfds_t)nf, ms > 0 ? ms : 0);
        if (got < 0 && errno != EINTR)
            break; /* cannot wait: the deadlines end it */
        for (int k = 0; got > 0 && k < nf; k++) {
            if (!fds[k].revents)
                continue;
            struct agent *a = &r->a[who[k] / 2];
            drain(a, who[k] % 2 ? &a->err : &a->out, !(who[k] % 2));
        }
    }
    free(fds);
    free(who);
}

int mqdh__remote_finish(struct mqdh__remote *r, struct mqdh_dump *d)
{
    collect(r);
    int rc = MQDH_OK;
    unsigned char *placed = calloc((size_t)(d->nprocs ? d->nprocs : 1), 1);
    int *only = malloc((size_t)(d->nprocs ? d->nprocs : 1) * sizeof *only);
    /* Each agent's results only into the processes it was sent. */
    for (int i = 0; placed && only && i < r->na; i++) {
        struct agent *a = &r->a[i];
        int nonly = 0;
        for (int k = a->first; k < a->first + a->nhosts; k++)
            for (int m = 0; m < r->h[k].n; m++)
                only[nonly++] = r->h[k].idx[m];
        int given = 0;
        for (int k = 0; k < a->nresults; k++)
            given += a->results[k]->nprocs;
        int n = mqdh__dump_merge_only(d, a->results, a->nresults, only, nonly, placed);
        a->dropped = n >= 0 ? given - n : 0;
    }
    free(only);
    /* Each process still without a result gets its host's reason. */
    for (int i = 0; i < r->nh; i++) {
        struct host *h = &r->h[i];
        struct agent *a = NULL;
        for (int k = 0; k < r->na && !a; k++)
            if (i >= r->a[k].first && i < r->a[k].first + r->a[k].nhosts)
                a = &r->a[k];
        char *why = NULL;
        for (int k = 0; k < h->n; k++) {
            struct mqdh_process *p = &d->procs[h->idx[k]];
            char *full = NULL;
            if (placed && placed[h->idx[k]]) { /* its agent's: say where an error was */
                if (p->error && asprintf(&full, "host %s: %s", h->name, p->error) >= 0) {
                    free(p->error);
                    p->error = full;
                }
                if (p->error)
                    rc = MQDH_E_REMOTE;
                continue;
            }
            if (!why)
                why = a ? mqdh__agent_reason(r, a, h) : h->why ? strdup(h->why) : NULL;
            if (asprintf(&full, "host %s: %s", h->name,
                         why ? why : "its agent did not report this process") < 0)
                full = NULL;
            free(p->error);
            p->error = full;
            rc = MQDH_E_REMOTE;
        }
        free(why);
    }
    for (int i = 0; i < r->na; i++) {
        struct agent *a = &r->a[i];
        for (int k = 0; k < a->nresults; k++)
            mqdh_dump_free(a->results[k]);
        free(a->results);
        free(a->buf);
        free(a->tail);
        free(a->why);
        free(a->unread);
    }
    free(placed);
    free(r->a);
    free_hosts(r);
    mqdh__words_free(r->words, r->nwords);
    free(r);
    return rc;
}

void mqdh__remote_kill_all(void)
{
    for (int s = 0; s < MAX_FANOUT; s++) {
        int pid = atomic_load(&live[s]);
        if (pid > 0)
            kill(-(pid_t)pid, SIGTERM);
    }
}
