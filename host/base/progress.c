/*
 * progress.c - a dump's progress told to the caller (progress.h).
 */
#include "base/progress.h"

_Thread_local struct mqdh__progress *mqdh__progress_bound;

int mqdh__progress_step(enum mqdh__step step, int by, const char *name)
{
    struct mqdh__progress *pr = mqdh__progress_bound;
    if (!pr || !pr->fn)
        return 0;
    pthread_mutex_lock(&pr->lock);
    struct mqdh_progress *p = &pr->now;
    int *count[] = {[MQDH__TO_STOP] = &p->to_stop,
                    [MQDH__STOPPED] = &p->stopped,
                    [MQDH__UNWOUND] = &p->unwound,
                    [MQDH__READ] = &p->read,
                    [MQDH__LET_GO] = &p->let_go,
                    [MQDH__AGENTS] = &p->agents,
                    [MQDH__AGENT_STARTED] = &p->agents_started,
                    [MQDH__AGENT_OVER] = &p->agents_answered,
                    [MQDH__FETCH_BEGIN] = &p->fetching,
                    [MQDH__FETCH_END] = &p->fetched};
    *count[step] += by;
    if (step == MQDH__FETCH_BEGIN)
        p->fetch_name = name;
    if (step == MQDH__FETCH_END && !(p->fetching -= by))
        p->fetch_name = NULL;
    /* The name is the session's file's: valid while the session lasts. */
    pr->fn(pr->arg, p);
    pthread_mutex_unlock(&pr->lock);
    return 1;
}
