/*
 * beside.c - where mqd's own files are (beside.h): next to this library's
 * file, or in ../lib and ../bin from it, in the build tree and an installed
 * tree alike.
 */
#define _GNU_SOURCE
#include "base/beside.h"

#include "mqdhost.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mqdh__beside_library(const char *const *rel, int n, int mode, char *buf, size_t len)
{
    Dl_info info;
    char self[PATH_MAX];
    /* This library's own file: libmqdhost.so, or a program it is linked into. */
    if (!dladdr((void *)mqdh__beside_library, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, self))
        return -1;
    char *dir = dirname(self);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s", dir, rel[i]);
        char real[PATH_MAX];
        struct stat st;
        /* A plain name in the resolved directory, not a link: its path is
         * already real (realpath would read a link per component); not
         * there, not at all. */
        int name = !strchr(rel[i], '/') && strlen(path) < sizeof real;
        if (name && lstat(path, &st) != 0)
            continue;
        int plain = name && S_ISREG(st.st_mode);
        if (plain)
            memcpy(real, path, strlen(path) + 1);
        if ((plain || realpath(path, real)) && access(real, mode) == 0 &&
            (size_t)snprintf(buf, len, "%s", real) < len)
            return 0;
    }
    return -1;
}

int mqdh_own_dll(char *buf, size_t len)
{
    static const char *const where[] = {"libmqd_mpich.so", "../lib/libmqd_mpich.so"};
    if (!buf && len)
        return MQDH_E_USAGE;
    return mqdh__beside_library(where, 2, R_OK, buf, len) == 0 ? MQDH_OK : MQDH_E_NO_OWN_DLL;
}
