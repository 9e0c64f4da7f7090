/*
 * result_read.h - an agent's result read back into a dump
 * (result_read.c): what a saved dump's reader (saved.c) shares of it.
 */
#ifndef MQDH__RESULT_READ_H
#define MQDH__RESULT_READ_H

#include <stddef.h>

struct mqdh_dump;

/* mqdh_result_read of a result that begins on line first_line of its
 * file (a saved dump's, after its header): errors name the file's lines. */
int mqdh__result_read_at(const char *buf, size_t len, int first_line, struct mqdh_dump **out,
                         char *err, size_t errlen);

#endif
