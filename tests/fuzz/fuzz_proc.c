/*
 * fuzz_proc.c - the readers of /proc's text (host/target/proc.c) on any text: a
 * process's environment, command line, stat, status and maps lines, as a
 * hostile or odd process may make them (an environment and a command line
 * are the process's own to write; a comm may hold spaces, parentheses and
 * newlines).  The first byte picks the reader; the rest is the text, with
 * the NUL the kernel's reading leaves after it.  Beyond no crash and no
 * sanitizer report, each answer is checked against its promise.
 */
#include "host/target/proc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void broken(const char *what)
{
    fprintf(stderr, "fuzz_proc: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t n = size - 1;
    char *text = malloc(n + 1);
    if (!text)
        return 0;
    memcpy(text, data + 1, n);
    text[n] = '\0';
    switch (data[0] % 5) {
    case 0: {
        int spawned = -1, wsize = -2;
        int rank = mqdh__text_env_rank(text, n, &spawned, &wsize);
        if (rank < -1 || rank >= (1 << 30) || (spawned != 0 && spawned != 1) || wsize < -1 ||
            wsize >= (1 << 30))
            broken("an environment's rank out of its range");
        break;
    }
    case 1: {
        int pgid = mqdh__text_cmdline_pgid(text, n);
        if (pgid < -1 || pgid >= (1 << 30))
            broken("a --pgid out of its range");
        break;
    }
    case 2:
        mqdh__text_stat_ppid(text);
        break;
    case 3:
        if (mqdh__text_status_field(text, "TracerPid") < -1 ||
            mqdh__text_status_field(text, "Uid") < -1)
            broken("a status field out of its range");
        break;
    default: {
        struct mqdh__maps_entry e;
        if (mqdh__text_maps_line(text, &e) == 0 &&
            (e.file < text || e.file > text + n || strchr(e.file, '\n')))
            broken("a maps line's file outside the line");
        break;
    }
    }
    free(text);
    return 0;
}
