/* clock.c - the library's one clock; see clock.h. */
#define _GNU_SOURCE
#include "base/clock.h"

#include <time.h>

double mqdh__monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
