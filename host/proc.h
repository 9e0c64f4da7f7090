/*
 * proc.h - what /proc tells about MPI processes without stopping them: the
 * rank a launcher gave a process in its environment, and the processes
 * descending from a launcher.
 */
#ifndef MQDH_PROC_H
#define MQDH_PROC_H

#include <sys/types.h>

/*
 * The rank in MPI_COMM_WORLD from pid's environment: PMI_RANK, PMI_ID
 * (hydra's port mode), OMPI_COMM_WORLD_RANK or PMIX_RANK, first found.
 * -1 when none is set or the environment cannot be read.
 */
int mqdh_proc_env_rank(pid_t pid);

/*
 * Every live process descending from root (root excluded), in ascending pid
 * order, into a malloc'd *out of *n.  0, or a negative errno.
 */
int mqdh_proc_descendants(pid_t root, pid_t **out, int *n);

/* pid's parent, or -1. */
pid_t mqdh_proc_parent(pid_t pid);

#endif
