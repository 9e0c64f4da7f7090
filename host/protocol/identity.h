/*
 * identity.h - ranks, worlds and MPI-2 identities (identity.c).
 */
#ifndef MQDH__IDENTITY_H
#define MQDH__IDENTITY_H

#include "mqdhost.h"

/*
 * Each process's rank (ranks[i] if given and >= 0, else from its
 * environment), its world (the first tabled processes, given ranks, are
 * the launcher's table: world 0, of that size), and the identity the DLL
 * names it by.
 * MQDH_OK or MQDH_E_NOMEM.
 */
int mqdh__name_processes(struct mqdh_process *procs, const int *ranks, const int *remote, int n,
                         int tabled);

#endif
