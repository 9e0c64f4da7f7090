/*
 * owner.c - whose processes a dump may touch (owner.h): an agent only its
 * own user's, and, once the launcher's user is known (mqdh_options.owner),
 * only that user's, checked before any process is attached and again once
 * they are stopped.
 */
#define _GNU_SOURCE
#include "job/owner.h"

#include "target/proc.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* " (name)" for user uid into buf[len], or "" if it has no name here. */
static const char *user_name(uid_t uid, char *buf, size_t len)
{
    struct passwd pw, *found = NULL;
    char tmp[1024];
    buf[0] = '\0';
    if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &found) == 0 && found && found->pw_name)
        snprintf(buf, len, " (%s)", found->pw_name);
    return buf;
}

/*
 * The descriptors below which a process's status may be kept open from
 * its check before the attach to the one once it is stopped (attach.h):
 * half the soft limit, at most 512, so that a job of many ranks leaves
 * the rest of the dump descriptors enough (its later ranks are opened
 * twice, as before).
 */
static int keep_below(void)
{
    static _Atomic int below;
    int b = below;
    if (b == 0) {
        struct rlimit rl;
        rlim_t half = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur / 2 : 0;
        b = half < 512 ? (int)half + 1 : 513; /* + 1: never 0 */
        below = b;
    }
    return b - 1;
}

/*
 * Is process a the user's whose processes the dump may touch (o->owner:
 * the launcher's)?  Every user id of it, and the owner of its files in
 * /proc (root once it is not dumpable), must be that user: as read now,
 * or (stopped) as its attachment read them once it was stopped.  1 if
 * so; else 0 with a's error set.
 */
static int owners_process(struct mqdh__attach *a, const struct mqdh_options *o, int stopped)
{
    uid_t ids[4], dir;
    char name[160], whose[64];
    int fd = -1;
    if (stopped && a->owners_known) {
        memcpy(ids, a->ids, sizeof ids);
        dir = a->dump_owner;
    } else if ((fd = mqdh__proc_status_open(a->pid)) < 0 ||
               mqdh__proc_owners_fd(fd, ids, &dir, NULL) != 0) {
        if (fd >= 0)
            close(fd);
        a->rc = -ESRCH;
        snprintf(a->why, sizeof a->why, "process %d does not exist", (int)a->pid);
        return 0;
    }
    if (o->owner_pid > 0)
        snprintf(whose, sizeof whose, "the launcher %d", (int)o->owner_pid);
    else
        snprintf(whose, sizeof whose, "the job's launcher");
    int other = -1;
    for (int k = 0; k < 4 && other < 0; k++)
        if (ids[k] != o->owner)
            other = k;
    int pass = other < 0 && dir == o->owner;
    /* Admitted: its status kept for the check once it is stopped. */
    if (pass && fd >= 0 && !stopped && a->want_owners && !a->kept_status && fd < keep_below())
        a->kept_status = fd + 1;
    else if (fd >= 0)
        close(fd);
    if (pass)
        return 1;
    a->rc = -EPERM;
    if (other == 0) {
        snprintf(a->why, sizeof a->why, "process %d belongs to user %lu%s, but %s runs as user "
                 "%lu: a launcher's table names only its own user's processes; not attached",
                 (int)a->pid, (unsigned long)ids[0], user_name(ids[0], name, sizeof name),
                 whose, (unsigned long)o->owner);
        return 0;
    }
    if (other > 0) {
        snprintf(a->why, sizeof a->why, "process %d belongs to user %lu, but runs with the "
                 "privileges of user %lu%s (a setuid program?), and %s runs as user %lu: a "
                 "launcher's table names only its own user's processes; not attached",
                 (int)a->pid, (unsigned long)ids[0], (unsigned long)ids[other],
                 user_name(ids[other], name, sizeof name), whose, (unsigned long)o->owner);
        return 0;
    }
    snprintf(a->why, sizeof a->why, "process %d is not dumpable (it runs a setuid or setgid "
             "program, or made itself so): user %lu, as whom %s runs, could not trace it; "
             "not attached", (int)a->pid, (unsigned long)o->owner, whose);
    return 0;
}

/*
 * May process a be attached?  An agent dumps only its own user's
 * processes (root: anyone's): the pids it is given come from another
 * host.  And with o->owner_set, only the owner's, even as root (a
 * launcher's table names only its own user's processes).  1 if so; else 0
 * with the attachment's error set.
 */
int mqdh__admit(struct mqdh__attach *a, const struct mqdh_options *o)
{
    uid_t uid;
    if (o->as_agent && geteuid() != 0) {
        if (mqdh__proc_uid(a->pid, &uid) != 0) {
            a->rc = -ESRCH;
            snprintf(a->why, sizeof a->why, "process %d does not exist", (int)a->pid);
            return 0;
        }
        if (uid != getuid()) {
            a->rc = -EPERM;
            snprintf(a->why, sizeof a->why,
                     "process %d belongs to user %lu, and the agent runs as user %lu: an agent "
                     "dumps only its own user's processes", (int)a->pid, (unsigned long)uid,
                     (unsigned long)getuid());
            return 0;
        }
    }
    return !o->owner_set || owners_process(a, o, 0);
}

/*
 * Once the processes are stopped, the owner's rule again: a process could
 * have run a setuid program between its check and its stop; stopped, its
 * ids hold still.  One that fails it now is let go, unread.
 */
void mqdh__readmit(struct mqdh__attach *const *atts, int n, const struct mqdh_options *o)
{
    for (int i = 0; o->owner_set && i < n; i++)
        if (atts[i]->rc == 0 && !owners_process(atts[i], o, 1))
            mqdh__detach(atts[i]); /* its rc and why stay */
}
