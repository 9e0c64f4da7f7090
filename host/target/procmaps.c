/* procmaps.c - /proc/PID/maps lines parsed by hand (proc.h). */
#include "target/proc.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

/* Each hexadecimal digit's value + 1; 0 for any other character. */
static const unsigned char hex_digit[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,
    ['7'] = 8,  ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14,
    ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15,
    ['F'] = 16};

/* A hexadecimal number of at most 16 digits at *p, then the character
 * end: 0 and *p past end, or -1.  The digits are counted once they end:
 * a 17th is read (and refused) rather than checked for at each. */
static int maps_hex(const char **p, uint64_t *v, char end)
{
    const unsigned char *s = (const unsigned char *)*p, *from = s;
    uint64_t x = 0;
    for (unsigned d; (d = hex_digit[*s]) != 0; s++)
        x = x << 4 | (d - 1);
    size_t n = (size_t)(s - from);
    if (n == 0 || n > 16 || *s != (unsigned char)end)
        return -1;
    *v = x;
    *p = (const char *)s + 1;
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
    /* The inode: 19 digits cannot overflow; a 20th is checked. */
    unsigned long long ino = 0;
    const char *digits = p;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (p - digits >= 19 && ino > (ULLONG_MAX - d) / 10)
            return -1;
        ino = ino * 10 + d;
    }
    if (p == digits || (*p && !maps_space(*p)))
        return -1;
    p += strspn(p, " \t\n\v\f\r");
    e->ino = ino;
    e->dev = (maj << 32) | min;
    e->file = line + (p - line);
    char *nl = strchr(e->file, '\n');
    if (nl)
        *nl = '\0';
    return 0;
}
