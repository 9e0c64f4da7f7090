/*
 * hosts.c - is a host name (as a launcher's MPIR_proctable gives it) this
 * host?  A rank is attached only on its own host: a pid names another
 * process, or none, anywhere else.
 */
#define _GNU_SOURCE
#include "hosts.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
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

int mqdh__host_is_local(const char *name)
{
    char me[256] = "", why[8];
    if (!name || !*name)
        return 1; /* the launcher named none: it started the rank here */
    if (mqdh__host_name_check(name, why, sizeof why) != 0)
        return 0; /* not looked up: it names no host */
    if (gethostname(me, sizeof me - 1) == 0 && me[0] && same_name(name, me))
        return 1;
    if (strcasecmp(name, "localhost") == 0)
        return 1;
    /* Another spelling of this host: an address of it, or a name that
     * resolves to one. */
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    struct ifaddrs *ifs = NULL;
    int local = 0;
    if (getaddrinfo(name, NULL, &hints, &res) == 0 && getifaddrs(&ifs) == 0)
        for (const struct addrinfo *ai = res; ai && !local; ai = ai->ai_next)
            local = local_addr(ai, ifs);
    if (res)
        freeaddrinfo(res);
    if (ifs)
        freeifaddrs(ifs);
    return local;
}
