/*
 * hosts.c - is a host name (as a launcher's MPIR_proctable gives it) this
 * host?  A rank is attached only on its own host: a pid names another
 * process, or none, anywhere else.
 */
#define _GNU_SOURCE
#include "job/hosts.h"

#include "mqdhost.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Do a and b name the same host, one perhaps qualified ("n1" and
 * "n1.cluster")? */
static int same_name(const char *a, const char *b)
{
    size_t la = strcspn(a, "."), lb = strcspn(b, ".");
    if (strcasecmp(a, b) == 0)
        return 1;
    /* One is the other's first label: a short name against its FQDN. */
    return la == lb && strncasecmp(a, b, la) == 0 && (a[la] == '\0' || b[lb] == '\0');
}

static int by_name_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static int same_addr(const struct sockaddr *x, const struct sockaddr *y)
{
    if (!x || !y || x->sa_family != y->sa_family)
        return 0;
    if (x->sa_family == AF_INET)
        return ((const struct sockaddr_in *)x)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)y)->sin_addr.s_addr;
    if (x->sa_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)x)->sin6_addr,
                      &((const struct sockaddr_in6 *)y)->sin6_addr, sizeof(struct in6_addr)) == 0;
    return 0;
}

/* Is ai a loopback address, or one of this host's interfaces'? */
static int local_addr(const struct addrinfo *ai, const struct ifaddrs *ifs)
{
    const struct sockaddr *sa = ai->ai_addr;
    if (sa->sa_family == AF_INET &&
        (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127)
        return 1;
    if (sa->sa_family == AF_INET6 &&
        IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr))
        return 1;
    for (const struct ifaddrs *i = ifs; i; i = i->ifa_next)
        if (same_addr(sa, i->ifa_addr))
            return 1;
    return 0;
}

enum { HOST_NAME_MAX_LEN = 253 }; /* a DNS name's, dots included */

static int ipv6_literal(const char *name)
{
    char a[INET6_ADDRSTRLEN + 2];
    struct in6_addr in6;
    size_t l = strlen(name);
    if (l >= sizeof a)
        return 0;
    if (name[0] == '[' && l > 2 && name[l - 1] == ']') {
        memcpy(a, name + 1, l - 2);
        a[l - 2] = '\0';
    } else {
        memcpy(a, name, l + 1);
    }
    return inet_pton(AF_INET6, a, &in6) == 1;
}

int mqdh__host_name_check(const char *name, char *why, size_t len)
{
    const char *bad = NULL;
    size_t l = strlen(name);
    if (l == 0)
        bad = "it is empty";
    else if (ipv6_literal(name))
        return 0;
    else if (l > HOST_NAME_MAX_LEN)
        bad = "it is longer than 253 characters";
    else if (name[0] == '-')
        bad = "it starts with '-' (a command would read it as an option)";
    else if (name[0] == '.')
        bad = "it starts with '.'";
    else if (name[strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789-._")])
        bad = "it holds characters other than letters, digits, '-', '.' and '_'";
    if (!bad)
        return 0;
    snprintf(why, len, "%s", bad);
    return -1;
}

/*
 * What a name's spelling says: 1 this host, 0 another (or no host), -1
 * only its addresses can tell.  me: this host's name ("" unknown).
 */
static int settled_by_name(const char *name, const char *me)
{
    char why[8];
    if (!name || !*name)
        return 1; /* the launcher named none: it started the rank here */
    if (mqdh__host_name_check(name, why, sizeof why) != 0)
        return 0; /* not looked up: it names no host */
    if ((me[0] && same_name(name, me)) || strcasecmp(name, "localhost") == 0)
        return 1;
    return -1;
}

/*
 * A name its spelling did not settle, if it is an address: 1 one of this
 * host's interfaces' (ifs), 0 not; -1 no address, only the resolver can
 * tell.  An address is compared, never looked up.
 */
static int settled_by_address(const char *name, const struct ifaddrs *ifs)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_flags = AI_NUMERICHOST};
    struct addrinfo *res = NULL;
    char bare[INET6_ADDRSTRLEN + 2];
    size_t l = strlen(name);
    snprintf(bare, sizeof bare, "%.*s", name[0] == '[' && l > 2 ? (int)l - 2 : (int)l,
             name[0] == '[' && l > 2 ? name + 1 : name);
    if (getaddrinfo(bare, NULL, &hints, &res) != 0)
        return -1;
    int local = 0;
    for (const struct addrinfo *ai = res; ai && !local; ai = ai->ai_next)
        local = local_addr(ai, ifs);
    freeaddrinfo(res);
    return local;
}

/*
 * Look-ups run by threads of their own (getaddrinfo blocks; glibc's
 * getaddrinfo_a is not used: its gai_suspend can leave a waiter behind
 * that a helper thread then reads).  The caller waits until all are done
 * or its deadline; a look-up still running then is abandoned to its
 * thread, which frees what it finds and, the last to leave, the batch.
 */
struct batch {
    pthread_mutex_t lock;
    pthread_cond_t done_cond;
    int n, next, done, refs, abandoned;
    struct addrinfo **res; /* res[i]: names[i]'s addresses, once done[i] */
    unsigned char *finished;
    char **names;
};

static void batch_free(struct batch *b)
{
    for (int i = 0; i < b->n; i++) {
        if (b->res[i])
            freeaddrinfo(b->res[i]);
        free(b->names[i]);
    }
    free(b->res);
    free(b->finished);
    free(b->names);
    pthread_mutex_destroy(&b->lock);
    pthread_cond_destroy(&b->done_cond);
    free(b);
}

/* Drop one reference to b (its lock held): the last frees it. */
static void batch_leave(struct batch *b)
{
    int last = --b->refs == 0;
    pthread_mutex_unlock(&b->lock);
    if (last)
        batch_free(b);
}

static void *look_up_thread(void *arg)
{
    struct batch *b = arg;
    pthread_mutex_lock(&b->lock);
    while (!b->abandoned && b->next < b->n) {
        int i = b->next++;
        pthread_mutex_unlock(&b->lock);
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
        struct addrinfo *res = NULL;
        if (getaddrinfo(b->names[i], NULL, &hints, &res) != 0)
            res = NULL;
        pthread_mutex_lock(&b->lock);
        b->res[i] = res;
        b->finished[i] = 1;
        b->done++;
        pthread_cond_signal(&b->done_cond);
    }
    batch_leave(b);
    return NULL;
}

enum { LOOKUP_THREADS = 32 };

/* A batch for names[0..n-1], its condition on the monotonic clock; NULL
 * out of memory. */
static struct batch *batch_new(const char *const *names, int n)
{
    struct batch *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->done_cond, &ca);
    pthread_condattr_destroy(&ca);
    b->res = calloc((size_t)n, sizeof *b->res);
    b->finished = calloc((size_t)n, 1);
    b->names = calloc((size_t)n, sizeof *b->names);
    int ok = b->res && b->finished && b->names;
    for (int i = 0; ok && i < n; i++, b->n = i)
        ok = (b->names[i] = strdup(names[i])) != NULL;
    if (!ok) {
        batch_free(b);
        return NULL;
    }
    b->n = n;
    return b;
}

/*
 * Look names[0..n-1] up at once, and set local[i] for each whose
 * addresses include one of this host's; *late += how many had no answer
 * within `seconds` (local[i] stays 0).  0, or -1 out of memory.
 */
static int look_up(const char *const *names, int n, const struct ifaddrs *ifs, double seconds,
                   int *local, int *late)
{
    struct batch *b = batch_new(names, n);
    if (!b)
        return -1;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)seconds;
    until.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    /* The threads take no signal: the session's are its own threads'. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int threads = 0;
    b->refs = 1;
    for (int t = 0; t < n && t < LOOKUP_THREADS; t++) {
        pthread_t th;
        pthread_mutex_lock(&b->lock);
        b->refs++;
        pthread_mutex_unlock(&b->lock);
        if (pthread_create(&th, &at, look_up_thread, b) != 0) {
            pthread_mutex_lock(&b->lock);
            b->refs--;
            pthread_mutex_unlock(&b->lock);
            break;
        }
        threads++;
    }
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_mutex_lock(&b->lock);
    /* No thread (none could be made): the names are not looked up. */
    while (threads && b->done < b->n &&
           pthread_cond_timedwait(&b->done_cond, &b->lock, &until) != ETIMEDOUT)
        ;
    b->abandoned = 1;
    for (int i = 0; i < n; i++) {
        if (!b->finished[i]) {
            ++*late;
            continue;
        }
        for (const struct addrinfo *ai = b->res[i]; ai && !local[i]; ai = ai->ai_next)
            local[i] = local_addr(ai, ifs);
    }
    batch_leave(b);
    return 0;
}

static int by_name(const void *x, const void *y, void *names)
{
    const char *const *v = names;
    const char *a = v[*(const int *)x], *b = v[*(const int *)y];
    return strcmp(a ? a : "", b ? b : "");
}

int mqdh__hosts_local(const char *const *names, int n, double seconds, int *local, int *late)
{
    char me[256] = "";
    struct ifaddrs *ifs = NULL;
    int *order = calloc((size_t)(n > 0 ? n : 1), sizeof *order);
    const char **ask = calloc((size_t)(n > 0 ? n : 1), sizeof *ask);
    int *ask_local = calloc((size_t)(n > 0 ? n : 1), sizeof *ask_local);
    int *first = calloc((size_t)(n > 0 ? n : 1), sizeof *first);
    int rc = -1, nask = 0, nlate = 0, ifs_read = 0;
    if (!order || !ask || !ask_local || !first)
        goto out;
    if (gethostname(me, sizeof me - 1) != 0)
        me[0] = '\0';
    /* Each name once: sorted, equal names side by side. */
    for (int i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, (size_t)n, sizeof *order, by_name, (void *)names);
    for (int s = 0; s < n;) {
        int i = order[s], e = s + 1;
        while (e < n && by_name_eq(names[order[e]], names[i]))
            e++;
        int v = settled_by_name(names[i], me);
        if (v < 0 && !ifs_read) { /* this host's addresses, once a name needs them */
            ifs_read = 1;
            if (getifaddrs(&ifs) != 0)
                ifs = NULL;
        }
        if (v < 0)
            v = settled_by_address(names[i], ifs);
        if (v < 0) {
            first[nask] = s;
            ask[nask++] = names[i];
            v = 0;
        }
        for (int t = s; t < e; t++)
            local[order[t]] = v;
        s = e;
    }
    if (nask && look_up(ask, nask, ifs, seconds, ask_local, &nlate) != 0)
        goto out;
    for (int a = 0; a < nask; a++)
        for (int t = first[a]; t < n && by_name_eq(names[order[t]], ask[a]); t++)
            local[order[t]] = ask_local[a];
    if (late)
        *late = nlate;
    rc = 0;
out:
    if (ifs)
        freeifaddrs(ifs);
    free(order);
    free(ask);
    free(ask_local);
    free(first);
    return rc;
}

int mqdh__host_is_local(const char *name)
{
    int local = 0;
    if (mqdh__hosts_local(&name, 1, MQDH__HOST_LOOKUP_SECONDS, &local, NULL) != 0)
        return 0;
    return local;
}

int mqdh_host_find(const char *const *names, int n, int *late)
{
    if (late)
        *late = 0;
    if (n <= 0 || !names)
        return -1;
    /* A name that is this host's by its spelling settles it: no look-up
     * for the rest (a front end's list may name a thousand hosts). */
    char me[256] = "";
    if (gethostname(me, sizeof me - 1) != 0)
        me[0] = '\0';
    for (int i = 0; i < n; i++)
        if (names[i] && *names[i] && (me[0] && same_name(names[i], me)))
            return i;
    int *local = calloc((size_t)n, sizeof *local);
    int found = -1;
    if (local && mqdh__hosts_local(names, n, MQDH__HOST_LOOKUP_SECONDS, local, late) == 0)
        for (int i = 0; i < n && found < 0; i++)
            if (local[i] && names[i] && *names[i])
                found = i;
    free(local);
    return found;
}
