/* procmaps.c - /proc/PID/maps lines parsed by hand (proc.h). */
#include "target/proc.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

/* A hexadecimal number of at most 16 digits at *p, then the character
 * end: 0 and *p past end, or -1. */
static int maps_hex(const char **p, uint64_t *v, char end)
{
    const char *s = *p;
    uint64_t x = 0;
    int n = 0;
    /* Each hexadecimal digit's value + 1; 0 for any other character. */
    static const unsigned char digit[256] = {
        ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,
        ['7'] = 8,  ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14,
        ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15,
        ['F'] = 16};
    for (;; s++, n++) {
        int d = digit[(unsigned char)*s] - 1;
        if (d < 0)
            break;
        if (n == 16)
            return -1;
        x = x << 4 | (uint64_t)d;
    }
    if (n == 0 || *s != end)
        return -1;
    *v = x;
    *p = s + 1;
    return 0;
}

/* What sscanf's space skips (the kernel pads with spaces). */
static int maps_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/*
 * "start-end perms offset major:minor inode   path", parsed by hand: a
 * rank's maps are 60 to 100 lines, and sscanf cost 3,000 instructions
 * a line, a quarter of what a whole rank's dump costs.
 */
int mqdh__text_maps_line(char *line, struct mqdh__maps_entry *e)
{
    const char *p = line;
    uint64_t maj, min;
    if (maps_hex(&p, &e->start, '-') != 0 || maps_hex(&p, &e->end, ' ') != 0)
        return -1;
    size_t np = 0;
    for (; *p && *p != ' '; p++) /* the permissions */
        if (np < sizeof e->perms - 1)
            e->perms[np++] = *p;
    e->perms[np] = '\0';
    if (np == 0 || *p++ != ' ' || maps_hex(&p, &e->offset, ' ') != 0 ||
        maps_hex(&p, &maj, ':') != 0 || maps_hex(&p, &min, ' ') != 0 || maj > UINT32_MAX ||
        min > UINT32_MAX)
        return -1;
    unsigned long long ino = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        unsigned d = (unsigned)(*p - '0');
        if (ino > (ULLONG_MAX - d) / 10)
            return -1;
        ino = ino * 10 + d;
    }
    if (digits == 0 || (*p && !maps_space(*p)))
        return -1;
    while (maps_space(*p))
        p++;
    e->ino = ino;
    e->dev = (maj << 32) | min;
    e->file = line + (p - line);
    e->file[strcspn(e->file, "\n")] = '\0';
    return 0;
}
