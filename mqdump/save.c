/*
 * save.c - mqdump --save and --load (save.h): a dump kept in a file with
 * what made it, and read back for the views.
 */
#define _GNU_SOURCE
#include "save.h"

#include "dot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MQD_VERSION
#define MQD_VERSION "unknown"
#endif

/* The largest saved dump read: a million ranks' queues fit well within. */
enum { LOAD_MAX = 1 << 30 };

/* Words joined by spaces, malloc'd; NULL if out of memory. */
static char *joined(int n, char *const *words)
{
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(words[i]) + 1;
    char *s = malloc(len), *at = s;
    if (!s)
        return NULL;
    *at = '\0';
    for (int i = 0; i < n; i++)
        at += sprintf(at, "%s%s", i ? " " : "", words[i]);
    return s;
}

/* Process pid's command line, its arguments joined by spaces (malloc'd);
 * NULL if it cannot be read. */
static char *command_line(pid_t pid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return NULL;
    while (n > 0 && buf[n - 1] == '\0')
        n--;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
    return strdup(buf);
}

struct saving {
    const struct mqdh_dump *d;
    const struct mqdh_saved *about;
};

static int write_saved(FILE *f, const void *arg)
{
    const struct saving *s = arg;
    return mqdh_saved_write(f, s->d, s->about) == MQDH_OK ? 0 : -1;
}

int save_dump(const char *path, const struct mqdh_dump *d, int argc, char *const *argv,
              pid_t job, char *err, size_t errlen)
{
    char host[256] = "";
    if (gethostname(host, sizeof host) != 0)
        host[0] = '\0';
    host[sizeof host - 1] = '\0';
    struct mqdh_saved about = {
        .version = MQDH_SAVED_VERSION,
        .time = (int64_t)time(NULL),
        .tool = "mqdump " MQD_VERSION,
        .host = host[0] ? host : NULL,
        .command = joined(argc, argv),
        .launcher = job ? command_line(job) : NULL,
    };
    struct saving s = {.d = d, .about = &about};
    int rc = dot_file(path, write_saved, &s, err, errlen);
    free(about.command);
    free(about.launcher);
    return rc;
}

/* The whole of the regular file at path, malloc'd, in *buf[*len]; 0, or
 * -1 with the reason in err. */
static int slurp(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
    *buf = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > LOAD_MAX) {
        snprintf(err, errlen, "%s: %s", path,
                 S_ISREG(st.st_mode) ? "larger than any saved dump (1 GiB)"
                                     : "not a regular file: not a saved dump");
        close(fd);
        return -1;
    }
    size_t want = (size_t)st.st_size, got = 0;
    if (!(*buf = malloc(want ? want : 1))) {
        snprintf(err, errlen, "%s: out of memory", path);
        close(fd);
        return -1;
    }
    while (got < want) {
        ssize_t n = read(fd, *buf + got, want - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* shorter than it was: what there is, which its end record checks */
        got += (size_t)n;
    }
    int e = errno;
    close(fd);
    if (got < want && e != 0 && e != EINTR) {
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        free(*buf);
        *buf = NULL;
        return -1;
    }
    *len = got;
    return 0;
}

int load_dump(const char *path, struct mqdh_dump **d, struct mqdh_saved **about, char *err,
              size_t errlen)
{
    char *buf, why[1024];
    size_t len;
    *d = NULL;
    *about = NULL;
    if (slurp(path, &buf, &len, err, errlen) != 0)
        return -1;
    int rc = mqdh_saved_read(buf, len, d, about, why, sizeof why);
    free(buf);
    if (rc == MQDH_OK)
        return 0;
    snprintf(err, errlen, "%s: %s", path, why[0] ? why : mqdh_strerror(rc));
    return -1;
}

/* s escaped (mqdh_escape) into buf[len], "?" for NULL. */
static const char *shown(char *buf, size_t len, const char *s)
{
    mqdh_escape(buf, len, s ? s : "?");
    return buf;
}

void say_saved(const char *path, const struct mqdh_saved *about)
{
    char date[32] = "at an unknown time", p[1024], host[512], tool[256], cmd[2048],
         launcher[2048] = "";
    time_t t = (time_t)about->time;
    struct tm tm;
    if (about->time >= 0 && gmtime_r(&t, &tm))
        strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", &tm);
    if (about->launcher) {
        char l[2000];
        snprintf(launcher, sizeof launcher, " (launcher: %s)",
                 shown(l, sizeof l, about->launcher));
    }
    fprintf(stderr, "mqdump: %s: saved %s on %s by %s: %s%s\n", shown(p, sizeof p, path), date,
            shown(host, sizeof host, about->host), shown(tool, sizeof tool, about->tool),
            shown(cmd, sizeof cmd, about->command), launcher);
}

int save_path_usable(const char *path, const char *option)
{
    const char *ext = strrchr(path, '.');
    if (!*path || (ext && (strcmp(ext, ".svg") == 0 || strcmp(ext, ".png") == 0 ||
                           strcmp(ext, ".pdf") == 0))) {
        fprintf(stderr, "mqdump: %s takes a file for text, not a picture's (.svg, .png, "
                        ".pdf): e.g. %s\n", option, strcmp(option, "--save") == 0 ? "hang.mqd" : "hang.txt");
        return -1;
    }
    return 0;
}
