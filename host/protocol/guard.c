/* guard.c - calls into a debug DLL that may crash or never return; see guard.h. */
#define _GNU_SOURCE
#include "protocol/guard.h"
#include "base/clock.h"
#include "protocol/loader.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* The guard of this thread's work, if any.  Read by the handlers. */
static _Thread_local struct mqdh__guard *current;

static const int faults[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
enum { NFAULTS = sizeof faults / sizeof faults[0], ALT_STACK = 64 * 1024 };

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static int installed; /* guards in use */
static struct sigaction previous[NFAULTS + 1];
/* The host's own code (the object this file is in), never the DLL's. */
static uintptr_t host_lo, host_hi;

/* The lowest and highest address of the executable segments of the
 * object that contains addr. */
struct text_search {
    uintptr_t addr, lo, hi;
};

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct text_search *t = arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    int contains = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
        if (t->addr >= a && t->addr < b)
            contains = 1;
        if (ph->p_flags & PF_X) {
            lo = a < lo ? a : lo;
            hi = b > hi ? b : hi;
        }
    }
    if (!contains)
        return 0;
    t->lo = lo;
    t->hi = hi;
    return 1;
}

int mqdh__object_text(const void *addr, uintptr_t *lo, uintptr_t *hi)
{
    struct text_search t = {(uintptr_t)addr, 0, 0};
    if (!dl_iterate_phdr(find_text, &t) || t.hi <= t.lo)
        return -1;
    *lo = t.lo;
    *hi = t.hi;
    return 0;
}

static uintptr_t interrupted_pc(const void *uc)
{
    const ucontext_t *u = uc;
#if defined(__x86_64__)
    return (uintptr_t)u->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)u->uc_mcontext.pc;
#else
    (void)u;
    return 0;
#endif
}

static int in_host(uintptr_t pc)
{
    return pc >= host_lo && pc < host_hi;
}

static int in_dll(const struct mqdh__guard *g, uintptr_t pc)
{
    const struct mqdh__dll *d = g->dll;
    return d && pc >= d->text_lo && pc < d->text_hi;
}

/* The thread's timer to fire in seconds (> 0), then every `every`
 * seconds (0: once). */
static void set_timer(struct mqdh__guard *g, double seconds, double every)
{
    if (!g->have_timer)
        return;
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    if (seconds < 1e-3)
        seconds = 1e-3;
    its.it_value.tv_sec = (time_t)seconds;
    its.it_value.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9);
    its.it_interval.tv_nsec = (long)(every * 1e9);
    timer_settime(g->timer, 0, &its, NULL);
}

/* The timer fired: the work at hand is out of time if its deadline has
 * passed; else the timer is set for that deadline (or, with no work, one
 * limit ahead: no work armed later can end sooner). */
static void on_tick(struct mqdh__guard *g, uintptr_t pc)
{
    if (!g->armed) {
        set_timer(g, g->seconds, 0);
        return;
    }
    double left = g->deadline - mqdh__monotonic();
    if (left > 0 && !g->expired) {
        set_timer(g, left, 0);
        return;
    }
    if (!g->expired)
        set_timer(g, 0.01, 0.01); /* until it lands in the DLL, or the work ends */
    g->expired = 1;
    /* Only out of the DLL's own code: anywhere else (libc's malloc, the
     * host's callbacks) may hold a lock. */
    if (g->in_dll && in_dll(g, pc)) {
        g->sig = 0;
        siglongjmp(g->jump, 1);
    }
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    struct mqdh__guard *g = current;
    uintptr_t pc = interrupted_pc(uc);
    if (sig == MQDH__GUARD_SIGNAL) {
        if (g && g->ticking)
            on_tick(g, pc);
        return;
    }
    if (g && g->armed && g->in_dll && !in_host(pc) && si->si_code > 0) {
        g->sig = sig;
        g->addr = si->si_addr;
        if (g->dll)
            atomic_store(&g->dll->crashed, 1);
        siglongjmp(g->jump, 1);
    }
    /* Not a guarded DLL's: as if this handler were not there. */
    for (int i = 0; i < NFAULTS; i++)
        if (faults[i] == sig)
            sigaction(sig, &previous[i], NULL);
    if (si->si_code <= 0) /* sent, not a fault: send it again */
        raise(sig);
}

static int install(void)
{
    pthread_mutex_lock(&install_lock);
    int rc = 0;
    if (installed++ == 0) {
        if (!host_hi && mqdh__object_text((const void *)(uintptr_t)&on_signal, &host_lo, &host_hi))
            host_lo = host_hi = 0;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        for (int i = 0; i < NFAULTS; i++)
            rc |= sigaction(faults[i], &sa, &previous[i]);
        rc |= sigaction(MQDH__GUARD_SIGNAL, &sa, &previous[NFAULTS]);
    }
    pthread_mutex_unlock(&install_lock);
    return rc ? -1 : 0;
}

static void uninstall(void)
{
    pthread_mutex_lock(&install_lock);
    if (--installed == 0) {
        for (int i = 0; i < NFAULTS; i++)
            sigaction(faults[i], &previous[i], NULL);
        sigaction(MQDH__GUARD_SIGNAL, &previous[NFAULTS], NULL);
    }
    pthread_mutex_unlock(&install_lock);
}

/* The thread's alternate signal stack: a DLL recursing without end
 * faults with no stack left to run the handler on. */
static _Thread_local void *alt_stack;
static _Thread_local stack_t alt_before;

int mqdh__guard_init(struct mqdh__guard *g, double seconds)
{
    memset(g, 0, sizeof *g);
    g->seconds = seconds;
    pthread_sigmask(SIG_SETMASK, NULL, &g->mask);
    if (install() != 0) {
        uninstall();
        return -1;
    }
    if (!alt_stack && (alt_stack = malloc(ALT_STACK))) {
        stack_t ss = {.ss_sp = alt_stack, .ss_size = ALT_STACK, .ss_flags = 0};
        if (sigaltstack(&ss, &alt_before) != 0) {
            free(alt_stack);
            alt_stack = NULL;
        }
    }
    if (seconds > 0) {
        struct sigevent ev;
        memset(&ev, 0, sizeof ev);
        ev.sigev_notify = SIGEV_THREAD_ID;
        ev.sigev_signo = MQDH__GUARD_SIGNAL;
        ev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
        g->have_timer = timer_create(CLOCK_MONOTONIC, &ev, &g->timer) == 0;
    }
    current = g;
    return 0;
}

void mqdh__guard_fini(struct mqdh__guard *g)
{
    current = NULL;
    if (g->have_timer)
        timer_delete(g->timer);
    g->have_timer = 0;
    if (alt_stack) {
        stack_t now;
        /* Put back what the thread had, unless something replaced ours. */
        if (sigaltstack(NULL, &now) == 0 && now.ss_sp == alt_stack &&
            !(now.ss_flags & SS_ONSTACK)) {
            sigaltstack((alt_before.ss_flags & SS_DISABLE) ? &(stack_t){.ss_flags = SS_DISABLE}
                                                           : &alt_before,
                        NULL);
            free(alt_stack);
            alt_stack = NULL;
        }
    }
    uninstall();
}

void mqdh__guard_arm(struct mqdh__guard *g)
{
    g->expired = 0;
    g->sig = 0;
    g->addr = NULL;
    g->entry = NULL;
    g->in_dll = 0;
    if (g->seconds > 0) {
        g->deadline = mqdh__monotonic() + g->seconds;
        if (!g->ticking) { /* once per thread: then it sets itself (on_tick) */
            g->ticking = 1;
            set_timer(g, g->seconds, 0);
        }
    }
    g->armed = 1;
}

void mqdh__guard_disarm(struct mqdh__guard *g)
{
    g->armed = 0;
    g->in_dll = 0;
    if (g->expired && g->ticking)
        set_timer(g, g->seconds, 0); /* no more ticks every 10 ms */
}

void mqdh__guard_jumped(struct mqdh__guard *g)
{
    /* Out of a handler by siglongjmp: its signal is still blocked. */
    pthread_sigmask(SIG_SETMASK, &g->mask, NULL);
}

void mqdh__guard_enter(struct mqdh__dll *dll, const char *entry)
{
    struct mqdh__guard *g = current;
    if (!g || !g->armed)
        return;
    g->dll = dll;
    g->entry = entry;
    g->in_dll = 1;
}

void mqdh__guard_leave(void)
{
    struct mqdh__guard *g = current;
    if (!g || !g->armed)
        return;
    g->in_dll = 0;
    if (g->expired)
        siglongjmp(g->jump, 1);
}

int mqdh__guard_leave_rc(int rc)
{
    mqdh__guard_leave();
    return rc;
}

void mqdh__guard_point(void)
{
    struct mqdh__guard *g = current;
    if (g && g->armed && g->in_dll && g->expired)
        siglongjmp(g->jump, 1);
}

const char *mqdh__guard_describe(const struct mqdh__guard *g, char *buf, size_t len)
{
    const char *entry = g->entry ? g->entry : "its set-up";
    if (g->sig)
        snprintf(buf, len, "crashed (SIG%s at address %#lx) in %s",
                 sigabbrev_np(g->sig) ? sigabbrev_np(g->sig) : "?",
                 (unsigned long)(uintptr_t)g->addr, entry);
    else
        snprintf(buf, len, "did not return within %g s from %s", g->seconds, entry);
    return buf;
}
