/*
 * saved.c - a dump kept in a file (mqdh_saved_write, mqdh_saved_read): one
 * header line that says what the file is and where it comes from, then
 * the dump as an agent's result (result_write.c, result_read.c).  The
 * format is docs/RESULT.md's "Saved dumps".
 */
#define _GNU_SOURCE
#include "mqdhost.h"

#include "job/result_fields.h"
#include "job/result_read.h"
#include "job/result_fields.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SAVED_MAGIC "mqd-dump "
#define RESULT_MAGIC "mqd-result "

/* " 2026-11-25T03:01:15Z" (UTC), or " -" for a time not known. */
static void put_date(FILE *f, int64_t t)
{
    struct tm tm;
    time_t tt = (time_t)t;
    if (t < 0 || (int64_t)tt != t || !gmtime_r(&tt, &tm) || tm.tm_year + 1900 > 9999) {
        fputs(" -", f);
        return;
    }
    fprintf(f, " %04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
            tm.tm_hour, tm.tm_min, tm.tm_sec);
}

int mqdh_saved_write(FILE *f, const struct mqdh_dump *d, const struct mqdh_saved *about)
{
    if (!f || !d)
        return MQDH_E_USAGE;
    const struct mqdh_saved none = {.time = -1};
    if (!about)
        about = &none;
    fprintf(f, SAVED_MAGIC "%d", MQDH_SAVED_VERSION);
    put_date(f, about->time);
    mqdh__result_put_str(f, about->tool);
    mqdh__result_put_str(f, about->host);
    mqdh__result_put_str(f, about->command);
    mqdh__result_put_str(f, about->launcher);
    putc('\n', f);
    return mqdh_result_write(f, d);
}

void mqdh_saved_free(struct mqdh_saved *s)
{
    if (!s)
        return;
    free(s->tool);
    free(s->host);
    free(s->command);
    free(s->launcher);
    free(s);
}

/* n digits at s, as a number. */
static int digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* The date field ("YYYY-MM-DDTHH:MM:SSZ", a real time in UTC, or "-")
 * into *t. */
static int read_date(struct mqdh__reader *r, int64_t *t)
{
    if (mqdh__rd_need(r, "date") != 0)
        return -1;
    if (r->toklen == 1 && r->tok[0] == '-') {
        *t = -1;
        return 0;
    }
    const char *s = r->tok;
    struct tm tm = {0};
    if (r->toklen == 20 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' &&
        s[16] == ':' && s[19] == 'Z') {
        tm.tm_year = digits(s, 4) - 1900;
        tm.tm_mon = digits(s + 5, 2) - 1;
        tm.tm_mday = digits(s + 8, 2);
        tm.tm_hour = digits(s + 11, 2);
        tm.tm_min = digits(s + 14, 2);
        tm.tm_sec = digits(s + 17, 2);
    }
    /* A time as gmtime gives it back, field for field: no 31 February. */
    struct tm want = tm, back;
    time_t tt = timegm(&tm);
    if (r->toklen != 20 || want.tm_year < 70 || tt < 0 || !gmtime_r(&tt, &back) ||
        back.tm_year != want.tm_year || back.tm_mon != want.tm_mon ||
        back.tm_mday != want.tm_mday || back.tm_hour != want.tm_hour ||
        back.tm_min != want.tm_min || back.tm_sec != want.tm_sec)
        return mqdh__rd_fail(r, MQDH_E_RESULT, "date '%.*s' is not YYYY-MM-DDTHH:MM:SSZ",
                             (int)(r->toklen < 24 ? r->toklen : 24), r->tok);
    *t = (int64_t)tt;
    return 0;
}

/* The header line ("mqd-dump VERSION DATE TOOL HOST COMMAND LAUNCHER")
 * into s; a later version may add fields after these, which are skipped.
 * 0, or -1 (r failed). */
static int read_header(struct mqdh__reader *r, const char *buf, size_t len, struct mqdh_saved *s)
{
    size_t n = strlen(SAVED_MAGIC);
    if (len >= strlen(RESULT_MAGIC) && memcmp(buf, RESULT_MAGIC, strlen(RESULT_MAGIC)) == 0)
        return mqdh__rd_fail(r, MQDH_E_RESULT,
                             "an agent's result, not a saved dump (mqdump --save writes those)");
    if (len < n || memcmp(buf, SAVED_MAGIC, n) != 0)
        return mqdh__rd_fail(r, MQDH_E_RESULT,
                             "not a saved dump (it begins '%.*s', not 'mqd-dump')",
                             (int)(len < 24 ? len : 24), buf);
    r->p += n;
    int version;
    if (mqdh__rd_int(r, "version", 0, 0x7fffffff, &version) != 0)
        return -1;
    if (version != MQDH_SAVED_VERSION)
        return mqdh__rd_fail(r, MQDH_E_RESULT,
                             "saved-dump format %d, and this mqdump reads format %d: another "
                             "mqd version saved it",
                             version, MQDH_SAVED_VERSION);
    s->version = (unsigned)version;
    if (read_date(r, &s->time) != 0 || mqdh__rd_str(r, "tool", NULL, 0, &s->tool) != 0 ||
        mqdh__rd_str(r, "host", NULL, 0, &s->host) != 0 ||
        mqdh__rd_str(r, "command", NULL, 0, &s->command) != 0 ||
        mqdh__rd_str(r, "launcher", NULL, 0, &s->launcher) != 0)
        return -1;
    mqdh__rd_next_line(r);
    return 0;
}

int mqdh_saved_read(const char *buf, size_t len, struct mqdh_dump **out,
                    struct mqdh_saved **about, char *err, size_t errlen)
{
    char dummy[1];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';
    if (about)
        *about = NULL;
    if (!out)
        return MQDH_E_USAGE;
    *out = NULL;
    if (!buf && len)
        return MQDH_E_USAGE;
    struct mqdh_saved *s = calloc(1, sizeof *s);
    if (!s)
        return MQDH_E_NOMEM;
    struct mqdh__reader r;
    mqdh__rd_begin(&r, buf, len, 1, err, errlen);
    int rc = read_header(&r, buf ? buf : "", len, s) == 0
                 ? mqdh__result_read_at(r.p, (size_t)(r.end - r.p), r.line, out, err, errlen)
                 : r.failed;
    if (rc != MQDH_OK || !about)
        mqdh_saved_free(s);
    else
        *about = s;
    return rc;
}
