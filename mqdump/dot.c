/*
 * dot.c - Graphviz output for the views that draw (dot.h): DOT strings,
 * and the files they go to, each made new beside its place and renamed
 * into it, a picture rendered by Graphviz dot.
 */
#define _GNU_SOURCE
#include "dot.h"
#include "mqdhost.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void dot_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
    fputc('"', f);
}

/*
 * A file mqdump writes is made as a new file beside where it goes (mkstemp:
 * O_CREAT | O_EXCL, which follows no symlink), then renamed over it: a
 * symlink planted where it goes is replaced, never followed, and nothing is
 * truncated in place.  Only mqdump's user's own file there is replaced:
 * another user's (a file, or a symlink they planted) is left alone with an
 * error, as root too - root's rename would pass over a sticky directory's
 * protection.
 */
struct new_file {
    char tmp[4096 + 16];
    int fd;
};

/* Make nf beside path; 0, or -1 with the reason in err. */
static int new_file_open(struct new_file *nf, const char *path, char *err, size_t errlen)
{
    if (snprintf(nf->tmp, sizeof nf->tmp, "%s.XXXXXX", path) >= (int)sizeof nf->tmp) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    nf->fd = mkostemp(nf->tmp, O_CLOEXEC);
    if (nf->fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    /* The mode a plain creat() would give, not mkstemp's 0600. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(nf->fd, 0666 & ~mask) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        close(nf->fd);
        unlink(nf->tmp);
        return -1;
    }
    return 0;
}

/*
 * Rename tmp to path unless what is at path is another user's: 0, or -1
 * with errno (EPERM: another user's).  A path that was free is taken only
 * if it still is (RENAME_NOREPLACE), so a file made there meanwhile is
 * looked at again.
 */
static int put_in_place(const char *tmp, const char *path)
{
    for (int tries = 0; tries < 8; tries++) {
        struct stat st;
        if (lstat(path, &st) == 0) {
            if (st.st_uid != geteuid()) {
                errno = EPERM;
                return -1;
            }
            return rename(tmp, path);
        }
        if (errno != ENOENT)
            return -1;
        if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
            return 0;
        if (errno == EINVAL) /* a file system without it */
            return rename(tmp, path);
        if (errno != EEXIST)
            return -1;
    }
    errno = EBUSY;
    return -1;
}

/* Put nf in place at path (ok), else remove it; 0, or -1 with the reason
 * in err (kept if already set).  keep: nf's descriptor is the caller's,
 * left open. */
static int new_file_close(struct new_file *nf, const char *path, int ok, int keep, char *err,
                          size_t errlen)
{
    if (!keep && nf->fd >= 0 && close(nf->fd) != 0 && ok) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        ok = 0;
    }
    if (!keep)
        nf->fd = -1;
    if (ok && put_in_place(nf->tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s%s", path, strerror(errno),
                 errno == EPERM || errno == EACCES
                     ? " (another user's file is never replaced)"
                     : "");
        ok = 0;
    }
    if (!ok)
        unlink(nf->tmp);
    return ok ? 0 : -1;
}

/*
 * Run Graphviz dot -T<format> on the DOT in dotfd (read from its start: the
 * very file mqdump wrote, never its path again, which someone may have
 * swapped by now), its output the picture at out.  The program is found
 * as mqdh_program_path finds it (as root: only a trusted one).  0, or -1
 * with the reason in err (dotpath names the DOT kept).
 */
static int render(int dotfd, const char *dotpath, const char *format, const char *out, char *err,
                  size_t errlen)
{
    char fmt[16], prog[4096], why[1024];
    snprintf(fmt, sizeof fmt, "-T%s", format);
    if (mqdh_program_path("dot", prog, sizeof prog, why, sizeof why) != MQDH_OK) {
        snprintf(err, errlen, "cannot run Graphviz dot (%s): the DOT is in %s", why, dotpath);
        return -1;
    }
    char *argv[] = {"dot", fmt, NULL};
    struct new_file pic;
    if (lseek(dotfd, 0, SEEK_SET) != 0) {
        snprintf(err, errlen, "cannot read back %s: %s", dotpath, strerror(errno));
        return -1;
    }
    if (new_file_open(&pic, out, err, errlen) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, dotfd, 0);
    posix_spawn_file_actions_adddup2(&fa, pic.fd, 1);
    pid_t pid;
    int rc = posix_spawn(&pid, prog, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        snprintf(err, errlen, "cannot run Graphviz dot (%s): the DOT is in %s", strerror(rc),
                 dotpath);
        new_file_close(&pic, out, 0, 0, err, errlen);
        return -1;
    }
    int st, ok = 1;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            snprintf(err, errlen, "waiting for dot: %s", strerror(errno));
            ok = 0;
            break;
        }
    if (ok && (!WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
        snprintf(err, errlen, "dot failed to render %s (the DOT is in %s)", out, dotpath);
        ok = 0;
    }
    return new_file_close(&pic, out, ok, 0, err, errlen);
}

int dot_file(const char *path, int (*write_dot)(FILE *f, const void *arg), const void *arg,
             char *err, size_t errlen)
{
    const char *ext = strrchr(path, '.');
    const char *format = NULL;
    if (ext && (strcmp(ext, ".svg") == 0 || strcmp(ext, ".png") == 0 || strcmp(ext, ".pdf") == 0))
        format = ext + 1;
    /* A picture is rendered from the DOT written beside it (PATH.dot). */
    char dotpath[4096];
    if (snprintf(dotpath, sizeof dotpath, "%s%s", path, format ? ".dot" : "") >=
        (int)sizeof dotpath) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    struct new_file dot;
    if (new_file_open(&dot, dotpath, err, errlen) != 0)
        return -1;
    /* The DOT is written through its own descriptor; dot.fd stays open for
     * dot to read the same file back. */
    int wfd = dup(dot.fd);
    FILE *f = wfd >= 0 ? fdopen(wfd, "w") : NULL;
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", dotpath, strerror(errno));
        if (wfd >= 0)
            close(wfd);
        return new_file_close(&dot, dotpath, 0, 0, err, errlen);
    }
    int rc = write_dot(f, arg);
    if (fclose(f) != 0 || rc != 0) {
        snprintf(err, errlen, "cannot write %s: %s", dotpath, strerror(errno));
        return new_file_close(&dot, dotpath, 0, 0, err, errlen);
    }
    if (new_file_close(&dot, dotpath, 1, 1, err, errlen) != 0) {
        close(dot.fd);
        return -1;
    }
    rc = format ? render(dot.fd, dotpath, format, path, err, errlen) : 0;
    close(dot.fd);
    return rc;
}
