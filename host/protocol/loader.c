/*
 * loader.c - open an MQD DLL exactly as it was checked, dlopen that file,
 * resolve and check its entry points.
 */
#define _GNU_SOURCE
#include "protocol/loader.h"
#include "protocol/guard.h"
#include "mqdhost.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
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
static struct mqdh__dll *loaded;

int mqdh__dll_open(const char *path, enum mqdh__dll_trust trust, struct mqdh__dll_file *f,
                  char *err, size_t errlen)
{
    struct stat st;
    f->fd = -1;
    int rc = mqdh__trust_open(path, trust, NULL, &f->fd, &st, err, errlen);
    if (rc != MQDH_OK)
        return rc;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    return MQDH_OK;
}

void mqdh__dll_file_close(struct mqdh__dll_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
}

#define REQUIRED(field, name) {#name, offsetof(struct mqdh__dll, field), 1}
#define OPTIONAL(field, name) {#name, offsetof(struct mqdh__dll, field), 0}

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
static int resolve(struct mqdh__dll *d, const char *path, char *err, size_t errlen)
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

/* Does the dynamic symbol table hold a defined function called name? */
static int exports(Elf *e, Elf_Scn *dynsym, const char *name)
{
    GElf_Shdr sh;
    Elf_Data *data = elf_getdata(dynsym, NULL);
    if (!gelf_getshdr(dynsym, &sh) || !data || !sh.sh_entsize)
        return 0;
    for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
        GElf_Sym sym;
        const char *n;
        if (gelf_getsym(data, (int)i, &sym) && sym.st_shndx != SHN_UNDEF &&
            (GELF_ST_TYPE(sym.st_info) == STT_FUNC ||
             GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC) &&
            GELF_ST_BIND(sym.st_info) != STB_LOCAL &&
            (n = elf_strptr(e, sh.sh_link, sym.st_name)) && strcmp(n, name) == 0)
            return 1;
    }
    return 0;
}

/*
 * Before dlopen runs anything of it (its constructors run at load): the
 * file the descriptor fd holds (O_PATH) is a shared object for this host
 * that exports every required entry point.  A root-owned library that is
 * no MQD DLL is never loaded.  MQDH_OK, or MQDH_E_DLL_SYMBOL or
 * MQDH_E_DLL_LOAD with err saying why.
 */
static int looks_like_dll(int fd, const char *path, char *err, size_t errlen)
{
    int rfd = mqdh__trust_reopen(fd), rc = MQDH_E_DLL_LOAD;
    Elf *e = NULL;
    GElf_Ehdr eh;
    Elf_Scn *scn = NULL, *dynsym = NULL;
    elf_version(EV_CURRENT);
    if (rfd < 0 || !(e = elf_begin(rfd, ELF_C_READ_MMAP, NULL)) || elf_kind(e) != ELF_K_ELF ||
        !gelf_getehdr(e, &eh) || eh.e_type != ET_DYN) {
        snprintf(err, errlen, "cannot load %s: it is not a shared object", path);
        goto out;
    }
    if (eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)) {
        snprintf(err, errlen, "cannot load %s: it is a %d-bit object, and this host is %d-bit",
                 path, eh.e_ident[EI_CLASS] == ELFCLASS64 ? 64 : 32, (int)sizeof(void *) * 8);
        goto out;
    }
    while ((scn = elf_nextscn(e, scn)) && !dynsym) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
            dynsym = scn;
    }
    char missing[512] = "";
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        size_t used = strlen(missing);
        if (entries[i].required && !(dynsym && exports(e, dynsym, entries[i].name)))
            snprintf(missing + used, sizeof missing - used, "%s%s", used ? ", " : "",
                     entries[i].name);
    }
    rc = MQDH_OK;
    if (missing[0]) {
        snprintf(err, errlen, "%s is not an MQD debug DLL: it lacks %s", path, missing);
        rc = MQDH_E_DLL_SYMBOL;
    }
out:
    if (e)
        elf_end(e);
    if (rfd >= 0)
        close(rfd);
    return rc;
}

static int load(struct mqdh__dll_file *f, const char *path, const mqs_basic_callbacks *basic,
                struct mqdh__dll **out, char *err, size_t errlen)
{
    struct mqdh__dll *d;
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
    int rc = looks_like_dll(d->fd, path, err, errlen);
    if (rc != MQDH_OK) {
        close(d->fd);
        free(d->path);
        free(d);
        return rc;
    }
    dlerror();
    d->handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!d->handle) {
        snprintf(err, errlen, "cannot load %s: %s", path, dl_why(name));
        close(d->fd);
        free(d->path);
        free(d);
        return MQDH_E_DLL_LOAD;
    }
    if ((rc = resolve(d, path, err, errlen)) != MQDH_OK)
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

int mqdh__dll_load_file(struct mqdh__dll_file *f, const char *path,
                       const mqs_basic_callbacks *basic, struct mqdh__dll **out, char *err,
                       size_t errlen)
{
    pthread_mutex_lock(&loaded_lock);
    int rc = load(f, path, basic, out, err, errlen);
    pthread_mutex_unlock(&loaded_lock);
    return rc;
}

int mqdh__dll_load_as(const char *path, enum mqdh__dll_trust trust,
                     const mqs_basic_callbacks *basic, struct mqdh__dll **out, char *err,
                     size_t errlen)
{
    struct mqdh__dll_file f;
    int rc = mqdh__dll_open(path, trust, &f, err, errlen);
    if (rc != MQDH_OK)
        return rc;
    return mqdh__dll_load_file(&f, path, basic, out, err, errlen);
}

int mqdh__dll_load(const char *path, const mqs_basic_callbacks *basic, struct mqdh__dll **out,
                  char *err, size_t errlen)
{
    return mqdh__dll_load_as(path, MQDH__DLL_TRUST_GIVEN, basic, out, err, errlen);
}

int mqdh__dll_usable(struct mqdh__dll *dll)
{
    return !atomic_load(&dll->crashed) && atomic_load(&dll->timeouts) < MQDH__DLL_STUCK;
}

const char *mqdh__dll_strerror(const struct mqdh__dll *dll, int code)
{
    const char *s = dll && dll->dll_error_string ? dll->dll_error_string(code) : NULL;
    return s && *s ? s : "unknown error";
}
