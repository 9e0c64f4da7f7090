/*
 * replay.c - a fuzz target's corpus run without libFuzzer, for make check:
 * every file named, and every file in every directory named, handed to
 * LLVMFuzzerTestOneInput once, in name order.  A crash or a sanitizer
 * report fails the run as it would fail the fuzzer.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *more = realloc(buf, cap *= 2);
            if (!more)
                free(buf);
            buf = more;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(buf);
        return -1;
    }
    /* An exact-size copy: a read past the input's end is caught by ASan. */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    long inputs = 0;
    int failed = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            failed = 1;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            failed |= run_file(argv[i]) != 0;
            inputs++;
            continue;
        }
        struct dirent **names;
        int n = scandir(argv[i], &names, NULL, by_name);
        if (n < 0) {
            perror(argv[i]);
            failed = 1;
            continue;
        }
        for (int k = 0; k < n; k++) {
            if (names[k]->d_name[0] != '.') {
                char path[4096];
                snprintf(path, sizeof path, "%s/%s", argv[i], names[k]->d_name);
                failed |= run_file(path) != 0;
                inputs++;
            }
            free(names[k]);
        }
        free(names);
    }
    printf("%s: %ld inputs replayed%s\n", argv[0], inputs, failed ? ", some unreadable" : "");
    return failed || inputs == 0;
}
