/* gnuhash.c - the .gnu.hash section as a filter of names (gnuhash.h). */
#include "target/gnuhash.h"

#include <stdint.h>
#include <string.h>

/* The GNU hash function (the dynamic loader's dl_new_hash). */
static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

/* elf's .gnu.hash data, in the host's byte order (libelf converts it),
 * or NULL. */
static Elf_Data *section_of(Elf *elf)
{
    GElf_Ehdr eh;
    if (!elf || !gelf_getehdr(elf, &eh))
        return NULL;
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(elf, scn)))
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_HASH)
            return elf_getdata(scn, NULL);
    return NULL;
}

int mqdh__gnuhash_may_define(Elf *elf, const char *name, Elf_Data **cache)
{
    if (!*cache)
        *cache = section_of(elf);
    if (!*cache)
        *cache = (Elf_Data *)-1;
    Elf_Data *d = *cache;
    if (d == (Elf_Data *)-1 || !d->d_buf)
        return -1;
    return mqdh__gnuhash_check(d->d_buf, d->d_size, gelf_getclass(elf) == ELFCLASS64 ? 8 : 4,
                               name);
}

int mqdh__gnuhash_check(const unsigned char *p, size_t len, size_t word, const char *name)
{
    /* Header: nbuckets, symoffset, bloom_size, bloom_shift; the Bloom
     * filter of bloom_size words of the class's size; the buckets; the
     * chains, one per hashed symbol from symoffset on. */
    uint32_t hdr[4];
    if (!p || (word != 4 && word != 8))
        return -1;
    if (len < sizeof hdr)
        return -1;
    memcpy(hdr, p, sizeof hdr);
    uint32_t nbuckets = hdr[0], symoffset = hdr[1], bloom_size = hdr[2], shift = hdr[3];
    size_t bloom_at = sizeof hdr, buckets_at = bloom_at + (size_t)bloom_size * word,
           chains_at = buckets_at + (size_t)nbuckets * 4;
    if (nbuckets == 0 || bloom_size == 0 || chains_at > len || bloom_size > len ||
        nbuckets > len)
        return -1;
    uint32_t h = gnu_hash(name), bits = (uint32_t)word * 8;
    uint64_t w = 0;
    if (word == 8) {
        memcpy(&w, p + bloom_at + (size_t)((h / bits) % bloom_size) * 8, 8);
    } else {
        uint32_t w32;
        memcpy(&w32, p + bloom_at + (size_t)((h / bits) % bloom_size) * 4, 4);
        w = w32;
    }
    uint64_t mask = (uint64_t)1 << (h % bits) | (uint64_t)1 << ((h >> (shift % 32)) % bits);
    if ((w & mask) != mask)
        return 0;
    uint32_t i;
    memcpy(&i, p + buckets_at + (size_t)(h % nbuckets) * 4, 4);
    if (i == 0)
        return 0;
    if (i < symoffset)
        return -1; /* not as the loader builds it */
    for (size_t at = chains_at + (size_t)(i - symoffset) * 4; at + 4 <= len; at += 4) {
        uint32_t c;
        memcpy(&c, p + at, 4);
        if ((c | 1) == (h | 1))
            return 1;
        if (c & 1)
            return 0; /* the chain's last */
    }
    return -1; /* a chain that runs off the section */
}
