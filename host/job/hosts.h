#ifndef MQDH__HOSTS_H
#define MQDH__HOSTS_H

#include <stddef.h>

/*
 * 1 if name is this host: empty or NULL (no host given), this host's name
 * (or its short name against a qualified one), localhost, or a name or
 * address that resolves to a loopback address or one of this host's
 * interfaces' addresses; else 0.  May ask the resolver.
 */
int mqdh__host_is_local(const char *name);

/* Seconds the resolver has for all the names of one call, together. */
#define MQDH__HOST_LOOKUP_SECONDS 5.0

/*
 * local[i] = mqdh__host_is_local(names[i]) for names[0..n-1], at once: a
 * name repeated is checked once; one whose spelling settles it (empty,
 * this host's name, localhost, an address, not a host name) is not looked
 * up; the rest are looked up in parallel (up to 32 threads), all within
 * `seconds`.  A name with no answer by then is taken for another host's
 * (the remote command then says what it makes of it), and counted in
 * *late (may be NULL).  Never waits much longer than `seconds`, however
 * slow the resolver: a look-up still running is left to its thread,
 * which frees what it gets.  0, or -1 out of memory (local[] then unset).
 */
int mqdh__hosts_local(const char *const *names, int n, double seconds, int *local, int *late);

/*
 * 0 if name is a host name mqd may use (look it up, give it to the remote
 * command): one to 253 letters, digits, '-', '.' and '_', not starting with
 * '-' or '.'; or an IPv4 or IPv6 address (an IPv6 one may be in brackets).
 * Else -1 and why[len] says what is wrong with it, the name escaped.  A
 * launcher writes its table's names: "-oProxyCommand=..." would be an
 * option to ssh, "n1\nDEADLOCK: ..." a forged line.
 */
int mqdh__host_name_check(const char *name, char *why, size_t len);

#endif
