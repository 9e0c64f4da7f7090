/* trust.c - the trust rule (trust.h), and the public checks made of it. */
#define _GNU_SOURCE
#include "base/trust.h"
#include "base/clock.h"
#include "mqdhost.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Root's or me's (the effective user, read once a walk). */
static int owner_ok(const struct stat *st, uid_t me)
{
    return st->st_uid == 0 || st->st_uid == me;
}

/* What a trust failure says: the defect, then what it means.  subject is
 * the file or the directory that failed, with what it is to the file. */
enum defect { OWNER, WRITABLE, SHARED };

static const struct mqdh__trust_use dll_use = {"loading it",
                                               "pass --trust-target-dll to load it anyway"};

static int refuse(enum mqdh__dll_trust trust, const struct mqdh__trust_use *how, enum defect what,
                  const struct stat *st, const char *subject, char *err, size_t errlen)
{
    char defect[64];
    switch (what) {
    case OWNER:
        snprintf(defect, sizeof defect, "is owned by uid %u", (unsigned)st->st_uid);
        break;
    case WRITABLE:
        snprintf(defect, sizeof defect, "is writable by its group or by others (mode %03o)",
                 (unsigned)(st->st_mode & 0777));
        break;
    case SHARED:
        snprintf(defect, sizeof defect, "is shared (sticky and world-writable, mode %04o)",
                 (unsigned)(st->st_mode & 07777));
        break;
    }
    if (trust == MQDH__DLL_TRUST_RULE)
        snprintf(err, errlen, "%s %s%s", subject, defect,
                 what == OWNER ? ", neither root nor you" : "");
    else if (!how)
        snprintf(err, errlen, "%s %s: %s as root runs %s as root; %s", subject, defect,
                 dll_use.use,
                 what == OWNER ? "that user's code" : "whatever code its group or others put there",
                 dll_use.override);
    else
        snprintf(err, errlen, "%s %s: as root, mqd will not %s, since %s could change it%s%s",
                 subject, defect, how->use, what == OWNER ? "that user" : "another user",
                 how->override ? "; " : "", how->override ? how->override : "");
    return MQDH_E_DLL_UNTRUSTED;
}

/*
 * The rule for a directory on the file's path (the first dirlen characters
 * of real; own: the file's own directory): root's or the invoking user's,
 * and writable by neither group nor others.  A directory above the file's
 * own may be root's and sticky (/tmp): in it only the owner of the next
 * directory, checked in turn, can move that away.
 */
static int dir_trusted(enum mqdh__dll_trust trust, const struct mqdh__trust_use *how,
                       const char *real, int dirlen, int own, const struct stat *st, uid_t me,
                       char *err, size_t errlen)
{
    if (owner_ok(st, me) && !(st->st_mode & (S_IWGRP | S_IWOTH)))
        return MQDH_OK;
    if (!own && st->st_uid == 0 && (st->st_mode & S_ISVTX))
        return MQDH_OK;
    char subject[PATH_MAX * 2 + 64];
    snprintf(subject, sizeof subject, "%s: %s %.*s%s", real,
             own ? "its directory" : "the directory", dirlen, real, own ? "" : " above it");
    enum defect what = WRITABLE;
    if (!owner_ok(st, me))
        what = OWNER;
    else if ((st->st_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH))
        what = SHARED;
    return refuse(trust, how, what, st, subject, err, errlen);
}

static int file_trusted(enum mqdh__dll_trust trust, const struct mqdh__trust_use *how,
                        const char *real, const struct stat *st, uid_t me, char *err,
                        size_t errlen)
{
    if (!owner_ok(st, me))
        return refuse(trust, how, OWNER, st, real, err, errlen);
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return refuse(trust, how, WRITABLE, st, real, err, errlen);
    return MQDH_OK;
}

/* Opening the first len characters of real failed with e.  ENOTDIR or
 * ELOOP: what realpath saw as a directory (or, at the end, the file) is now
 * a symbolic link or no directory: someone is moving the path while mqd
 * follows it. */
static int changed(const char *verb, const char *path, const char *real, int len, int e,
                   char *err, size_t errlen)
{
    if (e == ENOTDIR || e == ELOOP) {
        snprintf(err, errlen, "%s changed while it was being opened (%.*s is now %s): "
                 "refusing to %s it", path, len, real,
                 real[len] ? "a symbolic link or not a directory" : "a symbolic link", verb);
        return MQDH_E_DLL_UNTRUSTED;
    }
    snprintf(err, errlen, "cannot %s %s: %.*s: %s", verb, path, len, real, strerror(e));
    return MQDH_E_DLL_LOAD;
}

/* Where a walk is: the directory open, the rest of the path. */
struct walk {
    const char *path, *real;
    const char *verb; /* in messages: "load" (a DLL), "open" */
    enum mqdh__dll_trust trust;
    const struct mqdh__trust_use *how;
    int check;
    int dir_ok;  /* the path may name a directory */
    int literal; /* real is path as given, not realpath's: a link is no error yet */
    uid_t me;    /* geteuid() */
    int dfd, dirlen;
    const char *name;
};

/* A walk of the path as given met a symbolic link (or what is not there):
 * it is walked again from realpath's answer. */
#define AGAIN (-1000)

static int walk_failed(const struct walk *w, int len, int e, char *err, size_t errlen)
{
    if (w->literal)
        return AGAIN;
    return changed(w->verb, w->path, w->real, len, e, err, errlen);
}

/* ---------------------------------------------------------------- trusted directories */

/*
 * The directories walks found trusted lately, so that the next walk below
 * one starts there instead of at "/": a dump checks the same few
 * directories (/usr/lib/debug, the DLL's) once per file otherwise, four
 * system calls a level.  Kept: a directory trusted in its own right
 * (root's or the user's, writable by neither group nor others), so that
 * no other user can change it or what leads to it, for MEMO_SECONDS, and
 * used only if what its path opens is still that directory (device and
 * inode) and the effective user the same; the walk checks it again.
 */
#define MEMO_N 16
#define MEMO_SECONDS 30.0

static struct {
    char path[512];
    int len;
    dev_t dev;
    ino_t ino;
    uid_t euid;
    double at;
} memo[MEMO_N];
static int memo_next;
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;

/* The directory the first dirlen characters of real name, just checked. */
static void memo_put(const char *real, int dirlen, const struct stat *st, uid_t me)
{
    if (!owner_ok(st, me) || (st->st_mode & (S_IWGRP | S_IWOTH)) || dirlen < 2 ||
        (size_t)dirlen >= sizeof memo[0].path)
        return;
    pthread_mutex_lock(&memo_lock);
    int k = 0;
    while (k < MEMO_N && !(memo[k].len == dirlen && !memcmp(memo[k].path, real, (size_t)dirlen)))
        k++;
    if (k == MEMO_N)
        k = memo_next++ % MEMO_N;
    memcpy(memo[k].path, real, (size_t)dirlen);
    memo[k].path[dirlen] = '\0';
    memo[k].len = dirlen;
    memo[k].dev = st->st_dev;
    memo[k].ino = st->st_ino;
    memo[k].euid = me;
    memo[k].at = mqdh__monotonic();
    pthread_mutex_unlock(&memo_lock);
}

/* Start w at the deepest kept directory above its file, if that is still
 * the directory checked: w->dfd opened there (else left at "/"). */
static void memo_start(struct walk *w)
{
    char dir[sizeof memo[0].path];
    dev_t dev = 0;
    ino_t ino = 0;
    int best = 0;
    double t = mqdh__monotonic();
    pthread_mutex_lock(&memo_lock);
    for (int k = 0; k < MEMO_N; k++) {
        int n = memo[k].len;
        if (n > best && t - memo[k].at < MEMO_SECONDS && memo[k].euid == w->me &&
            !strncmp(w->real, memo[k].path, (size_t)n) && w->real[n] == '/') {
            best = n;
            memcpy(dir, memo[k].path, (size_t)n + 1);
            dev = memo[k].dev;
            ino = memo[k].ino;
        }
    }
    pthread_mutex_unlock(&memo_lock);
    if (!best)
        return;
    struct stat st;
    int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_dev != dev || st.st_ino != ino) {
        if (fd >= 0)
            close(fd);
        return;
    }
    close(w->dfd);
    w->dfd = fd;
    w->dirlen = best;
    w->name = w->real + best + 1;
}

/* ---------------------------------------------------------------- the walk */

/* Down one directory (the component before the next '/'), checking the
 * one it leaves.  MQDH_OK (w->name is the last component when no '/'
 * follows), or an error. */
static int descend(struct walk *w, struct stat *st, char *err, size_t errlen)
{
    const char *slash = strchr(w->name, '/');
    int rc;
    if (fstat(w->dfd, st) != 0)
        return walk_failed(w, w->dirlen, errno, err, errlen);
    /* The file's own directory may not be shared (sticky), but a
     * directory's may: only its owner can move it away there. */
    int own = !slash && !w->dir_ok;
    if (w->check && (rc = dir_trusted(w->trust, w->how, w->real, w->dirlen, own, st, w->me,
                                      err, errlen)) != MQDH_OK)
        return rc;
    memo_put(w->real, w->dirlen, st, w->me);
    if (!slash)
        return MQDH_OK;
    char comp[NAME_MAX + 1];
    size_t n = (size_t)(slash - w->name);
    if (n > NAME_MAX)
        return changed(w->verb, w->path, w->real, (int)(slash - w->real), ENAMETOOLONG, err, errlen);
    memcpy(comp, w->name, n);
    comp[n] = '\0';
    int next = openat(w->dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0)
        return walk_failed(w, (int)(slash - w->real), errno, err, errlen);
    close(w->dfd);
    w->dfd = next;
    w->dirlen = (int)(slash - w->real);
    w->name = slash + 1;
    return MQDH_OK;
}

/* The file at the end of the walk, opened (O_PATH) and checked. */
static int open_last(struct walk *w, int *fd, struct stat *st, char *err, size_t errlen)
{
    int len = (int)strlen(w->real);
    *fd = openat(w->dfd, w->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (*fd < 0)
        return walk_failed(w, len, errno, err, errlen);
    if (fstat(*fd, st) != 0)
        return walk_failed(w, len, errno, err, errlen);
    if (S_ISLNK(st->st_mode))
        return walk_failed(w, len, ELOOP, err, errlen);
    if (!S_ISREG(st->st_mode) && !(w->dir_ok && S_ISDIR(st->st_mode))) {
        snprintf(err, errlen, "cannot %s %s: %s is not a regular file", w->verb, w->path,
                 w->real);
        return MQDH_E_DLL_LOAD;
    }
    return w->check ? file_trusted(w->trust, w->how, w->real, st, w->me, err, errlen) : MQDH_OK;
}

/* From "/" (or a kept directory) down to w's file: its descriptor in *fd. */
static int walk(struct walk *w, int *fd, struct stat *st, char *err, size_t errlen)
{
    int rc = MQDH_OK;
    *fd = -1;
    w->dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    w->dirlen = 1; /* "/" */
    w->name = w->real + 1;
    if (w->dfd < 0)
        return changed(w->verb, w->path, "/", 1, errno, err, errlen);
    memo_start(w);
    for (;;) { /* down to the file's own directory, checked as such */
        int last = !strchr(w->name, '/');
        if ((rc = descend(w, st, err, errlen)) != MQDH_OK || last)
            break;
    }
    if (rc == MQDH_OK)
        rc = open_last(w, fd, st, err, errlen);
    close(w->dfd);
    if (rc != MQDH_OK && *fd >= 0) {
        close(*fd);
        *fd = -1;
    }
    return rc;
}

/* An absolute path with nothing realpath would change but links: no empty,
 * "." or ".." component, no '/' at its end. */
static int plain_absolute(const char *p)
{
    if (p[0] != '/' || strlen(p) >= PATH_MAX || p[strlen(p) - 1] == '/')
        return 0;
    for (const char *c = p; c; c = strchr(c + 1, '/'))
        if (c[1] == '/' || (c[1] == '.' && (c[2] == '/' || c[2] == '\0' ||
                                            (c[2] == '.' && (c[3] == '/' || c[3] == '\0')))))
            return 0;
    return 1;
}

/* mqdh__trust_open, and mqdh_path_trusted's for a directory too (dir_ok).
 * The path as given is walked first when realpath could only resolve its
 * links; if it has one (or is not there), realpath's answer is. */
static int trust_open(const char *path, enum mqdh__dll_trust trust,
                      const struct mqdh__trust_use *how, int dir_ok, int *fd, struct stat *st,
                      char *err, size_t errlen)
{
    char real[PATH_MAX];
    const char *verb = how ? "open" : "load";
    uid_t me = geteuid();
    struct walk w = {
        .path = path,
        .real = real,
        .verb = verb,
        .trust = trust,
        .how = how,
        .dir_ok = dir_ok,
        .check = trust == MQDH__DLL_TRUST_RULE || (trust == MQDH__DLL_TRUST_GIVEN && me == 0),
        .literal = plain_absolute(path),
        .me = me,
    };
    int rc = AGAIN;
    *fd = -1;
    if (w.literal) {
        memcpy(real, path, strlen(path) + 1);
        rc = walk(&w, fd, st, err, errlen);
    }
    if (rc != AGAIN)
        return rc;
    w.literal = 0;
    if (!realpath(path, real)) {
        snprintf(err, errlen, "cannot %s %s: %s", verb, path, strerror(errno));
        return MQDH_E_DLL_LOAD;
    }
    return walk(&w, fd, st, err, errlen);
}

int mqdh__trust_open(const char *path, enum mqdh__dll_trust trust,
                     const struct mqdh__trust_use *how, int *fd, struct stat *st, char *err,
                     size_t errlen)
{
    return trust_open(path, trust, how, 0, fd, st, err, errlen);
}

int mqdh__trust_reopen(int fd)
{
    char name[64];
    snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
    return open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

/* ---------------------------------------------------------------- public */

int mqdh_path_trusted(const char *path, const char *use, char *err, size_t errlen)
{
    char dummy[1];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';
    if (!path || !*path)
        return MQDH_E_USAGE;
    struct mqdh__trust_use how = {use ? use : "use it", NULL};
    int fd;
    struct stat st;
    int rc = trust_open(path, MQDH__DLL_TRUST_GIVEN, &how, 1, &fd, &st, err, errlen);
    if (fd >= 0)
        close(fd);
    return rc == MQDH_OK ? MQDH_OK : MQDH_E_UNTRUSTED;
}

/* Is dir/name an executable regular file?  Its path into out. */
static int candidate(const char *dir, size_t dirlen, const char *name, char *out, size_t len)
{
    if (!dirlen) /* an empty entry of PATH: the current directory */
        dir = ".", dirlen = 1;
    if ((size_t)snprintf(out, len, "%.*s/%s", (int)dirlen, dir, name) >= len)
        return 0;
    struct stat st;
    return stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0;
}

int mqdh_program_path(const char *name, char *out, size_t len, char *err, size_t errlen)
{
    char dummy[1];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';
    if (!name || !*name || !out || !len)
        return MQDH_E_USAGE;
    struct mqdh__trust_use how = {"run it", NULL};
    char why[1024] = "";
    if (strchr(name, '/')) {
        if ((size_t)snprintf(out, len, "%s", name) >= len)
            return MQDH_E_USAGE;
        return mqdh_path_trusted(out, how.use, err, errlen);
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    /* As execvp searches, but as root a candidate that fails the rule is
     * passed over (said, if no later one serves). */
    for (const char *d = path;; d++) {
        const char *end = strchrnul(d, ':');
        if (candidate(d, (size_t)(end - d), name, out, len)) {
            int rc = mqdh_path_trusted(out, how.use, why, sizeof why);
            if (rc == MQDH_OK)
                return MQDH_OK;
        }
        if (!*end)
            break;
        d = end;
    }
    if (why[0])
        snprintf(err, errlen, "%s: refused: %s", name, why);
    else
        snprintf(err, errlen, "%s: not found on PATH (%s)", name, path);
    out[0] = '\0';
    return why[0] ? MQDH_E_UNTRUSTED : MQDH_E_USAGE;
}
