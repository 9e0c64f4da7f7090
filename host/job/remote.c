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

#include "base/beside.h"
#include "base/dump.h"
#include "job/hosts.h"
#include "base/progress.h"

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

/* A host other ranks are on. */
struct host {
    const char *name; /* the dump's */
    int *idx, n;      /* the dump's processes on it */
    char *why;        /* set: no agent was started for it, for this reason */
};

/*
 * One run of the remote command: for one host ({host}), or for several at
 * once ({hosts}), whose agents' outputs come back through it together.
 */
struct agent {
    int first, nhosts; /* its hosts: r->h[first .. first + nhosts - 1] */
    size_t table;     /* the bytes of their shares of the table (share_size) */
    pid_t pid;        /* the remote command; 0 not started, -1 done */
    int slot;         /* in live[] */
    int out, err, in; /* its stdout, stderr, stdin (held open); -1 closed */
    char *buf;
    size_t len, cap;
    char *tail;       /* the end of its stderr */
    size_t tlen, tcap;
    double deadline;
    int status, timed_out, too_big;
    char *why;        /* set: it did not start, for this reason */
    char *unread;     /* set: a result it gave that did not read, and why */
    struct mqdh_dump **results;
    int nresults;
    int dropped; /* processes its results gave that it was not sent */
};

struct mqdh__remote {
    const struct mqdh_options *opt;
    char **words;     /* the remote command's words, {host}/{hosts} not yet replaced */
    int nwords;
    int all;          /* the template names {hosts}: one command for many hosts */
    char agent[PATH_MAX];
    char program[PATH_MAX]; /* the remote command's, found (mqdh_program_path) */
    int timeout, fanout;
    struct host *h;
    int nh;
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
 * library (bin/ beside lib/: the build tree and an installation alike).
 * One given is, as root, refused unless this host's copy passes the trust
 * rule (the same path runs on the other hosts, as root there too).  0, or
 * -1 with the reason in why (empty: none found). */
static int agent_path(const struct mqdh_options *o, char *out, size_t len, char *why,
                      size_t whylen)
{
    const char *p = o->agent_path ? o->agent_path : getenv("MQD_AGENT");
    why[0] = '\0';
    if (p && *p) {
        if ((size_t)snprintf(out, len, "%s", p) >= len)
            return -1;
        char e[1024];
        if (geteuid() == 0 && mqdh_path_trusted(out, "running it", e, sizeof e) != MQDH_OK) {
            snprintf(why, whylen, "refusing the agent %s: %s",
                     o->agent_path ? "given with --agent-path" : "given in $MQD_AGENT", e);
            return -1;
        }
        return 0;
    }
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

/* word with every key ("{host}") replaced by value, malloc'd; word is
 * freed.  NULL: out of memory. */
static char *expand(char *word, const char *key, const char *value)
{
    size_t kl = strlen(key), vl = strlen(value), n = 0;
    if (!word)
        return NULL;
    for (const char *c = strstr(word, key); c; c = strstr(c + kl, key))
        n++;
    char *out = n ? malloc(strlen(word) + n * vl + 1) : word, *o = out;
    if (!n || !out) {
        if (!out)
            free(word);
        return out;
    }
    for (const char *c = word; *c;) {
        if (strncmp(c, key, kl) == 0) {
            memcpy(o, value, vl);
            o += vl;
            c += kl;
        } else {
            *o++ = *c++;
        }
    }
    *o = '\0';
    free(word);
    return out;
}

static void set_why(char **why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_why(char **why, const char *fmt, ...)
{
    if (*why)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(why, fmt, ap) < 0)
        *why = NULL;
    va_end(ap);
}

/* Host h's share of the table: "PID:RANK" words (per-host form), or one
 * "HOST=PID:RANK,PID:RANK..." word (all-hosts form), at v[*k...]. */
static int share_words(struct mqdh__remote *r, const struct host *h, char **v, int *k)
{
    if (!r->all) {
        for (int i = 0; i < h->n; i++) {
            int j = h->idx[i];
            int rank = r->ranks && r->ranks[j] >= 0 ? r->ranks[j] : -1;
            if (asprintf(&v[*k], "%d:%d", (int)r->procs[j].pid, rank) < 0)
                return -1;
            ++*k;
        }
        return 0;
    }
    size_t len = strlen(h->name) + 2 + (size_t)h->n * 24;
    char *w = malloc(len), *o = w;
    if (!w)
        return -1;
    o += sprintf(o, "%s=", h->name);
    for (int i = 0; i < h->n; i++) {
        int j = h->idx[i];
        int rank = r->ranks && r->ranks[j] >= 0 ? r->ranks[j] : -1;
        o += sprintf(o, "%s%d:%d", i ? "," : "", (int)r->procs[j].pid, rank);
    }
    v[(*k)++] = w;
    return 0;
}

/* What share_words gives host h, in bytes (for packing hosts into one
 * command). */
static size_t share_size(const struct host *h)
{
    return strlen(h->name) + 2 + (size_t)h->n * 24;
}

/* The template's words for a's hosts: {host} (the per-host form), or
 * {hosts} comma-joined and {nhosts} their count; into v[*k...]. */
static int template_words(struct mqdh__remote *r, const struct agent *a, char **v, int *k)
{
    size_t len = 1;
    for (int i = 0; i < a->nhosts; i++)
        len += strlen(r->h[a->first + i].name) + 1;
    char *list = malloc(len), *o = list, count[16];
    if (!list)
        return -1;
    *o = '\0';
    for (int i = 0; i < a->nhosts; i++)
        o += sprintf(o, "%s%s", i ? "," : "", r->h[a->first + i].name);
    snprintf(count, sizeof count, "%d", a->nhosts);
    int rc = 0;
    for (int i = 0; i < r->nwords && rc == 0; i++) {
        char *w = strdup(r->words[i]);
        w = expand(w, "{host}", r->h[a->first].name);
        w = expand(w, "{hosts}", list);
        w = expand(w, "{nhosts}", count);
        if (!(v[*k] = w))
            rc = -1;
        else
            ++*k;
    }
    free(list);
    return rc;
}

/* The agent's argv: the template's words for its hosts, then the
 * agent's command line.  NULL-terminated, malloc'd, or NULL out of
 * memory. */
static char **agent_argv(struct mqdh__remote *r, struct agent *a)
{
    const struct mqdh_options *o = r->opt;
    int max = r->nwords + 16 + (r->all ? a->nhosts : r->h[a->first].n);
    char **v = calloc((size_t)max + 1, sizeof *v);
    int k = 0;
    if (!v || template_words(r, a, v, &k) != 0)
        goto nomem;
    char jobs[32], timeout[32], owner[32];
    snprintf(jobs, sizeof jobs, "--jobs=%d", o->jobs);
    snprintf(timeout, sizeof timeout, "--timeout=%d", o->dll_timeout < 0 ? 0 : o->dll_timeout);
    /* The launcher's user, whose processes alone the agent may dump. */
    snprintf(owner, sizeof owner, "--owner=%lu", (unsigned long)o->owner);
    const char *words[] = {r->agent, r->all ? "--agent-any" : "--agent",
                           r->all ? NULL : r->h[a->first].name,
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
    for (int i = 0; i < a->nhosts; i++)
        if (share_words(r, &r->h[a->first + i], v, &k) != 0)
            goto nomem;
    return v;
nomem:
    set_why(&a->why, "out of memory");
    for (int i = 0; v && i < k; i++)
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
static void start(struct mqdh__remote *r, struct agent *a)
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
        set_why(&a->why, "cannot make pipes for its agent: %s", strerror(errno));
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
        set_why(&a->why, "cannot run '%s': %s", argv[0], strerror(rc));
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

/* Most bytes of host tables one command carries: what a remote shell
 * is given is one argument (Linux: at most 128 kB), and ssh sends all of
 * it.  More hosts than that take more commands. */
#define MAX_TABLE ((size_t)96 * 1024)

/* The reason every host gets that no agent can start for, if any. */
static void check_command(struct mqdh__remote *r, int have_agent, const char *agent_why,
                          char **why)
{
    const struct mqdh_options *o = r->opt;
    int per_host = 0;
    for (int i = 0; i < r->nwords; i++) {
        per_host |= strstr(r->words[i], "{host}") != NULL;
        r->all |= strstr(r->words[i], "{hosts}") != NULL;
    }
    char shown[160];
    const char *unsafe = !shell_safe(r->agent) ? r->agent
                         : o->dll && !shell_safe(o->dll) ? o->dll
                                                         : NULL;
    char found[1024];
    if (!r->nwords)
        set_why(why, "the remote command is empty (--remote, $MQD_REMOTE)");
    else if (mqdh_program_path(r->words[0], r->program, sizeof r->program, found,
                               sizeof found) != MQDH_OK)
        set_why(why, "the remote command cannot be run: %s", found);
    else if (per_host && r->all)
        set_why(why, "the remote command names both {host} and {hosts}: it runs either for "
                     "one host or for a list of them");
    else if (!have_agent && agent_why[0])
        set_why(why, "%s", agent_why);
    else if (!have_agent)
        set_why(why, "no agent to start there: mqdump is not beside libmqdhost (give "
                     "--agent-path, or $MQD_AGENT)");
    else if (unsafe) {
        /* The words the remote shell sees must mean themselves. */
        mqdh_escape(shown, sizeof shown, unsafe);
        set_why(why, "'%s' cannot be passed to the agent: a remote shell would read characters "
                     "in it as its own", shown);
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
            set_why(&h->why, "%s", why_all);
        else if (mqdh__host_name_check(h->name, why, sizeof why) != 0)
            set_why(&h->why, "not a host name, so no agent is started for it: %s", why);
        if (h->why)
            continue;
        struct agent *last = r->na ? &r->a[r->na - 1] : NULL;
        size_t size = share_size(h);
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
    if (split(t, &r->words, &r->nwords) != MQDH_OK ||
        !(r->h = calloc((size_t)(n ? n : 1), sizeof *r->h)) ||
        !(r->a = calloc((size_t)(n ? n : 1), sizeof *r->a)) || gather_hosts(r, remote, n) != 0)
        goto nomem;
    char agent_why[1200];
    int have_agent = agent_path(opt, r->agent, sizeof r->agent, agent_why, sizeof agent_why) == 0;
    check_command(r, have_agent, agent_why, &why_all);
    plan_agents(r, why_all);
    free(why_all);
    mqdh__progress_step(MQDH__AGENTS, r->na, NULL);
    start_more(r);
    *out = r;
    return MQDH_OK;
nomem:
    free_hosts(r);
    free(r->a);
    free_words(r->words, r->nwords);
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

/* Control characters as '?': never a terminal's control sequence. */
static void tame(char *s)
{
    for (char *c = s; *c; c++)
        if ((unsigned char)*c < ' ' || *c == 0x7f)
            *c = '?';
}

/* The last line of a's stderr that names host (for one of many hosts:
 * "nodeC: ssh: connect to host nodeC port 22: ..."), or host NULL: its
 * last line; "" if none; malloc'd, tamed.  NULL out of memory. */
static char *said(const struct agent *a, const char *host)
{
    const char *t = a->tail ? a->tail : "", *best = NULL;
    size_t hl = host ? strlen(host) : 0, bl = 0;
    for (const char *l = t; *l;) {
        size_t ll = strcspn(l, "\n");
        size_t tl = ll;
        while (tl && (l[tl - 1] == '\r' || l[tl - 1] == ' '))
            tl--;
        int names = !host;
        for (const char *c = l; host && !names && c + hl < l + tl; c++)
            names = strncmp(c, host, hl) == 0 && c[hl] == ':' && (c == l || c[-1] == ' ');
        if (tl && names) {
            best = l;
            bl = tl;
        }
        l += ll + (l[ll] == '\n');
    }
    char *out = strndup(best ? best : "", bl);
    if (out)
        tame(out);
    return out;
}

/* The length of a line's label, as a command that runs many hosts' agents
 * marks each line (pdsh: "nodeB: ", srun --label: "  3: "): blanks, then
 * a word ending in ':', then a blank.  A result's own lines start with a
 * record's name, which never ends in ':' (docs/RESULT.md).  0: none. */
static size_t label_len(const char *l, size_t ll)
{
    size_t i = 0;
    while (i < ll && l[i] == ' ')
        i++;
    size_t w = i;
    while (i < ll && l[i] != ' ' && l[i] != ':')
        i++;
    if (i == w || i >= ll || l[i] != ':' || (i + 1 < ll && l[i + 1] != ' '))
        return 0;
    return i + 1 < ll ? i + 2 : i + 1;
}

/* One agent's output, told apart from the others' by its label. */
struct stream {
    const char *label; /* in the command's output; "" none */
    size_t llen;
    char *buf;
    size_t len, cap;
};

static int stream_add(struct stream *s, const char *l, size_t ll)
{
    if (s->len + ll + 1 > s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 4096;
        while (nc < s->len + ll + 1)
            nc *= 2;
        char *nb = realloc(s->buf, nc);
        if (!nb)
            return -1;
        s->buf = nb;
        s->cap = nc;
    }
    memcpy(s->buf + s->len, l, ll);
    s->len += ll;
    s->buf[s->len++] = '\n';
    return 0;
}

/* a's output sorted into streams, one a label (and one for the lines with
 * none), in the order they first appear.  0, or -1 out of memory. */
static int demux(const struct agent *a, struct stream **out, int *n)
{
    struct stream *st = NULL;
    int ns = 0, last = -1;
    for (size_t at = 0; at < a->len;) {
        const char *l = a->buf + at;
        const char *nl = memchr(l, '\n', a->len - at);
        size_t ll = nl ? (size_t)(nl - l) : a->len - at;
        at += ll + (nl != NULL);
        size_t lab = label_len(l, ll);
        int k = last;
        if (k < 0 || st[k].llen != lab || memcmp(st[k].label, l, lab) != 0)
            for (k = 0; k < ns; k++)
                if (st[k].llen == lab && memcmp(st[k].label, l, lab) == 0)
                    break;
        if (k == ns) {
            struct stream *nst = realloc(st, (size_t)(ns + 1) * sizeof *nst);
            if (!nst)
                goto nomem;
            st = nst;
            st[ns++] = (struct stream){.label = l, .llen = lab};
        }
        last = k;
        if (stream_add(&st[k], l + lab, ll - lab) != 0)
            goto nomem;
    }
    *out = st;
    *n = ns;
    return 0;
nomem:
    for (int k = 0; k < ns; k++)
        free(st[k].buf);
    free(st);
    return -1;
}

/* The host of a's whose name is label's ("nodeB: "), or NULL. */
static struct host *host_labelled(struct mqdh__remote *r, const struct agent *a,
                                  const struct stream *s)
{
    size_t w = 0;
    while (w < s->llen && s->label[w] == ' ')
        w++;
    size_t e = w;
    while (e < s->llen && s->label[e] != ':')
        e++;
    for (int i = 0; i < a->nhosts; i++) {
        struct host *h = &r->h[a->first + i];
        if (strlen(h->name) == e - w && strncmp(h->name, s->label + w, e - w) == 0)
            return h;
    }
    return NULL;
}

/* Read stream s, which holds one result or several one after another
 * ("mqd-result" starts each), into a's results.  A result that does not
 * read is a reason: its host's if the label names one, else a's. */
static void read_stream(struct mqdh__remote *r, struct agent *a, const struct stream *s)
{
    for (size_t at = 0; at < s->len;) {
        size_t end = at;
        /* This result runs up to the next line that starts one. */
        for (size_t p = at; p < s->len;) {
            const char *nl = memchr(s->buf + p, '\n', s->len - p);
            p = nl ? (size_t)(nl - s->buf) + 1 : s->len;
            end = p;
            if (p < s->len && strncmp(s->buf + p, "mqd-result ", 11) == 0)
                break;
        }
        struct mqdh_dump *d = NULL;
        char err[512] = "";
        int rc = mqdh_result_read(s->buf + at, end - at, &d, err, sizeof err);
        if (rc == MQDH_OK) {
            struct mqdh_dump **nr = realloc(a->results, (size_t)(a->nresults + 1) * sizeof *nr);
            if (nr) {
                a->results = nr;
                a->results[a->nresults++] = d;
            } else {
                mqdh_dump_free(d);
            }
        } else {
            struct host *h = host_labelled(r, a, s);
            tame(err);
            set_why(h ? &h->why : &a->unread, "its agent's result: %s", err);
        }
        at = end;
    }
}

/* Why a host of a's has no result (asked only of those), malloc'd. */
static char *reason(struct mqdh__remote *r, struct agent *a, const struct host *h)
{
    if (h->why)
        return strdup(h->why);
    char *line = said(a, a->nhosts > 1 ? h->name : NULL), *why = NULL;
    const char *sep = line && *line ? ": " : "";
    const char *l = line ? line : "";
    int st = a->status;
    if (a->why) /* it did not start */
        why = strdup(a->why);
    else if (a->timed_out)
        set_why(&why, "its agent gave no result within %d s (stopped)%s%s", r->timeout, sep, l);
    else if (a->too_big)
        set_why(&why, "its agent sent more than %zu MB: stopped", MAX_RESULT >> 20);
    else if (a->nhosts > 1)
        set_why(&why, "its agent gave no result through the command run for %d hosts (exit "
                      "status %d)%s%s", a->nhosts, WIFEXITED(st) ? WEXITSTATUS(st) : -1, sep, l);
    else if (WIFSIGNALED(st))
        set_why(&why, "its agent died of signal %d (%s)%s%s", WTERMSIG(st),
                strsignal(WTERMSIG(st)), sep, l);
    else if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
        set_why(&why, "no agent there: %s (exit 127)%s%s", r->agent, sep, l);
    else if (WIFEXITED(st) && WEXITSTATUS(st) == 64)
        set_why(&why, "its agent %s does not take this command line: another mqd version? "
                      "(exit 64)%s%s", r->agent, sep, l);
    else if (WIFEXITED(st) && WEXITSTATUS(st) == 255 && r->nwords &&
             strcmp(basename(r->words[0]), "ssh") == 0)
        set_why(&why, "ssh failed%s%s", sep, *l ? l : "(exit 255)");
    else if (a->unread)
        why = strdup(a->unread);
    else if (a->dropped)
        set_why(&why, "its agent did not report this process, and answered for %d it was not "
                      "sent (dropped)", a->dropped);
    else if (a->nresults)
        set_why(&why, "its agent's result does not include this process");
    else
        set_why(&why, "its agent exited with status %d and gave no result%s%s",
                WIFEXITED(st) ? WEXITSTATUS(st) : -1, sep, l);
    free(line);
    return why;
}

/* What a's end means: the results it gave (whatever its exit status, a
 * result that reads is whole), or the reasons there are none. */
static void conclude(struct mqdh__remote *r, struct agent *a)
{
    if (a->too_big)
        return;
    struct stream *st = NULL;
    int ns = 0;
    if (demux(a, &st, &ns) != 0) {
        set_why(&a->why, "out of memory");
        return;
    }
    for (int k = 0; k < ns; k++) {
        read_stream(r, a, &st[k]);
        free(st[k].buf);
    }
    free(st);
}

/* Wait for the running agents, starting the rest as they finish. */
static void collect(struct mqdh__remote *r)
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
                mqdh__progress_step(MQDH__AGENT_OVER, 1, NULL);
                continue;
            }
            if (a->deadline < soonest)
                soonest = a->deadline;
            if (a->out < 0 && a->err < 0) {
                reap(a);
                conclude(r, a);
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
                why = a ? reason(r, a, h) : h->why ? strdup(h->why) : NULL;
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
