/*
 * gnuhash.h - may an ELF object define a dynamic symbol?  Answered from
 * its own .gnu.hash section, as the dynamic loader answers it, without
 * reading its symbols.
 *
 * A name a DLL looks up (another MPI version's, say) that no object
 * defines is looked for in every object a process maps: 26 for an MPICH
 * rank that links hwloc, over 100 for an Open MPI one.  Each object's
 * exported symbols were read into a table for it (filesyms.c); the table
 * answers "no" as well, but building it costs a pass over the whole
 * .dynsym.  The section's Bloom filter, buckets and chains say "no" for
 * almost every such name, in a few loads.
 */
#ifndef MQDH__GNUHASH_H
#define MQDH__GNUHASH_H

#include <gelf.h>

/*
 * May the object elf define the dynamic symbol name?  0: no (its
 * .gnu.hash has no entry of name's hash, so the loader would not find
 * it there); 1: maybe (an entry of the same hash: the symbols say);
 * -1: no usable .gnu.hash (the symbols say).  *data caches the section's
 * data for elf between calls: NULL at first, (void *)-1 once it is known
 * to have none.
 */
int mqdh__gnuhash_may_define(Elf *elf, const char *name, Elf_Data **data);

/*
 * The same from the section's bytes p[0..len-1] in the host's byte
 * order, its Bloom filter of word-byte words (8 for ELFCLASS64, 4 for
 * ELFCLASS32), as a process's memory holds it (dynmem.h).  Its chains may
 * be cut short: a chain that runs past len is -1.
 */
int mqdh__gnuhash_check(const unsigned char *p, size_t len, size_t word, const char *name);

#endif
