/* joblaunch.c - start and stop samples under mqd-launch for the tests. */
#define _GNU_SOURCE
#include "joblaunch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <grp.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Two close-on-exec pipes (the child's stdin, its stdout), then fork:
 * the pid (0 in the child), or -1 with the reason in err[errlen]. */
static pid_t fork_piped(int in[2], int out[2], char *err, size_t errlen)
{
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0)
        snprintf(err, errlen, "fork: %s", strerror(errno));
    return pid;
}

const char *job_build_path(char *buf, size_t len, const char *rel)
{
    const char *b = getenv("MQD_BUILD");
    snprintf(buf, len, "%s/%s", b && *b ? b : "build", rel);
    return buf;
}

int job_pid_alive(pid_t pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

int job_rank_ends(const struct job *job, double seconds)
{
    for (double end = job_now() + seconds;; usleep(50 * 1000)) {
        for (int r = 0; r < job->np; r++)
            if (!job_pid_alive(job->ranks[r]))
                return 1;
        if (job_now() >= end)
            return 0;
    }
}

int job_start(struct job *job, const char *name, int np, char *err, size_t errlen)
{
    return job_start_in(job, name, np, NULL, NULL, err, errlen);
}

int job_start_in(struct job *job, const char *name, int np, const char *const *prefix_cmd,
                 const char *mpiexec_path, char *err, size_t errlen)
{
    char launcher[4096], sample[4096], mpiexec[4096], npbuf[16];
    const char *prefix = getenv("MQD_MPICH_PREFIX");
    int in[2], out[2];

    memset(job, 0, sizeof *job);
    job->hold_fd = -1;
    if (np < 1 || np > JOB_MAX_RANKS) {
        snprintf(err, errlen, "bad rank count %d", np);
        return -1;
    }
    if (!mpiexec_path && (!prefix || !*prefix)) {
        snprintf(err, errlen, "MQD_MPICH_PREFIX is not set");
        return -1;
    }
    job_build_path(launcher, sizeof launcher, "bin/mqd-launch");
    snprintf(npbuf, sizeof npbuf, "%d", np);
    snprintf(mpiexec, sizeof mpiexec, "%s", mpiexec_path ? mpiexec_path : "");
    if (!mpiexec_path)
        snprintf(mpiexec, sizeof mpiexec, "%s/bin/mpiexec", prefix);
    char rel[256];
    if (strchr(name, '/')) /* a path in the build directory: stock/O2/ring */
        snprintf(rel, sizeof rel, "%s", name);
    else
        snprintf(rel, sizeof rel, "samples/%s", name);
    job_build_path(sample, sizeof sample, rel);
    pid_t pid = fork_piped(in, out, err, errlen);
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        const char *argv[64];
        int k = 0;
        for (int i = 0; prefix_cmd && prefix_cmd[i] && k < 50; i++)
            argv[k++] = prefix_cmd[i];
        const char *rest[] = {launcher, "-n", npbuf, "-t", "60", "-m", mpiexec, sample, NULL};
        for (int i = 0; rest[i]; i++)
            argv[k++] = rest[i];
        argv[k] = NULL;
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "cannot run %s: %s\n", launcher, strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    job->launcher = pid;
    job->hold_fd = in[1];
    job->np = np;

    FILE *f = fdopen(out[0], "r");
    char line[256];
    int seen = 0, ready = 0;
    while (f && !ready && fgets(line, sizeof line, f)) {
        int r, p;
        if (sscanf(line, "mpiexec %d", &p) == 1) {
            job->mpiexec = p;
        } else if (sscanf(line, "rank %d %d", &r, &p) == 2 && r >= 0 && r < np) {
            job->ranks[r] = p;
            seen++;
        } else if (strcmp(line, "ready\n") == 0) {
            ready = 1;
        }
    }
    if (f)
        fclose(f);
    else
        close(out[0]);
    if (!ready || seen != np || job->mpiexec <= 0) {
        int st = job_stop(job);
        snprintf(err, errlen, "%s did not become ready (%d of %d ranks reported, launcher "
                 "exit %d)", name, seen, np, st);
        return -1;
    }
    return 0;
}

int job_stop(struct job *job)
{
    int st;
    if (job->hold_fd >= 0)
        close(job->hold_fd);
    job->hold_fd = -1;
    if (job->launcher <= 0)
        return -1;
    pid_t w;
    while ((w = waitpid(job->launcher, &st, 0)) < 0 && errno == EINTR)
        ;
    job->launcher = 0;
    if (w < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

pid_t job_fixture_start(const char *name, uid_t uid, const char *const *args, int *hold,
                        int *ready, char *err, size_t errlen)
{
    char path[4096], rel[256];
    snprintf(rel, sizeof rel, "tests/%s", name);
    job_build_path(path, sizeof path, rel);
    int in[2], out[2];
    pid_t pid = fork_piped(in, out, err, errlen);
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (uid != 0 && (setgroups(0, NULL) != 0 || setgid(uid) != 0 || setuid(uid) != 0))
            _exit(126);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) /* after setuid, which clears it */
            _exit(126);
        const char *argv[16] = {name};
        for (int i = 0; args && args[i] && i < 14; i++)
            argv[i + 1] = args[i];
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execv(path, (char *const *)argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    FILE *f = fdopen(out[0], "r");
    int n = -1, got = f ? fscanf(f, "ready %d", &n) : 0;
    if (f)
        fclose(f);
    if (got != 1) {
        snprintf(err, errlen, "%s (as user %lu) did not start", path, (unsigned long)uid);
        close(in[1]);
        waitpid(pid, NULL, 0);
        return -1;
    }
    *hold = in[1];
    *ready = n;
    return pid;
}

/* What file f holds, malloc'd (NULL out of memory); f is closed. */
static char *slurp_file(FILE *f)
{
    long len = ftell(f);
    rewind(f);
    char *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (buf)
        buf[fread(buf, 1, (size_t)len, f)] = '\0';
    fclose(f);
    return buf;
}

char *job_slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    /* Only a regular file has a length to read (a directory opens, and
     * its "end" is far off). */
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return NULL;
    }
    return slurp_file(f);
}

int job_run_mqdump(const char *const *args, const char *const *env, char **out, char **err)
{
    char mqdump[4096];
    job_build_path(mqdump, sizeof mqdump, "bin/mqdump");
    int merged = err == out;
    FILE *o = tmpfile(), *e = merged ? o : tmpfile();
    *out = NULL;
    if (err)
        *err = NULL;
    pid_t pid = o && e ? fork() : -1;
    if (pid == 0) {
        const char *argv[32] = {"mqdump"};
        for (int n = 1; n < 31 && args[n - 1]; n++)
            argv[n] = args[n - 1];
        for (int i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        /* A test's bound on a mqdump that may not end (kept across exec). */
        const char *limit = getenv("MQD_TEST_ALARM");
        if (limit && atoi(limit) > 0)
            alarm((unsigned)atoi(limit));
        dup2(fileno(o), 1);
        dup2(fileno(e), 2);
        execv(mqdump, (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    char *text[2] = {o ? slurp_file(o) : NULL, e && !merged ? slurp_file(e) : NULL};
    if (pid < 0) {
        free(text[0]);
        free(text[1]);
        return -1;
    }
    *out = text[0];
    if (err && !merged)
        *err = text[1];
    else
        free(text[1]);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

double job_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int job_usage_error(const char *const *args, const char *says, char *why, size_t len)
{
    char *out = NULL, *err = NULL;
    int rc = job_run_mqdump(args, NULL, &out, &err), bad = 0;
    if (rc != 64 || !out || !err || !strstr(err, says) || *out) {
        snprintf(why, len, "exit %d, stdout '%s', stderr '%s' (want 64, nothing, and '%s')", rc,
                 out ? out : "?", err ? err : "?", says);
        bad = -1;
    }
    free(out);
    free(err);
    return bad;
}

int job_source_line(const char *file, const char *text)
{
    const char *dir = getenv("MQD_SAMPLES_SRC");
    char path[4096], line[512];
    snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "samples", file);
    FILE *f = fopen(path, "r");
    int n = 0, found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        n++;
        found = strstr(line, text) != NULL;
    }
    if (f)
        fclose(f);
    return found ? n : 0;
}

static char scratch[64];

int job_scratch_make(void **state)
{
    (void)state;
    snprintf(scratch, sizeof scratch, "/tmp/mqd-test-XXXXXX");
    return mkdtemp(scratch) ? 0 : -1;
}

int job_scratch_remove(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    return scratch[0] && system(cmd) == 0 ? 0 : -1;
}

const char *job_scratch(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", scratch, name);
    return buf;
}
