/*
 * procjob.h - the ranks of a job whose launcher keeps no MPIR_proctable,
 * found in a /proc-shaped tree: Open MPI 5's prterun (PRRTE keeps no
 * table unless the MPIR shim runs it), its prted daemons, a stripped
 * mpiexec, a batch script.  The tree's root is a parameter, so that the
 * tests feed it directories shaped like /proc (tests/test_procjob.c).
 */
#ifndef MQDH__PROCJOB_H
#define MQDH__PROCJOB_H

#include <stddef.h>
#include <sys/types.h>

/* A process of the job, as its environment describes it. */
struct mqdh__pj_rank {
    pid_t pid;
    int rank;
    int world; /* 0: the launched job; W > 0: the W-th other PMIx namespace under it */
};

/* What was found (mqdh__pj_find). */
struct mqdh__pj_job {
    struct mqdh__pj_rank *ranks; /* the launched ranks by rank, then the other worlds' */
    int nranks;
    int nlaunched;   /* how many of ranks are the launched job's */
    char note[1024]; /* how they were found, and what that cannot see */
};

/*
 * The ranks under launcher, from the tree at root ("/proc"): its
 * descendants (root/PID/stat) whose four user ids (root/PID/status) are
 * the launcher's real user id - no other process's environment is read -
 * with a rank in their environment (root/PID/environ: PMI_RANK, PMI_ID,
 * OMPI_COMM_WORLD_RANK, PMIX_RANK), grouped by PMIx namespace
 * (PMIX_NAMESPACE); processes hydra marked PMI_SPAWNED are left out (the
 * caller numbers their worlds).  Of a wrapper and the program it runs
 * (same namespace and rank), the program.  The launched job is the only
 * namespace, or PRRTE's first ("BASE@N", the least N, all of one BASE);
 * every rank in it must be held by one process, and, where the
 * environment gives the job's size (OMPI_COMM_WORLD_SIZE, PMI_SIZE),
 * every rank below it be there - unless the launcher is a node's daemon
 * (prted, orted, hydra_pmi_proxy, slurmstepd), whose ranks are that
 * node's share.  MQDH_OK and *out (free with mqdh__pj_free; its note says
 * how the ranks were found and what cannot be seen from this node);
 * MQDH_E_JOB with err[errlen] saying which ranks clash or are missing, or
 * why none was found; MQDH_E_NOMEM.
 */
int mqdh__pj_find(const char *root, pid_t launcher, struct mqdh__pj_job *out, char *err,
                  size_t errlen);
void mqdh__pj_free(struct mqdh__pj_job *job);

#endif
