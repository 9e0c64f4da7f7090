/*
 * gen_stock_syms.c - where a stripped library keeps hidden globals, from
 * its own code: for mpich_defs/gen-stock.sh.
 *
 *   gen_stock_syms LIBRARY OBJECT... -- SYMBOL...
 *
 * Each OBJECT is a source file of the library compiled again as its build
 * compiled it (Debian's flags, -fPIC -DPIC as libtool does for a shared
 * library).  Each of its functions that refers to a wanted SYMBOL is
 * looked for in LIBRARY's executable segment: its bytes, with every
 * relocated field left open, must occur exactly once.  A global declared
 * without visibility is reached through the GOT in the object (a
 * REX_GOTPCRELX load), which the linker relaxes into a PC-relative lea for
 * a hidden symbol: that opcode byte is left open too, and only a
 * reference relaxed so (an lea, 0x8d) counts.  There, a reference's 32-bit
 * displacement d at address P and the object's addend A give the
 * referenced symbol, or the start of the object's section holding it (a
 * static), as P + d - A (the instruction's length cancels out).  Prints
 * "SYMBOL 0xADDRESS N" for each SYMBOL found, N the references that agree
 * on it (and on stderr how many functions were found), and exits 1 if one
 * was not found or two references disagree.
 * Only x86-64 ELF.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The library's executable segment: its bytes and where they load. */
struct text {
    unsigned char *bytes;
    size_t len;
    uint64_t vaddr;
};

/* A wanted symbol: the addresses found for it, and how many agree. */
struct want {
    const char *name;
    uint64_t addr;
    int votes, conflicts;
};

/* The wanted symbols; the functions that refer to one, and how many of them
 * were found once in the library, nowhere, or more than once. */
struct search {
    const struct text *text;
    struct want *w;
    int nw;
    int refer, once, none, many;
};

static Elf *open_elf(const char *path, int *fd)
{
    *fd = open(path, O_RDONLY);
    Elf *e = *fd >= 0 ? elf_begin(*fd, ELF_C_READ, NULL) : NULL;
    if (!e)
        fprintf(stderr, "gen_stock_syms: cannot read %s\n", path);
    return e;
}

/* The first executable PT_LOAD segment of lib, read from its file. */
static int load_text(const char *path, struct text *t)
{
    int fd;
    Elf *e = open_elf(path, &fd);
    size_t n;
    if (!e || elf_getphdrnum(e, &n) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
            continue;
        t->bytes = malloc(ph.p_filesz);
        t->len = ph.p_filesz;
        t->vaddr = ph.p_vaddr;
        if (!t->bytes || pread(fd, t->bytes, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
            return -1;
        break;
    }
    elf_end(e);
    close(fd);
    return t->bytes ? 0 : -1;
}

/* Where pattern (len bytes, open[i] set where any byte will do) occurs in
 * t: the one offset, or -1 if none, -2 if more than one. */
static long find_once(const struct text *t, const unsigned char *pat, const unsigned char *open,
                      size_t len)
{
    size_t run = 0, best = 0, at = 0; /* the longest fixed run: the search's anchor */
    for (size_t i = 0, start = 0; i <= len; i++) {
        if (i == len || open[i]) {
            if (i - start > run) {
                run = i - start;
                best = start;
            }
            start = i + 1;
        }
    }
    if (run < 8)
        return -2; /* too little to be sure of */
    long found = -1;
    for (const unsigned char *p = t->bytes; p < t->bytes + t->len - run;) {
        const unsigned char *hit = memmem(p, (size_t)(t->bytes + t->len - p), pat + best, run);
        if (!hit)
            break;
        p = hit + 1;
        if ((size_t)(hit - t->bytes) < best || (size_t)(hit - t->bytes) - best + len > t->len)
            continue;
        at = (size_t)(hit - t->bytes) - best;
        size_t k = 0;
        while (k < len && (open[k] || t->bytes[at + k] == pat[k]))
            k++;
        if (k < len)
            continue;
        if (found >= 0)
            return -2;
        found = (long)at;
    }
    return found;
}

/* The relocations of section sec of object e, and its symbols. */
struct obj {
    Elf *e;
    Elf_Data *syms, *text;
    size_t strndx, textndx;
    Elf_Data *rela;
    size_t nrela;
};

/* A relocation of the kinds globals are reached by: PC-relative (1), or a
 * relaxable GOT load (2); else 0. */
static int data_reloc(const GElf_Rela *r)
{
    switch (ELF64_R_TYPE(r->r_info)) {
    case R_X86_64_PC32:
        return 1;
    case R_X86_64_GOTPCRELX:
    case R_X86_64_REX_GOTPCRELX:
        return 2;
    }
    return 0;
}

/* The name a relocation's symbol stands for at addend a: the symbol itself,
 * or for a section symbol the object's symbol in that section at
 * [value, value + size) holding a + 4 (the referenced offset, for the
 * loads and address computations globals are reached by). */
static const char *target_name(const struct obj *o, GElf_Sym *s, int64_t a, int64_t *base)
{
    const char *name = elf_strptr(o->e, o->strndx, s->st_name);
    *base = 0;
    if (GELF_ST_TYPE(s->st_info) != STT_SECTION)
        return name;
    size_t n = o->syms->d_size / sizeof(Elf64_Sym);
    for (size_t i = 0; i < n; i++) {
        GElf_Sym v;
        if (!gelf_getsym(o->syms, (int)i, &v) || v.st_shndx != s->st_shndx ||
            GELF_ST_TYPE(v.st_info) != STT_OBJECT)
            continue;
        if (a + 4 >= (int64_t)v.st_value && a + 4 < (int64_t)(v.st_value + v.st_size)) {
            *base = (int64_t)v.st_value;
            return elf_strptr(o->e, o->strndx, v.st_name);
        }
    }
    return NULL;
}

/* Function f of object o (size bytes at value in its .text): look for it
 * in t, and vote for the wanted symbols it refers to. */
static void one_function(const struct obj *o, const GElf_Sym *f, struct search *q)
{
    const struct text *t = q->text;
    struct want *w = q->w;
    int nw = q->nw;
    const unsigned char *code = (const unsigned char *)o->text->d_buf + f->st_value;
    unsigned char *open = calloc(f->st_size, 1);
    int refers = 0;
    for (size_t i = 0; open && i < o->nrela; i++) {
        GElf_Rela r;
        GElf_Sym s;
        int64_t base;
        if (!gelf_getrela(o->rela, (int)i, &r) || r.r_offset < f->st_value ||
            r.r_offset + 4 > f->st_value + f->st_size)
            continue;
        memset(open + (r.r_offset - f->st_value), 1, 4);
        if (data_reloc(&r) == 2 && r.r_offset >= f->st_value + 2)
            open[r.r_offset - f->st_value - 2] = 1; /* mov -> lea, relaxed */
        if (!data_reloc(&r) || !gelf_getsym(o->syms, (int)ELF64_R_SYM(r.r_info), &s))
            continue;
        const char *name = target_name(o, &s, r.r_addend, &base);
        for (int k = 0; name && k < nw; k++)
            refers |= strcmp(name, w[k].name) == 0;
    }
    long at = refers ? find_once(t, code, open, f->st_size) : -1;
    q->refer += refers;
    q->once += refers && at >= 0;
    q->none += refers && at == -1;
    q->many += refers && at == -2;
    for (size_t i = 0; at >= 0 && i < o->nrela; i++) {
        GElf_Rela r;
        GElf_Sym s;
        int64_t base;
        if (!gelf_getrela(o->rela, (int)i, &r) || r.r_offset < f->st_value ||
            r.r_offset + 4 > f->st_value + f->st_size || !data_reloc(&r) ||
            !gelf_getsym(o->syms, (int)ELF64_R_SYM(r.r_info), &s))
            continue;
        const char *name = target_name(o, &s, r.r_addend, &base);
        size_t off = (size_t)at + (r.r_offset - f->st_value);
        if (data_reloc(&r) == 2 && (off < 2 || t->bytes[off - 2] != 0x8d))
            continue; /* still a GOT load: the slot, not the symbol */
        int32_t d;
        memcpy(&d, t->bytes + off, 4);
        uint64_t p = t->vaddr + off, sym = (uint64_t)((int64_t)p + d - r.r_addend + base);
        for (int k = 0; name && k < nw; k++) {
            if (strcmp(name, w[k].name) != 0)
                continue;
            if (w[k].votes && w[k].addr != sym)
                w[k].conflicts++;
            w[k].addr = sym;
            w[k].votes++;
        }
    }
    free(open);
}

/* Every function of the object at path. */
static int one_object(const char *path, struct search *q)
{
    int fd;
    struct obj o = {0};
    o.e = open_elf(path, &fd);
    if (!o.e)
        return -1;
    Elf_Scn *scn = NULL, *symscn = NULL;
    size_t shstrndx = 0;
    elf_getshdrstrndx(o.e, &shstrndx);
    while ((scn = elf_nextscn(o.e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *nm = elf_strptr(o.e, shstrndx, sh.sh_name);
        if (sh.sh_type == SHT_SYMTAB) {
            symscn = scn;
            o.strndx = sh.sh_link;
        } else if (nm && strcmp(nm, ".text") == 0) {
            o.text = elf_getdata(scn, NULL);
            o.textndx = elf_ndxscn(scn);
        } else if (nm && strcmp(nm, ".rela.text") == 0) {
            o.rela = elf_getdata(scn, NULL);
            o.nrela = sh.sh_size / sh.sh_entsize;
        }
    }
    if (!symscn || !o.text || !o.rela) {
        elf_end(o.e);
        close(fd);
        return -1;
    }
    o.syms = elf_getdata(symscn, NULL);
    size_t n = o.syms->d_size / sizeof(Elf64_Sym);
    for (size_t i = 0; i < n; i++) {
        GElf_Sym f;
        if (gelf_getsym(o.syms, (int)i, &f) && GELF_ST_TYPE(f.st_info) == STT_FUNC &&
            f.st_shndx == o.textndx && f.st_size > 0)
            one_function(&o, &f, q);
    }
    elf_end(o.e);
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    int sep = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0)
            sep = i;
    if (argc < 5 || sep < 3 || sep == argc - 1) {
        fprintf(stderr, "usage: gen_stock_syms LIBRARY OBJECT... -- SYMBOL...\n");
        return 64;
    }
    elf_version(EV_CURRENT);
    struct text t = {0};
    if (load_text(argv[1], &t) != 0)
        return 1;
    int nw = argc - sep - 1, bad = 0;
    struct want *w = calloc((size_t)nw, sizeof *w);
    if (!w)
        return 1;
    for (int k = 0; k < nw; k++)
        w[k].name = argv[sep + 1 + k];
    struct search q = {.text = &t, .w = w, .nw = nw};
    for (int i = 2; i < sep; i++)
        if (one_object(argv[i], &q) != 0)
            fprintf(stderr, "gen_stock_syms: %s: no .text, .rela.text or symbols\n", argv[i]);
    fprintf(stderr, "gen_stock_syms: %d functions refer to them: %d found once in %s, %d "
            "nowhere, %d more than once (or too short to tell)\n", q.refer, q.once, argv[1],
            q.none, q.many);
    for (int k = 0; k < nw; k++) {
        if (!w[k].votes || w[k].conflicts) {
            fprintf(stderr, "gen_stock_syms: %s: %s\n", w[k].name,
                    w[k].votes ? "references disagree" : "no reference found");
            bad = 1;
            continue;
        }
        printf("%s 0x%llx %d\n", w[k].name, (unsigned long long)w[k].addr, w[k].votes);
    }
    return bad;
}
