/*
 * clock.h - the library's one clock: seconds on CLOCK_MONOTONIC, for the
 * deadlines and time limits of a dump (clock.c).
 */
#ifndef MQDH__CLOCK_H
#define MQDH__CLOCK_H

/* Seconds since an arbitrary start, never going back; read through the
 * vDSO (no system call), and safe in a signal handler. */
double mqdh__monotonic(void);

#endif
