/*
 * loader.c - open an MQD DLL exactly as it was checked, dlopen that file,
 * resolve and check its entry points.
 */
#define _GNU_SOURCE
#include "loader.h"
#include "guard.h"
#include "mqdhost.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
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

/* What a trust failure says: the defect, then what it means.  subject is
 * the file or the directory that failed, with what it is to the DLL. */
enum defect { OWNER, WRITABLE, SHARED };

static int refuse(enum mqdh_dll_trust trust, enum defect what, const struct stat *st,
                  const char *subject, char *err, size_t errlen)
{
    char defect[64];
    switch (what) {
    case OWNER:
        snprintf(defect, sizeof defect, "is owned by uid %u", (unsigned)st->st_uid);
        break;
    case WRITABLE:
        snprintf(defect, sizeof defect, "is writable by its group or by others (mode %03o)",
                 (unsigned)(st->st_mode & 0777));
        break;
    case SHARED:
        snprintf(defect, sizeof defect, "is shared (sticky and world-writable, mode %04o)",
                 (unsigned)(st->st_mode & 07777));
        break;
    }
    if (trust == MQDH_DLL_TRUST_RULE)
        snprintf(err, errlen, "%s %s%s", subject, defect,
                 what == OWNER ? ", neither root nor you" : "");
    else
        snprintf(err, errlen, "%s %s: loading it as root runs %s as root; pass "
                 "--trust-target-dll to load it anyway", subject, defect,
                 what == OWNER ? "that user's code"
                               : "whatever code its group or others put there");
    return MQDH_E_DLL_UNTRUSTED;
}

/*
 * The trust rule for a directory on the DLL's path (the first dirlen
 * characters of real; own: the DLL's own directory): root's or the
 * invoking user's, and writable by neither group nor others.  A directory
 * above the DLL's own may be root's and sticky (/tmp): in it only the
 * owner of the next directory, checked in turn, can move that away.
 */
static int dir_trusted(enum mqdh_dll_trust trust, const char *real, int dirlen, int own,
                       const struct stat *st, char *err, size_t errlen)
{
    if (owner_ok(st) && !(st->st_mode & (S_IWGRP | S_IWOTH)))
        return MQDH_OK;
    if (!own && st->st_uid == 0 && (st->st_mode & S_ISVTX))
        return MQDH_OK;
    char subject[PATH_MAX * 2 + 64];
    snprintf(subject, sizeof subject, "%s: %s %.*s%s", real,
             own ? "its directory" : "the directory", dirlen, real, own ? "" : " above it");
    enum defect what = WRITABLE;
    if (!owner_ok(st))
        what = OWNER;
    else if ((st->st_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH))
        what = SHARED;
    return refuse(trust, what, st, subject, err, errlen);
}

static int file_trusted(enum mqdh_dll_trust trust, const char *real, const struct stat *st,
                        char *err, size_t errlen)
{
    if (!owner_ok(st))
        return refuse(trust, OWNER, st, real, err, errlen);
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return refuse(trust, WRITABLE, st, real, err, errlen);
    return MQDH_OK;
}

/* Opening the first len characters of real failed with e.  ENOTDIR or
 * ELOOP: what realpath saw as a directory (or, at the end, the file) is now
 * a symbolic link or no directory: someone is moving the path while mqd
 * follows it. */
static int changed(const char *path, const char *real, int len, int e, char *err, size_t errlen)
{
    if (e == ENOTDIR || e == ELOOP) {
        snprintf(err, errlen, "%s changed while it was being opened (%.*s is now %s): "
                 "refusing to load it", path, len, real,
                 real[len] ? "a symbolic link or not a directory" : "a symbolic link");
        return MQDH_E_DLL_UNTRUSTED;
    }
    snprintf(err, errlen, "cannot load %s: %.*s: %s", path, len, real, strerror(e));
    return MQDH_E_DLL_LOAD;
}

/*
 * Open real (absolute, no symbolic link: realpath's) from "/" one
 * component at a time, following no symbolic link, checking each directory
 * as it is opened if check, then the file itself (O_PATH: opening a device
 * for reading may do something).  The descriptor in *fd is the file
 * checked; dlopen gets it, not the name.
 */
static int walk(const char *path, const char *real, enum mqdh_dll_trust trust, int check,
                int *fd, struct stat *st, char *err, size_t errlen)
{
    int dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), rc = MQDH_OK;
    const char *name = real + 1;
    int dirlen = 1; /* "/" */
    *fd = -1;
    if (dfd < 0)
        return changed(path, "/", 1, errno, err, errlen);
    for (;;) {
        const char *slash = strchr(name, '/');
        if (fstat(dfd, st) != 0) {
            rc = changed(path, real, dirlen, errno, err, errlen);
            goto out;
        }
        if (check && (rc = dir_trusted(trust, real, dirlen, !slash, st, err, errlen)) != MQDH_OK)
            goto out;
        if (!slash)
            break;
        char comp[NAME_MAX + 1];
        size_t n = (size_t)(slash - name);
        if (n > NAME_MAX) {
            rc = changed(path, real, (int)(slash - real), ENAMETOOLONG, err, errlen);
            goto out;
        }
        memcpy(comp, name, n);
        comp[n] = '\0';
        int next = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) {
            rc = changed(path, real, (int)(slash - real), errno, err, errlen);
            goto out;
        }
        close(dfd);
        dfd = next;
        dirlen = (int)(slash - real);
        name = slash + 1;
    }
    *fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (*fd < 0) {
        rc = changed(path, real, (int)strlen(real), errno, err, errlen);
        goto out;
    }
    if (fstat(*fd, st) != 0) {
        rc = changed(path, real, (int)strlen(real), errno, err, errlen);
        goto out;
    }
    if (S_ISLNK(st->st_mode)) {
        rc = changed(path, real, (int)strlen(real), ELOOP, err, errlen);
        goto out;
    }
    if (!S_ISREG(st->st_mode)) {
        snprintf(err, errlen, "cannot load %s: %s is not a regular file", path, real);
        rc = MQDH_E_DLL_LOAD;
        goto out;
    }
    if (check)
        rc = file_trusted(trust, real, st, err, errlen);
out:
    close(dfd);
    if (rc != MQDH_OK && *fd >= 0) {
        close(*fd);
        *fd = -1;
    }
    return rc;
}

int mqdh__dll_open(const char *path, enum mqdh_dll_trust trust, struct mqdh_dll_file *f,
                  char *err, size_t errlen)
{
    char real[PATH_MAX];
    struct stat st;
    f->fd = -1;
    if (!realpath(path, real)) {
        snprintf(err, errlen, "cannot load %s: %s", path, strerror(errno));
        return MQDH_E_DLL_LOAD;
    }
    int check = trust == MQDH_DLL_TRUST_RULE || (trust == MQDH_DLL_TRUST_GIVEN && geteuid() == 0);
    int rc = walk(path, real, trust, check, &f->fd, &st, err, errlen);
    if (rc != MQDH_OK)
        return rc;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    return MQDH_OK;
}

void mqdh__dll_file_close(struct mqdh_dll_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
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
    OPTIONAL(get_process_state, mqd_get_process_state),
    OPTIONAL(get_request_info, mqd_get_request_info),
    OPTIONAL(get_comm_nbc_tag, mqd_get_comm_nbc_tag),
    OPTIONAL(setup_job, mqs_setup_job),
    OPTIONAL(destroy_job_info, mqs_destroy_job_info),
    OPTIONAL(set_process_identity, mqs_set_process_identity),
};

/* dlerror()'s message without the "/proc/self/fd/N: " it starts with. */
static const char *dl_why(const char *name)
{
    const char *why = dlerror();
    size_t n = strlen(name);
    if (!why)
        return "unknown reason";
    if (strncmp(why, name, n) == 0 && strncmp(why + n, ": ", 2) == 0)
        return why + n + 2;
    return why;
}

/*
 * The descriptor of a DLL that did not pass the checks: closed if the DLL
 * is gone, else kept, so that its number does not name another file to a
 * later dlopen that glibc would answer with this one by name.
 */
static void forget(int fd, const char *name)
{
    void *still = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
    if (still)
        dlclose(still); /* a DLL dlclose cannot unload: its descriptor stays */
    else
        close(fd);
}

/*
 * The entry points of d (loaded from path): every required one present,
 * an interface version mqd speaks, the host's target address width.
 * MQDH_OK, or MQDH_E_DLL_SYMBOL, MQDH_E_DLL_VERSION or MQDH_E_DLL_WIDTH
 * with err saying why.
 */
static int resolve(struct mqdh_dll *d, const char *path, char *err, size_t errlen)
{
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
    if (missing[0]) {
        snprintf(err, errlen, "%s is not an MQD debug DLL: it lacks %s", path, missing);
        return MQDH_E_DLL_SYMBOL;
    }
    d->compatibility = d->version_compatibility();
    if (d->compatibility != 2 && d->compatibility != 3) {
        snprintf(err, errlen, "%s speaks interface version %d; mqd supports 2 (MPI-1) and 3 "
                 "(MPI-2)", path, d->compatibility);
        return MQDH_E_DLL_VERSION;
    }
    int width = d->dll_taddr_width();
    if (width != (int)sizeof(mqs_taddr_t)) {
        snprintf(err, errlen, "%s was built with %d-byte target addresses; this host uses %d",
                 path, width, (int)sizeof(mqs_taddr_t));
        return MQDH_E_DLL_WIDTH;
    }
    return MQDH_OK;
}

static int load(struct mqdh_dll_file *f, const char *path, const mqs_basic_callbacks *basic,
                struct mqdh_dll **out, char *err, size_t errlen)
{
    struct mqdh_dll *d;
    char name[64];
    for (d = loaded; d; d = d->next) {
        if (d->dev == f->dev && d->ino == f->ino) {
            mqdh__dll_file_close(f);
            *out = d;
            return MQDH_OK;
        }
    }
    d = calloc(1, sizeof *d);
    if (!d || !(d->path = strdup(path))) {
        free(d);
        mqdh__dll_file_close(f);
        snprintf(err, errlen, "out of memory");
        return MQDH_E_NOMEM;
    }
    d->fd = f->fd;
    d->dev = f->dev;
    d->ino = f->ino;
    f->fd = -1;
    /* The file checked, by its descriptor: the name may point elsewhere by now. */
    snprintf(name, sizeof name, "/proc/self/fd/%d", d->fd);
    dlerror();
    d->handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!d->handle) {
        snprintf(err, errlen, "cannot load %s: %s", path, dl_why(name));
        close(d->fd);
        free(d->path);
        free(d);
        return MQDH_E_DLL_LOAD;
    }
    int rc = resolve(d, path, err, errlen);
    if (rc != MQDH_OK)
        goto fail;
    d->mpi2 = d->setup_job && d->destroy_job_info && d->set_process_identity;
    d->version = d->version_string();
    if (!d->version)
        d->version = "(no version string)";
    d->setup_basic_callbacks(basic);
    if (mqdh__object_text((const void *)(uintptr_t)d->setup_basic_callbacks, &d->text_lo,
                         &d->text_hi) != 0)
        d->text_lo = d->text_hi = 0; /* a time limit then waits for its callbacks */
    d->next = loaded;
    loaded = d;
    *out = d;
    return MQDH_OK;
fail:
    /* Not an MQD DLL we can use: it was never set up, so it can go. */
    dlclose(d->handle);
    forget(d->fd, name);
    free(d->path);
    free(d);
    return rc;
}

int mqdh__dll_load_file(struct mqdh_dll_file *f, const char *path,
                       const mqs_basic_callbacks *basic, struct mqdh_dll **out, char *err,
                       size_t errlen)
{
    pthread_mutex_lock(&loaded_lock);
    int rc = load(f, path, basic, out, err, errlen);
    pthread_mutex_unlock(&loaded_lock);
    return rc;
}

int mqdh__dll_load_as(const char *path, enum mqdh_dll_trust trust,
                     const mqs_basic_callbacks *basic, struct mqdh_dll **out, char *err,
                     size_t errlen)
{
    struct mqdh_dll_file f;
    int rc = mqdh__dll_open(path, trust, &f, err, errlen);
    if (rc != MQDH_OK)
        return rc;
    return mqdh__dll_load_file(&f, path, basic, out, err, errlen);
}

int mqdh__dll_load(const char *path, const mqs_basic_callbacks *basic, struct mqdh_dll **out,
                  char *err, size_t errlen)
{
    return mqdh__dll_load_as(path, MQDH_DLL_TRUST_GIVEN, basic, out, err, errlen);
}

int mqdh__dll_usable(struct mqdh_dll *dll)
{
    return !atomic_load(&dll->crashed) && atomic_load(&dll->timeouts) < MQDH_DLL_STUCK;
}

const char *mqdh__dll_strerror(const struct mqdh_dll *dll, int code)
{
    const char *s = dll && dll->dll_error_string ? dll->dll_error_string(code) : NULL;
    return s && *s ? s : "unknown error";
}
