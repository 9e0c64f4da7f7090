#ifndef MQDH_HOSTS_H
#define MQDH_HOSTS_H

/*
 * 1 if name is this host: empty or NULL (no host given), this host's name
 * (or its short name against a qualified one), localhost, or a name or
 * address that resolves to a loopback address or one of this host's
 * interfaces' addresses; else 0.  May ask the resolver.
 */
int mqdh_host_is_local(const char *name);

#endif
