/*
 * fuzz_expect.c - the .expect reader (tests/expect.c), which the
 * integration tests and mqd-launch trust, on any file: no crash, no leak,
 * no sanitizer report; a refusal names its reason, an accepted file's
 * processes are all within its job.
 */
#define _GNU_SOURCE
#include "tests/expect.h"
#include "tests/fuzz/fuzz_file.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512] = "";
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    struct expect e;
    memset(&e, 0, sizeof e);
    if (expect_load(path, &e, err, sizeof err) != 0) {
        close(fd);
        if (!err[0]) {
            fprintf(stderr, "fuzz_expect: a refusal without its reason\n");
            abort();
        }
        return 0;
    }
    close(fd);
    int n = expect_nprocs(&e);
    char buf[32];
    for (int i = 0; i < n && i < 4096; i++)
        expect_process_text(expect_process(&e, i), buf, sizeof buf);
    expect_free(&e);
    return 0;
}
