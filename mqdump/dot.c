/*
 * dot.c - Graphviz output for the views that draw (dot.h): DOT strings,
 * and the files they go to, each made new beside its place and renamed
 * into it, a picture rendered by Graphviz dot.
 */
#define _GNU_SOURCE
#include "dot.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
 * symlink planted where it goes is replaced, never followed, and a file
 * another user owns in a shared (sticky) directory such as /tmp is not
 * replaced at all (rename is refused).  Nothing is truncated in place.
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

/* Put nf in place at path (ok), else remove it; 0, or -1 with the reason
 * in err (kept if already set). */
static int new_file_close(struct new_file *nf, const char *path, int ok, char *err,
                          size_t errlen)
{
    if (nf->fd >= 0 && close(nf->fd) != 0 && ok) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        ok = 0;
    }
    nf->fd = -1;
    if (ok && rename(nf->tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s%s", path, strerror(errno),
                 errno == EPERM || errno == EACCES
                     ? " (another user's file in a shared directory is never replaced)"
                     : "");
        ok = 0;
    }
    if (!ok)
        unlink(nf->tmp);
    return ok ? 0 : -1;
}

/* Run dot -T<format> dotfile, its output the picture at out; 0, or -1 with
 * the reason in err. */
static int render(const char *dotfile, const char *format, const char *out, char *err,
                  size_t errlen)
{
    char fmt[16];
    snprintf(fmt, sizeof fmt, "-T%s", format);
    char *argv[] = {"dot", fmt, (char *)dotfile, NULL};
    struct new_file pic;
    if (new_file_open(&pic, out, err, errlen) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pic.fd, 1);
    pid_t pid;
    int rc = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        snprintf(err, errlen, "cannot run Graphviz dot (%s): the DOT is in %s", strerror(rc),
                 dotfile);
        new_file_close(&pic, out, 0, err, errlen);
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
        snprintf(err, errlen, "dot failed to render %s (the DOT is in %s)", out, dotfile);
        ok = 0;
    }
    return new_file_close(&pic, out, ok, err, errlen);
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
    FILE *f = fdopen(dot.fd, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", dotpath, strerror(errno));
        return new_file_close(&dot, dotpath, 0, err, errlen);
    }
    dot.fd = -1; /* f's now */
    int rc = write_dot(f, arg);
    if (fclose(f) != 0 || rc != 0) {
        snprintf(err, errlen, "cannot write %s: %s", dotpath, strerror(errno));
        return new_file_close(&dot, dotpath, 0, err, errlen);
    }
    if (new_file_close(&dot, dotpath, 1, err, errlen) != 0)
        return -1;
    return format ? render(dotpath, format, path, err, errlen) : 0;
}
