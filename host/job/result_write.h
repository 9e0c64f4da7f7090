/*
 * result_write.h - an agent's result written (result_write.c): what the
 * saved dumps' header (saved.c) shares of it.
 */
#ifndef MQDH__RESULT_WRITE_H
#define MQDH__RESULT_WRITE_H

#include <stdio.h>

/* A string field as the writer puts it: " -" for NULL, else " =" and its
 * bytes, those outside '!'..'~' and '%' as %XX (a saved dump's header,
 * saved.c, spells its strings alike). */
void mqdh__result_put_str(FILE *f, const char *s);

#endif
