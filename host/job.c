/*
 * job.c - the ranks of a job, from its launcher's MPIR_proctable.
 *
 * The launcher (hydra's mpiexec) is stopped only while its table is read.
 * MPIR_PROCDESC is { char *host_name; char *executable_name; int pid; }.
 */
#define _GNU_SOURCE
#include "mqdhost.h"

#include "attach.h"
#include "image.h"
#include "memory.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_string(struct mqdh_mem *m, uint64_t addr, char **out)
{
    char buf[256];
    *out = NULL;
    if (!addr)
        return 0;
    for (size_t i = 0; i < sizeof buf; i++) {
        if (mqdh_mem_read(m, addr + i, &buf[i], 1) != 0)
            return -1;
        if (!buf[i]) {
            *out = strdup(buf);
            return *out ? 0 : -1;
        }
    }
    return -1;
}

int mqdh_job_ranks(pid_t launcher, pid_t **pids, int **ranks, char ***hosts, int *n, char *err,
                   size_t errlen)
{
    struct mqdh_attach att;
    struct mqdh_image img;
    struct mqdh_mem mem;
    uint64_t table_sym, size_sym, table;
    int32_t count;
    int rc = MQDH_E_JOB;

    *pids = NULL;
    *ranks = NULL;
    *hosts = NULL;
    *n = 0;
    if (mqdh_attach(&att, launcher, err, errlen) != 0)
        return MQDH_E_ATTACH;
    mqdh_mem_init(&mem, launcher);
    if (mqdh_image_open_pid(&img, launcher, err, errlen) != 0) {
        mqdh_detach(&att);
        return MQDH_E_IMAGE;
    }
    if (mqdh_image_symbol(&img, "MPIR_proctable", 0, &table_sym, NULL) != 0 ||
        mqdh_image_symbol(&img, "MPIR_proctable_size", 0, &size_sym, NULL) != 0) {
        snprintf(err, errlen, "process %d (%s) has no MPIR_proctable: not an MPI launcher with "
                 "debugger support", (int)launcher, img.exe_path);
        goto out;
    }
    uint64_t ptr = 0;
    int wide = img.elf_class == 2;
    if (mqdh_mem_read(&mem, size_sym, &count, sizeof count) != 0 ||
        mqdh_mem_read(&mem, table_sym, &ptr, wide ? 8 : 4) != 0) {
        snprintf(err, errlen, "cannot read MPIR_proctable of process %d", (int)launcher);
        goto out;
    }
    table = ptr;
    if (count <= 0 || count > 1 << 20 || !table) {
        snprintf(err, errlen, "process %d's MPIR_proctable is empty (size %d): the job has not "
                 "started its ranks yet", (int)launcher, (int)count);
        goto out;
    }
    size_t esize = wide ? 24 : 12;
    *pids = calloc((size_t)count, sizeof **pids);
    *ranks = calloc((size_t)count, sizeof **ranks);
    *hosts = calloc((size_t)count, sizeof **hosts);
    if (!*pids || !*ranks || !*hosts) {
        rc = MQDH_E_NOMEM;
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int i = 0; i < count; i++) {
        unsigned char e[24];
        uint64_t host = 0;
        int32_t pid;
        if (mqdh_mem_read(&mem, table + (uint64_t)i * esize, e, esize) != 0) {
            snprintf(err, errlen, "cannot read MPIR_proctable[%d] of process %d", i,
                     (int)launcher);
            goto out;
        }
        memcpy(&host, e, wide ? 8 : 4);
        memcpy(&pid, e + (wide ? 16 : 8), sizeof pid);
        (*pids)[i] = pid;
        (*ranks)[i] = i;
        if (read_string(&mem, host, &(*hosts)[i]) != 0)
            (*hosts)[i] = NULL;
    }
    *n = count;
    rc = MQDH_OK;
out:
    mqdh_image_close(&img);
    mqdh_mem_fini(&mem);
    mqdh_detach(&att);
    if (rc != MQDH_OK) {
        mqdh_job_free(*pids, *ranks, *hosts, count > 0 ? count : 0);
        *pids = NULL;
        *ranks = NULL;
        *hosts = NULL;
    }
    return rc;
}

void mqdh_job_free(pid_t *pids, int *ranks, char **hosts, int n)
{
    if (hosts)
        for (int i = 0; i < n; i++)
            free(hosts[i]);
    free(hosts);
    free(pids);
    free(ranks);
}
