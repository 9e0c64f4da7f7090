/*
 * escape.c - strings from a target, a launcher, /proc or an agent, made fit
 * to show.  Such a string is data chosen by someone else: a host name in a
 * launcher's table may hold a newline and a forged "DEADLOCK:" line, a
 * command line a terminal's escape sequence.  Everything mqd shows of them
 * goes through mqdh_escape, one rule for every view and every error line.
 */
#define _GNU_SOURCE
#include "mqdhost.h"

#include <stdlib.h>
#include <string.h>

/*
 * The length of the valid UTF-8 sequence at s and its code point, or 0 if
 * s does not start one (a stray continuation byte, an overlong form, a
 * surrogate, past U+10FFFF, or cut short by the string's end).
 */
static int utf8_char(const unsigned char *s, unsigned long *cp)
{
    int n;
    unsigned long c, min;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        n = 2;
        c = s[0] & 0x1fu;
        min = 0x80;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        n = 3;
        c = s[0] & 0x0fu;
        min = 0x800;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        n = 4;
        c = s[0] & 0x07u;
        min = 0x10000;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0u) != 0x80u) /* the string's NUL included */
            return 0;
        c = c << 6 | (s[i] & 0x3fu);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

/*
 * Code points a terminal or an editor acts on rather than shows: the C1
 * controls (an 8-bit CSI among them), the line and paragraph separators,
 * and the marks and overrides that reorder bidirectional text (text that
 * reads other than it is, CVE-2021-42574).
 */
static int acts(unsigned long cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
           (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t mqdh_escape(char *buf, size_t len, const char *s)
{
    static const char hex[] = "0123456789abcdef", controls[] = "\\\n\t\r\x1b";
    size_t need = 0, put = 0;
    int full = 0; /* once a unit does not fit, none after it is written */
    const unsigned char *c = (const unsigned char *)(s ? s : "");
    while (*c) {
        char unit[12];
        size_t ul = 0, take = 1;
        unsigned long cp;
        const char *named;
        int n;
        if (*c >= 0x20 && *c < 0x7f && *c != '\\') {
            unit[ul++] = (char)*c;
        } else if (*c && (named = strchr(controls, *c)) != NULL) {
            unit[ul++] = '\\';
            unit[ul++] = "\\ntre"[named - controls];
        } else if (*c >= 0x80 && (n = utf8_char(c, &cp)) > 0) {
            take = (size_t)n;
            if (acts(cp)) {
                unit[ul++] = '\\';
                unit[ul++] = 'u';
                for (int sh = 12; sh >= 0; sh -= 4)
                    unit[ul++] = hex[(cp >> sh) & 0xf];
            } else {
                memcpy(unit, c, take);
                ul = take;
            }
        } else { /* another control, DEL, or a byte that is not UTF-8 */
            unit[ul++] = '\\';
            unit[ul++] = 'x';
            unit[ul++] = hex[*c >> 4];
            unit[ul++] = hex[*c & 0xf];
        }
        if (!full && buf && put + ul < len) {
            memcpy(buf + put, unit, ul);
            put += ul;
        } else {
            full = 1;
        }
        need += ul;
        c += take;
    }
    if (buf && len)
        buf[put] = '\0';
    return need;
}

/* *s escaped in place (a new string, the old one freed); -1: no memory,
 * *s kept. */
static int escape_heap(char **s)
{
    if (!*s)
        return 0;
    size_t need = mqdh_escape(NULL, 0, *s);
    if (need == strlen(*s))
        return 0; /* nothing to escape: the same length means the same text */
    char *e = malloc(need + 1);
    if (!e)
        return -1;
    mqdh_escape(e, need + 1, *s);
    free(*s);
    *s = e;
    return 0;
}

/* An array member escaped in place, cut at a whole unit if it grows. */
static void escape_array(char *s, size_t size)
{
    char tmp[256];
    if (size > sizeof tmp || mqdh_escape(NULL, 0, s) == strlen(s))
        return;
    mqdh_escape(tmp, size, s);
    memcpy(s, tmp, size);
}

int mqdh_dump_escape(struct mqdh_dump *d)
{
    int rc = MQDH_OK;
#define ESC(field)                                                                             \
    do {                                                                                       \
        if (escape_heap(&(field)) != 0)                                                        \
            rc = MQDH_E_NOMEM;                                                                 \
    } while (0)
    for (int i = 0; d && i < d->nprocs; i++) {
        struct mqdh_process *p = &d->procs[i];
        ESC(p->host);
        ESC(p->image);
        ESC(p->dll);
        ESC(p->dll_why);
        ESC(p->error);
        ESC(p->where_call);
        ESC(p->where_function);
        ESC(p->where_file);
        ESC(p->where_error);
        ESC(p->where_args_why);
        ESC(p->where_args_from);
        ESC(p->where_comm_name);
        for (int c = 0; c < p->ncomms; c++) {
            struct mqdh_comm *cm = &p->comms[c];
            escape_array(cm->name, sizeof cm->name);
            ESC(cm->group_error);
            for (int q = 0; q < MQDH_NQUEUES; q++) {
                ESC(cm->queues[q].error);
                for (int o = 0; o < cm->queues[q].nops; o++)
                    for (int l = 0; l < 5; l++)
                        escape_array(cm->queues[q].ops[o].extra_text[l],
                                     sizeof cm->queues[q].ops[o].extra_text[l]);
            }
        }
        struct mqdh_stack *st = d->stacks ? &d->stacks[i] : NULL;
        for (int t = 0; st && t < st->nthreads; t++) {
            struct mqdh_thread *th = &st->threads[t];
            ESC(th->call);
            ESC(th->error);
            for (int f = 0; f < th->nframes; f++) {
                ESC(th->frames[f].function);
                ESC(th->frames[f].module);
                ESC(th->frames[f].file);
            }
        }
    }
#undef ESC
    return rc;
}
