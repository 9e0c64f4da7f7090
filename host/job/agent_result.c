/*
 * agent_result.c - what an agent's output says: its results (one or,
 * through one command for many hosts, one per labelled stream), read as
 * hostile input (mqdh_result_read), and why a host's processes got none.
 */
#define _GNU_SOURCE
#include "job/agent_result.h"

#include "job/agent_command.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Control characters as '?': never a terminal's control sequence. */
static void tame(char *s)
{
    for (char *c = s; *c; c++)
        if ((unsigned char)*c < ' ' || *c == 0x7f)
            *c = '?';
}

/* The last line of a's stderr that names host (for one of many hosts:
 * "nodeC: ssh: connect to host nodeC port 22: ..."), or host NULL: its
 * last line; "" if none; malloc'd, tamed.  NULL out of memory. */
static char *said(const struct agent *a, const char *host)
{
    const char *t = a->tail ? a->tail : "", *best = NULL;
    size_t hl = host ? strlen(host) : 0, bl = 0;
    for (const char *l = t; *l;) {
        size_t ll = strcspn(l, "\n");
        size_t tl = ll;
        while (tl && (l[tl - 1] == '\r' || l[tl - 1] == ' '))
            tl--;
        int names = !host;
        for (const char *c = l; host && !names && c + hl < l + tl; c++)
            names = strncmp(c, host, hl) == 0 && c[hl] == ':' && (c == l || c[-1] == ' ');
        if (tl && names) {
            best = l;
            bl = tl;
        }
        l += ll + (l[ll] == '\n');
    }
    char *out = strndup(best ? best : "", bl);
    if (out)
        tame(out);
    return out;
}

/* The length of a line's label, as a command that runs many hosts' agents
 * marks each line (pdsh: "nodeB: ", srun --label: "  3: "): blanks, then
 * a word ending in ':', then a blank.  A result's own lines start with a
 * record's name, which never ends in ':' (docs/RESULT.md).  0: none. */
static size_t label_len(const char *l, size_t ll)
{
    size_t i = 0;
    while (i < ll && l[i] == ' ')
        i++;
    size_t w = i;
    while (i < ll && l[i] != ' ' && l[i] != ':')
        i++;
    if (i == w || i >= ll || l[i] != ':' || (i + 1 < ll && l[i + 1] != ' '))
        return 0;
    return i + 1 < ll ? i + 2 : i + 1;
}

/* One agent's output, told apart from the others' by its label. */
struct stream {
    const char *label; /* in the command's output; "" none */
    size_t llen;
    char *buf;
    size_t len, cap;
};

/* Append a line l[ll] (and a newline) to s: 0, or -1 without memory. */
static int stream_add(struct stream *s, const char *l, size_t ll)
{
    if (s->len + ll + 1 > s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 4096;
        while (nc < s->len + ll + 1)
            nc *= 2;
        char *nb = realloc(s->buf, nc);
        if (!nb)
            return -1;
        s->buf = nb;
        s->cap = nc;
    }
    memcpy(s->buf + s->len, l, ll);
    s->len += ll;
    s->buf[s->len++] = '\n';
    return 0;
}

/* a's output sorted into streams, one a label (and one for the lines with
 * none), in the order they first appear.  0, or -1 out of memory. */
static int demux(const struct agent *a, struct stream **out, int *n)
{
    struct stream *st = NULL;
    int ns = 0, last = -1;
    for (size_t at = 0; at < a->len;) {
        const char *l = a->buf + at;
        const char *nl = memchr(l, '\n', a->len - at);
        size_t ll = nl ? (size_t)(nl - l) : a->len - at;
        at += ll + (nl != NULL);
        size_t lab = label_len(l, ll);
        int k = last;
        if (k < 0 || st[k].llen != lab || memcmp(st[k].label, l, lab) != 0)
            for (k = 0; k < ns; k++)
                if (st[k].llen == lab && memcmp(st[k].label, l, lab) == 0)
                    break;
        if (k == ns) {
            struct stream *nst = realloc(st, (size_t)(ns + 1) * sizeof *nst);
            if (!nst)
                goto nomem;
            st = nst;
            st[ns++] = (struct stream){.label = l, .llen = lab};
        }
        last = k;
        if (stream_add(&st[k], l + lab, ll - lab) != 0)
            goto nomem;
    }
    *out = st;
    *n = ns;
    return 0;
nomem:
    for (int k = 0; k < ns; k++)
        free(st[k].buf);
    free(st);
    return -1;
}

/* The host of a's whose name is label's ("nodeB: "), or NULL. */
static struct host *host_labelled(struct mqdh__remote *r, const struct agent *a,
                                  const struct stream *s)
{
    size_t w = 0;
    while (w < s->llen && s->label[w] == ' ')
        w++;
    size_t e = w;
    while (e < s->llen && s->label[e] != ':')
        e++;
    for (int i = 0; i < a->nhosts; i++) {
        struct host *h = &r->h[a->first + i];
        if (strlen(h->name) == e - w && strncmp(h->name, s->label + w, e - w) == 0)
            return h;
    }
    return NULL;
}

/* Read stream s, which holds one result or several one after another
 * ("mqd-result" starts each), into a's results.  A result that does not
 * read is a reason: its host's if the label names one, else a's. */
static void read_stream(struct mqdh__remote *r, struct agent *a, const struct stream *s)
{
    for (size_t at = 0; at < s->len;) {
        size_t end = at;
        /* This result runs up to the next line that starts one. */
        for (size_t p = at; p < s->len;) {
            const char *nl = memchr(s->buf + p, '\n', s->len - p);
            p = nl ? (size_t)(nl - s->buf) + 1 : s->len;
            end = p;
            if (p < s->len && strncmp(s->buf + p, "mqd-result ", 11) == 0)
                break;
        }
        struct mqdh_dump *d = NULL;
        char err[512] = "";
        int rc = mqdh_result_read(s->buf + at, end - at, &d, err, sizeof err);
        if (rc == MQDH_OK) {
            struct mqdh_dump **nr = realloc(a->results, (size_t)(a->nresults + 1) * sizeof *nr);
            if (nr) {
                a->results = nr;
                a->results[a->nresults++] = d;
            } else {
                mqdh_dump_free(d);
            }
        } else {
            struct host *h = host_labelled(r, a, s);
            tame(err);
            mqdh__agent_why(h ? &h->why : &a->unread, "its agent's result: %s", err);
        }
        at = end;
    }
}

/* Why a host of a's has no result (asked only of those), malloc'd. */
char *mqdh__agent_reason(struct mqdh__remote *r, struct agent *a, const struct host *h)
{
    if (h->why)
        return strdup(h->why);
    char *line = said(a, a->nhosts > 1 ? h->name : NULL), *why = NULL;
    const char *sep = line && *line ? ": " : "";
    const char *l = line ? line : "";
    int st = a->status;
    if (a->why) /* it did not start */
        why = strdup(a->why);
    else if (a->timed_out)
        mqdh__agent_why(&why, "its agent gave no result within %d s (stopped)%s%s", r->timeout, sep, l);
    else if (a->too_big)
        mqdh__agent_why(&why, "its agent sent more than %zu MB: stopped", MAX_RESULT >> 20);
    else if (a->nhosts > 1)
        mqdh__agent_why(&why, "its agent gave no result through the command run for %d hosts (exit "
                      "status %d)%s%s", a->nhosts, WIFEXITED(st) ? WEXITSTATUS(st) : -1, sep, l);
    else if (WIFSIGNALED(st))
        mqdh__agent_why(&why, "its agent died of signal %d (%s)%s%s", WTERMSIG(st),
                strsignal(WTERMSIG(st)), sep, l);
    else if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
        mqdh__agent_why(&why, "no agent there: %s (exit 127)%s%s", r->agent, sep, l);
    else if (WIFEXITED(st) && WEXITSTATUS(st) == 64)
        mqdh__agent_why(&why, "its agent %s does not take this command line: another mqd version? "
                      "(exit 64)%s%s", r->agent, sep, l);
    else if (WIFEXITED(st) && WEXITSTATUS(st) == 255 && r->nwords &&
             strcmp(basename(r->words[0]), "ssh") == 0)
        mqdh__agent_why(&why, "ssh failed%s%s", sep, *l ? l : "(exit 255)");
    else if (a->unread)
        why = strdup(a->unread);
    else if (a->dropped)
        mqdh__agent_why(&why, "its agent did not report this process, and answered for %d it was not "
                      "sent (dropped)", a->dropped);
    else if (a->nresults)
        mqdh__agent_why(&why, "its agent's result does not include this process");
    else
        mqdh__agent_why(&why, "its agent exited with status %d and gave no result%s%s",
                WIFEXITED(st) ? WEXITSTATUS(st) : -1, sep, l);
    free(line);
    return why;
}

/* What a's end means: the results it gave (whatever its exit status, a
 * result that reads is whole), or the reasons there are none. */
void mqdh__agent_conclude(struct mqdh__remote *r, struct agent *a)
{
    if (a->too_big)
        return;
    struct stream *st = NULL;
    int ns = 0;
    if (demux(a, &st, &ns) != 0) {
        mqdh__agent_why(&a->why, "out of memory");
        return;
    }
    for (int k = 0; k < ns; k++) {
        read_stream(r, a, &st[k]);
        free(st[k].buf);
    }
    free(st);
}
