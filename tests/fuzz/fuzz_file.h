/*
 * fuzz_file.h - a fuzz input as a file, for the code that reads files by
 * path: an anonymous memory file (memfd) named /proc/self/fd/N.
 */
#ifndef MQD_TESTS_FUZZ_FILE_H
#define MQD_TESTS_FUZZ_FILE_H

/* (the includer defines _GNU_SOURCE first, for memfd_create) */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* The input in a fresh memory file: its descriptor (close it), and its
 * path in path[len]; -1 if it cannot be made. */
static inline int fuzz_file(const uint8_t *data, size_t size, char *path, size_t len)
{
    int fd = memfd_create("mqd-fuzz", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    for (size_t done = 0; done < size;) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    snprintf(path, len, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
