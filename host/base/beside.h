/*
 * beside.h - where mqd's own files are: beside this library's file, in the
 * build tree and an installed tree alike (beside.c).
 */
#ifndef MQDH__BESIDE_H
#define MQDH__BESIDE_H

#include <stddef.h>

/*
 * The first of rel[0..n-1], paths relative to the directory of this
 * library's file (libmqdhost.so, or the program it is linked into), that
 * exists and allows access `mode` (access(2)), resolved, into buf[len]:
 * how mqd finds its own DLL (mqdh_own_dll) and its agent (remote.c).  0,
 * or -1 if none does.
 */
int mqdh__beside_library(const char *const *rel, int n, int mode, char *buf, size_t len);

#endif
