/*
 * owner.h - whose processes a dump may touch (owner.c), for session.c.
 */
#ifndef MQDH__OWNER_H
#define MQDH__OWNER_H

#include "target/attach.h"
#include "mqdhost.h"

/*
 * May process a (a->pid) be attached?  An agent dumps only its own user's
 * processes (root: anyone's): the pids it is given come from another
 * host.  And with o->owner_set, only the owner's, even as root (a
 * launcher's table names only its own user's processes).  1 if so; else 0
 * with the attachment's error (a->rc, a->why) set.
 */
int mqdh__admit(struct mqdh__attach *a, const struct mqdh_options *o);

/*
 * Once the processes are stopped, the owner's rule again: a process could
 * have run a setuid program between its check and its stop; stopped, its
 * ids hold still.  One of atts[0..n-1] that fails it now is let go,
 * unread (its rc and why say why).
 */
void mqdh__readmit(struct mqdh__attach *const *atts, int n, const struct mqdh_options *o);

#endif
