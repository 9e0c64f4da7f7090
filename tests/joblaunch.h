/*
 * joblaunch.h - run a sample under mqd-launch from a test, and stop it.
 *
 * The tests' side of samples/launch.c: start `mqd-launch -n NP SAMPLE`,
 * read the pids it reports once every rank is ready, and later close its
 * stdin so that it kills and reaps the whole job.
 *
 * Environment: MQD_BUILD (the build directory, default "build"),
 * MQD_MPICH_PREFIX (the MPICH whose mpiexec runs the sample).
 */
#ifndef MQD_TESTS_JOBLAUNCH_H
#define MQD_TESTS_JOBLAUNCH_H

#include <sys/types.h>

#define JOB_MAX_RANKS 256

struct job {
    pid_t launcher; /* mqd-launch */
    int hold_fd;    /* its stdin: closing it ends the job */
    pid_t mpiexec;
    int np;
    pid_t ranks[JOB_MAX_RANKS];
};

/* Path of a built file: "$MQD_BUILD/rel" into buf. */
const char *job_build_path(char *buf, size_t len, const char *rel);

/*
 * Start sample NAME ($MQD_BUILD/samples/NAME; a NAME with a '/' is a path
 * in $MQD_BUILD, e.g. stock/O2/ring) with np ranks and wait until all are
 * ready.  Returns 0, or -1 with the reason in err (the launcher is already
 * gone then).
 */
int job_start(struct job *job, const char *name, int np, char *err, size_t errlen);

/*
 * The same, mqd-launch run through the command prefix_cmd (NULL-terminated
 * words, e.g. a simulated node's "multinode.sh run DIR NODE"; NULL: none)
 * and starting the job with mpiexec_path (NULL: MPICH's own mpiexec, in
 * $MQD_MPICH_PREFIX).
 */
int job_start_in(struct job *job, const char *name, int np, const char *const *prefix_cmd,
                 const char *mpiexec_path, char *err, size_t errlen);

/*
 * End the job and wait for the launcher.  Returns its exit status (0 when it
 * cleaned up normally), or -1 if it could not be waited for.
 */
int job_stop(struct job *job);

/* The whole of the file at path, malloc'd; NULL if it cannot be read. */
char *job_slurp(const char *path);

/* Seconds on the monotonic clock. */
double job_now(void);

/* 1 if pid exists (in any state but reaped), else 0. */
int job_pid_alive(pid_t pid);

/* 1 if a rank of job is gone within seconds (polled every 50 ms), else 0. */
int job_rank_ends(const struct job *job, double seconds);

/*
 * Start the test fixture $MQD_BUILD/tests/NAME with args (NULL-terminated,
 * at most 14), as user uid (0: as is), killed if the test dies; wait for
 * its "ready N" line.  Returns its pid, with its standard input in *hold
 * (closing it ends the fixture) and N in *ready; -1 (the reason in
 * err[errlen]) if it did not start.
 */
/*
 * Run $MQD_BUILD/bin/mqdump with args (NULL-terminated, at most 30), env's
 * "NAME=VALUE" strings (NULL-terminated; may be NULL) added to its
 * environment.  Its standard output into *out and its standard error into
 * *err, malloc'd; err NULL: discarded; err == out: both into *out, as a
 * terminal shows them.  Returns its exit status, 128+N for signal N, or -1
 * (*out and *err NULL) if it could not be run.
 */
int job_run_mqdump(const char *const *args, const char *const *env, char **out, char **err);

pid_t job_fixture_start(const char *name, uid_t uid, const char *const *args, int *hold,
                        int *ready, char *err, size_t errlen);

/*
 * mqdump with args must refuse its command line: exit 64, says on
 * standard error, nothing on standard output.  0, or -1 with what it did
 * instead in why[len].
 */
int job_usage_error(const char *const *args, const char *says, char *why, size_t len);

/* The number of the first line of samples/file ($MQD_SAMPLES_SRC) that
 * holds text; 0 if none does. */
int job_source_line(const char *file, const char *text);

/*
 * A directory of the test's own (/tmp/mqd-NAME-XXXXXX) for the files it
 * has written: job_scratch_make and job_scratch_remove are a cmocka
 * group's set-up and tear-down (0, or -1), the second removing it with all
 * in it; job_scratch is the path of name in it, into buf[len].
 */
int job_scratch_make(void **state);
int job_scratch_remove(void **state);
const char *job_scratch(char *buf, size_t len, const char *name);

#endif
