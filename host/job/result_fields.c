/*
 * result_fields.c - the fields of an agent's result (result.h), each
 * checked as it is read: numbers range-checked, strings unescaped with
 * control characters made '?'.
 */
#define _GNU_SOURCE
#include "job/result_fields.h"

#include "mqdhost.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mqdh__rd_fail(struct mqdh__reader *r, int code, const char *fmt, ...)
{
    if (r->failed)
        return -1;
    r->failed = code;
    int n = snprintf(r->err, r->errlen, "line %d: ", r->line);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < r->errlen)
        vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    /* The message quotes the agent's bytes: none may drive a terminal. */
    for (char *c = r->err; *c; c++)
        if ((unsigned char)*c < ' ' || *c == 0x7f)
            *c = '?';
    return -1;
}

/* The next field of the current record into tok/toklen; -1 at its end. */
int mqdh__rd_field(struct mqdh__reader *r)
{
    while (r->p < r->end && *r->p == ' ')
        r->p++;
    if (r->p >= r->end || *r->p == '\n')
        return -1;
    r->tok = r->p;
    while (r->p < r->end && *r->p != ' ' && *r->p != '\n')
        r->p++;
    r->toklen = (size_t)(r->p - r->tok);
    return 0;
}

int mqdh__rd_need(struct mqdh__reader *r, const char *what)
{
    if (mqdh__rd_field(r) != 0)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "%s missing", what);
    return 0;
}

int mqdh__rd_ll(struct mqdh__reader *r, const char *what, long long lo, long long hi, long long *v)
{
    char buf[32];
    if (mqdh__rd_need(r, what) != 0)
        return -1;
    if (r->toklen >= sizeof buf)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "%s is not a number", what);
    memcpy(buf, r->tok, r->toklen);
    buf[r->toklen] = '\0';
    char *e;
    errno = 0;
    long long x = strtoll(buf, &e, 10);
    if (*e || e == buf || errno || x < lo || x > hi)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "%s '%s' is not a number from %lld to %lld", what,
                             buf, lo, hi);
    *v = x;
    return 0;
}

int mqdh__rd_int(struct mqdh__reader *r, const char *what, int lo, int hi, int *v)
{
    long long x;
    if (mqdh__rd_ll(r, what, lo, hi, &x) != 0)
        return -1;
    *v = (int)x;
    return 0;
}

int mqdh__rd_long(struct mqdh__reader *r, const char *what, long *v)
{
    long long x;
    if (mqdh__rd_ll(r, what, LONG_MIN, LONG_MAX, &x) != 0)
        return -1;
    *v = (long)x;
    return 0;
}

int mqdh__rd_u64(struct mqdh__reader *r, const char *what, uint64_t *v)
{
    char buf[32];
    if (mqdh__rd_need(r, what) != 0)
        return -1;
    if (r->toklen >= sizeof buf || r->tok[0] == '-')
        return mqdh__rd_fail(r, MQDH_E_RESULT, "%s is not an unsigned number", what);
    memcpy(buf, r->tok, r->toklen);
    buf[r->toklen] = '\0';
    char *e;
    errno = 0;
    unsigned long long x = strtoull(buf, &e, 10);
    if (*e || e == buf || errno)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "%s '%s' is not an unsigned number", what, buf);
    *v = (uint64_t)x;
    return 0;
}

int mqdh__rd_ulong(struct mqdh__reader *r, const char *what, unsigned long *v)
{
    uint64_t x;
    if (mqdh__rd_u64(r, what, &x) != 0)
        return -1;
    if (x > ULONG_MAX)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "%s is too large", what);
    *v = (unsigned long)x;
    return 0;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                  : -1;
}

/*
 * A string field into out[len] (cut there, always terminated), or, with
 * out NULL, into *dup (malloc'd; NULL for "-").  Control characters and
 * NUL come out as '?': the front end prints what it reads, and an agent's
 * output must never drive a terminal.
 */
int mqdh__rd_str(struct mqdh__reader *r, const char *what, char *out, size_t len, char **dup)
{
    if (mqdh__rd_need(r, what) != 0)
        return -1;
    if (r->toklen == 1 && r->tok[0] == '-') {
        if (dup)
            *dup = NULL;
        else if (len)
            out[0] = '\0';
        return 0;
    }
    if (r->tok[0] != '=')
        return mqdh__rd_fail(r, MQDH_E_RESULT, "%s is not a string", what);
    char *buf = out;
    if (dup) {
        len = r->toklen; /* never longer than its encoding */
        if (mqdh__rd_spend(r, len, what) != 0)
            return -1;
        if (!(buf = malloc(len)))
            return mqdh__rd_fail(r, MQDH_E_NOMEM, "out of memory");
    }
    size_t o = 0;
    for (size_t i = 1; i < r->toklen; i++) {
        int c = (unsigned char)r->tok[i];
        if (c == '%') {
            int h = i + 2 < r->toklen ? hexval(r->tok[i + 1]) : -1;
            int l = h >= 0 ? hexval(r->tok[i + 2]) : -1;
            if (l < 0) {
                if (dup)
                    free(buf);
                return mqdh__rd_fail(r, MQDH_E_RESULT, "%s has a bad escape", what);
            }
            c = h * 16 + l;
            i += 2;
        }
        if (c < ' ' || c == 0x7f)
            c = '?';
        if (o + 1 < len)
            buf[o++] = (char)c;
    }
    if (len)
        buf[o] = '\0';
    if (dup)
        *dup = buf;
    return 0;
}

void mqdh__rd_begin(struct mqdh__reader *r, const char *buf, size_t len, int first_line,
                    char *err, size_t errlen)
{
    *r = (struct mqdh__reader){.p = buf,
                               .end = buf + len,
                               .line = first_line,
                               .err = err,
                               .errlen = errlen,
                               .budget = MQDH__RESULT_MEMORY(len),
                               .group_budget = MQDH__RESULT_GROUPS(len)};
}

/* Take bytes of a pool (*spent of budget); past it r fails. */
static int spend(struct mqdh__reader *r, size_t *spent, size_t budget, size_t bytes,
                 const char *what, const char *rule)
{
    if (bytes <= budget - *spent) {
        *spent += bytes;
        return 0;
    }
    return mqdh__rd_fail(r, MQDH_E_RESULT,
                         "%s would take the result past the %zu MB of memory a result of its "
                         "size may make (%s): more than a real dump holds",
                         what, budget >> 20, rule);
}

int mqdh__rd_spend(struct mqdh__reader *r, size_t bytes, const char *what)
{
    return spend(r, &r->spent, r->budget, bytes, what, "64 MB and 64 bytes a byte");
}

int mqdh__rd_spend_group(struct mqdh__reader *r, size_t bytes)
{
    return spend(r, &r->group_spent, r->group_budget, bytes, "a group",
                 "of groups, 64 MB and 1 kB a byte");
}

/* The end of the current record: nothing may follow its fields. */
int mqdh__rd_end(struct mqdh__reader *r)
{
    if (mqdh__rd_field(r) == 0)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "unexpected field '%.*s'",
                             (int)(r->toklen < 40 ? r->toklen : 40), r->tok);
    return 0;
}

/* Past the current record, to the next line. */
void mqdh__rd_next_line(struct mqdh__reader *r)
{
    const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    r->p = nl ? nl + 1 : r->end;
    r->line++;
}

/* A string: "-" for none, else "=" and its bytes, those outside '!'..'~'
 * and '%' as %XX. */
void mqdh__result_put_str(FILE *f, const char *s)
{
    if (!s) {
        fputs(" -", f);
        return;
    }
    fputs(" =", f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c > ' ' && *c < 0x7f && *c != '%')
            putc(*c, f);
        else
            fprintf(f, "%%%02X", *c);
    }
}
