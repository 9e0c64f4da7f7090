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
 * Every agent is the leader of a process group of its own, so that one
 * that does not answer in time is stopped with whatever it started; and
 * an agent whose channel closes (the front end killed, ssh stopped) lets
 * its ranks go by itself (mqdump/main.c).
 */
#define _GNU_SOURCE
#include "remote.h"

#include "beside.h"
#include "dump.h"
#include "hosts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define DEFAULT_REMOTE "ssh -o BatchMode=yes {host}"
#define DEFAULT_TIMEOUT 60
#define DEFAULT_FANOUT 256
#define MAX_FANOUT 4096
/* More than any host's result (a few kB a rank): an agent sending more
 * is broken, and is stopped. */
#define MAX_RESULT ((size_t)1 << 30)

/* The agents running, for mqdh__remote_kill_all in a signal handler. */
static atomic_int live[MAX_FANOUT];

struct agent {
    const char *host; /* the dump's */
    int *idx, n;      /* the dump's processes on it */
    pid_t pid;        /* the remote command; 0 not started, -1 done */
    int slot;         /* in live[] */
    int out, err, in; /* its stdout, stderr, stdin (held open); -1 closed */
    char *buf;
    size_t len, cap;
    char tail[2048]; /* the end of its stderr */
    size_t tlen;
    double deadline;
    int status, timed_out, too_big;
    char *why;        /* set: no result, for this reason */
    struct mqdh_dump *result;
};

struct mqdh_remote {
    const struct mqdh_options *opt;
    char **words;     /* the remote command's words, {host} not yet replaced */
    int nwords;
    char agent[PATH_MAX];
    int timeout, fanout;
    struct agent *a;
    int na, next;     /* agents; the next to start */
    const struct mqdh_process *procs;
    const int *ranks; /* the caller's; NULL: each agent reads them there */
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Characters every remote shell takes literally: the words given to ssh
 * or pdsh are joined and run by the remote user's shell. */
static int shell_safe(const char *w)
{
    if (!*w)
        return 0;
    for (const char *c = w; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr("/._+-:=,@%", *c)))
            return 0;
    return 1;
}

/* The agent's path: the caller's, $MQD_AGENT, else mqdump next to this
 * library (bin/ beside lib/: the build tree and an installation alike). */
static int agent_path(const struct mqdh_options *o, char *out, size_t len)
{
    const char *p = o->agent_path ? o->agent_path : getenv("MQD_AGENT");
    if (p && *p)
        return (size_t)snprintf(out, len, "%s", p) < len ? 0 : -1;
    static const char *const where[] = {"../bin/mqdump", "mqdump"};
    return mqdh__beside_library(where, 2, X_OK, out, len);
}

static void free_words(char **w, int n)
{
    for (int i = 0; i < n; i++)
        free(w[i]);
    free(w);
}

/* The template's words, split at blanks. */
static int split(const char *t, char ***out, int *n)
{
    char **w = NULL;
    int k = 0;
    for (const char *c = t; *c;) {
        while (*c == ' ' || *c == '\t')
            c++;
        if (!*c)
            break;
        size_t l = strcspn(c, " \t");
        char **nw = realloc(w, (size_t)(k + 1) * sizeof *w);
        if (!nw || !(nw[k] = strndup(c, l))) {
            free_words(nw ? nw : w, k);
            return MQDH_E_NOMEM;
        }
        w = nw;
        k++;
        c += l;
    }
    *out = w;
    *n = k;
    return MQDH_OK;
}

/* word with every {host} replaced by host, malloc'd. */
static char *expand(const char *word, const char *host)
{
    size_t hl = strlen(host), n = 0;
    for (const char *c = strstr(word, "{host}"); c; c = strstr(c + 6, "{host}"))
        n++;
    char *out = malloc(strlen(word) + n * hl + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *c = word; *c;) {
        if (strncmp(c, "{host}", 6) == 0) {
            memcpy(o, host, hl);
            o += hl;
            c += 6;
        } else {
            *o++ = *c++;
        }
    }
    *o = '\0';
    return out;
}

static void set_why(struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_why(struct agent *a, const char *fmt, ...)
{
    if (a->why)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&a->why, fmt, ap) < 0)
        a->why = NULL;
    va_end(ap);
}

/* The agent's argv: the template's words for its host, then the agent's
 * command line.  NULL-terminated, malloc'd, or NULL with a->why set. */
static char **agent_argv(struct mqdh_remote *r, struct agent *a)
{
    const struct mqdh_options *o = r->opt;
    int max = r->nwords + 16 + a->n;
    char **v = calloc((size_t)max + 1, sizeof *v);
    int k = 0;
    if (!v)
        goto nomem;
    for (int i = 0; i < r->nwords; i++)
        if (!(v[k++] = expand(r->words[i], a->host)))
            goto nomem;
    /* The words the remote command and the remote shell see must mean
     * themselves: a host name that is one (never an option), and paths
     * of plain characters. */
    char why[256], shown[160];
    if (mqdh__host_name_check(a->host, why, sizeof why) != 0) {
        set_why(a, "not a host name, so no agent is started for it: %s", why);
        goto fail;
    }
    const char *unsafe = !shell_safe(r->agent) ? r->agent
                         : o->dll && !shell_safe(o->dll) ? o->dll
                                                         : NULL;
    if (unsafe) {
        mqdh_escape(shown, sizeof shown, unsafe);
        set_why(a, "'%s' cannot be passed to the agent: a remote shell would read characters "
                   "in it as its own", shown);
        goto fail;
    }
    char jobs[32], timeout[32], owner[32];
    snprintf(jobs, sizeof jobs, "--jobs=%d", o->jobs);
    snprintf(timeout, sizeof timeout, "--timeout=%d", o->dll_timeout < 0 ? 0 : o->dll_timeout);
    /* The launcher's user, whose processes alone the agent may dump. */
    snprintf(owner, sizeof owner, "--owner=%lu", (unsigned long)o->owner);
    const char *words[] = {r->agent, "--agent", a->host,
                           o->dll ? "--dll" : NULL, o->dll,
                           o->target_dll ? "--target-dll" : NULL,
                           o->trust_target_dll ? "--trust-target-dll" : NULL,
                           o->jobs > 0 ? jobs : NULL,
                           o->verbose ? "--verbose" : NULL,
                           o->dll_timeout ? timeout : NULL,
                           o->owner_set ? owner : NULL};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (i == 4 && !o->dll)
            continue;
        if (words[i] && !(v[k++] = strdup(words[i])))
            goto nomem;
    }
    for (int i = 0; i < a->n; i++) {
        int j = a->idx[i];
        int rank = r->ranks && r->ranks[j] >= 0 ? r->ranks[j] : -1;
        if (asprintf(&v[k++], "%d:%d", (int)r->procs[j].pid, rank) < 0) {
            v[--k] = NULL;
            goto nomem;
        }
    }
    return v;
nomem:
    set_why(a, "out of memory");
fail:
    for (int i = 0; i < k; i++)
        free(v[i]);
    free(v);
    return NULL;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Start agent a: its own process group, its stdin a pipe held open. */
static void start(struct mqdh_remote *r, struct agent *a)
{
    int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1};
    a->pid = -1;
    if (a->why)
        return; /* it cannot start: its reason is given */
    char **argv = agent_argv(r, a);
    if (!argv)
        return;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || pipe2(in, O_CLOEXEC) != 0) {
        set_why(a, "cannot make pipes for its agent: %s", strerror(errno));
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
    int rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc != 0) {
        set_why(a, "cannot run '%s': %s", argv[0], strerror(rc));
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
    a->deadline = now() + r->timeout;
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
static void start_more(struct mqdh_remote *r)
{
    int run = 0;
    for (int i = 0; i < r->na; i++)
        run += running(&r->a[i]);
    while (r->next < r->na && run < r->fanout) {
        start(r, &r->a[r->next++]);
        run += running(&r->a[r->next - 1]);
    }
}

int mqdh__remote_start(const struct mqdh_options *opt, const struct mqdh_process *procs,
                       const int *ranks, const int *remote, int n, struct mqdh_remote **out)
{
    *out = NULL;
    struct mqdh_remote *r = calloc(1, sizeof *r);
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
    if (split(t, &r->words, &r->nwords) != MQDH_OK || !(r->a = calloc((size_t)n, sizeof *r->a)))
        goto nomem;
    int have_agent = agent_path(opt, r->agent, sizeof r->agent) == 0;
    /* One agent per host, in the order hosts first appear. */
    for (int i = 0; i < n; i++) {
        if (!remote[i])
            continue;
        struct agent *a = NULL;
        for (int k = r->na - 1; k >= 0 && !a; k--) /* ranks come by host: the last one, mostly */
            if (strcmp(r->a[k].host, procs[i].host) == 0)
                a = &r->a[k];
        if (!a) {
            a = &r->a[r->na++];
            *a = (struct agent){.host = procs[i].host, .out = -1, .err = -1, .in = -1, .slot = -1};
            if (!r->nwords)
                set_why(a, "the remote command is empty (--remote, $MQD_REMOTE)");
            else if (!have_agent)
                set_why(a, "no agent to start there: mqdump is not beside libmqdhost (give "
                           "--agent-path, or $MQD_AGENT)");
        }
        int *ni = realloc(a->idx, (size_t)(a->n + 1) * sizeof *ni);
        if (!ni)
            goto nomem;
        a->idx = ni;
        a->idx[a->n++] = i;
    }
    start_more(r);
    *out = r;
    return MQDH_OK;
nomem:
    for (int k = 0; r->a && k < r->na; k++)
        free(r->a[k].idx);
    free(r->a);
    free_words(r->words, r->nwords);
    free(r);
    return MQDH_E_NOMEM;
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
            size_t g = (size_t)got;
            if (g >= sizeof a->tail) {
                memcpy(a->tail, chunk + g - sizeof a->tail + 1, sizeof a->tail - 1);
                a->tlen = sizeof a->tail - 1;
            } else {
                if (a->tlen + g >= sizeof a->tail) {
                    size_t drop = a->tlen + g - (sizeof a->tail - 1);
                    memmove(a->tail, a->tail + drop, a->tlen - drop);
                    a->tlen -= drop;
                }
                memcpy(a->tail + a->tlen, chunk, g);
                a->tlen += g;
            }
            a->tail[a->tlen] = '\0';
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
        if (now() >= until)
            return 0;
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Stop a's process group: asked, then made. */
static void stop(struct agent *a)
{
    kill(-a->pid, SIGTERM);
    if (!reaped_by(a, now() + 1.0)) {
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

/* The last line of a's stderr, trimmed (for the reason it failed). */
static const char *last_line(struct agent *a)
{
    char *t = a->tail;
    size_t l = a->tlen;
    while (l && (t[l - 1] == '\n' || t[l - 1] == '\r' || t[l - 1] == ' '))
        t[--l] = '\0';
    char *nl = strrchr(t, '\n');
    char *s = nl ? nl + 1 : t;
    for (char *c = s; *c; c++)
        if ((unsigned char)*c < ' ' || *c == 0x7f)
            *c = '?'; /* never a terminal's control sequence */
    return s;
}

/* What a's end means: its result, or why there is none. */
static void conclude(struct mqdh_remote *r, struct agent *a)
{
    char err[512] = "";
    const char *said = last_line(a);
    const char *sep = *said ? ": " : "";
    if (a->timed_out) {
        set_why(a, "its agent gave no result within %d s (stopped)%s%s", r->timeout, sep, said);
        return;
    }
    if (a->too_big) {
        set_why(a, "its agent sent more than %zu MB: stopped", MAX_RESULT >> 20);
        return;
    }
    int rc = a->len ? mqdh_result_read(a->buf, a->len, &a->result, err, sizeof err) : MQDH_E_RESULT;
    if (rc == MQDH_OK)
        return; /* whatever its exit status: the result is whole */
    int st = a->status;
    if (WIFSIGNALED(st)) {
        set_why(a, "its agent died of signal %d (%s)%s%s", WTERMSIG(st), strsignal(WTERMSIG(st)),
                sep, said);
    } else if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
        set_why(a, "no agent there: %s (exit 127)%s%s", r->agent, sep, said);
    } else if (WIFEXITED(st) && WEXITSTATUS(st) == 64) {
        set_why(a, "its agent %s does not take this command line: another mqd version? "
                   "(exit 64)%s%s", r->agent, sep, said);
    } else if (WIFEXITED(st) && WEXITSTATUS(st) == 255 && r->nwords &&
               strcmp(basename(r->words[0]), "ssh") == 0) {
        set_why(a, "ssh failed%s%s", sep, *said ? said : "(exit 255)");
    } else if (a->len) {
        set_why(a, "its agent's result: %s", err);
    } else {
        set_why(a, "its agent exited with status %d and gave no result%s%s",
                WIFEXITED(st) ? WEXITSTATUS(st) : -1, sep, said);
    }
}

/* Wait for the running agents, starting the rest as they finish. */
static void collect(struct mqdh_remote *r)
{
    struct pollfd *fds = calloc((size_t)(2 * r->na + 1), sizeof *fds);
    int *who = calloc((size_t)(2 * r->na + 1), sizeof *who);
    for (;;) {
        start_more(r);
        int nf = 0, run = 0;
        double t = now(), soonest = t + 3600;
        for (int i = 0; i < r->na; i++) {
            struct agent *a = &r->a[i];
            if (!running(a))
                continue;
            run++;
            if (a->deadline <= t) {
                a->timed_out = 1;
                reap(a);
                conclude(r, a);
                continue;
            }
            if (a->deadline < soonest)
                soonest = a->deadline;
            if (a->out < 0 && a->err < 0) {
                reap(a);
                conclude(r, a);
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
        int ms = (int)((soonest - now()) * 1000) + 1;
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

int mqdh__remote_finish(struct mqdh_remote *r, struct mqdh_dump *d)
{
    collect(r);
    struct mqdh_dump **results = calloc((size_t)(r->na ? r->na : 1), sizeof *results);
    unsigned char *placed = calloc((size_t)(d->nprocs ? d->nprocs : 1), 1);
    int nres = 0, rc = MQDH_OK;
    for (int i = 0; i < r->na; i++)
        if (r->a[i].result && results)
            results[nres++] = r->a[i].result;
    if (results && placed)
        mqdh__dump_merge_marked(d, results, nres, placed);
    /* Each process still without a result gets its host's reason. */
    for (int i = 0; i < r->na; i++) {
        struct agent *a = &r->a[i];
        for (int k = 0; k < a->n; k++) {
            struct mqdh_process *p = &d->procs[a->idx[k]];
            char *why = NULL;
            if (placed && placed[a->idx[k]]) { /* its agent's: say where an error was */
                if (p->error && asprintf(&why, "host %s: %s", a->host, p->error) >= 0) {
                    free(p->error);
                    p->error = why;
                }
                if (p->error)
                    rc = MQDH_E_REMOTE;
                continue;
            }
            if (asprintf(&why, "host %s: %s", a->host,
                         a->why ? a->why : "its agent did not report this process") < 0)
                why = NULL;
            free(p->error);
            p->error = why;
            rc = MQDH_E_REMOTE;
        }
        mqdh_dump_free(a->result);
        free(a->buf);
        free(a->why);
        free(a->idx);
    }
    free(results);
    free(placed);
    free(r->a);
    free_words(r->words, r->nwords);
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
