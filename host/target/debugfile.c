/* debugfile.c - separate debug information, found safely (debugfile.h). */
#define _GNU_SOURCE
#include "target/debugfile.h"
#include "base/clock.h"
#include "target/files.h"
#include "mqdhost.h"
#include "base/progress.h"
#include "base/trust.h"

#include <dlfcn.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- directories */

/* Is the absolute directory d (len bytes) one root may read what a
 * target names from?  Said on stderr when not. */
static int dir_usable(const char *d, size_t len)
{
    char path[PATH_MAX], why[1024];
    if (len >= sizeof path)
        return 0;
    memcpy(path, d, len);
    path[len] = '\0';
    struct stat st;
    if (geteuid() != 0 || stat(path, &st) != 0)
        return 1; /* a directory that is not there finds nothing */
    if (mqdh_path_trusted(path, "read debug information from it", why, sizeof why) ==
        MQDH_OK)
        return 1;
    fprintf(stderr, "mqdump: not looking for debug information in %s: %s\n", path, why);
    return 0;
}

char *mqdh__debug_dirs(const char *env)
{
    const char *src = env && *env ? env : ":.debug:/usr/lib/debug";
    char *out = malloc(strlen(src) + 1), *o = out;
    if (!out)
        return NULL;
    if (*src == '+' || *src == '-')
        *o++ = *src++; /* elfutils' CRC flag */
    int first = 1;
    for (const char *d = src;; d++) {
        const char *end = strchrnul(d, ':');
        size_t len = (size_t)(end - d);
        if (d[0] != '/' || dir_usable(d, len)) {
            if (!first)
                *o++ = ':';
            first = 0;
            memcpy(o, d, len);
            o += len;
        }
        if (!*end)
            break;
        d = end;
    }
    *o = '\0';
    return out;
}

const char *mqdh__debug_path(struct mqdh__files *fs)
{
    if (!fs->debuginfo_path)
        fs->debuginfo_path = mqdh__debug_dirs(getenv("MQD_DEBUGINFO_PATH"));
    return fs->debuginfo_path;
}

/* ---------------------------------------------------------------- candidates */

/* The CRC-32 a .gnu_debuglink records (the zlib polynomial) of fd. */
static int file_crc(int fd, uint32_t *out)
{
    uint32_t table[256], crc = 0xffffffffu;
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    unsigned char buf[65536];
    ssize_t n;
    off_t at = 0;
    while ((n = pread(fd, buf, sizeof buf, at)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
        at += n;
    }
    *out = crc ^ 0xffffffffu;
    return n < 0 ? -1 : 0;
}

/* Is the ELF file fd the debug file wanted: the same build id as the
 * module's (id[idlen]), or, for a module without one, the link's CRC? */
static int is_wanted(int fd, const unsigned char *id, int idlen, GElf_Word crc)
{
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    int ok = 0;
    if (e && elf_kind(e) == ELF_K_ELF) {
        const void *got;
        ssize_t n = dwelf_elf_gnu_build_id(e, &got);
        if (idlen > 0)
            ok = n == idlen && memcmp(got, id, (size_t)idlen) == 0;
        else {
            uint32_t c;
            ok = crc != 0 && file_crc(fd, &c) == 0 && c == crc;
        }
    }
    if (e)
        elf_end(e);
    return ok;
}

/*
 * Open the candidate path as the trust rule opens a DLL (trust: the rule
 * for what a target names, or the user's for their own directories) and
 * keep it if it is the debug file wanted: a descriptor for reading and its
 * name in *name, else -1.
 */
static int try_candidate(const char *path, enum mqdh__dll_trust trust, const unsigned char *id,
                         int idlen, GElf_Word crc, char **name)
{
    static const struct mqdh__trust_use how = {"read it as debug information", NULL};
    char why[1024];
    struct stat st;
    int pfd, fd = -1;
    if (access(path, F_OK) != 0 ||
        mqdh__trust_open(path, trust, &how, &pfd, &st, why, sizeof why) != MQDH_OK)
        return -1;
    fd = mqdh__trust_reopen(pfd);
    close(pfd);
    if (fd >= 0 && is_wanted(fd, id, idlen, crc) && (*name = strdup(path))) {
        fcntl(fd, F_SETFL, 0); /* back to blocking reads: a regular file's */
        return fd;
    }
    if (fd >= 0)
        close(fd);
    return -1;
}

/* A debug link's name as a plain file name: no '/', no "." or "..". */
static int plain_name(const char *s)
{
    return s && *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0 &&
           strlen(s) <= NAME_MAX;
}

/*
 * The directory of file_name resolved into real[PATH_MAX] ("" for "/"), as
 * realpath resolves it: file_name is a path the maps gave (the kernel's,
 * no link in it) or one realpath made (mqdh__image_open_file), so its
 * directory's resolution is the file's own but its last component.  A
 * job's files lie in a few directories, and realpath costs a readlink per
 * component: fs keeps the last few.  The kept entry, or NULL if none is
 * kept (real is still filled); -1 into *rc if it cannot be resolved.
 */
static struct mqdh__real_dir *real_dir(struct mqdh__files *fs, const char *file_name,
                                       char *real, int *rc)
{
    const char *slash = file_name ? strrchr(file_name, '/') : NULL;
    size_t len = slash ? (size_t)(slash - file_name) : 0;
    enum { N = sizeof fs->real_dirs / sizeof fs->real_dirs[0] };
    char dir[PATH_MAX];
    *rc = -1;
    if (!file_name || len >= PATH_MAX)
        return NULL;
    for (int i = 0; slash && i < N; i++) {
        struct mqdh__real_dir *d = &fs->real_dirs[i];
        if (d->dir && strlen(d->dir) == len && memcmp(d->dir, file_name, len) == 0) {
            memcpy(real, d->real, strlen(d->real) + 1);
            *rc = 0;
            return d;
        }
    }
    memcpy(dir, file_name, len);
    dir[len] = '\0';
    /* No slash: in the working directory. */
    if (!realpath(!slash ? "." : len ? dir : "/", real))
        return NULL;
    *rc = 0;
    if (strcmp(real, "/") == 0)
        real[0] = '\0';
    char *kd = slash ? strdup(dir) : NULL, *kr = kd ? strdup(real) : NULL;
    if (!kr) {
        free(kd);
        return NULL;
    }
    struct mqdh__real_dir *d = &fs->real_dirs[fs->real_dirs_next++ % N];
    free(d->dir);
    free(d->real);
    *d = (struct mqdh__real_dir){kd, kr, 0, 0};
    return d;
}

/* Is the directory path names a file in (path up to its last '/') not
 * there?  Asked once per entry k of the debug directories, for the files
 * of one directory d (NULL: not kept, asked each time). */
static int dir_missing(struct mqdh__real_dir *d, int k, const char *path)
{
    uint32_t bit = k < 32 ? 1u << k : 0;
    if (d && (d->known & bit))
        return (d->missing & bit) != 0;
    char dir[PATH_MAX * 2];
    const char *slash = strrchr(path, '/');
    size_t len = slash ? (size_t)(slash - path) : 0;
    struct stat st;
    memcpy(dir, path, len);
    dir[len] = '\0';
    int missing = len > 0 && stat(dir, &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
    if (d && bit) {
        d->known |= bit;
        d->missing |= missing ? bit : 0;
    }
    return missing;
}

void mqdh__debug_dirs_forget(struct mqdh__files *fs, int keep_names)
{
    for (size_t i = 0; i < sizeof fs->real_dirs / sizeof fs->real_dirs[0]; i++) {
        struct mqdh__real_dir *d = &fs->real_dirs[i];
        d->known = d->missing = 0;
        if (!keep_names) {
            free(d->dir);
            free(d->real);
            d->dir = d->real = NULL;
        }
    }
}

/*
 * The debug link's candidates for the file at file_name, for each entry
 * of the debug directories dirs: an empty one, the file's own directory;
 * a relative one, that under it; an absolute one D, D/FILE'S-DIRECTORY.
 */
static int by_link(struct mqdh__files *fs, const char *dirs, const char *file_name,
                   const char *link, const unsigned char *id, int idlen, GElf_Word crc,
                   char **name)
{
    char real[PATH_MAX], path[PATH_MAX * 2];
    int rc;
    struct mqdh__real_dir *rd = real_dir(fs, file_name, real, &rc);
    if (rc != 0)
        return -1; /* real is its directory ("" for "/") */
    if (*dirs == '+' || *dirs == '-')
        dirs++;
    for (int k = 0;; k++) {
        const char *end = strchrnul(dirs, ':');
        int len = (int)(end - dirs), fd = -1;
        if (len == 0)
            snprintf(path, sizeof path, "%s/%s", real, link);
        else if (dirs[0] != '/')
            snprintf(path, sizeof path, "%s/%.*s/%s", real, len, dirs, link);
        else
            snprintf(path, sizeof path, "%.*s%s/%s", len, dirs, real, link);
        if (!dir_missing(rd, k, path) &&
            (fd = try_candidate(path, MQDH__DLL_TRUST_RULE, id, idlen, crc, name)) >= 0)
            return fd;
        if (!*end)
            return -1;
        dirs = end + 1;
    }
}

/* ---------------------------------------------------------------- debuginfod */

/*
 * The client is libdebuginfod's (elfutils 0.179 on), looked up in the
 * library at run time, never linked: libdw loads the same one.  A fetch is
 * said on stderr once it starts (the client's progress callback, which it
 * calls only while it fetches), naming the file and the servers - or told
 * to the caller's mqdh_options.progress instead - and one that fails is
 * said with why and the time it took.  Once one had no answer within
 * DEBUGINFOD_TIMEOUT the servers are taken as silent for the session, and
 * its later fetches are cancelled at once (said too); so is every fetch
 * once the budget is spent.
 */
typedef int (*fetch_progress_fn)(debuginfod_client *, long, long);

static struct {
    int looked;
    debuginfod_client *(*begin)(void);
    void (*end)(debuginfod_client *);
    int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
    void (*set_progressfn)(debuginfod_client *, fetch_progress_fn);
    void (*set_user_data)(debuginfod_client *, void *);
    void *(*get_user_data)(debuginfod_client *);
} dif;

/* A fetch under way. */
struct fetch {
    const char *path;
    struct mqdh__files *fs;
    double start, budget, spent; /* spent: the budget's, before this one */
    int said, cancelled;
};

static void look_up_client(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    if (!dif.looked) {
        dif.looked = 1;
        void *lib = dlopen("libdebuginfod.so.1", RTLD_LAZY);
        if (lib) {
            *(void **)&dif.begin = dlsym(lib, "debuginfod_begin");
            *(void **)&dif.end = dlsym(lib, "debuginfod_end");
            *(void **)&dif.find_debuginfo = dlsym(lib, "debuginfod_find_debuginfo");
            *(void **)&dif.set_progressfn = dlsym(lib, "debuginfod_set_progressfn");
            *(void **)&dif.set_user_data = dlsym(lib, "debuginfod_set_user_data");
            *(void **)&dif.get_user_data = dlsym(lib, "debuginfod_get_user_data");
            if (!dif.begin || !dif.end || !dif.find_debuginfo || !dif.set_progressfn ||
                !dif.set_user_data || !dif.get_user_data)
                dif.begin = NULL;
        }
    }
    pthread_mutex_unlock(&lock);
}

static int fetch_progress(debuginfod_client *c, long done, long total)
{
    (void)done;
    (void)total;
    struct fetch *ft = dif.get_user_data(c);
    const char *urls = getenv("DEBUGINFOD_URLS");
    if (!ft)
        return 0;
    const char *stop = NULL;
    if (ft->fs->debuginfod_silent)
        stop = "an earlier fetch had no answer in time";
    else if (ft->spent + (mqdh__monotonic() - ft->start) > ft->budget)
        stop = ft->fs->ranks_stopped ? "the time for fetches while the ranks are stopped is spent"
                                     : "the time for fetches is spent";
    if (stop) {
        if (!ft->cancelled)
            fprintf(stderr, "mqdump: not fetching the debug information of %s through "
                    "debuginfod (%s): %s (%.0f s in all)\n", ft->path, urls, stop, ft->budget);
        ft->cancelled = 1;
        return 1; /* the client gives up this fetch */
    }
    /* Progress: the caller's to show, if it takes it (mqdh_options.progress). */
    if (!ft->said && !mqdh__progress_step(MQDH__FETCH_BEGIN, 1, ft->path))
        fprintf(stderr, "mqdump: fetching the debug information of %s through debuginfod (%s)\n",
                ft->path, urls);
    ft->said = 1;
    return 0;
}

/* The session's client, made on first need; NULL without DEBUGINFOD_URLS
 * or libdebuginfod. */
static debuginfod_client *client(struct mqdh__files *fs)
{
    const char *urls = getenv("DEBUGINFOD_URLS");
    if (!urls || !*urls)
        return NULL;
    look_up_client();
    if (!dif.begin)
        return NULL;
    if (!fs->dclient && !(fs->dclient = dif.begin()))
        return NULL;
    dif.set_progressfn(fs->dclient, fetch_progress);
    return fs->dclient;
}

void mqdh__debug_client_end(struct mqdh__files *fs)
{
    if (fs->dclient && dif.end)
        dif.end(fs->dclient);
    fs->dclient = NULL;
}

void mqdh__debug_ranks_stopped(struct mqdh__files *fs)
{
    fs->ranks_stopped = 1;
}

/* The debug file of path (build id id[idlen]) from debuginfod: a
 * descriptor and its name in *name, or -1. */
static int fetch(struct mqdh__files *fs, const char *path, const unsigned char *id, int idlen,
                 char **name)
{
    debuginfod_client *c = idlen > 0 ? client(fs) : NULL;
    if (!c)
        return -1;
    int stopped = fs->ranks_stopped;
    struct fetch ft = {path, fs, mqdh__monotonic(), stopped ? MQDH__FETCH_BUDGET : MQDH__PREFETCH_BUDGET,
                       fs->fetch_spent[stopped], 0, 0};
    if (ft.spent >= ft.budget || fs->debuginfod_silent)
        return -1; /* said when the budget ran out, or the servers fell silent */
    dif.set_user_data(c, &ft);
    char *got = NULL;
    int fd = dif.find_debuginfo(c, id, idlen, &got);
    dif.set_user_data(c, NULL);
    double took = mqdh__monotonic() - ft.start;
    fs->fetch_spent[stopped] += took;
    if (ft.said)
        mqdh__progress_step(MQDH__FETCH_END, 1, NULL);
    if (ft.said && !ft.cancelled && fd < 0) {
        /* The client's own defaults: 90 s without progress, no limit on a
         * fetch's whole time.  A server that needs either is taken as too
         * slow for the session: its later fetches are cancelled at once. */
        const char *t = getenv("DEBUGINFOD_TIMEOUT"), *m = getenv("DEBUGINFOD_MAXTIME");
        double limit = t && atof(t) > 0 ? atof(t) : 90, most = m && atof(m) > 0 ? atof(m) : 0;
        int slow = most > 0 && took >= most * 0.9, silent = !slow && took >= limit * 0.9;
        if (silent || slow)
            fs->debuginfod_silent = 1;
        fprintf(stderr,
                "mqdump: could not fetch the debug information of %s through debuginfod "
                "(%s): %s (after %.1f s)\n",
                path, getenv("DEBUGINFOD_URLS"),
                silent ? "no answer within DEBUGINFOD_TIMEOUT"
                : slow ? "not fetched within DEBUGINFOD_MAXTIME"
                       : "the servers do not have it or cannot be reached",
                took);
    }
    if (fd < 0) {
        free(got);
        return -1;
    }
    *name = got;
    return fd;
}

/* ---------------------------------------------------------------- the search */

int mqdh__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                         Dwarf_Addr base, const char *file_name, const char *debuglink_file,
                         GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    struct mqdh__file *f = *userdata;
    const unsigned char *id = NULL;
    GElf_Addr vaddr;
    /* The vDSO (read from memory): its debug file is the kernel's (a kernel
     * debug package's), whose lines and variables say nothing of the MPI
     * program; its symbols and CFI are in the copy. */
    if (f && f->bytes)
        return -1;
    if (!f || !f->owner || !mqdh__debug_path(f->owner))
        return -1; /* no checked directories: nowhere to look */
    int idlen = dwfl_module_build_id(mod, &id, &vaddr);
    if (idlen < 0)
        idlen = 0;
    /* By build id in the debug directories (libdwfl's own: what it builds
     * from the id is hex, and the directories were checked; an alternate
     * debug file (dwz) is found so too). */
    int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
                                          debuglink_file, debuglink_crc, debuginfo_file_name);
    if (fd >= 0)
        return fd;
    /* A name left behind would be opened by libdwfl itself, blocking. */
    free(*debuginfo_file_name);
    *debuginfo_file_name = NULL;
    /* By the link, as a plain name, in trusted directories only. */
    if (plain_name(debuglink_file) &&
        (fd = by_link(f->owner, f->owner->debuginfo_path, file_name, debuglink_file, id, idlen,
                      debuglink_crc, debuginfo_file_name)) >= 0)
        return fd;
    /* From debuginfod, for the module's own file (not an alternate one). */
    if (!debuglink_file || plain_name(debuglink_file))
        return fetch(f->owner, f->path, id, idlen, debuginfo_file_name);
    return -1;
}

/* ---------------------------------------------------------------- prefetch */

void mqdh__debug_prefetch_one(struct mqdh__files *fs, Dwfl_Module *m, const char *path)
{
    GElf_Addr vaddr;
    const unsigned char *id;
    int idlen = dwfl_module_build_id(m, &id, &vaddr);
    if (idlen <= 0 || !mqdh__debug_path(fs) || !client(fs))
        return;
    char *name = NULL;
    void *none = NULL;
    int fd = dwfl_build_id_find_debuginfo(m, &none, path, 0, path, NULL, 0, &name);
    if (fd < 0)
        fd = fetch(fs, path, id, idlen, &name); /* into the client's cache */
    if (fd >= 0)
        close(fd);
    free(name);
}
