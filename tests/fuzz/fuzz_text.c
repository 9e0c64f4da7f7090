/*
 * fuzz_text.c - what mqd does with strings others choose (host/base/escape.c,
 * host/job/hosts.c) on any bytes: a host name, a command line, a function's
 * name, as a launcher, a process or an agent may write them.  The first
 * byte picks the check; the rest is the string, NUL-terminated where the
 * input has none.  Beyond no crash and no sanitizer report:
 * - mqdh_escape's output holds no control byte, no DEL, no C1 control or
 *   bidirectional override, and is valid UTF-8; its length is the one
 *   returned; cut at any size, it is a prefix of the whole, ended at a
 *   unit's end;
 * - a host name that mqdh__host_name_check takes never starts with '-'
 *   and holds only a host name's characters (or is an IPv6 address).
 */
#define _GNU_SOURCE
#include "mqdhost.h"
#include "host/job/hosts.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void broken(const char *what)
{
    fprintf(stderr, "fuzz_text: %s\n", what);
    abort();
}

/* Is s valid UTF-8 with nothing a terminal acts on? */
static int shown_safe(const unsigned char *s)
{
    while (*s) {
        if (*s < 0x20 || *s == 0x7f)
            return 0;
        if (*s < 0x80) {
            s++;
            continue;
        }
        int n = *s >= 0xf0 ? 4 : *s >= 0xe0 ? 3 : *s >= 0xc2 ? 2 : 0;
        if (!n)
            return 0;
        unsigned long cp = *s & (0x7fu >> n);
        for (int i = 1; i < n; i++) {
            if ((s[i] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i] & 0x3fu);
        }
        if ((cp >= 0x80 && cp <= 0x9f) || (cp >= 0x2028 && cp <= 0x202e) ||
            (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f || cp == 0x061c ||
            (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
            return 0;
        s += n;
    }
    return 1;
}

static void check_escape(const char *s)
{
    size_t need = mqdh_escape(NULL, 0, s);
    char *whole = malloc(need + 1);
    if (!whole)
        return;
    if (mqdh_escape(whole, need + 1, s) != need || strlen(whole) != need)
        broken("the length returned is not the output's");
    if (!shown_safe((const unsigned char *)whole))
        broken("the output holds what a terminal acts on, or is not UTF-8");
    /* Cut short at a few sizes: a prefix, ending where a unit does. */
    size_t sizes[] = {1, 2, need / 2 + 1, need};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char *cut = sizes[i] ? malloc(sizes[i]) : NULL;
        if (!cut)
            continue;
        mqdh_escape(cut, sizes[i], s);
        size_t l = strlen(cut);
        if (l >= sizes[i] || memcmp(cut, whole, l) != 0)
            broken("a cut output is not a prefix of the whole");
        if (!shown_safe((const unsigned char *)cut))
            broken("a cut output ends inside a character");
        if (l && cut[l - 1] == '\\' && (l < 2 || cut[l - 2] != '\\'))
            broken("a cut output ends inside an escape");
        free(cut);
    }
    free(whole);
}

static void check_host(const char *s)
{
    char why[256] = "";
    if (mqdh__host_name_check(s, why, sizeof why) != 0) {
        if (!why[0])
            broken("a host name refused without its reason");
        return;
    }
    if (s[0] == '-' || s[0] == '\0')
        broken("a host name starting with '-', or empty, taken");
    if (s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:[]")])
        broken("a host name with other characters taken");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *s = malloc(size);
    if (!s)
        return 0;
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    if (data[0] & 1)
        check_host(s);
    else
        check_escape(s);
    free(s);
    return 0;
}
