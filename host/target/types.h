/*
 * types.h - struct, union and typedef information from DWARF, for the
 * MQD image callbacks mqs_find_type, mqs_field_offset and mqs_sizeof.
 *
 * A type is looked up by name among the top-level definitions of every
 * compilation unit of every object of an image, executable first; typedefs
 * (and const/volatile) are followed to what they name, declarations are
 * skipped.  Each file's DWARF is indexed once, with the file (files.h);
 * lookups, found or not, are cached on the image, and the returned
 * pointers stay valid until the image is closed.
 */
#ifndef MQDH__TYPES_H
#define MQDH__TYPES_H

#include "target/image.h"

struct mqdh__type;

/* The type called name, or NULL if no object of the image defines it. */
struct mqdh__type *mqdh__type_find(struct mqdh__image *im, const char *name);

/*
 * The byte offset of field in t, or -1 if it has none.  Members of
 * anonymous structs and unions are found as if they were t's own, and
 * "a.b" names field b of member a.
 */
int mqdh__type_field_offset(const struct mqdh__type *t, const char *field);

/*
 * What t is in its file: its DWARF entry's address, the same for t found
 * in any image that maps that file, while the file is open.  The field
 * offsets and size of two types of one key are the same.
 */
const void *mqdh__type_key(const struct mqdh__type *t);

/* The image t was looked up in. */
const struct mqdh__image *mqdh__type_image(const struct mqdh__type *t);

/* How many of f's units its type index has read (0 without one). */
unsigned mqdh__types_units_read(const struct mqdh__file *f);

/* The size of t in bytes, or -1 if DWARF does not say. */
int mqdh__type_size(const struct mqdh__type *t);

/* Free every type of the image (image.c calls this on close). */
void mqdh__types_free_all(struct mqdh__image *im);

#endif
