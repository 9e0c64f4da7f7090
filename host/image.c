/* image.c - a process's (or a file's) ELF objects and their symbols. */
#define _GNU_SOURCE
#include "image.h"
#include "types.h"

#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The image's libdwfl callbacks.  Separate debug files are looked for where
 * libdwfl does by default (the file's directory, its .debug, /usr/lib/debug,
 * by debuglink and build id) unless $MQD_DEBUGINFO_PATH gives another, in
 * elfutils' format (as eu-stack --debuginfo-path).  Kept in the image: the
 * Dwfl points at them for its whole life.
 */
static void set_callbacks(struct mqdh_image *im, int offline)
{
    const char *env = getenv("MQD_DEBUGINFO_PATH");
    im->debuginfo_path = env && *env ? (char *)env : NULL;
    im->callbacks = (Dwfl_Callbacks){
        .find_elf = offline ? dwfl_build_id_find_elf : dwfl_linux_proc_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .section_address = offline ? dwfl_offline_section_address : NULL,
        .debuginfo_path = &im->debuginfo_path,
    };
}

struct collect {
    struct mqdh_image *im;
    int overflow;
};

static int collect_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
                          void *arg)
{
    (void)userdata;
    (void)name;
    (void)base;
    struct collect *c = arg;
    if (c->im->nmods == MQDH_MAX_MODULES) {
        c->overflow = 1;
        return DWARF_CB_ABORT;
    }
    c->im->mods[c->im->nmods++] = mod;
    return DWARF_CB_OK;
}

/* Order: the executable first, then by load address (the usual load order). */
static int module_order(const void *a, const void *b, void *exe)
{
    Dwfl_Module *ma = *(Dwfl_Module *const *)a, *mb = *(Dwfl_Module *const *)b;
    const char *na, *nb;
    Dwarf_Addr sa, sb;
    na = dwfl_module_info(ma, NULL, &sa, NULL, NULL, NULL, NULL, NULL);
    nb = dwfl_module_info(mb, NULL, &sb, NULL, NULL, NULL, NULL, NULL);
    int ea = na && strcmp(na, exe) == 0, eb = nb && strcmp(nb, exe) == 0;
    if (ea != eb)
        return eb - ea;
    return sa < sb ? -1 : sa > sb;
}

/* Sort the modules and read the target description from the executable. */
static int finish(struct mqdh_image *im, char *err, size_t errlen)
{
    struct collect c = {im, 0};
    if (dwfl_getmodules(im->dwfl, collect_module, &c, 0) != 0 && !c.overflow) {
        snprintf(err, errlen, "cannot list the objects: %s", dwfl_errmsg(-1));
        return -EIO;
    }
    if (c.overflow) {
        snprintf(err, errlen, "more than %d objects loaded", MQDH_MAX_MODULES);
        return -E2BIG;
    }
    if (im->nmods == 0) {
        snprintf(err, errlen, "no ELF objects found");
        return -ENOENT;
    }
    qsort_r(im->mods, (size_t)im->nmods, sizeof im->mods[0], module_order, im->exe_path);
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(im->mods[0], &bias);
    GElf_Ehdr eh;
    if (!elf || !gelf_getehdr(elf, &eh)) {
        snprintf(err, errlen, "cannot read the ELF header of %s: %s", im->exe_path,
                 dwfl_errmsg(-1));
        return -EIO;
    }
    im->elf_class = eh.e_ident[EI_CLASS];
    im->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
    return 0;
}

int mqdh_image_open_pid(struct mqdh_image *im, pid_t pid, char *err, size_t errlen)
{
    char link[64];
    memset(im, 0, sizeof *im);
    im->pid = pid;
    snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(link, im->exe_path, sizeof im->exe_path - 1);
    if (n <= 0) {
        int e = errno == ENOENT ? ESRCH : errno;
        snprintf(err, errlen, "cannot read %s: %s", link, strerror(e));
        return -e;
    }
    im->exe_path[n] = '\0';
    set_callbacks(im, 0);
    im->dwfl = dwfl_begin(&im->callbacks);
    if (!im->dwfl) {
        snprintf(err, errlen, "libdwfl: %s", dwfl_errmsg(-1));
        return -ENOMEM;
    }
    int rc = dwfl_linux_proc_report(im->dwfl, pid);
    if (rc != 0 || dwfl_report_end(im->dwfl, NULL, NULL) != 0) {
        snprintf(err, errlen, "cannot read the memory map of process %d: %s", (int)pid,
                 rc > 0 ? strerror(rc) : dwfl_errmsg(-1));
        mqdh_image_close(im);
        return rc > 0 ? -rc : -EIO;
    }
    rc = finish(im, err, errlen);
    if (rc)
        mqdh_image_close(im);
    return rc;
}

int mqdh_image_open_file(struct mqdh_image *im, const char *path, char *err, size_t errlen)
{
    memset(im, 0, sizeof *im);
    if (!realpath(path, im->exe_path)) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    set_callbacks(im, 1);
    im->dwfl = dwfl_begin(&im->callbacks);
    if (!im->dwfl) {
        snprintf(err, errlen, "libdwfl: %s", dwfl_errmsg(-1));
        return -ENOMEM;
    }
    /* Base 0, no p_vaddr added: symbol addresses as the file states them. */
    if (!dwfl_report_elf(im->dwfl, im->exe_path, im->exe_path, -1, 0, false) ||
        dwfl_report_end(im->dwfl, NULL, NULL) != 0) {
        snprintf(err, errlen, "%s: not a usable ELF file: %s", path, dwfl_errmsg(-1));
        mqdh_image_close(im);
        return -EINVAL;
    }
    int rc = finish(im, err, errlen);
    if (rc)
        mqdh_image_close(im);
    return rc;
}

void mqdh_image_close(struct mqdh_image *im)
{
    mqdh_types_free_all(im);
    if (im->dwfl)
        dwfl_end(im->dwfl);
    im->dwfl = NULL;
    im->nmods = 0;
}

static int search_module(Dwfl_Module *mod, const char *name, int functions_only, int want_local,
                         uint64_t *addr)
{
    int n = dwfl_module_getsymtab(mod);
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr value;
        GElf_Word shndx;
        const char *sname =
            dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, NULL, NULL);
        if (!sname || strcmp(sname, name) != 0 || sym.st_shndx == SHN_UNDEF)
            continue;
        int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
        if (functions_only && type != STT_FUNC && type != STT_GNU_IFUNC)
            continue;
        if (type == STT_SECTION || type == STT_FILE || type == STT_TLS)
            continue;
        if ((bind == STB_LOCAL) != want_local)
            continue;
        *addr = value;
        return 0;
    }
    return -ENOENT;
}

int mqdh_image_symbol(struct mqdh_image *im, const char *name, int functions_only,
                      uint64_t *addr, const char **module)
{
    for (int local = 0; local <= 1; local++) {
        for (int m = 0; m < im->nmods; m++) {
            if (search_module(im->mods[m], name, functions_only, local, addr) == 0) {
                if (module)
                    *module = dwfl_module_info(im->mods[m], NULL, NULL, NULL, NULL, NULL,
                                               NULL, NULL);
                return 0;
            }
        }
    }
    return -ENOENT;
}
