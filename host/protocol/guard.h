/*
 * guard.h - calls into a debug DLL that may crash or never return.
 *
 * A DLL runs inside the host's process, on the host's threads.  A worker
 * wraps its work on one process in a guard (MQDH__GUARDED), and every call
 * into the DLL in MQDH__DLL_CALL.  Then:
 *
 *   - a SIGSEGV, SIGBUS, SIGILL or SIGFPE raised while a DLL entry point
 *     runs, anywhere but in the host's own code (the DLL's, or libc's on
 *     the DLL's behalf), ends the guarded work: the thread resumes at the
 *     guard with the signal, its address and the entry point, and the DLL
 *     is marked crashed (mqdh__dll.crashed) and never called again;
 *   - a time limit (the guard's seconds) that passes while the DLL runs
 *     ends the guarded work the same way: at once if the DLL's own code
 *     was running, else at its next call back into the host or its return.
 *
 * The host's own faults are not caught: they end the program as before
 * (and the kernel lets every traced rank go).  The handlers are installed
 * while a guard is in use and the previous ones put back after; a signal
 * that is not a guarded DLL's goes to the previous handler.  The time limit
 * is a deadline per guarded work, watched by one POSIX timer per thread
 * signalling MQDH__GUARD_SIGNAL: armed once, when the thread's first work
 * starts, and set again only when it fires (then to the deadline of the
 * work at hand, or every 10 ms once that has passed, until the work ends
 * or lands in the DLL), so guarding a work costs no system call: a dump's
 * hundreds of processes cost the timers of its few workers.
 */
#ifndef MQDH__GUARD_H
#define MQDH__GUARD_H

#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct mqdh__dll;

/* The real-time signal of the time limit. */
#define MQDH__GUARD_SIGNAL (SIGRTMIN + 4)

enum mqdh__guard_why { MQDH__GUARD_NONE, MQDH__GUARD_CRASH, MQDH__GUARD_TIMEOUT };

struct mqdh__guard {
    sigjmp_buf jump;
    volatile sig_atomic_t armed;  /* inside MQDH__GUARDED */
    volatile sig_atomic_t in_dll; /* a DLL entry point runs */
    volatile sig_atomic_t expired;
    volatile sig_atomic_t sig;    /* the signal that ended the work */
    void *volatile addr;          /* its faulting address */
    const char *volatile entry;   /* the entry point that ran */
    struct mqdh__dll *volatile dll;
    volatile double deadline;     /* CLOCK_MONOTONIC seconds the work must end by */
    timer_t timer;
    int have_timer;
    volatile sig_atomic_t ticking; /* the timer is set */
    sigset_t mask;  /* the thread's signal mask, put back after a jump */
    double seconds; /* the limit; <= 0: none */
};

/* Set up g for this thread (seconds <= 0: no limit); 0, or -1 if the
 * handlers or timer cannot be had (the work then runs unguarded). */
int mqdh__guard_init(struct mqdh__guard *g, double seconds);
void mqdh__guard_fini(struct mqdh__guard *g);

/* The lowest and highest address of the executable segments of the
 * loaded object that contains addr: 0, or -1. */
int mqdh__object_text(const void *addr, uintptr_t *lo, uintptr_t *hi);

/* Internal to the macros. */
void mqdh__guard_arm(struct mqdh__guard *g);
void mqdh__guard_disarm(struct mqdh__guard *g);
void mqdh__guard_jumped(struct mqdh__guard *g);
void mqdh__guard_enter(struct mqdh__dll *dll, const char *entry);
void mqdh__guard_leave(void);
int mqdh__guard_leave_rc(int rc);
/* At each host callback's start: end the work if its time has passed. */
void mqdh__guard_point(void);

/*
 * Run call (an int expression) under g: rc gets its value, or, if the DLL
 * crashed or ran out of time, why gets MQDH__GUARD_CRASH or
 * MQDH__GUARD_TIMEOUT (rc is then left alone).  The signal mask is not
 * saved at each call (a system call): a jump puts back the one the guard
 * was made with.
 */
#define MQDH__GUARDED(g, rc, why, call)                                                         \
    do {                                                                                       \
        (why) = MQDH__GUARD_NONE;                                                               \
        if (sigsetjmp((g)->jump, 0) == 0) {                                                    \
            mqdh__guard_arm(g);                                                                 \
            (rc) = (call);                                                                     \
        } else {                                                                               \
            mqdh__guard_jumped(g);                                                              \
            (why) = (g)->sig ? MQDH__GUARD_CRASH : MQDH__GUARD_TIMEOUT;                          \
        }                                                                                      \
        mqdh__guard_disarm(g);                                                                  \
    } while (0)

/* A call of DLL entry point name, an int result. */
#define MQDH__DLL_CALL(dll, name, call) (mqdh__guard_enter((dll), (name)), mqdh__guard_leave_rc(call))
/* "crashed (SIGSEGV at address 0x10) in mqs_next_operation" or "did not
 * return within 5 s from mqs_next_operation", for g's end, into buf[len]. */
const char *mqdh__guard_describe(const struct mqdh__guard *g, char *buf, size_t len);

#endif
