/*
 * result_fields.h - the fields of an agent's result (docs/RESULT.md) as
 * the reader takes them (result_fields.c), and the words of the format
 * the writer (result_write.c) must spell alike.
 */
#ifndef MQDH__RESULT_FIELDS_H
#define MQDH__RESULT_FIELDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A queue's state ("q" records), by enum mqdh_queue_state. */
#define MQDH__RESULT_QUEUE_STATES {"ok", "noinfo", "error"}

/* ---------------------------------------------------------------- fields */

/*
 * A result as it is read (result_fields.c): one record a line, its fields
 * separated by blanks.  The input is hostile: each function below checks
 * what it reads, and the first failure is kept (failed, and err saying
 * what and on which line); once failed, every later failure is dropped.
 * Each returns 0, or -1 once r has failed.
 */
struct mqdh__reader {
    const char *p, *end; /* the rest of the input */
    int line;            /* of the record being read, from 1 */
    const char *tok;     /* the current record's fields */
    size_t toklen;
    char *err;
    size_t errlen;
    int failed; /* MQDH_E_RESULT or MQDH_E_NOMEM once something failed */
    /* The memory the dump read may take, and what it has taken: no input
     * makes more than a bounded multiple of its own size.  Two pools: the
     * groups' members (a world of 10,000 is one run of 14 bytes, 80 kB),
     * and all else (an entry, a frame and its module's path, ...). */
    size_t budget, spent, group_budget, group_spent;
};

/* What a result of len bytes may make in memory: of groups 64 MiB and
 * 1 kB more a byte; of all else 64 MiB and 64 bytes more a byte (a real
 * dump makes about 10 bytes a byte; a frame of 16 bytes whose module's
 * path is 4 kB would make 250). */
#define MQDH__RESULT_GROUPS(len) (((size_t)64 << 20) + (size_t)(len) * 1024)
#define MQDH__RESULT_MEMORY(len) (((size_t)64 << 20) + (size_t)(len) * 64)

/* Start reading buf[len] (its first line numbered first_line) into r,
 * with the memory budget a result of len bytes has; failures go to
 * err[errlen]. */
void mqdh__rd_begin(struct mqdh__reader *r, const char *buf, size_t len, int first_line,
                    char *err, size_t errlen);

/* Take bytes of r's budget (group: of the groups' pool) for what is about
 * to be made (what names it); past the budget r fails, saying so. */
int mqdh__rd_spend_group(struct mqdh__reader *r, size_t bytes);
int mqdh__rd_spend(struct mqdh__reader *r, size_t bytes, const char *what);

/* Fail with code (MQDH_E_RESULT, MQDH_E_NOMEM) and the message fmt says,
 * control characters in it made '?': always -1. */
int mqdh__rd_fail(struct mqdh__reader *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The next field of the current record into tok/toklen; -1 at its end
 * (r has not failed). */
int mqdh__rd_field(struct mqdh__reader *r);

/* The next field, which must be there (what names it). */
int mqdh__rd_need(struct mqdh__reader *r, const char *what);

/* The next field as a number from lo to hi. */
int mqdh__rd_ll(struct mqdh__reader *r, const char *what, long long lo, long long hi,
                long long *v);
int mqdh__rd_int(struct mqdh__reader *r, const char *what, int lo, int hi, int *v);
int mqdh__rd_long(struct mqdh__reader *r, const char *what, long *v);

/* The next field as an unsigned number. */
int mqdh__rd_u64(struct mqdh__reader *r, const char *what, uint64_t *v);
int mqdh__rd_ulong(struct mqdh__reader *r, const char *what, unsigned long *v);

/*
 * A string field into out[len] (cut there, always terminated), or, with
 * out NULL, into *dup (malloc'd; NULL for "-").  Control characters and
 * NUL come out as '?': the front end prints what it reads, and an agent's
 * output must never drive a terminal.
 */
int mqdh__rd_str(struct mqdh__reader *r, const char *what, char *out, size_t len, char **dup);

/* The end of the current record: nothing may follow its fields. */
int mqdh__rd_end(struct mqdh__reader *r);

/* Past the current record, to the next line. */
void mqdh__rd_next_line(struct mqdh__reader *r);

/* A string field as the writer puts it: " -" for NULL, else " =" and its
 * bytes, those outside '!'..'~' and '%' as %XX (a saved dump's header,
 * saved.c, spells its strings alike). */
void mqdh__result_put_str(FILE *f, const char *s);

#endif
