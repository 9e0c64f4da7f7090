/* images.c - one mqs_image per program; see images.h. */
#define _GNU_SOURCE
#include "protocol/images.h"
#include "target/files.h"

#include <errno.h>

#include <stdlib.h>
#include <string.h>

static uint64_t key_hash(const struct mqdh__dll *dll, struct mqdh__file *const *files, int n)
{
    uint64_t h = 0xcbf29ce484222325u ^ (uint64_t)(uintptr_t)dll;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)(uintptr_t)files[i]) * 0x100000001b3u;
    return h ^ (h >> 31);
}

static int same_program(const struct dll_image *di, const struct mqdh__dll *dll,
                        struct mqdh__file *const *files, int n, uint64_t h)
{
    return di->hash == h && di->dll == dll && di->nfiles == n &&
           memcmp(di->files, files, (size_t)n * sizeof *files) == 0;
}

/* A new image for p's program, busy (p has it), kept in the session; NULL
 * if out of memory. */
static struct dll_image *add_image(struct session *s, struct target *p,
                                   struct mqdh__file **files, int n, uint64_t h)
{
    if (s->nimages == s->images_cap) {
        int cap = s->images_cap ? 2 * s->images_cap : 4;
        struct dll_image **v = realloc(s->images, (size_t)cap * sizeof *v);
        if (!v)
            return NULL;
        s->images = v;
        s->images_cap = cap;
    }
    struct dll_image *di = calloc(1, sizeof *di);
    if (!di)
        return NULL;
    *di = (struct dll_image){.owner = p, .dll = p->dll, .files = files, .nfiles = n,
                             .hash = h, .busy = 1};
    s->images[s->nimages++] = di;
    return di;
}

/* p's image alone: its own. */
static int own(struct target *p)
{
    p->own_image = (struct dll_image){.owner = p, .dll = p->dll};
    p->image = &p->own_image;
    return 1;
}

int mqdh__images_claim(struct target *p)
{
    struct session *s = p->session;
    int n = p->elf.nmods;
    /* Several workers at once: only mqd's own DLL may be called so. */
    if (n <= 0 || (s->workers > 1 && p->out->dll_source != MQDH_DLL_OWN))
        return own(p);
    struct mqdh__file **files = malloc((size_t)n * sizeof *files);
    if (!files)
        return own(p);
    for (int i = 0; i < n; i++)
        files[i] = p->elf.mods[i].file;
    uint64_t h = key_hash(p->dll, files, n);
    struct dll_image *di = NULL;
    int alone = 1;
    pthread_mutex_lock(&s->images_lock);
    for (int i = 0; i < s->nimages && !di; i++)
        if (same_program(s->images[i], p->dll, files, n, h))
            di = s->images[i];
    if (!di) {
        di = add_image(s, p, files, n, h);
        files = di ? NULL : files; /* the image's now */
    } else if (di->learned) {
        alone = 0;
    } else if (di->busy) {
        di = NULL; /* set up for another process now: p goes alone */
    } else {
        di->busy = 1;
        di->owner = p; /* the one that answers for it now */
    }
    pthread_mutex_unlock(&s->images_lock);
    free(files);
    if (!di)
        return own(p);
    p->image = di;
    return alone;
}

void mqdh__images_release(struct target *p, int learned)
{
    struct dll_image *di = p->image;
    if (di == &p->own_image)
        return;
    struct session *s = p->session;
    pthread_mutex_lock(&s->images_lock);
    di->learned = learned;
    di->busy = 0;
    pthread_mutex_unlock(&s->images_lock);
}

/* One answer of mqdh__images_symbol. */
struct image_symbol {
    char *name;
    uint32_t hash; /* mqdh__file_name_hash(name): most names are told apart by it */
    int functions; /* asked for a function */
    int mod;       /* the defining object's index in search order; -1: none */
    uint64_t at;   /* its address, less that object's bias */
};

/* The most answers an image keeps (a DLL asks a few dozen names). */
#define IMAGE_SYMBOLS 128

int mqdh__images_symbol(struct target *p, const char *name, int functions, uint64_t *addr)
{
    struct dll_image *di = p->image;
    if (!di || di == &p->own_image)
        return mqdh__image_symbol(&p->elf, name, functions, addr, NULL);
    /* The names a DLL asks share long prefixes ("MPIR_", "MPIDI_"), which
     * a string comparison walks for each answer kept: a hash first. */
    uint32_t hash = mqdh__file_name_hash(name);
    for (int i = 0; i < di->nsyms; i++) {
        const struct image_symbol *e = &di->syms[i];
        if (e->hash == hash && e->functions == functions && strcmp(e->name, name) == 0) {
            if (e->mod < 0)
                return -ENOENT;
            *addr = e->at + p->elf.mods[e->mod].bias;
            return 0;
        }
    }
    int mod = -1;
    int rc = mqdh__image_symbol(&p->elf, name, functions, addr, &mod);
    if (di->nsyms == IMAGE_SYMBOLS ||
        (!di->syms && !(di->syms = calloc(IMAGE_SYMBOLS, sizeof *di->syms))))
        return rc; /* answered, not kept */
    struct image_symbol *e = &di->syms[di->nsyms];
    if ((e->name = strdup(name))) {
        e->hash = hash;
        e->functions = functions;
        e->mod = rc == 0 ? mod : -1;
        e->at = rc == 0 ? *addr - p->elf.mods[mod].bias : 0;
        di->nsyms++;
    }
    return rc;
}

void mqdh__images_end(struct session *s)
{
    for (int i = 0; i < s->nimages; i++) {
        struct dll_image *di = s->images[i];
        /* Busy for good: its DLL gave up mid-way through it (images.h). */
        if (di->info && !di->busy && mqdh__dll_usable(di->dll))
            di->dll->destroy_image_info(di->info);
        for (int k = 0; k < di->nsyms; k++)
            free(di->syms[k].name);
        free(di->syms);
        free(di->files);
        free(di);
    }
    free(s->images);
    s->images = NULL;
    s->nimages = s->images_cap = 0;
}
