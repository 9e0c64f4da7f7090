/*
 * choose.c - which DLL dumps a process, and why.
 *
 * The order DESIGN.md gives: the caller's (--dll), $MQD_DLL, mqd's own for
 * an MPI it ships one for (MPICH: libmqd_mpich.so, Open MPI: libmqd_ompi.so,
 * each found beside this library), then the ones the target names, under the trust
 * rule (loader.h), which also holds for the caller's and $MQD_DLL when
 * running as root, unless --trust-target-dll.  Each is opened as it is
 * checked and loaded from that descriptor.
 */
#define _GNU_SOURCE
#include "protocol/choose.h"
#include "protocol/callbacks.h"

#include "base/array.h"
#include "base/beside.h"
#include "base/dump.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_TARGET_DLLS = 64, DLL_PATH_MAX = 4096 };

/* The DLL paths a target names. */
struct names {
    int n, cap;
    char **v;
};

static void names_free(struct names *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

/* Add the string at addr in p's memory, if it reads and is not empty. */
static int names_add(struct names *l, struct target *p, uint64_t addr)
{
    char *s = malloc(DLL_PATH_MAX);
    if (!s || MQDH__GROW(l->v, l->cap, l->n + 1) != 0) {
        free(s);
        return MQDH_E_NOMEM;
    }
    if (mqdh__mem_read_string(&p->mem, addr, s, DLL_PATH_MAX) == 0 && s[0])
        l->v[l->n++] = s;
    else
        free(s);
    return MQDH_OK;
}

/*
 * The DLLs the target names: MPIR_dll_name (MPICH and most MPIs), then each
 * entry of Open MPI's NULL-terminated char **mpimsgq_dll_locations.
 */
static int target_dlls(struct target *p, struct names *l)
{
    uint64_t addr, list, entry;
    int rc;
    if (mqdh__image_symbol(&p->elf, "MPIR_dll_name", 0, &addr, NULL) == 0 &&
        (rc = names_add(l, p, addr)) != MQDH_OK)
        return rc;
    int ptr_size = p->elf.elf_class == 2 ? 8 : 4;
    int be = p->elf.big_endian;
    if (mqdh__image_symbol(&p->elf, "mpimsgq_dll_locations", 0, &addr, NULL) != 0 ||
        mqdh__mem_read_word(&p->mem, addr, ptr_size, be, &list) != 0)
        return MQDH_OK;
    for (int i = 0; list && i < MAX_TARGET_DLLS; i++) {
        if (mqdh__mem_read_word(&p->mem, list + (uint64_t)i * (uint64_t)ptr_size, ptr_size, be,
                               &entry) != 0 ||
            !entry)
            break;
        if ((rc = names_add(l, p, entry)) != MQDH_OK)
            return rc;
    }
    return MQDH_OK;
}

/*
 * Is this a process of an MPI mqd ships a DLL for?  MPICH (and the MPIs
 * built from it) is known by its symbols, not by the name of the DLL it
 * names: the communicator list of a build with debugger support, else the
 * version strings every MPICH build has.  The symbol found goes in why.
 */
static int is_mpich(struct target *p, const char **why)
{
    static const char *const marks[] = {"MPIR_All_communicators", "MPII_Version_device"};
    uint64_t a;
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        if (mqdh__image_symbol(&p->elf, marks[i], 0, &a, NULL) == 0) {
            *why = marks[i];
            return 1;
        }
    }
    return 0;
}

/*
 * Is this an Open MPI process?  Known by the communicator table every
 * Open MPI exports (ompi/communicator/communicator.h), which its own
 * debug DLL and mqd's libmqd_ompi.so both start from.
 */
static int is_ompi(struct target *p, const char **why)
{
    uint64_t a;
    if (mqdh__image_symbol(&p->elf, "ompi_mpi_communicators", 0, &a, NULL) != 0)
        return 0;
    *why = "ompi_mpi_communicators";
    return 1;
}

/* mqd's own DLL for MPICH (ompi 0) or Open MPI (1) installed beside this
 * library, looked up once per session; NULL if it is not. */
static const char *own_dll(struct session *s, int ompi)
{
    static const char *const where[] = {"libmqd_ompi.so", "../lib/libmqd_ompi.so"};
    if (!s->own[ompi].state) {
        char *path = s->own[ompi].path;
        int found = ompi ? mqdh__beside_library(where, 2, R_OK, path, PATH_MAX) == 0
                         : mqdh_own_dll(path, PATH_MAX) == MQDH_OK;
        s->own[ompi].state = found ? 1 : -1;
    }
    return s->own[ompi].state > 0 ? s->own[ompi].path : NULL;
}

static void set_dll(struct target *p, const char *path, enum mqdh_dll_source src, const char *fmt,
                    ...) __attribute__((format(printf, 4, 5)));

static void set_dll(struct target *p, const char *path, enum mqdh_dll_source src, const char *fmt,
                    ...)
{
    va_list ap;
    free(p->out->dll);
    free(p->out->dll_why);
    p->out->dll = strdup(path);
    p->out->dll_source = src;
    va_start(ap, fmt);
    if (vasprintf(&p->out->dll_why, fmt, ap) < 0)
        p->out->dll_why = NULL;
    va_end(ap);
}

/*
 * The DLL at path, opened under trust and loaded: once per session and
 * path, whatever the number of processes that name it (every rank of a
 * job does).  The record of how it went, or NULL without memory.
 */
static const struct mqdh__chosen *open_once(struct target *p, const char *path,
                                            enum mqdh__dll_trust trust)
{
    struct session *s = p->session;
    for (int i = 0; i < s->nchosen; i++)
        if (s->chosen[i].trust == (int)trust && strcmp(s->chosen[i].path, path) == 0)
            return &s->chosen[i];
    if (MQDH__GROW(s->chosen, s->chosen_cap, s->nchosen + 1) != 0)
        return NULL;
    struct mqdh__chosen *c = &s->chosen[s->nchosen];
    *c = (struct mqdh__chosen){.path = strdup(path), .trust = (int)trust};
    if (!c->path)
        return NULL;
    struct mqdh__dll_file f = MQDH__DLL_FILE_INIT;
    c->rc = mqdh__dll_open(path, trust, &f, c->why, sizeof c->why);
    if (c->rc == MQDH_OK) {
        c->opened = 1;
        c->rc = mqdh__dll_load_file(&f, path, &mqdh__basic_callbacks, &c->dll, c->why,
                                    sizeof c->why);
    }
    s->nchosen++;
    return c;
}

void mqdh__chosen_free(struct session *s)
{
    for (int i = 0; i < s->nchosen; i++)
        free(s->chosen[i].path);
    free(s->chosen);
    s->chosen = NULL;
    s->nchosen = s->chosen_cap = 0;
}

/*
 * The first DLL the target names that can be opened and passes the trust
 * rule (any, with --trust-target-dll): its record (open_once).
 */
static int choose_named(struct target *p, int mpich, int want_own, const char *own_name,
                        const struct mqdh__chosen **chosen)
{
    const struct mqdh_options *opt = p->session->opt;
    enum mqdh__dll_trust trust = opt->trust_target_dll ? MQDH__DLL_TRUST_ANY : MQDH__DLL_TRUST_RULE;
    struct names l = {0};
    const char *first_why = "";
    int rc = target_dlls(p, &l);
    if (rc != MQDH_OK)
        goto out;
    if (l.n == 0) {
        mqdh__process_error(p->out,
                            "no debug DLL: the process names none in MPIR_dll_name or "
                            "mpimsgq_dll_locations (not an MPI program, or an MPI built without "
                            "debugger support)%s%s%s and none was given with --dll",
                            want_own ? ", mqd's own " : "", want_own ? own_name : "",
                            want_own ? " is not installed next to libmqdhost," : "");
        rc = MQDH_E_NO_DLL;
        goto out;
    }
    int chosen_at = -1, first_rc = MQDH_OK;
    for (int i = 0; i < l.n && chosen_at < 0; i++) {
        /* Opened as checked: the file loaded is this one, whatever the
         * name points to by then. */
        const struct mqdh__chosen *c = open_once(p, l.v[i], trust);
        if (!c) {
            rc = MQDH_E_NOMEM;
            goto out;
        }
        if (c->opened) {
            chosen_at = i;
            *chosen = c;
        } else if (!first_why[0]) {
            first_why = c->why;
            first_rc = c->rc;
        }
    }
    if (chosen_at < 0 && first_rc == MQDH_E_DLL_UNTRUSTED) {
        mqdh__process_error(p->out,
                            "refusing the debug DLL the process names: %s (pass --dll to "
                            "choose one, or --trust-target-dll)",
                            first_why);
        rc = MQDH_E_DLL_UNTRUSTED;
        goto out;
    }
    if (chosen_at < 0) { /* not there (an MPI moved since it was built), or no DLL */
        mqdh__process_error(p->out,
                            "cannot load the debug DLL the process names: %s (pass --dll to "
                            "choose one)",
                            first_why);
        rc = first_rc;
        goto out;
    }
    set_dll(p, l.v[chosen_at], MQDH_DLL_TARGET, "named by the process%s%s%s",
            want_own ? "; mqd's own " : mpich ? ", as --target-dll asks" : "",
            want_own ? own_name : "", want_own ? " is not installed next to libmqdhost" : "");
out:
    names_free(&l);
    return rc;
}

/*
 * The DLL the user gave (--dll, $MQD_DLL): as given, except that as root
 * one that fails the trust rule is refused unless --trust-target-dll says
 * to load it anyway (loader.h).  Its record (open_once).
 */
static int open_given(struct target *p, const char *path, const char *how,
                      const struct mqdh__chosen **chosen)
{
    enum mqdh__dll_trust trust =
        p->session->opt->trust_target_dll ? MQDH__DLL_TRUST_ANY : MQDH__DLL_TRUST_GIVEN;
    const struct mqdh__chosen *c = open_once(p, path, trust);
    if (!c)
        return MQDH_E_NOMEM;
    *chosen = c;
    if (c->opened)
        return MQDH_OK;
    if (c->rc == MQDH_E_DLL_UNTRUSTED)
        mqdh__process_error(p->out, "refusing the debug DLL %s: %s", how, c->why);
    else
        mqdh__process_error(p->out, "%s", c->why);
    return c->rc;
}

int mqdh__choose_dll(struct target *p)
{
    struct session *s = p->session;
    const struct mqdh_options *opt = s->opt;
    const char *env = getenv("MQD_DLL"), *mark = NULL;
    int mpich = is_mpich(p, &mark);
    int ompi = !mpich && is_ompi(p, &mark);
    int want_own = (mpich || ompi) && !opt->target_dll, rc;
    const struct mqdh__chosen *c = NULL;
    const char *own = NULL;
    if (opt->dll) {
        set_dll(p, opt->dll, MQDH_DLL_OPTION, "given with --dll");
        rc = open_given(p, opt->dll, "given with --dll", &c);
    } else if (env && *env) {
        set_dll(p, env, MQDH_DLL_ENVIRONMENT, "given in $MQD_DLL");
        rc = open_given(p, env, "given in $MQD_DLL", &c);
    } else if (want_own && (own = own_dll(s, ompi))) {
        set_dll(p, own, MQDH_DLL_OWN, "mqd's DLL for %s: the process has %s",
                ompi ? "Open MPI" : "MPICH", mark);
        /* Beside the library that runs this: as trusted as that is. */
        c = open_once(p, own, MQDH__DLL_TRUST_ANY);
        rc = !c ? MQDH_E_NOMEM : c->opened ? MQDH_OK : c->rc;
        if (c && !c->opened)
            mqdh__process_error(p->out, "%s", c->why);
    } else {
        rc = choose_named(p, mpich || ompi, want_own,
                          mpich ? "libmqd_mpich.so" : "libmqd_ompi.so", &c);
    }
    if (rc != MQDH_OK)
        return rc;
    if (!p->out->dll)
        return MQDH_E_NOMEM;
    if (c->rc != MQDH_OK) { /* opened, but not loaded */
        mqdh__process_error(p->out, "%s", c->why);
        return c->rc;
    }
    p->dll = c->dll;
    return MQDH_OK;
}
