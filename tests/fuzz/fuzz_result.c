/*
 * fuzz_result.c - the agent result reader (host/result.c) on any bytes, as
 * a front end reads whatever a host's agent sent back.  Beyond no crash,
 * no leak and no sanitizer report: a result the reader accepts is written
 * out again and read back, and that second reading must be accepted and
 * write the same text (the format round-trips what the reader keeps).
 * Escaped for showing (mqdh_dump_escape), no string of it holds a control
 * byte.
 */
#define _GNU_SOURCE
#include "mqdhost.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *written(const struct mqdh_dump *d, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f)
        abort();
    if (mqdh_result_write(f, d) != MQDH_OK) {
        fprintf(stderr, "fuzz_result: an accepted result cannot be written\n");
        abort();
    }
    fclose(f);
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mqdh_dump *d = NULL, *again = NULL;
    char err[256];
    if (mqdh_result_read((const char *)data, size, &d, err, sizeof err) != MQDH_OK) {
        if (d || !err[0]) {
            fprintf(stderr, "fuzz_result: a refusal without its reason, or with a dump\n");
            abort();
        }
        return 0;
    }
    size_t n1, n2;
    char *t1 = written(d, &n1);
    if (mqdh_result_read(t1, n1, &again, err, sizeof err) != MQDH_OK) {
        fprintf(stderr, "fuzz_result: its own output refused: %s\n", err);
        abort();
    }
    char *t2 = written(again, &n2);
    if (n1 != n2 || memcmp(t1, t2, n1) != 0) {
        fprintf(stderr, "fuzz_result: written twice, two texts\n");
        abort();
    }
    free(t1);
    free(t2);
    if (mqdh_dump_escape(d) == MQDH_OK)
        for (int i = 0; i < d->nprocs; i++) {
            const struct mqdh_process *p = &d->procs[i];
            const char *shown[] = {p->host, p->image, p->error, p->where_function,
                                   p->where_file, p->dll_why};
            for (size_t k = 0; k < sizeof shown / sizeof shown[0]; k++)
                for (const char *c = shown[k]; c && *c; c++)
                    if ((unsigned char)*c < 0x20 || *c == 0x7f) {
                        fprintf(stderr, "fuzz_result: a control byte left after escaping\n");
                        abort();
                    }
        }
    mqdh_dump_free(d);
    mqdh_dump_free(again);
    return 0;
}
