/*
 * proc.h - what /proc tells about MPI processes without stopping them: the
 * rank a launcher gave a process in its environment, the world it was
 * started in, and the processes descending from a launcher.
 */
#ifndef MQDH__PROC_H
#define MQDH__PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The rank in MPI_COMM_WORLD from pid's environment: PMI_RANK, PMI_ID
 * (hydra's port mode), OMPI_COMM_WORLD_RANK or PMIX_RANK, first found.
 * -1 when none is set or the environment cannot be read.
 *
 * With world non-NULL, also which MPI_COMM_WORLD of its job it is in, from
 * the same reading: 0 for the world the job was launched with, W > 0 for
 * the processes of the W-th MPI_Comm_spawn (hydra marks them PMI_SPAWNED
 * and numbers them in their proxy's "--pgid W"); -2: spawned, but by which
 * spawn is unknown, and then *spawner (if non-NULL) is its parent, the same
 * for the processes started together; -1 when the environment cannot be
 * read.  *size (if non-NULL): the size of its MPI_COMM_WORLD as the
 * launcher set it in the environment (PMI_SIZE, OMPI_COMM_WORLD_SIZE), -1
 * if it does not say.
 */
int mqdh__proc_env_rank(pid_t pid, int *world, pid_t *spawner, int *size);

/*
 * Every live process descending from root (root excluded), in ascending pid
 * order, into a malloc'd *out of *n.  0, or a negative errno.
 */
int mqdh__proc_descendants(pid_t root, pid_t **out, int *n);

/*
 * The threads of pid (/proc/PID/task, listed with as few system calls as
 * it takes), into a malloc'd *out of *n.  0, or a negative errno.
 */
int mqdh__proc_tasks(pid_t pid, pid_t **out, int *n);

/*
 * Every live process descending from root (root excluded), in ascending
 * pid order, into a malloc'd *out of *n, found from the top down through
 * each thread's /proc/PID/task/TID/children (every process's parent where
 * the kernel keeps no such files): a process of leaves[0..nleaves-1] is
 * listed, but what descends from it is not looked for.  0, or a negative
 * errno.
 */
int mqdh__proc_descendants_below(pid_t root, const pid_t *leaves, int nleaves, pid_t **out,
                                 int *n);

/* pid's parent, or -1. */
pid_t mqdh__proc_parent(pid_t pid);

/* pid's command line, arguments joined by spaces, malloc'd; NULL if gone. */
char *mqdh__proc_cmdline(pid_t pid);

/*
 * A file of /proc read with open, read and close alone.  One the kernel
 * writes in one piece (stat, status, schedstat, environ, cmdline, comm:
 * MQDH__PROC_ONE) is all there once a read leaves room; a process's maps,
 * written a record at a time (MQDH__PROC_MAPS), once a read gives nothing
 * or ends with the gate area's line; one of short records (children:
 * MQDH__PROC_SHORT_RECORDS) once a read gives less than a page: whole
 * says which (proc.c).  mqdh__proc_file reads into buf[cap], NUL-terminated:
 * the bytes read, or -1 if it cannot be read or does not fit.
 * mqdh__proc_alloc reads into a malloc'd buffer of *n bytes (NUL after
 * them); NULL if it cannot be read.
 */
enum { MQDH__PROC_ONE, MQDH__PROC_MAPS, MQDH__PROC_SHORT_RECORDS };
ssize_t mqdh__proc_file(const char *path, char *buf, size_t cap, int whole);
char *mqdh__proc_alloc(const char *path, size_t *n, int whole);

/* The whole of ROOT/PID/NAME ("/proc", or a /proc-shaped tree), NUL-
 * terminated, in a malloc'd buffer of *n bytes; NULL if it cannot be read. */
char *mqdh__proc_read(const char *root, pid_t pid, const char *name, size_t *n);

/* The real, effective, saved and file-system uids of ROOT/PID (ROOT:
 * "/proc", or a /proc-shaped tree): 0, or -1 if they cannot be read. */
int mqdh__proc_uids_at(const char *root, pid_t pid, uid_t ids[4]);

/* pid's owner, its real user id (/proc/PID/status): 0, or -1 if gone. */
int mqdh__proc_uid(pid_t pid, uid_t *uid);

/*
 * pid's four user ids (/proc/PID/status "Uid:"): real, effective, saved
 * and file-system, in that order, into ids[4].  0, or -1 if gone.
 */
int mqdh__proc_uids(pid_t pid, uid_t ids[4]);

/*
 * The owner of pid's files in /proc (/proc/PID/stat; not of /proc/PID,
 * which the kernel exempts): pid's effective user while it is dumpable;
 * root (as this user namespace sees it) once it is not (it ran a setuid
 * or setgid program, changed its ids, or made itself so with prctl), which
 * ptrace refuses anyone without CAP_SYS_PTRACE (task_dump_owner in the
 * kernel's fs/proc/base.c).  0, or -1 if gone.
 */
int mqdh__proc_dump_owner(pid_t pid, uid_t *uid);

/* What /proc/PID/stat says of a process. */
struct mqdh__stat_line {
    char state;          /* 'R', 'S', 'D', 'T', 't', 'Z' (zombie), 'X' (dead), ... */
    pid_t ppid;
    unsigned long flags; /* the kernel's PF_* flags */
};

/* PF_KTHREAD (include/linux/sched.h): a kernel thread, no user program. */
#define MQDH__PF_KTHREAD 0x00200000UL

/* pid's /proc/PID/stat into *st: 0, or -1 if gone (or unreadable). */
int mqdh__proc_stat(pid_t pid, struct mqdh__stat_line *st);

/* mqdh__proc_uids and mqdh__proc_dump_owner at once, and its number of
 * threads into *threads unless NULL: one opening of /proc/PID/status.  0,
 * or -1 if gone. */
int mqdh__proc_owners(pid_t pid, uid_t ids[4], uid_t *dump_owner, long *threads);

/* The same from fd, pid's /proc/PID/status opened before (read again
 * from its start): the process it was opened for, or -1 once that is
 * gone, whatever now has its pid. */
int mqdh__proc_owners_fd(int fd, uid_t ids[4], uid_t *dump_owner, long *threads);

/* pid's /proc/PID/status opened for mqdh__proc_owners_fd, or -1. */
int mqdh__proc_status_open(pid_t pid);

/* Whether pid's effective capabilities (/proc/PID/status "CapEff:") hold
 * capability cap (CAP_SYS_PTRACE is 19): 1, 0, or -1 if unknown. */
int mqdh__proc_capable(pid_t pid, int cap);

/* pid's command name (/proc/PID/comm) into buf[len]: 0, or -1 if gone. */
int mqdh__proc_name(pid_t pid, char *buf, size_t len);

/* A numeric field of pid's /proc/PID/status ("TracerPid"), or -1. */
long mqdh__proc_status_field(pid_t pid, const char *field);

/*
 * The readers of /proc's text, apart from the reading (and fuzzed apart:
 * tests/fuzz/fuzz_proc.c).  Each takes text as the kernel writes it, or
 * any other, and never reads past its end.
 */

/* The rank in an environment block env[n] (NUL-separated, NUL at env[n]),
 * as mqdh__proc_env_rank, whether it says PMI_SPAWNED, and the size of its
 * MPI_COMM_WORLD as its launcher set it (*size, if non-NULL; -1 if it
 * does not say). */
int mqdh__text_env_rank(const char *env, size_t n, int *spawned, int *size);

/* The N of "--pgid N" in a command line cmd[n] (NUL-separated, NUL at
 * cmd[n]), or -1. */
int mqdh__text_cmdline_pgid(const char *cmd, size_t n);

/* The parent in a NUL-terminated /proc/PID/stat, or -1. */
pid_t mqdh__text_stat_ppid(const char *stat);

/* State, parent and flags from a NUL-terminated /proc/PID/stat: 0, or -1
 * if it does not read as one. */
int mqdh__text_stat(const char *stat, struct mqdh__stat_line *st);

/* The first number of field ("Uid", "TracerPid") in a NUL-terminated
 * /proc/PID/status, or -1. */
long mqdh__text_status_field(const char *status, const char *field);

/* The first max numbers of field ("Uid": real, effective, saved, file
 * system) in a NUL-terminated /proc/PID/status into v: how many were
 * read (0 if the field is missing). */
int mqdh__text_status_numbers(const char *status, const char *field, long *v, int max);

/* The hexadecimal number of field ("CapEff") in a NUL-terminated
 * /proc/PID/status into *v: 0, or -1. */
int mqdh__text_status_hex(const char *status, const char *field, uint64_t *v);

/* One line of /proc/PID/maps (NUL-terminated; its newline is cut): 0 and
 * *e (e->file points into line, "" for an anonymous mapping; perms its
 * first 7 permission characters, "r-xp"), or -1. */
struct mqdh__maps_entry {
    uint64_t start, end, offset;
    unsigned long long dev, ino;
    char *file;
    char perms[8];
};
int mqdh__text_maps_line(char *line, struct mqdh__maps_entry *e);

/* utime + stime, in clock ticks, from a NUL-terminated /proc/PID/stat:
 * 0, or -1 if it does not read as one. */
int mqdh__text_stat_cpu(const char *stat, uint64_t *ticks);

/*
 * The CPU time process pid, stopped, has used, into *out (struct
 * mqdh_cpu, mqdhost.h): the whole process's (from stat, its /proc/PID/stat
 * read once it was stopped, if not NULL or ""), and each of its threads
 * tids[0..n-1]'s (0 entries skipped: threads gone).  MQDH_OK (known set
 * if the process's own could be read), or MQDH_E_NOMEM with *out empty.
 * *out's threads are the caller's to free.
 */
struct mqdh_cpu;
int mqdh__proc_cpu(pid_t pid, const char *stat, const pid_t *tids, int n, struct mqdh_cpu *out);

/* The number of threads in a NUL-terminated /proc/PID/stat, or -1. */
long mqdh__text_stat_threads(const char *stat);

#endif
