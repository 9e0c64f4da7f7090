/*
 * dot.h - Graphviz output, shared by the views that draw (graph.c,
 * stacks.c): DOT strings, and the files a picture is written to.
 */
#ifndef MQDUMP_DOT_H
#define MQDUMP_DOT_H

#include <stddef.h>
#include <stdio.h>

/* s as a DOT string to f: quotes and backslashes escaped, newlines as \n,
 * other control bytes left out; NULL is "". */
void dot_string(FILE *f, const char *s);

/*
 * Write a picture to path: DOT, or, when path ends in .svg, .png or .pdf,
 * the DOT to PATH.dot and the picture rendered from it by Graphviz dot.
 * write_dot(f, arg) writes the DOT (0, or -1 on a write error).  0, or -1
 * with the reason in err[errlen] (a DOT file written is kept).  Each file
 * is made new beside its place and renamed into it: a symlink there is
 * replaced, never followed, and another user's file (or symlink) is left
 * alone, as root too (an error).  Graphviz reads the DOT from the file
 * mqdump wrote, on its standard input, never by its path.
 */
int dot_file(const char *path, int (*write_dot)(FILE *f, const void *arg), const void *arg,
             char *err, size_t errlen);

#endif
