/*
 * fuzz_result.c - the agent result reader (host/result.c) on any bytes, as
 * a front end reads whatever a host's agent sent back.  Beyond no crash,
 * no leak and no sanitizer report: a result the reader accepts is written
 * out again and read back, and that second reading must be accepted and
 * write the same text (the format round-trips what the reader keeps).
 * Escaped for showing (mqdh_dump_escape), no string of it holds a control
 * byte.
 *
 * The same bytes go to the reader of saved dumps (mqdump --load,
 * mqdh_saved_read: a header line, then a result through the same reader),
 * with the same checks: a saved dump it accepts is saved again and read
 * back to the same text.  The seeds hold both (corpus/result/saved-*).
 */
#define _GNU_SOURCE
#include "mqdhost.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The two forms the bytes are read in: an agent's result, a saved dump. */
enum form { RESULT, SAVED };

/* Read buf[len] in form: MQDH_OK and *d (*about for a saved dump). */
static int read_as(enum form form, const char *buf, size_t len, struct mqdh_dump **d,
                   struct mqdh_saved **about, char *err, size_t errlen)
{
    *about = NULL;
    return form == SAVED ? mqdh_saved_read(buf, len, d, about, err, errlen)
                         : mqdh_result_read(buf, len, d, err, errlen);
}

/* d (with about) written in form, malloc'd, in [*len]. */
static char *written(enum form form, const struct mqdh_dump *d, const struct mqdh_saved *about,
                     size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f)
        abort();
    if ((form == SAVED ? mqdh_saved_write(f, d, about) : mqdh_result_write(f, d)) != MQDH_OK) {
        fprintf(stderr, "fuzz_result: an accepted input cannot be written (form %d)\n", form);
        abort();
    }
    fclose(f);
    return text;
}

/* Escaped for showing, no string of d holds a control byte. */
static void check_escaped(struct mqdh_dump *d)
{
    if (mqdh_dump_escape(d) != MQDH_OK)
        return;
    for (int i = 0; i < d->nprocs; i++) {
        const struct mqdh_process *p = &d->procs[i];
        const char *shown[] = {p->host, p->image, p->error, p->where_function, p->where_file,
                               p->dll_why};
        for (size_t k = 0; k < sizeof shown / sizeof shown[0]; k++)
            for (const char *c = shown[k]; c && *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f) {
                    fprintf(stderr, "fuzz_result: a control byte left after escaping\n");
                    abort();
                }
    }
}

/* The bytes read in form; if accepted, written, read back and written
 * again to the same text. */
static void round_trip(enum form form, const uint8_t *data, size_t size)
{
    struct mqdh_dump *d = NULL, *again = NULL;
    struct mqdh_saved *about = NULL, *about2 = NULL;
    char err[256];
    if (read_as(form, (const char *)data, size, &d, &about, err, sizeof err) != MQDH_OK) {
        if (d || about || !err[0]) {
            fprintf(stderr, "fuzz_result: a refusal without its reason, or with a dump\n");
            abort();
        }
        return;
    }
    size_t n1, n2;
    char *t1 = written(form, d, about, &n1);
    if (read_as(form, t1, n1, &again, &about2, err, sizeof err) != MQDH_OK) {
        fprintf(stderr, "fuzz_result: its own output refused (form %d): %s\n", form, err);
        abort();
    }
    char *t2 = written(form, again, about2, &n2);
    if (n1 != n2 || memcmp(t1, t2, n1) != 0) {
        fprintf(stderr, "fuzz_result: written twice, two texts (form %d)\n", form);
        abort();
    }
    free(t1);
    free(t2);
    check_escaped(d);
    mqdh_dump_free(d);
    mqdh_dump_free(again);
    mqdh_saved_free(about);
    mqdh_saved_free(about2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    round_trip(RESULT, data, size);
    round_trip(SAVED, data, size);
    return 0;
}
