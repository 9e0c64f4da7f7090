/*
 * mqd-launch - start an MPI sample, wait until every rank is ready, report
 * the pids, and always clean up.
 *
 *   mqd-launch [-n NP] [-t SECONDS] [-m MPIEXEC] [-k KIND] SAMPLE [ARGS...] [-- COMMAND...]
 *
 * MPIEXEC is MPICH's hydra (KIND hydra) or Open MPI 4's orterun/mpirun (KIND
 * openmpi); without -k, what `MPIEXEC --version` says.  Either way the job
 * runs on this host alone, forked by the launcher (see launcher_argv).
 *
 * Readiness is an event, not a delay: each rank writes "ready RANK PID" into
 * a FIFO (samples/sample.c) after its queue entries exist.  When all NP ranks
 * have done so, mqd-launch prints
 *
 *   mpiexec PID
 *   rank 0 PID
 *   ...
 *   ready
 *
 * on stdout.  With a COMMAND it then runs it, with MQD_MPIEXEC_PID and
 * MQD_RANK_PIDS ("pid0 pid1 ...") in its environment, and exits with its
 * status; without one it holds the job until its stdin reaches end of file
 * or it gets SIGINT/SIGTERM/SIGHUP.  Either way every process it started is
 * killed and reaped before it exits: it is a child subreaper, so it also
 * catches processes that mpiexec's proxies orphan.
 *
 * Shared memory the job leaves in /dev/shm is removed too, but only what
 * is provably its own: files that a process of the job maps or holds open
 * when every rank is ready or when the job is ended, that were not there
 * before it started (name and inode) and that are this user's.  MPICH 5.0 leaves a segment per killed
 * job there, named from hydra's KVS name, which hydra draws from rand()
 * seeded with time(); in a fresh pid namespace mpiexec always has one pid,
 * so a job started in the same second as a killed one would attach to its
 * stale segment and hang in MPI_Init.
 *
 * Exit status: COMMAND's; after a hold, 0 when stdin closed and 128+N when
 * signal N ended it; 2 if the job failed to become ready or was interrupted
 * before (the reason on stderr); 64 on a usage error.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RANKS 4096
#define SHM_DIR "/dev/shm/"
#define MAX_SHM 256

/* The launchers mqd-launch knows how to drive. */
enum launcher_kind {
    KIND_UNKNOWN,
    KIND_HYDRA,   /* MPICH's mpiexec.hydra */
    KIND_OPENMPI, /* Open MPI 4's orterun (mpirun, mpiexec) */
};

/* How long `MPIEXEC --version` may take to say what it is. */
#define PROBE_SECONDS 10

static int sig_pipe[2] = {-1, -1};
static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    int saved = errno;
    if (sig != SIGCHLD)
        got_signal = sig;
    ssize_t n = write(sig_pipe[1], "s", 1);
    (void)n;
    errno = saved;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mqd-launch [-n NP] [-t SECONDS] [-m MPIEXEC] [-k KIND] SAMPLE [ARGS...] "
               "[-- COMMAND [ARGS...]]\n"
               "  -n NP       number of ranks (default 2)\n"
               "  -t SECONDS  give up if the ranks are not all ready by then (default 60)\n"
               "  -m MPIEXEC  the mpiexec to use (default $MQD_MPIEXEC, else mpiexec)\n"
               "  -k KIND     what MPIEXEC is: hydra (MPICH) or openmpi (Open MPI's\n"
               "              orterun/mpirun); default: what MPIEXEC --version says\n");
}

/* The kind named by s (-k), or KIND_UNKNOWN. */
static enum launcher_kind kind_named(const char *s)
{
    if (strcmp(s, "hydra") == 0 || strcmp(s, "mpich") == 0)
        return KIND_HYDRA;
    if (strcmp(s, "openmpi") == 0 || strcmp(s, "ompi") == 0 || strcmp(s, "orterun") == 0)
        return KIND_OPENMPI;
    return KIND_UNKNOWN;
}

/*
 * What mpiexec is, from what `mpiexec --version` prints on stdout within
 * PROBE_SECONDS: hydra says "HYDRA build details:", Open MPI 4 says
 * "mpirun (Open MPI) 4.1.4" or, as orterun, "orterun (OpenRTE) 4.1.4".
 * KIND_UNKNOWN if it says neither, cannot be run or takes too long.  It runs
 * in its own process group with stdin from /dev/null (not the caller's:
 * that is the hold protocol's) and is killed and reaped before this returns.
 * Called before any signal handler is installed.
 */
static enum launcher_kind probe_launcher(const char *mpiexec)
{
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0)
        return KIND_UNKNOWN;
    pid_t pid = fork();
    if (pid < 0) {
        close(out[0]);
        close(out[1]);
        return KIND_UNKNOWN;
    }
    if (pid == 0) {
        setpgid(0, 0);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 2);
        }
        dup2(out[1], 1);
        execlp(mpiexec, mpiexec, "--version", (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    close(out[1]);

    char buf[4096];
    size_t have = 0;
    double deadline = now() + PROBE_SECONDS;
    for (;;) {
        double left = deadline - now();
        if (left <= 0 || have == sizeof buf - 1)
            break;
        struct pollfd pfd = {out[0], POLLIN, 0};
        int r = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        ssize_t n = read(out[0], buf + have, sizeof buf - 1 - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        have += (size_t)n;
    }
    buf[have] = '\0';
    close(out[0]);
    kill(-pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;

    if (strstr(buf, "HYDRA"))
        return KIND_HYDRA;
    if (strstr(buf, "(Open MPI)") || strstr(buf, "(OpenRTE)"))
        return KIND_OPENMPI;
    return KIND_UNKNOWN;
}

/*
 * The command that starts np ranks of sample_argv[0..sample_argc) under
 * mpiexec, all on this host, forked by mpiexec itself, in a calloc'ed array
 * the caller frees (it points into its arguments); NULL when out of memory.
 *
 * hydra: "-launcher fork" starts its proxy by fork, not ssh.
 * Open MPI 4: "--mca plm isolated" is the same for orterun (which is its own
 * daemon on this host; rsh would want ssh even so); "--oversubscribe" lets
 * NP exceed the cores, which hydra never minds; "--stdin none" keeps it off
 * our stdin (it would forward it to rank 0, eat the hold protocol's end of
 * file and, on a terminal, stop on SIGTTIN in its own process group);
 * "--allow-run-as-root" when we are root, which orterun otherwise refuses.
 */
static char **launcher_argv(enum launcher_kind kind, const char *mpiexec, const char *np,
                            int sample_argc, char **sample_argv)
{
    char **av = calloc((size_t)sample_argc + 16, sizeof *av);
    if (!av)
        return NULL;
    int k = 0;
    av[k++] = (char *)mpiexec;
    switch (kind) {
    case KIND_UNKNOWN:
    case KIND_HYDRA:
        av[k++] = "-launcher";
        av[k++] = "fork";
        break;
    case KIND_OPENMPI:
        av[k++] = "--mca";
        av[k++] = "plm";
        av[k++] = "isolated";
        av[k++] = "--oversubscribe";
        av[k++] = "--stdin";
        av[k++] = "none";
        if (geteuid() == 0)
            av[k++] = "--allow-run-as-root";
        break;
    }
    av[k++] = "-n";
    av[k++] = (char *)np;
    for (int i = 0; i < sample_argc; i++)
        av[k++] = sample_argv[i];
    av[k] = NULL;
    return av;
}

/* The parent pid of pid from /proc, or -1. */
static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* "pid (comm) state ppid ...": comm may hold spaces and parentheses. */
    char *p = strrchr(buf, ')');
    int ppid;
    if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
        return -1;
    return (pid_t)ppid;
}

/*
 * Call fn on every descendant of this process.  Returns how many were
 * found.  Descendants are found by following parent links up from every
 * process.
 */
static int each_descendant(void (*fn)(pid_t))
{
    pid_t self = getpid();
    int found = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long v = strtol(e->d_name, &end, 10);
        if (*end || v <= 0 || v == self)
            continue;
        pid_t p = (pid_t)v;
        for (int depth = 0; depth < 64 && p > 1; depth++) {
            p = parent_of(p);
            if (p == self) {
                fn((pid_t)v);
                found++;
                break;
            }
        }
    }
    closedir(d);
    return found;
}

static void kill_one(pid_t pid)
{
    kill(pid, SIGKILL);
}

/* SIGKILL every descendant of this process; how many were found. */
static int kill_descendants(void)
{
    return each_descendant(kill_one);
}

/* ---------------------------------------------------------------- /dev/shm */

/* A file of /dev/shm by name and inode. */
struct shm_file {
    char name[NAME_MAX + 1];
    ino_t ino;
};

/* What /dev/shm held before the job started, and what the job uses. */
static struct shm_file shm_before[MAX_SHM], shm_job[MAX_SHM];
static int n_shm_before, n_shm_job;
static bool shm_before_complete;

static bool shm_known(const struct shm_file *set, int n, const char *name, ino_t ino)
{
    for (int i = 0; i < n; i++)
        if (set[i].ino == ino && strcmp(set[i].name, name) == 0)
            return true;
    return false;
}

/* Note /dev/shm's files before the job starts; if they are too many to
 * note, the job's are never removed (nothing could be proved new). */
static void shm_snapshot(void)
{
    DIR *d = opendir(SHM_DIR);
    struct dirent *e;
    shm_before_complete = d != NULL;
    while (d && (e = readdir(d))) {
        if (n_shm_before == MAX_SHM) {
            shm_before_complete = false;
            break;
        }
        snprintf(shm_before[n_shm_before].name, sizeof shm_before[0].name, "%s", e->d_name);
        shm_before[n_shm_before++].ino = e->d_ino;
    }
    if (d)
        closedir(d);
}

/* path (as /proc shows a mapping or a descriptor) if it is a file of
 * /dev/shm new since the snapshot and this user's: note it as the job's. */
static void shm_note(const char *path)
{
    struct stat st;
    const char *name = path + strlen(SHM_DIR);
    if (strncmp(path, SHM_DIR, strlen(SHM_DIR)) != 0 || strchr(name, '/') || !*name ||
        n_shm_job == MAX_SHM || lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != getuid() || shm_known(shm_before, n_shm_before, name, st.st_ino) ||
        shm_known(shm_job, n_shm_job, name, st.st_ino))
        return;
    snprintf(shm_job[n_shm_job].name, sizeof shm_job[0].name, "%s", name);
    shm_job[n_shm_job++].ino = st.st_ino;
}

/* The files of /dev/shm that process pid maps or holds open. */
static void shm_of_process(pid_t pid)
{
    char path[64], line[PATH_MAX + 128];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    while (f && fgets(line, sizeof line, f)) {
        char *file = strstr(line, " " SHM_DIR);
        if (!file)
            continue;
        file[strcspn(file, "\n")] = '\0';
        shm_note(file + 1);
    }
    if (f)
        fclose(f);
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char fd[PATH_MAX], target[PATH_MAX];
        snprintf(fd, sizeof fd, "%s/%s", path, e->d_name);
        ssize_t n = readlink(fd, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        shm_note(target);
    }
    if (d)
        closedir(d);
}

/* Remove the job's files of /dev/shm, once nothing of it runs: those that
 * are still the very files it used. */
static void shm_remove(void)
{
    int dir = n_shm_job ? open(SHM_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    for (int i = 0; dir >= 0 && i < n_shm_job; i++) {
        struct stat st;
        if (fstatat(dir, shm_job[i].name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            st.st_ino == shm_job[i].ino && unlinkat(dir, shm_job[i].name, 0) != 0)
            fprintf(stderr, "mqd-launch: cannot remove " SHM_DIR "%s: %s\n", shm_job[i].name,
                    strerror(errno));
    }
    if (dir >= 0)
        close(dir);
}

/* Kill and reap everything this process started, then remove the job's
 * shared memory; bounded in time. */
static void cleanup(pid_t mpiexec_pgid)
{
    double deadline = now() + 10.0;
    if (shm_before_complete)
        each_descendant(shm_of_process);
    if (mpiexec_pgid > 0)
        kill(-mpiexec_pgid, SIGKILL);
    for (;;) {
        int live = kill_descendants();
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (live == 0 && waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD) {
            shm_remove();
            return;
        }
        if (now() > deadline) {
            fprintf(stderr, "mqd-launch: processes survived SIGKILL for 10 s\n");
            return;
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static char tmpdir[PATH_MAX];
static char fifo_path[PATH_MAX + 16];

static void remove_fifo(void)
{
    if (fifo_path[0])
        unlink(fifo_path);
    if (tmpdir[0])
        rmdir(tmpdir);
}

/* Parse one "ready RANK PID" line; false if malformed. */
static bool parse_ready(const char *line, int np, int *rank, long *pid)
{
    char extra;
    return sscanf(line, "ready %d %ld %c", rank, pid, &extra) == 2 && *rank >= 0 &&
           *rank < np && *pid > 0;
}

int main(int argc, char **argv)
{
    int np = 2;
    double timeout = 60.0;
    const char *mpiexec = getenv("MQD_MPIEXEC");
    enum launcher_kind kind = KIND_UNKNOWN;
    int opt;

    if (!mpiexec || !*mpiexec)
        mpiexec = "mpiexec";
    while ((opt = getopt(argc, argv, "+n:t:m:k:h")) != -1) {
        char *end;
        switch (opt) {
        case 'n':
            np = (int)strtol(optarg, &end, 10);
            if (*end || np < 1 || np > MAX_RANKS) {
                fprintf(stderr, "mqd-launch: -n wants 1 to %d ranks, not '%s'\n", MAX_RANKS,
                        optarg);
                return 64;
            }
            break;
        case 't':
            timeout = strtod(optarg, &end);
            if (*end || timeout <= 0) {
                fprintf(stderr, "mqd-launch: -t wants a positive number of seconds\n");
                return 64;
            }
            break;
        case 'm':
            mpiexec = optarg;
            break;
        case 'k':
            kind = kind_named(optarg);
            if (kind == KIND_UNKNOWN) {
                fprintf(stderr, "mqd-launch: -k wants hydra or openmpi, not '%s'\n", optarg);
                return 64;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 64;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 64;
    }
    /* Split SAMPLE [ARGS...] from -- COMMAND... */
    int sample_argc = 0;
    char **sample_argv = &argv[optind];
    char **command = NULL;
    for (int i = optind; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            argv[i] = NULL;
            command = argv[i + 1] ? &argv[i + 1] : NULL;
            break;
        }
        sample_argc++;
    }
    if (sample_argc == 0) {
        usage(stderr);
        return 64;
    }

    if (kind == KIND_UNKNOWN) {
        kind = probe_launcher(mpiexec);
        if (kind == KIND_UNKNOWN) {
            fprintf(stderr,
                    "mqd-launch: %s --version names neither MPICH's hydra nor Open MPI; "
                    "taking it for hydra (-k says otherwise)\n",
                    mpiexec);
            kind = KIND_HYDRA;
        }
    }

    /* Orphans of the job become our children, so nothing escapes cleanup. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        perror("mqd-launch: PR_SET_CHILD_SUBREAPER");

    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        perror("mqd-launch: pipe");
        return 2;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGCHLD, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    const char *base = getenv("TMPDIR");
    if (!base || !*base || strlen(base) > PATH_MAX - 64)
        base = "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/mqd-launch.XXXXXX", base);
    if (!mkdtemp(tmpdir)) {
        perror("mqd-launch: mkdtemp");
        return 2;
    }
    snprintf(fifo_path, sizeof fifo_path, "%s/ready", tmpdir);
    if (mkfifo(fifo_path, 0600) != 0) {
        perror("mqd-launch: mkfifo");
        fifo_path[0] = '\0';
        remove_fifo();
        return 2;
    }
    /* Open both ends so the read end never sees EOF between writers. */
    int rfd = open(fifo_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    int wfd = rfd < 0 ? -1 : open(fifo_path, O_WRONLY | O_CLOEXEC);
    if (rfd < 0 || wfd < 0) {
        perror("mqd-launch: open fifo");
        remove_fifo();
        return 2;
    }
    setenv("MQD_READY_FIFO", fifo_path, 1);

    char npbuf[16];
    snprintf(npbuf, sizeof npbuf, "%d", np);
    shm_snapshot();
    pid_t job = fork();
    if (job < 0) {
        perror("mqd-launch: fork");
        remove_fifo();
        return 2;
    }
    if (job == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        char **av = launcher_argv(kind, mpiexec, npbuf, sample_argc, sample_argv);
        if (!av)
            _exit(127);
        execvp(mpiexec, av);
        fprintf(stderr, "mqd-launch: cannot run %s: %s\n", mpiexec, strerror(errno));
        _exit(127);
    }
    setpgid(job, job);

    long pids[MAX_RANKS];
    int nready = 0;
    char buf[8192];
    size_t have = 0;
    double deadline = now() + timeout;
    int status = 2;
    const char *failure = NULL;
    int job_status = -1;

    for (int i = 0; i < np; i++)
        pids[i] = 0;
    while (nready < np) {
        if (got_signal) {
            failure = "interrupted";
            goto out;
        }
        int wst;
        if (waitpid(job, &wst, WNOHANG) == job) {
            job_status = wst;
            failure = "mpiexec exited before every rank was ready";
            job = -1;
            goto out;
        }
        double left = deadline - now();
        if (left <= 0) {
            failure = "timed out waiting for the ranks to be ready";
            goto out;
        }
        struct pollfd pfd[2] = {{rfd, POLLIN, 0}, {sig_pipe[0], POLLIN, 0}};
        int ms = left > 1.0 ? 1000 : (int)(left * 1000) + 1;
        if (poll(pfd, 2, ms) < 0 && errno != EINTR) {
            failure = "poll failed";
            goto out;
        }
        if (pfd[1].revents) {
            char drain[64];
            while (read(sig_pipe[0], drain, sizeof drain) > 0)
                ;
        }
        if (!(pfd[0].revents & POLLIN))
            continue;
        ssize_t n = read(rfd, buf + have, sizeof buf - 1 - have);
        if (n <= 0)
            continue;
        have += (size_t)n;
        buf[have] = '\0';
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n'))) {
            *nl = '\0';
            int rank;
            long pid;
            if (!parse_ready(line, np, &rank, &pid)) {
                fprintf(stderr, "mqd-launch: bad readiness line '%s'\n", line);
                failure = "a rank announced itself wrongly";
                goto out;
            }
            if (pids[rank] == 0)
                nready++;
            pids[rank] = pid;
            line = nl + 1;
        }
        have = strlen(line);
        memmove(buf, line, have + 1);
    }

    printf("mpiexec %d\n", (int)job);
    for (int i = 0; i < np; i++)
        printf("rank %d %ld\n", i, pids[i]);
    /* The job's shared memory as it stands now too: a sample that ends by
     * itself (MPI_Abort) maps nothing by the time the job is ended. */
    if (shm_before_complete)
        each_descendant(shm_of_process);
    printf("ready\n");
    fflush(stdout);

    if (command) {
        char num[32], *list = malloc((size_t)np * 24 + 1);
        if (!list) {
            failure = "out of memory";
            goto out;
        }
        list[0] = '\0';
        for (int i = 0; i < np; i++) {
            snprintf(num, sizeof num, "%s%ld", i ? " " : "", pids[i]);
            strcat(list, num);
        }
        snprintf(num, sizeof num, "%d", (int)job);
        setenv("MQD_MPIEXEC_PID", num, 1);
        setenv("MQD_RANK_PIDS", list, 1);
        free(list);
        pid_t cmd = fork();
        if (cmd == 0) {
            execvp(command[0], command);
            fprintf(stderr, "mqd-launch: cannot run %s: %s\n", command[0], strerror(errno));
            _exit(127);
        }
        int cst = 0;
        while (!got_signal) {
            pid_t w = waitpid(cmd, &cst, 0);
            if (w == cmd)
                break;
            if (w < 0 && errno != EINTR) {
                cst = 127 << 8;
                break;
            }
        }
        if (got_signal) {
            failure = "interrupted";
            goto out;
        }
        status = WIFEXITED(cst) ? WEXITSTATUS(cst) : 128 + WTERMSIG(cst);
    } else {
        /* Hold the job until stdin closes or a signal arrives. */
        status = 0;
        for (;;) {
            struct pollfd pfd[2] = {{0, POLLIN, 0}, {sig_pipe[0], POLLIN, 0}};
            if (poll(pfd, 2, -1) < 0 && errno != EINTR)
                break;
            if (got_signal) {
                status = 128 + got_signal;
                break;
            }
            if (pfd[1].revents) {
                char drain[64];
                while (read(sig_pipe[0], drain, sizeof drain) > 0)
                    ;
                if (waitpid(job, NULL, WNOHANG) == job) {
                    job = -1;
                    fprintf(stderr, "mqd-launch: the job exited while held\n");
                    status = 2;
                    break;
                }
            }
            if (pfd[0].revents) {
                char drain[256];
                ssize_t n = read(0, drain, sizeof drain);
                if (n <= 0)
                    break;
            }
        }
    }

out:
    if (failure) {
        fprintf(stderr, "mqd-launch: %s (%d of %d ranks ready", failure, nready, np);
        if (job_status >= 0 && WIFEXITED(job_status))
            fprintf(stderr, ", mpiexec exit status %d", WEXITSTATUS(job_status));
        fprintf(stderr, ")\n");
        status = 2;
    }
    cleanup(job);
    close(rfd);
    close(wfd);
    remove_fifo();
    return status;
}
