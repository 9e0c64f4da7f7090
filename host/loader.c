/* loader.c - dlopen an MQD DLL, resolve and check its entry points. */
#define _GNU_SOURCE
#include "loader.h"
#include "guard.h"
#include "mqdhost.h"

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The DLLs loaded in this process.  A DLL is process-wide by nature:
 * dlopen maps it once, and the specification has mqs_setup_basic_callbacks
 * called "*only* when the library is loaded" and the DLL "never unloaded".
 * So its record is shared by every session, made once under the lock and
 * never changed after; sessions hang their own state on their own objects
 * (mqs_put_image_info, ...), never on the record.
 */
static pthread_mutex_t loaded_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mqdh_dll *loaded;

static int owner_ok(const struct stat *st)
{
    return st->st_uid == 0 || st->st_uid == geteuid();
}

int mqdh_dll_trusted(const char *path, char *err, size_t errlen)
{
    char real[PATH_MAX], dir[PATH_MAX];
    struct stat st;
    if (!realpath(path, real)) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    if (stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s is not a regular file", real);
        return -EPERM;
    }
    if (!owner_ok(&st)) {
        snprintf(err, errlen, "%s is owned by uid %u, neither root nor you", real,
                 (unsigned)st.st_uid);
        return -EPERM;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(err, errlen, "%s is writable by its group or by others (mode %03o)", real,
                 (unsigned)(st.st_mode & 0777));
        return -EPERM;
    }
    snprintf(dir, sizeof dir, "%s", real);
    char *d = dirname(dir);
    if (stat(d, &st) != 0) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", d, strerror(e));
        return -e;
    }
    if (!owner_ok(&st)) {
        snprintf(err, errlen, "its directory %s is owned by uid %u, neither root nor you", d,
                 (unsigned)st.st_uid);
        return -EPERM;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(err, errlen, "its directory %s is %s", d,
                 st.st_mode & S_ISVTX ? "shared (sticky and world-writable)"
                                      : "writable by its group or by others");
        return -EPERM;
    }
    return 0;
}

#define REQUIRED(field, name) {#name, offsetof(struct mqdh_dll, field), 1}
#define OPTIONAL(field, name) {#name, offsetof(struct mqdh_dll, field), 0}

static const struct entry {
    const char *name;
    size_t offset;
    int required;
} entries[] = {
    REQUIRED(version_string, mqs_version_string),
    REQUIRED(version_compatibility, mqs_version_compatibility),
    REQUIRED(dll_taddr_width, mqs_dll_taddr_width),
    REQUIRED(dll_error_string, mqs_dll_error_string),
    REQUIRED(setup_basic_callbacks, mqs_setup_basic_callbacks),
    REQUIRED(setup_image, mqs_setup_image),
    REQUIRED(image_has_queues, mqs_image_has_queues),
    REQUIRED(destroy_image_info, mqs_destroy_image_info),
    REQUIRED(setup_process, mqs_setup_process),
    REQUIRED(process_has_queues, mqs_process_has_queues),
    REQUIRED(destroy_process_info, mqs_destroy_process_info),
    REQUIRED(update_communicator_list, mqs_update_communicator_list),
    REQUIRED(setup_communicator_iterator, mqs_setup_communicator_iterator),
    REQUIRED(get_communicator, mqs_get_communicator),
    REQUIRED(next_communicator, mqs_next_communicator),
    REQUIRED(setup_operation_iterator, mqs_setup_operation_iterator),
    REQUIRED(next_operation, mqs_next_operation),
    OPTIONAL(get_comm_group, mqs_get_comm_group),
    OPTIONAL(get_comm_handle, mqd_get_comm_handle),
    OPTIONAL(get_operation_info, mqd_get_operation_info),
    OPTIONAL(setup_job, mqs_setup_job),
    OPTIONAL(destroy_job_info, mqs_destroy_job_info),
    OPTIONAL(set_process_identity, mqs_set_process_identity),
};

static int load(const char *path, const mqs_basic_callbacks *basic, struct mqdh_dll **out,
                char *err, size_t errlen)
{
    struct mqdh_dll *d;
    for (d = loaded; d; d = d->next) {
        if (strcmp(d->path, path) == 0) {
            *out = d;
            return MQDH_OK;
        }
    }
    d = calloc(1, sizeof *d);
    if (!d || !(d->path = strdup(path))) {
        free(d);
        snprintf(err, errlen, "out of memory");
        return MQDH_E_NOMEM;
    }
    dlerror();
    d->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!d->handle) {
        const char *why = dlerror();
        snprintf(err, errlen, "cannot load %s: %s", path, why ? why : "unknown reason");
        free(d->path);
        free(d);
        return MQDH_E_DLL_LOAD;
    }
    char missing[512] = "";
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        void *sym = dlsym(d->handle, entries[i].name);
        memcpy((char *)d + entries[i].offset, &sym, sizeof sym);
        if (!sym && entries[i].required) {
            size_t used = strlen(missing);
            snprintf(missing + used, sizeof missing - used, "%s%s", used ? ", " : "",
                     entries[i].name);
        }
    }
    int rc = MQDH_OK;
    if (missing[0]) {
        snprintf(err, errlen, "%s is not an MQD debug DLL: it lacks %s", path, missing);
        rc = MQDH_E_DLL_SYMBOL;
        goto fail;
    }
    d->compatibility = d->version_compatibility();
    if (d->compatibility != 2 && d->compatibility != 3) {
        snprintf(err, errlen, "%s speaks interface version %d; mqd supports 2 (MPI-1) and 3 "
                 "(MPI-2)", path, d->compatibility);
        rc = MQDH_E_DLL_VERSION;
        goto fail;
    }
    int width = d->dll_taddr_width();
    if (width != (int)sizeof(mqs_taddr_t)) {
        snprintf(err, errlen, "%s was built with %d-byte target addresses; this host uses %d",
                 path, width, (int)sizeof(mqs_taddr_t));
        rc = MQDH_E_DLL_WIDTH;
        goto fail;
    }
    d->mpi2 = d->setup_job && d->destroy_job_info && d->set_process_identity;
    d->version = d->version_string();
    if (!d->version)
        d->version = "(no version string)";
    d->setup_basic_callbacks(basic);
    if (mqdh_object_text((const void *)(uintptr_t)d->setup_basic_callbacks, &d->text_lo,
                         &d->text_hi) != 0)
        d->text_lo = d->text_hi = 0; /* a time limit then waits for its callbacks */
    d->next = loaded;
    loaded = d;
    *out = d;
    return MQDH_OK;
fail:
    /* Not an MQD DLL we can use: it was never set up, so it can go. */
    dlclose(d->handle);
    free(d->path);
    free(d);
    return rc;
}

int mqdh_dll_load(const char *path, const mqs_basic_callbacks *basic, struct mqdh_dll **out,
                  char *err, size_t errlen)
{
    pthread_mutex_lock(&loaded_lock);
    int rc = load(path, basic, out, err, errlen);
    pthread_mutex_unlock(&loaded_lock);
    return rc;
}

int mqdh_dll_usable(struct mqdh_dll *dll)
{
    return !atomic_load(&dll->crashed) && atomic_load(&dll->timeouts) < MQDH_DLL_STUCK;
}

const char *mqdh_dll_strerror(const struct mqdh_dll *dll, int code)
{
    const char *s = dll && dll->dll_error_string ? dll->dll_error_string(code) : NULL;
    return s && *s ? s : "unknown error";
}
