#ifndef MQDH_HOSTS_H
#define MQDH_HOSTS_H

#include <stddef.h>

/*
 * 1 if name is this host: empty or NULL (no host given), this host's name
 * (or its short name against a qualified one), localhost, or a name or
 * address that resolves to a loopback address or one of this host's
 * interfaces' addresses; else 0.  May ask the resolver.
 */
int mqdh__host_is_local(const char *name);

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
