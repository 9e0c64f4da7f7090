/*
 * sentinel.c - when a job nobody watches is hung (mqdh_sentinel_new,
 * mqdhost.h), look after look.
 *
 * Why this is the library's and not mqdump's: deciding is the part of a
 * sentinel that every tool wants the same (a batch system's prologue, a
 * test harness, a debugger's "wait for the hang" button), and the part
 * whose mistakes cost most (a job killed that was only slow); here it is
 * over the public watch alone, and tested on hand-built looks
 * (tests/test_sentinel.c).  Looking (when, how often, at which processes)
 * and what to do once the job is hung stay the caller's.
 *
 * The rules, after ParaStack (Li, Chen, Gupta, SC'17: a hang is a job
 * whose observed state stops changing for longer than its own history
 * makes likely, judged from periodic samples at a low, fixed cost): the
 * quiet time, since the last look at which something moved, is a hang
 * once it reaches the threshold, the largest of the floor, factor times
 * the longest quiet time that ended in a move, and the quiet time that a
 * job moving at the share of looks this one did would show less than once
 * in MQDH__SENTINEL_ODDS; at most the caller's bound.  Quiet times are
 * measured from look to look, so they are upper bounds of the job's own
 * (it moved somewhere between the last quiet look and the moving one): a
 * threshold learned from them errs long, never short.  The share is
 * counted over quiet times that ended only, never over the one under way,
 * which is the question.
 */
#define _GNU_SOURCE
#include "mqdhost.h"

#include <stdlib.h>
#include <string.h>

/* The chance below which a quiet time of a moving job is taken for a hang
 * (the odds rule): one in MQDH__SENTINEL_ODDS. */
#define MQDH__SENTINEL_ODDS 1000.0
/* Looks in the floor, and the defaults of the options. */
#define MQDH__SENTINEL_FLOOR_LOOKS 6
#define MQDH__SENTINEL_INTERVAL 10.0
#define MQDH__SENTINEL_FACTOR 4.0
/* Quiet looks the odds rule asks for at most (a job seen moving once in a
 * million looks would ask for seven million). */
#define MQDH__SENTINEL_MAX_RUN 100000

struct mqdh_sentinel {
    struct mqdh_sentinel_options o; /* completed: every member set */
    int looks, moves;
    double first, last;  /* the first look's time, the last one's */
    double moved_at;     /* the last look at which something moved (or the first) */
    double unsure_at;    /* the last look at which a process was not compared; -1 */
    double longest;      /* the longest quiet time that ended in a move */
    int run;             /* quiet (or unsure) looks since moved_at */
    int ended_looks;     /* looks of the quiet times that ended, with their moves */
    int ended_moves;
};

int mqdh_sentinel_new(const struct mqdh_sentinel_options *o, struct mqdh_sentinel **out)
{
    if (!out)
        return MQDH_E_USAGE;
    *out = NULL;
    struct mqdh_sentinel_options c = MQDH_SENTINEL_OPTIONS_INIT;
    if (o) {
        if (o->size < sizeof o->size)
            return MQDH_E_USAGE;
        memcpy((char *)&c + sizeof c.size, (const char *)o + sizeof o->size,
               (o->size < sizeof c ? o->size : sizeof c) - sizeof c.size);
    }
    if (c.interval < 0 || c.floor < 0 || c.bound < 0 || c.factor < 0 ||
        (c.factor > 0 && c.factor < 1))
        return MQDH_E_USAGE;
    if (c.interval == 0)
        c.interval = MQDH__SENTINEL_INTERVAL;
    if (c.floor == 0)
        c.floor = MQDH__SENTINEL_FLOOR_LOOKS * c.interval;
    if (c.factor == 0)
        c.factor = MQDH__SENTINEL_FACTOR;
    struct mqdh_sentinel *s = calloc(1, sizeof *s);
    if (!s)
        return MQDH_E_NOMEM;
    s->o = c;
    *out = s;
    return MQDH_OK;
}

void mqdh_sentinel_free(struct mqdh_sentinel *s)
{
    free(s);
}

/* What w says of the look: MOVED (a process moved, or may have), UNSURE
 * (none did, but one was not compared) or QUIET. */
static enum mqdh_sentinel_says compared(const struct mqdh_watch *w)
{
    int unseen = 0;
    for (int i = 0; i < w->nprocs; i++) {
        const struct mqdh_moves *m = &w->procs[i];
        if (m->moved || m->maybe)
            return MQDH_SENTINEL_MOVED;
        unseen |= !m->seen;
    }
    return unseen || w->nprocs == 0 ? MQDH_SENTINEL_UNSURE : MQDH_SENTINEL_QUIET;
}

/* Of the looks of the quiet times that ended, the share at which
 * something moved, smoothed (Laplace: one move and one quiet look more
 * than seen, so that neither 0 nor 1 comes of a few looks). */
static double moving_share(const struct mqdh_sentinel *s)
{
    return (s->ended_moves + 1.0) / (s->ended_looks + 2.0);
}

/* The quiet looks in a row that a job moving at share p shows less than
 * once in MQDH__SENTINEL_ODDS: the least k with (1 - p)^k below it. */
static int unlikely_run(double p)
{
    double chance = 1;
    int k = 0;
    while (chance >= 1 / MQDH__SENTINEL_ODDS && k < MQDH__SENTINEL_MAX_RUN) {
        chance *= 1 - p;
        k++;
    }
    return k;
}

/* The threshold now, and the rule that set it, into st. */
static void threshold(const struct mqdh_sentinel *s, struct mqdh_sentinel_state *st)
{
    double longest = s->o.factor * s->longest;
    double odds = unlikely_run(moving_share(s)) * s->o.interval;
    st->rule = MQDH_SENTINEL_RULE_FLOOR;
    st->threshold = s->o.floor;
    if (longest > st->threshold) {
        st->rule = MQDH_SENTINEL_RULE_LONGEST;
        st->threshold = longest;
    }
    if (odds > st->threshold) {
        st->rule = MQDH_SENTINEL_RULE_ODDS;
        st->threshold = odds;
    }
    if (s->o.bound > 0 && s->o.bound < st->threshold) {
        st->rule = MQDH_SENTINEL_RULE_BOUND;
        st->threshold = s->o.bound;
    }
}

/* Something moved at the look at t: the quiet time it ends is learned. */
static void moved(struct mqdh_sentinel *s, double t)
{
    if (t - s->moved_at > s->longest && s->run > 0)
        s->longest = t - s->moved_at;
    s->ended_looks += s->run + 1;
    s->ended_moves++;
    s->moves++;
    s->moved_at = t;
    s->run = 0;
}

int mqdh_sentinel_look(struct mqdh_sentinel *s, double t, const struct mqdh_watch *w,
                       struct mqdh_sentinel_state *st)
{
    if (!s || !st || (s->looks > 0 && t < s->last))
        return MQDH_E_USAGE;
    memset(st, 0, sizeof *st);
    if (s->looks == 0) {
        s->first = s->moved_at = t;
        s->unsure_at = -1;
        st->says = MQDH_SENTINEL_FIRST;
    } else {
        st->says = w ? compared(w) : MQDH_SENTINEL_MOVED;
        if (st->says == MQDH_SENTINEL_MOVED)
            moved(s, t);
        else
            s->run++;
        if (st->says == MQDH_SENTINEL_UNSURE)
            s->unsure_at = t;
    }
    s->looks++;
    s->last = t;
    threshold(s, st);
    st->looks = s->looks;
    st->moves = s->moves;
    /* A process not compared may have moved unseen: the quiet time that
     * can be a hang starts after it was last seen. */
    st->quiet = t - (s->unsure_at > s->moved_at ? s->unsure_at : s->moved_at);
    st->longest_quiet = s->longest;
    st->moving_share = moving_share(s);
    if (st->says == MQDH_SENTINEL_QUIET && st->quiet >= st->threshold)
        st->says = MQDH_SENTINEL_HUNG;
    return MQDH_OK;
}
