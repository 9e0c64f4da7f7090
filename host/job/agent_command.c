/*
 * agent_command.c - the remote command that starts an agent on another
 * host: the caller's template split into words, checked, and each
 * agent's command line made from it ({host}, {hosts}, the agent and its
 * share of the job's table).
 */
#define _GNU_SOURCE
#include "job/agent_command.h"

#include "base/beside.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void mqdh__agent_why(char **why, const char *fmt, ...)
{
    if (*why)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(why, fmt, ap) < 0)
        *why = NULL;
    va_end(ap);
}

/* Characters every remote shell takes literally: the words given to ssh
 * or pdsh are joined and run by the remote user's shell. */
static int shell_safe(const char *w)
{
    if (!*w)
        return 0;
    for (const char *c = w; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr("/._+-:=,@%", *c)))
            return 0;
    return 1;
}

/* The agent's path: the caller's, $MQD_AGENT, else mqdump next to this
 * library (bin/ beside lib/: the build tree and an installation alike).
 * One given is, as root, refused unless this host's copy passes the trust
 * rule (the same path runs on the other hosts, as root there too).  0, or
 * -1 with the reason in why (empty: none found). */
int mqdh__agent_path(const struct mqdh_options *o, char *out, size_t len, char *why,
                      size_t whylen)
{
    const char *p = o->agent_path ? o->agent_path : getenv("MQD_AGENT");
    why[0] = '\0';
    if (p && *p) {
        if ((size_t)snprintf(out, len, "%s", p) >= len)
            return -1;
        char e[1024];
        if (geteuid() == 0 && mqdh_path_trusted(out, "run it", e, sizeof e) != MQDH_OK) {
            snprintf(why, whylen, "refusing the agent %s: %s",
                     o->agent_path ? "given with --agent-path" : "given in $MQD_AGENT", e);
            return -1;
        }
        return 0;
    }
    static const char *const where[] = {"../bin/mqdump", "mqdump"};
    return mqdh__beside_library(where, 2, X_OK, out, len);
}

void mqdh__words_free(char **w, int n)
{
    for (int i = 0; i < n; i++)
        free(w[i]);
    free(w);
}

/* The template's words, split at blanks. */
int mqdh__command_split(const char *t, char ***out, int *n)
{
    char **w = NULL;
    int k = 0;
    for (const char *c = t; *c;) {
        while (*c == ' ' || *c == '\t')
            c++;
        if (!*c)
            break;
        size_t l = strcspn(c, " \t");
        char **nw = realloc(w, (size_t)(k + 1) * sizeof *w);
        if (!nw || !(nw[k] = strndup(c, l))) {
            mqdh__words_free(nw ? nw : w, k);
            return MQDH_E_NOMEM;
        }
        w = nw;
        k++;
        c += l;
    }
    *out = w;
    *n = k;
    return MQDH_OK;
}

/* word with every key ("{host}") replaced by value, malloc'd; word is
 * freed.  NULL: out of memory. */
static char *expand(char *word, const char *key, const char *value)
{
    size_t kl = strlen(key), vl = strlen(value), n = 0;
    if (!word)
        return NULL;
    for (const char *c = strstr(word, key); c; c = strstr(c + kl, key))
        n++;
    char *out = n ? malloc(strlen(word) + n * vl + 1) : word, *o = out;
    if (!n || !out) {
        if (!out)
            free(word);
        return out;
    }
    for (const char *c = word; *c;) {
        if (strncmp(c, key, kl) == 0) {
            memcpy(o, value, vl);
            o += vl;
            c += kl;
        } else {
            *o++ = *c++;
        }
    }
    *o = '\0';
    free(word);
    return out;
}

/* Host h's share of the table: "PID:RANK" words (per-host form), or one
 * "HOST=PID:RANK,PID:RANK..." word (all-hosts form), at v[*k...]. */
static int share_words(struct mqdh__remote *r, const struct host *h, char **v, int *k)
{
    if (!r->all) {
        for (int i = 0; i < h->n; i++) {
            int j = h->idx[i];
            int rank = r->ranks && r->ranks[j] >= 0 ? r->ranks[j] : -1;
            if (asprintf(&v[*k], "%d:%d", (int)r->procs[j].pid, rank) < 0)
                return -1;
            ++*k;
        }
        return 0;
    }
    size_t len = strlen(h->name) + 2 + (size_t)h->n * 24;
    char *w = malloc(len), *o = w;
    if (!w)
        return -1;
    o += sprintf(o, "%s=", h->name);
    for (int i = 0; i < h->n; i++) {
        int j = h->idx[i];
        int rank = r->ranks && r->ranks[j] >= 0 ? r->ranks[j] : -1;
        o += sprintf(o, "%s%d:%d", i ? "," : "", (int)r->procs[j].pid, rank);
    }
    v[(*k)++] = w;
    return 0;
}

/* What share_words gives host h, in bytes (for packing hosts into one
 * command). */
size_t mqdh__share_size(const struct host *h)
{
    return strlen(h->name) + 2 + (size_t)h->n * 24;
}

/* The template's words for a's hosts: {host} (the per-host form), or
 * {hosts} comma-joined and {nhosts} their count; into v[*k...]. */
static int template_words(struct mqdh__remote *r, const struct agent *a, char **v, int *k)
{
    size_t len = 1;
    for (int i = 0; i < a->nhosts; i++)
        len += strlen(r->h[a->first + i].name) + 1;
    char *list = malloc(len), *o = list, count[16];
    if (!list)
        return -1;
    *o = '\0';
    for (int i = 0; i < a->nhosts; i++)
        o += sprintf(o, "%s%s", i ? "," : "", r->h[a->first + i].name);
    snprintf(count, sizeof count, "%d", a->nhosts);
    int rc = 0;
    for (int i = 0; i < r->nwords && rc == 0; i++) {
        char *w = strdup(r->words[i]);
        w = expand(w, "{host}", r->h[a->first].name);
        w = expand(w, "{hosts}", list);
        w = expand(w, "{nhosts}", count);
        if (!(v[*k] = w))
            rc = -1;
        else
            ++*k;
    }
    free(list);
    return rc;
}

/* The agent's argv: the template's words for its hosts, then the
 * agent's command line.  NULL-terminated, malloc'd, or NULL out of
 * memory. */
char **mqdh__agent_argv(struct mqdh__remote *r, struct agent *a)
{
    const struct mqdh_options *o = r->opt;
    int max = r->nwords + 16 + (r->all ? a->nhosts : r->h[a->first].n);
    char **v = calloc((size_t)max + 1, sizeof *v);
    int k = 0;
    if (!v || template_words(r, a, v, &k) != 0)
        goto nomem;
    char jobs[32], timeout[32], owner[32];
    snprintf(jobs, sizeof jobs, "--jobs=%d", o->jobs);
    snprintf(timeout, sizeof timeout, "--timeout=%d", o->dll_timeout < 0 ? 0 : o->dll_timeout);
    /* The launcher's user, whose processes alone the agent may dump. */
    snprintf(owner, sizeof owner, "--owner=%lu", (unsigned long)o->owner);
    const char *words[] = {r->agent, r->all ? "--agent-any" : "--agent",
                           r->all ? NULL : r->h[a->first].name,
                           o->dll ? "--dll" : NULL, o->dll,
                           o->target_dll ? "--target-dll" : NULL,
                           o->trust_target_dll ? "--trust-target-dll" : NULL,
                           o->jobs > 0 ? jobs : NULL,
                           o->verbose ? "--verbose" : NULL,
                           o->dll_timeout ? timeout : NULL,
                           o->owner_set ? owner : NULL};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (i == 4 && !o->dll)
            continue;
        if (words[i] && !(v[k++] = strdup(words[i])))
            goto nomem;
    }
    for (int i = 0; i < a->nhosts; i++)
        if (share_words(r, &r->h[a->first + i], v, &k) != 0)
            goto nomem;
    return v;
nomem:
    mqdh__agent_why(&a->why, "out of memory");
    for (int i = 0; v && i < k; i++)
        free(v[i]);
    free(v);
    return NULL;
}

/* The reason every host gets that no agent can start for, if any. */
void mqdh__command_check(struct mqdh__remote *r, int have_agent, const char *agent_why,
                          char **why)
{
    const struct mqdh_options *o = r->opt;
    int per_host = 0;
    for (int i = 0; i < r->nwords; i++) {
        per_host |= strstr(r->words[i], "{host}") != NULL;
        r->all |= strstr(r->words[i], "{hosts}") != NULL;
    }
    char shown[160];
    const char *unsafe = !shell_safe(r->agent) ? r->agent
                         : o->dll && !shell_safe(o->dll) ? o->dll
                                                         : NULL;
    char found[1024];
    if (!r->nwords)
        mqdh__agent_why(why, "the remote command is empty (--remote, $MQD_REMOTE)");
    else if (mqdh_program_path(r->words[0], r->program, sizeof r->program, found,
                               sizeof found) != MQDH_OK)
        mqdh__agent_why(why, "the remote command cannot be run: %s", found);
    else if (per_host && r->all)
        mqdh__agent_why(why, "the remote command names both {host} and {hosts}: it runs either for "
                     "one host or for a list of them");
    else if (!have_agent && agent_why[0])
        mqdh__agent_why(why, "%s", agent_why);
    else if (!have_agent)
        mqdh__agent_why(why, "no agent to start there: mqdump is not beside libmqdhost (give "
                     "--agent-path, or $MQD_AGENT)");
    else if (unsafe) {
        /* The words the remote shell sees must mean themselves. */
        mqdh_escape(shown, sizeof shown, unsafe);
        mqdh__agent_why(why, "'%s' cannot be passed to the agent: a remote shell would read characters "
                     "in it as its own", shown);
    }
}
