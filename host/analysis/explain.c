/*
 * explain.c - a wait of the analysis in words (mqdh_explain_wait): who
 * waits in which call, for whom, and why that one does not act.
 */
#include "mqdhost.h"

#include "base/dump.h"
#include "analysis/match.h"

#include <stdio.h>
#include <string.h>

/* A source position as people read it: "ring.c:44" (the file's last
 * component), into buf[len]; "" without one. */
static void position(const char *file, int line, char *buf, size_t len)
{
    const char *base = file ? strrchr(file, '/') : NULL;
    if (file)
        snprintf(buf, len, "%s:%d", base ? base + 1 : file, line);
    else
        buf[0] = '\0';
}

/* Where process i's MPI call was made, as " at ring.c:44" or " from
 * solve" (no line information), into buf[len]; "" if not known. */
static void call_site(const struct mqdh_process *p, char *buf, size_t len)
{
    char pos[160];
    position(p->where_file, p->where_line, pos, sizeof pos);
    if (pos[0])
        snprintf(buf, len, " at %s", pos);
    else if (p->where_function && strcmp(p->where_function, "??") != 0)
        snprintf(buf, len, " called from %s", p->where_function);
    else
        buf[0] = '\0';
}

/* What the process waited for is doing, as " (it is in MPI_Send at
 * ring.c:44)", for a wait of kind `kind`, into buf[len]. */
static void peer_state(const struct mqdh_dump *d, int i, enum mqdh_wait_kind kind, char *buf,
                       size_t len)
{
    const struct mqdh_process *t = &d->procs[i];
    char site[200];
    call_site(t, site, sizeof site);
    const struct mqdh_frame *at = t->where_call ? NULL : mqdh_user_frame(d, i);
    if (mqdh__process_finished(t)) {
        char pos[160] = "";
        if (at && at->file)
            position(at->file, at->line, pos, sizeof pos);
        snprintf(buf, len, " (it is past MPI_Finalize%s%s%s%s: it will never send, receive or "
                 "join anything again)", at && at->function ? ", in " : "",
                 at && at->function ? at->function : "", pos[0] ? " at " : "", pos);
    } else if (mqdh__process_terminal(t) && kind != MQDH_WAIT_COLLECTIVE)
        snprintf(buf, len, " (it is in %s%s: it will never send or receive again)",
                 t->where_call, site);
    else if (t->where_call)
        snprintf(buf, len, " (it is in %s%s)", t->where_call, site);
    else if (t->where_error || t->error)
        snprintf(buf, len, " (where it is is not known)");
    else {
        /* Not in MPI: it may still do what is waited for, or never. */
        const char *may = kind == MQDH_WAIT_RECV   ? "it may still send"
                          : kind == MQDH_WAIT_SEND ? "it may still receive"
                                                   : "it may still enter it";
        if (at) {
            char pos[160];
            position(at->file, at->line, pos, sizeof pos);
            snprintf(buf, len, " (it is not in MPI: in %s%s%s; %s)",
                     at->function ? at->function : "??", pos[0] ? " at " : "", pos, may);
        } else
            snprintf(buf, len, " (it is not in MPI; %s)", may);
    }
}

/* Wait w's peer and tag as its call's arguments say them: "?" where the
 * argument was not read, "ANY" for a wildcard. */
static void peer_and_tag(const struct mqdh_dump *d, const struct mqdh_wait *w, int relative,
                         char *peer, size_t peer_len, char *tag, size_t tag_len)
{
    if (w->tag_unknown)
        snprintf(tag, tag_len, "?");
    else if (w->tag_wild)
        snprintf(tag, tag_len, "ANY");
    else
        snprintf(tag, tag_len, "%ld", w->tag);
    if (w->peer_unknown)
        snprintf(peer, peer_len, "?");
    else if (w->any_source)
        snprintf(peer, peer_len, "ANY");
    else
        mqdh_peer_text(d, w->from, w->peer_local, w->peer_global, relative, peer, peer_len);
}

void mqdh_explain_wait(const struct mqdh_dump *d, const struct mqdh_wait *w, int relative,
                       char *buf, size_t len)
{
    const struct mqdh_process *p = &d->procs[w->from], *t = &d->procs[w->to];
    /* -1: MPI_Finalize's MPI_COMM_WORLD, gone from the process already */
    const char *cname = w->comm >= 0 ? p->comms[w->comm].name : w->comm == -1 ? "MPI_COMM_WORLD" : "?";
    char me[48], them[48], args[200], state[400], rootmsg[160], site[200];
    const char *call = p->where_call ? p->where_call : "MPI";
    mqdh_process_label(p, me, sizeof me);
    if (relative && t->rank >= 0 && t->world == p->world)
        mqdh__peer_label(t->rank, p->rank, mqdh_world_size(d, p->world), 1, them, sizeof them);
    else
        mqdh_process_label(t, them, sizeof them);
    call_site(p, site, sizeof site);
    peer_state(d, w->to, w->kind, state, sizeof state);

    char peer[64], tag[32];
    peer_and_tag(d, w, relative, peer, sizeof peer, tag, sizeof tag);

    int own = 0; /* the call is the operation itself: MPI_Recv(source=...) */
    enum mqdh__call_kind k = mqdh__call_kind(p->where_call);
    const char *reason = "?";
    args[0] = '\0';
    switch (w->kind) { /* every kind: -Wswitch says if one is missing */
    case MQDH_WAIT_RECV:
        own = k == MQDH__CALL_ONE_RECV || k == MQDH__CALL_PROBE;
        snprintf(args, sizeof args, "%ssource=%s, tag=%s, comm=%s", own ? "" : "receive(",
                 peer, tag, cname);
        reason = w->from_call ? "is blocked in a call that is no matching send"
                              : "has no matching send pending";
        break;
    case MQDH_WAIT_SEND:
        own = k == MQDH__CALL_ONE_SEND;
        snprintf(args, sizeof args, "%sdest=%s, tag=%s, comm=%s", own ? "" : "send(", peer, tag,
                 cname);
        reason = w->from_call ? "is blocked in a call that is no matching receive"
                              : "has posted no matching receive";
        break;
    case MQDH_WAIT_COLLECTIVE:
        /* MPI_Wait & co. on a nonblocking collective: say so. */
        own = k == MQDH__CALL_COLLECTIVE || k == MQDH__CALL_FINALIZE;
        if (w->roots_differ) {
            snprintf(args, sizeof args, "comm=%s, root=%ld", cname, w->root);
            snprintf(rootmsg, sizeof rootmsg, "calls it with root %ld: the roots must agree",
                     w->peer_root);
            reason = rootmsg;
            break;
        }
        if (!own && w->tag >= 0) { /* the member's instance with that tag is another one */
            snprintf(args, sizeof args, "nonblocking collective(comm=%s, schedule tag %ld", cname,
                     w->tag);
            reason = "started another collective as that instance: a message of it with that "
                     "tag is beside a receive that does not take it, and neither completes";
            break;
        }
        snprintf(args, sizeof args, "%scomm=%s", own ? "" : "nonblocking collective(", cname);
        if (own && w->tag >= 0) { /* in the same call, made otherwise */
            snprintf(rootmsg, sizeof rootmsg,
                     "is in it too, but its message with tag %ld is beside a receive of it "
                     "that does not take it: the calls differ, and neither completes",
                     w->tag);
            reason = rootmsg;
            break;
        }
        reason = own ? "has not entered it" : "has not entered it or a matching one";
        break;
    }
    /* MPI_Recv(source=0, ...) at f.c:20; MPI_Waitall at f.c:63: receive(...) */
    snprintf(buf, len, "%s%swaits in %s%s%s%s%s%s - %s %s%s", relative ? "" : me,
             relative ? "" : " ", call, own ? "(" : site, own ? "" : ": ", args, ")",
             own ? site : "", them, reason, state);
}

void mqdh_frame_words(char *buf, size_t len, const char *function, const char *file, int line,
                      const char *module, int inlined)
{
    if (!buf || !len)
        return;
    const char *fb = file ? strrchr(file, '/') : NULL, *mb = module ? strrchr(module, '/') : NULL;
    int n = snprintf(buf, len, "%s%s", function ? function : "??", inlined ? " (inlined)" : "");
    if (n < 0 || (size_t)n >= len)
        return;
    if (file)
        snprintf(buf + n, len - (size_t)n, " at %s:%d", fb ? fb + 1 : file, line);
    else if (module)
        snprintf(buf + n, len - (size_t)n, " (%s)", mb ? mb + 1 : module);
}
