/* dynmem.c - ELF objects described from a process's memory (dynmem.h). */
#define _GNU_SOURCE
#include "target/dynmem.h"
#include "base/array.h"

#include <elf.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* Bounds past which a table is not taken from memory (the file says). */
#define HEAD_BYTES 4096u
#define DYNAMIC_MAX (64u << 10)
#define STRTAB_MAX (32u << 20)
#define HASH_MAX (16u << 20)
#define IMPORTS_MAX (1u << 20)

/* One object's progress through the reads. */
struct obj {
    struct mqdh__file *f;
    uint64_t low, first_end, bias;
    uint64_t dyn_at, dyn_len;                     /* PT_DYNAMIC, in the process */
    uint64_t strtab, strsz, gnu_hash, symtab, syment; /* its tags, in the process */
    uint64_t *needed; /* DT_NEEDED's offsets into strtab */
    int nneeded, needed_cap, has_soname;
    uint64_t soname;
    unsigned char *head, *dyn, *str, *hash, *syms;
    size_t nhead, nhash, nsyms;
    uint32_t ghdr[4];
    /* Which reads went whole, and whether the object is still worth the
     * next (0: what is known of it is kept, the rest left to the file). */
    char got_head, got_dyn, got_str, got_ghdr, got_hash, got_syms, going;
};

/* A buffer to read into, where from, and the flag a whole read sets. */
struct want {
    void *to;
    uint64_t from, len;
    char *got;
};

/*
 * Read every want whole, in as few process_vm_readv calls as the memory
 * allows: one for all, and one more after each that fails or reads part
 * (the kernel stops there, and that want is not got).  Returns the calls
 * made.
 */
static int read_wants(pid_t pid, const struct want *w, int n)
{
    enum { BATCH = 256 }; /* within IOV_MAX, 8 KB of stack */
    int calls = 0;
    struct iovec loc[BATCH], rem[BATCH];
    for (int i = 0; i < n;) {
        int k = 0;
        for (; k < BATCH && i + k < n; k++) {
            loc[k] = (struct iovec){w[i + k].to, (size_t)w[i + k].len};
            rem[k] = (struct iovec){(void *)(uintptr_t)w[i + k].from, (size_t)w[i + k].len};
        }
        ssize_t got = process_vm_readv(pid, loc, (unsigned long)k, rem, (unsigned long)k, 0);
        calls++;
        size_t left = got > 0 ? (size_t)got : 0;
        int j = 0;
        for (; j < k && left >= loc[j].iov_len; j++) {
            left -= loc[j].iov_len;
            *w[i + j].got = 1;
        }
        i += j < k ? j + 1 : k; /* past the one that failed */
    }
    return calls;
}

/* ---------------------------------------------------------------- stage 1 */

/* Its extent from its ELF and program headers: 1 described (usable or
 * not), 0 left to the file; the dynamic section's place into o. */
static int take_head(struct obj *o)
{
    Elf64_Ehdr eh;
    struct mqdh__file *f = o->f;
    if (o->nhead < sizeof eh)
        return 0;
    memcpy(&eh, o->head, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) { /* its offset 0: not ELF */
        f->described = 1;
        return 1;
    }
    int native = eh.e_ident[EI_DATA] == (BYTE_ORDER == LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || !native || eh.e_phentsize != sizeof(Elf64_Phdr) ||
        eh.e_phnum == PN_XNUM || eh.e_phoff > o->nhead ||
        (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > o->nhead - eh.e_phoff)
        return 0;
    f->described = 1;
    if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
        return 1;
    struct mqdh__extent x = {0, 0, 0};
    for (int i = 0; i < eh.e_phnum; i++) {
        GElf_Phdr ph; /* Elf64_Phdr */
        memcpy(&ph, o->head + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
        if (ph.p_type == PT_DYNAMIC) {
            o->dyn_at = ph.p_vaddr;
            o->dyn_len = ph.p_memsz;
        }
        mqdh__extent_add(&x, &ph);
    }
    if (!x.loads || x.end <= x.vaddr)
        return 1; /* no load segment: not usable */
    f->vaddr = x.vaddr;
    f->span = x.end - x.vaddr;
    f->usable = 1;
    o->bias = o->low - x.vaddr;
    o->dyn_at += o->bias;
    return 1;
}

/* ---------------------------------------------------------------- stage 2 */

/* v, an address of the object's dynamic section, as the process has it:
 * relocated in place by the loader, or a file address.  0, or -1 if it
 * is neither, or could be either. */
static int in_process(const struct obj *o, uint64_t v, uint64_t *out)
{
    uint64_t lo = o->f->vaddr, span = o->f->span;
    int file = v - lo < span, process = v - o->bias - lo < span;
    if (o->bias == 0 ? !file : file == process)
        return -1;
    *out = process ? v : v + o->bias;
    return 0;
}

/* Its tags from its dynamic section: 0, or -1 (left to the file). */
static int take_dynamic(struct obj *o)
{
    uint64_t strtab = 0, gnu_hash = 0, symtab = 0;
    o->syment = sizeof(Elf64_Sym);
    for (size_t at = 0; at + sizeof(Elf64_Dyn) <= o->dyn_len; at += sizeof(Elf64_Dyn)) {
        Elf64_Dyn d;
        memcpy(&d, o->dyn + at, sizeof d);
        if (d.d_tag == DT_NULL)
            break;
        switch (d.d_tag) {
        case DT_NEEDED:
            if (MQDH__GROW(o->needed, o->needed_cap, o->nneeded + 1) != 0)
                return -1;
            o->needed[o->nneeded++] = d.d_un.d_val;
            break;
        case DT_SONAME:
            o->soname = d.d_un.d_val;
            o->has_soname = 1;
            break;
        case DT_STRTAB: strtab = d.d_un.d_ptr; break;
        case DT_STRSZ: o->strsz = d.d_un.d_val; break;
        case DT_GNU_HASH: gnu_hash = d.d_un.d_ptr; break;
        case DT_SYMTAB: symtab = d.d_un.d_ptr; break;
        case DT_SYMENT: o->syment = d.d_un.d_val; break;
        default: break;
        }
    }
    if (!strtab || o->strsz == 0 || o->strsz > STRTAB_MAX ||
        in_process(o, strtab, &o->strtab) != 0)
        return -1;
    if (gnu_hash && symtab && (in_process(o, gnu_hash, &o->gnu_hash) != 0 ||
                               in_process(o, symtab, &o->symtab) != 0))
        o->gnu_hash = o->symtab = 0;
    return 0;
}

/* ---------------------------------------------------------------- stage 3 */

/* The string at offset off of its string table, or NULL. */
static const char *string_at(const struct obj *o, uint64_t off)
{
    if (off >= o->strsz || !memchr(o->str + off, '\0', (size_t)(o->strsz - off)))
        return NULL;
    return (const char *)o->str + off;
}

/* Its DT_SONAME and DT_NEEDED into its file: 0, or -1 (left to it). */
static int take_names(struct obj *o)
{
    struct mqdh__file *f = o->f;
    const char *soname = o->has_soname ? string_at(o, o->soname) : NULL;
    if (o->has_soname && !soname)
        return -1;
    for (int i = 0; i < o->nneeded; i++)
        if (!string_at(o, o->needed[i]))
            return -1;
    char **needed = o->nneeded > 0 ? calloc((size_t)o->nneeded, sizeof *needed) : NULL;
    char *so = soname ? strdup(soname) : NULL;
    int ok = (!o->nneeded || needed) && (!soname || so);
    for (int i = 0; ok && i < o->nneeded; i++)
        ok = (needed[i] = strdup(string_at(o, o->needed[i]))) != NULL;
    if (!ok) {
        for (int i = 0; needed && i < o->nneeded; i++)
            free(needed[i]);
        free(needed);
        free(so);
        return -1;
    }
    f->soname = so;
    f->needed = needed;
    f->nneeded = f->needed_cap = o->nneeded;
    f->dynamic_read = 1;
    return 0;
}

/* ---------------------------------------------------------------- stage 4 */

/* The .gnu.hash's extent from its header: the header, Bloom filter and
 * buckets, and the chains up to its .dynsym where that follows (the
 * link's order); 0 if it does not make sense. */
static uint64_t hash_len(const struct obj *o)
{
    uint64_t nbuckets = o->ghdr[0], bloom = o->ghdr[2];
    if (nbuckets == 0 || bloom == 0 || nbuckets > HASH_MAX / 4 || bloom > HASH_MAX / 8)
        return 0;
    uint64_t fixed = 16 + bloom * 8 + nbuckets * 4, chains = 0;
    if (o->symtab > o->gnu_hash + fixed)
        chains = o->symtab - (o->gnu_hash + fixed);
    if (chains > HASH_MAX)
        chains = HASH_MAX;
    return fixed + (chains & ~(uint64_t)3);
}

/* Its .gnu.hash and, from the symbols before the hashed ones (the
 * undefined: every linker puts them there), whether it imports a call
 * that reaches other worlds, into its file. */
static void take_tables(struct obj *o)
{
    struct mqdh__file *f = o->f;
    f->mem_hash = o->hash;
    f->mem_hash_len = o->nhash;
    o->hash = NULL;
    if (!o->got_syms)
        return;
    int found = 0;
    for (size_t i = 1; i < o->ghdr[1] && !found; i++) {
        Elf64_Sym s;
        memcpy(&s, o->syms + i * o->syment, sizeof s);
        const char *name = s.st_shndx == SHN_UNDEF ? string_at(o, s.st_name) : NULL;
        found = name && mqdh__name_reaches_worlds(name);
    }
    f->worlds = found + 2;
}

/* ---------------------------------------------------------------- the reads */

/* The wants of one stage for the objects still going. */
static int stage_wants(struct obj *objs, int n, int stage, struct want *w)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        struct obj *o = &objs[i];
        if (!o->going)
            continue;
        if (stage == 1) {
            o->nhead = (size_t)(o->first_end - o->low < HEAD_BYTES ? o->first_end - o->low
                                                                   : HEAD_BYTES);
            if ((o->head = malloc(HEAD_BYTES)))
                w[k++] = (struct want){o->head, o->low, o->nhead, &o->got_head};
        } else if (stage == 2) {
            if (o->dyn_len <= DYNAMIC_MAX && (o->dyn = malloc(o->dyn_len)))
                w[k++] = (struct want){o->dyn, o->dyn_at, o->dyn_len, &o->got_dyn};
        } else if (stage == 3) {
            if ((o->str = malloc(o->strsz)))
                w[k++] = (struct want){o->str, o->strtab, o->strsz, &o->got_str};
            if (o->gnu_hash)
                w[k++] = (struct want){o->ghdr, o->gnu_hash, sizeof o->ghdr, &o->got_ghdr};
        } else {
            o->nhash = (size_t)hash_len(o);
            o->nsyms = o->ghdr[1] <= IMPORTS_MAX && o->syment == sizeof(Elf64_Sym)
                           ? (size_t)o->ghdr[1] * sizeof(Elf64_Sym)
                           : 0;
            if (o->nhash && (o->hash = malloc(o->nhash)))
                w[k++] = (struct want){o->hash, o->gnu_hash, o->nhash, &o->got_hash};
            if (o->nsyms && (o->syms = malloc(o->nsyms)))
                w[k++] = (struct want){o->syms, o->symtab, o->nsyms, &o->got_syms};
        }
    }
    return k;
}

/* What the stage's reads tell of o; whether it goes on to the next. */
static int take_stage(struct obj *o, int stage)
{
    switch (stage) {
    case 1: /* a dynamic section to read next */
        return o->got_head && take_head(o) && o->f->usable && o->dyn_len > 0;
    case 2: /* a string table to read next */
        return o->got_dyn && take_dynamic(o) == 0;
    case 3: /* a .gnu.hash to read next */
        return o->got_str && take_names(o) == 0 && o->got_ghdr;
    default:
        if (o->got_hash)
            take_tables(o);
        return 0;
    }
}

int mqdh__dynmem_describe(pid_t pid, const struct mqdh__dynmem_req *reqs, int n)
{
    struct obj *objs = calloc((size_t)n + 1, sizeof *objs);
    struct want *w = calloc(2 * (size_t)n + 1, sizeof *w);
    int calls = 0, m = 0;
    for (int i = 0; objs && w && i < n; i++) {
        struct mqdh__file *f = reqs[i].f;
        int dup = 0;
        for (int j = 0; j < m && !dup; j++)
            dup = objs[j].f == f;
        if (!dup && !f->described && !f->opened && reqs[i].first_end > reqs[i].low)
            objs[m++] = (struct obj){.f = f, .low = reqs[i].low, .first_end = reqs[i].first_end,
                                     .going = 1};
    }
    for (int stage = 1; objs && w && stage <= 4; stage++) {
        int k = stage_wants(objs, m, stage, w);
        if (k == 0)
            break;
        calls += read_wants(pid, w, k);
        for (int i = 0; i < m; i++)
            if (objs[i].going)
                objs[i].going = (char)take_stage(&objs[i], stage);
    }
    for (int i = 0; objs && i < m; i++) {
        free(objs[i].needed);
        free(objs[i].head);
        free(objs[i].dyn);
        free(objs[i].str);
        free(objs[i].hash);
        free(objs[i].syms);
    }
    free(objs);
    free(w);
    return calls;
}
