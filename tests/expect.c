/* expect.c - the parser for samples' .expect files (format in expect.h). */
#define _POSIX_C_SOURCE 200809L
#include "expect.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_long(const char *s, int any_ok, long *out)
{
    char *end;
    if (any_ok && strcmp(s, "ANY") == 0) {
        *out = EXPECT_ANY;
        return 0;
    }
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

static int copy_name(char dst[64], const char *src)
{
    if (strlen(src) >= 64)
        return -1;
    strcpy(dst, strcmp(src, "-") == 0 ? "" : src);
    return 0;
}

/* Append item (size bytes) to the array *arr of *n. */
static int push(void *arr, int *n, size_t size, const void *item)
{
    void **a = arr;
    char *m = realloc(*a, (size_t)(*n + 1) * size);
    if (!m)
        return -1;
    memcpy(m + (size_t)*n * size, item, size);
    *a = m;
    (*n)++;
    return 0;
}

/* "R" or "W:R" into a process number; its end in *end. */
static int parse_process(const char *s, int *key, char **end)
{
    long w = 0, r;
    errno = 0;
    r = strtol(s, end, 10);
    if (errno || *end == s)
        return -1;
    if (**end == ':') {
        const char *at = *end + 1;
        w = r;
        r = strtol(at, end, 10);
        if (errno || *end == at || w < 1 || w >= EXPECT_MAX_WORLDS)
            return -1;
    }
    if (r < 0 || r >= EXPECT_WORLD)
        return -1;
    *key = (int)(w * EXPECT_WORLD + r);
    return 0;
}

/* "0,1,1:0": processes in ascending order, each once. */
static int rank_list(char dst[256], const char *src)
{
    int prev = -1, key;
    const char *p = src;
    if (strlen(src) >= 256)
        return -1;
    for (;;) {
        char *end;
        if (parse_process(p, &key, &end) || key <= prev)
            return -1;
        prev = key;
        if (*end == '\0')
            break;
        if (*end != ',')
            return -1;
        p = end + 1;
    }
    strcpy(dst, src);
    return 0;
}

static int parse_rank(const char *s, int *rank)
{
    char *end;
    if (strcmp(s, "*") == 0) {
        *rank = EXPECT_ALL_RANKS;
        return 0;
    }
    return parse_process(s, rank, &end) || *end ? -1 : 0;
}

/* A GPEER: a process or ANY. */
static int parse_peer(const char *s, long *out)
{
    int key;
    if (strcmp(s, "ANY") == 0) {
        *out = EXPECT_ANY;
        return 0;
    }
    if (parse_rank(s, &key) || key < 0)
        return -1;
    *out = key;
    return 0;
}

static int parse_line(char *line, struct expect *e)
{
    char *tok[10];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(line, " \t\r\n", &save); t;
         t = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == 10)
            return -1;
        tok[n++] = t;
    }
    if (n == 0)
        return 0;
    long v[4];
    if (strcmp(tok[0], "np") == 0 && n == 2) {
        if (parse_long(tok[1], 0, &v[0]) || v[0] < 1 || v[0] > 4096)
            return -1;
        e->np = e->world_size[0] = (int)v[0];
        if (!e->nworlds)
            e->nworlds = 1;
        return 0;
    }
    if (strcmp(tok[0], "world") == 0 && n == 3) {
        if (parse_long(tok[1], 0, &v[0]) || v[0] < 1 || v[0] >= EXPECT_MAX_WORLDS ||
            parse_long(tok[2], 0, &v[1]) || v[1] < 1 || v[1] > EXPECT_WORLD)
            return -1;
        e->world_size[v[0]] = (int)v[1];
        if (e->nworlds < v[0] + 1)
            e->nworlds = (int)v[0] + 1;
        return 0;
    }
    if (strcmp(tok[0], "comm") == 0 && (n == 5 || (n == 7 && strcmp(tok[5], "remote") == 0))) {
        struct expect_comm c;
        c.remote_size = -1;
        if (parse_rank(tok[1], &c.rank) || copy_name(c.name, tok[2]) ||
            parse_long(tok[3], 0, &c.size) || parse_long(tok[4], 0, &c.local_rank) ||
            (n == 7 && parse_long(tok[6], 0, &c.remote_size)))
            return -1;
        return push(&e->comms, &e->ncomms, sizeof c, &c);
    }
    if (strcmp(tok[0], "op") == 0 && (n == 9 || (n == 10 && strcmp(tok[9], "coll") == 0))) {
        static const char *const queues[] = {"send", "recv", "unexpected"};
        static const char *const statuses[] = {"pending", "matched", "complete"};
        struct expect_op o;
        int q = -1, s = -1;
        if (parse_rank(tok[1], &o.rank) || o.rank < 0 || copy_name(o.comm, tok[2]))
            return -1;
        for (int i = 0; i < 3; i++) {
            if (strcmp(tok[3], queues[i]) == 0)
                q = i;
            if (strcmp(tok[4], statuses[i]) == 0)
                s = i;
        }
        if (q < 0 || s < 0 || parse_long(tok[5], 1, &o.peer) || parse_peer(tok[6], &o.gpeer) ||
            parse_long(tok[7], 1, &o.tag) || parse_long(tok[8], 0, &o.bytes))
            return -1;
        o.queue = (enum expect_queue)q;
        o.status = s;
        o.coll = n == 10;
        return push(&e->ops, &e->nops, sizeof o, &o);
    }
    if (strcmp(tok[0], "where") == 0 && n >= 3 && n <= 3 + EXPECT_MAX_ARGS) {
        static const char *const args[] = {"source", "dest", "tag", "root", "comm"};
        struct expect_where w;
        memset(&w, 0, sizeof w);
        if (parse_rank(tok[1], &w.rank) || copy_name(w.call, tok[2]))
            return -1;
        for (int a = 3; a < n; a++) { /* name=value */
            char *eq = strchr(tok[a], '=');
            int known = 0;
            long num;
            if (!eq || eq == tok[a] || !eq[1] || strlen(eq + 1) >= sizeof w.value[0])
                return -1;
            *eq = '\0';
            for (size_t k = 0; k < sizeof args / sizeof args[0]; k++)
                known |= strcmp(tok[a], args[k]) == 0;
            if (!known || (strcmp(tok[a], "comm") != 0 && parse_long(eq + 1, 1, &num)))
                return -1;
            strcpy(w.arg[w.nargs], tok[a]);
            strcpy(w.value[w.nargs++], eq + 1);
        }
        return push(&e->wheres, &e->nwheres, sizeof w, &w);
    }
    if (strcmp(tok[0], "deadlock") == 0 && n == 2 && strcmp(tok[1], "none") == 0) {
        e->analysed = 1;
        return e->ndeadlocks ? -1 : 0;
    }
    if (strcmp(tok[0], "deadlock") == 0 && n == 3) {
        struct expect_deadlock d;
        d.knot = strcmp(tok[1], "knot") == 0 ? 1 : strcmp(tok[1], "end") == 0 ? EXPECT_END : 0;
        if ((!d.knot && strcmp(tok[1], "cycle") != 0) || rank_list(d.ranks, tok[2]))
            return -1;
        e->analysed = 1;
        return push(&e->deadlocks, &e->ndeadlocks, sizeof d, &d);
    }
    if (strcmp(tok[0], "behind") == 0 && n == 2)
        return rank_list(e->behind, tok[1]);
    if (strcmp(tok[0], "wait") == 0 && n == 4) {
        struct expect_wait w;
        if (parse_rank(tok[1], &w.from) || parse_rank(tok[2], &w.to) || w.from < 0 ||
            w.to < 0 || (strcmp(tok[3], "recv") && strcmp(tok[3], "send") &&
                         strcmp(tok[3], "collective")))
            return -1;
        strcpy(w.kind, tok[3]);
        return push(&e->waits, &e->nwaits, sizeof w, &w);
    }
    return -1;
}

int expect_load(const char *path, struct expect *out, char *err, int errlen)
{
    char line[512];
    int lineno = 0, rc = 0;
    FILE *f = fopen(path, "r");

    memset(out, 0, sizeof *out);
    if (!f) {
        snprintf(err, (size_t)errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        if (parse_line(line, out) != 0) {
            snprintf(err, (size_t)errlen, "%s:%d: malformed line", path, lineno);
            rc = -1;
            goto out;
        }
    }
    for (int w = 1; w < out->nworlds; w++) {
        if (!out->world_size[w]) {
            snprintf(err, (size_t)errlen, "%s: no 'world %d' line, but world %d has one", path,
                     w, out->nworlds - 1);
            rc = -1;
            goto out;
        }
    }
    for (int i = 0; i < out->nops; i++) {
        int key = out->ops[i].rank, w = key / EXPECT_WORLD;
        if (w >= out->nworlds || key % EXPECT_WORLD >= out->world_size[w]) {
            char who[32];
            snprintf(err, (size_t)errlen, "%s: op for rank %s, which the job does not have", path,
                     expect_process_text(key, who, sizeof who));
            rc = -1;
            goto out;
        }
    }
    if (out->np == 0) {
        snprintf(err, (size_t)errlen, "%s: no 'np' line", path);
        rc = -1;
    }
out:
    fclose(f);
    if (rc)
        expect_free(out);
    return rc;
}

int expect_load_sample(const char *name, struct expect *out, char *err, int errlen)
{
    const char *dir = getenv("MQD_SAMPLES_SRC");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.expect", dir && *dir ? dir : "samples", name);
    return expect_load(path, out, err, errlen);
}

void expect_free(struct expect *e)
{
    if (!e)
        return;
    free(e->comms);
    free(e->ops);
    free(e->wheres);
    free(e->deadlocks);
    free(e->waits);
    memset(e, 0, sizeof *e);
}

int expect_nprocs(const struct expect *e)
{
    int n = 0;
    for (int w = 0; w < e->nworlds; w++)
        n += e->world_size[w];
    return n;
}

int expect_process(const struct expect *e, int n)
{
    for (int w = 0; w < e->nworlds; w++) {
        if (n < e->world_size[w])
            return w * EXPECT_WORLD + n;
        n -= e->world_size[w];
    }
    return -1;
}

const char *expect_process_text(int key, char *buf, int len)
{
    if (key >= EXPECT_WORLD)
        snprintf(buf, (size_t)len, "%d:%d", key / EXPECT_WORLD, key % EXPECT_WORLD);
    else
        snprintf(buf, (size_t)len, "%d", key);
    return buf;
}

/* The process keys of a rank list ("0,1:2") into keys (room for n); their
 * number. */
static int list_keys(const char *list, int *keys, int n)
{
    int k = 0;
    const char *p = list;
    while (*p && k < n) {
        char *end;
        if (parse_process(p, &keys[k], &end))
            break;
        k++;
        if (*end != ',')
            break;
        p = end + 1;
    }
    return k;
}

/* keys (ascending, n of them) as a rank list into dst[256]. */
static void keys_list(char dst[256], const int *keys, int n)
{
    size_t at = 0;
    char who[32];
    dst[0] = '\0';
    for (int i = 0; i < n && at < 256; i++)
        at += (size_t)snprintf(dst + at, 256 - at, "%s%s", i ? "," : "",
                               expect_process_text(keys[i], who, sizeof who));
}

static int has_key(const int *keys, int n, int key)
{
    for (int i = 0; i < n; i++)
        if (keys[i] == key)
            return 1;
    return 0;
}

void expect_finalize_returns(struct expect *e)
{
    enum { MAX = 256 };
    int fin[MAX], nfin = 0;
    for (int w = 0; w < e->nwheres; w++) {
        struct expect_where *x = &e->wheres[w];
        if (x->rank == EXPECT_ALL_RANKS || strcmp(x->call, "MPI_Finalize") != 0 || nfin == MAX)
            continue;
        fin[nfin++] = x->rank;
        x->call[0] = '\0';
        x->nargs = 0;
        x->finalized = 1;
    }
    if (!nfin)
        return;
    for (int o = 0; o < e->nops; o++)
        if (has_key(fin, nfin, e->ops[o].rank) && e->ops[o].queue == EXPECT_UNEXPECTED &&
            e->ops[o].status == 2)
            e->ops[o].status = EXPECT_NOT_RECORDED;
    int nw = 0;
    for (int w = 0; w < e->nwaits; w++)
        if (!has_key(fin, nfin, e->waits[w].from))
            e->waits[nw++] = e->waits[w];
    e->nwaits = nw;
    int behind[MAX], nbehind = list_keys(e->behind, behind, MAX), ended[MAX], nended = 0;
    for (int d = 0; d < e->ndeadlocks; d++) {
        struct expect_deadlock *dl = &e->deadlocks[d];
        int in[MAX], n = list_keys(dl->ranks, in, MAX), kept[MAX], nkept = 0, ends = 0;
        for (int i = 0; i < n; i++)
            ends |= has_key(fin, nfin, in[i]);
        if (!ends)
            continue;
        for (int i = 0; i < n; i++) {
            int waits_on_end = 0;
            for (int w = 0; w < e->nwaits; w++)
                waits_on_end |= e->waits[w].from == in[i] && has_key(fin, nfin, e->waits[w].to);
            if (has_key(fin, nfin, in[i]) || waits_on_end) {
                kept[nkept++] = in[i];
                if (nended < MAX)
                    ended[nended++] = in[i];
            } else if (nbehind < MAX)
                behind[nbehind++] = in[i];
        }
        keys_list(dl->ranks, kept, nkept);
        dl->knot = EXPECT_END;
    }
    /* An end's waits are those on its finalized ranks; the ranks behind
     * it wait on it, not in it. */
    nw = 0;
    for (int w = 0; w < e->nwaits; w++)
        if (!has_key(behind, nbehind, e->waits[w].from) &&
            !(has_key(ended, nended, e->waits[w].from) && !has_key(fin, nfin, e->waits[w].to)))
            e->waits[nw++] = e->waits[w];
    e->nwaits = nw;
    /* Behind: ascending, as the analysis gives it. */
    for (int i = 1; i < nbehind; i++)
        for (int j = i; j > 0 && behind[j - 1] > behind[j]; j--) {
            int t = behind[j];
            behind[j] = behind[j - 1];
            behind[j - 1] = t;
        }
    keys_list(e->behind, behind, nbehind);
}
