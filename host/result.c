/*
 * result.c - a dump as text an agent writes and the front end reads back
 * (docs/RESULT.md), and the merge of agents' results into the job's dump.
 *
 * The reader takes its input for hostile: every number is range-checked,
 * every count bounded, every string unescaped with control characters made
 * '?', and a result that does not end with its "end" record (an agent that
 * died while writing) is refused whole.
 */
#define _GNU_SOURCE
#include "session.h"
#include "where.h"

#include "array.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- writing */

/* A string: "-" for none, else "=" and its bytes, those outside '!'..'~'
 * and '%' as %XX. */
static void put_str(FILE *f, const char *s)
{
    if (!s) {
        fputs(" -", f);
        return;
    }
    fputs(" =", f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c > ' ' && *c < 0x7f && *c != '%')
            putc(*c, f);
        else
            fprintf(f, "%%%02X", *c);
    }
}

static const char *const queue_states[] = {"ok", "noinfo", "error"};

/* The object paths frames name, each written once ("m INDEX PATH") and
 * then named by its index. */
struct modules {
    const char **path;
    int n, cap, failed;
};

static int module_index(FILE *f, struct modules *m, const char *path)
{
    if (!path)
        return -1;
    for (int i = m->n - 1; i >= 0; i--)
        if (strcmp(m->path[i], path) == 0)
            return i;
    if (MQDH_GROW(m->path, m->cap, m->n + 1) != 0) {
        m->failed = 1;
        return -1;
    }
    m->path[m->n] = path;
    fprintf(f, "m %d", m->n);
    put_str(f, path);
    putc('\n', f);
    return m->n++;
}

static void put_stack(FILE *f, const struct mqdh_stack *st, struct modules *m)
{
    for (int t = 0; t < st->nthreads; t++) {
        const struct mqdh_thread *th = &st->threads[t];
        fprintf(f, "t %d %d %d", (int)th->tid, th->nframes, th->entry);
        put_str(f, th->call);
        put_str(f, th->error);
        putc('\n', f);
        for (int i = 0; i < th->nframes; i++) {
            const struct mqdh_frame *fr = &th->frames[i];
            int module = module_index(f, m, fr->module); /* its m record, the first time */
            fprintf(f, "f %" PRIu64 " %d %d %d %d", fr->pc, fr->inlined, (int)fr->kind, fr->line,
                    module);
            put_str(f, fr->function);
            put_str(f, fr->file);
            putc('\n', f);
        }
    }
}

static void put_process(FILE *f, const struct mqdh_process *p, const struct mqdh_stack *st,
                        struct modules *m)
{
    fprintf(f, "p %d %d %d %d %d %d %d %u %ld %ld %ld %ld %" PRIu64 " %lu %lu %lu %lu %.6f\n",
            (int)p->pid, p->rank, p->world, p->identity, (int)p->dll_source, p->where_line,
            (int)p->where_tid, p->where_args, p->where_source, p->where_dest, p->where_tag,
            p->where_root, p->where_comm, p->stats.callbacks, p->stats.fetches, p->stats.bytes,
            p->stats.syscalls, p->stats.seconds);
    const struct {
        const char *key, *value;
    } strs[] = {
        {"host", p->host},       {"image", p->image},         {"dll", p->dll},
        {"dll_why", p->dll_why}, {"error", p->error},         {"call", p->where_call},
        {"function", p->where_function}, {"file", p->where_file},
        {"where_error", p->where_error}, {"args_why", p->where_args_why},
    };
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if (strs[i].value) {
            fprintf(f, "s %s", strs[i].key);
            put_str(f, strs[i].value);
            putc('\n', f);
        }
    if (st)
        put_stack(f, st, m);
    for (int c = 0; c < p->ncomms; c++) {
        const struct mqdh_comm *cm = &p->comms[c];
        fprintf(f, "c %" PRIu64 " %ld %ld %d %" PRIu64, cm->unique_id, cm->local_rank, cm->size,
                cm->has_handle, cm->handle);
        put_str(f, cm->name);
        putc('\n', f);
        if (cm->group) { /* runs of consecutive ranks as "A-B": a world is one */
            fprintf(f, "g %ld", cm->size);
            for (long i = 0; i < cm->size;) {
                long j = i;
                while (cm->group[i] >= 0 && j + 1 < cm->size && cm->group[j + 1] == cm->group[j] + 1)
                    j++;
                if (j - i < 2)
                    j = i; /* two are no shorter as a run */
                if (j > i)
                    fprintf(f, " %ld-%ld", cm->group[i], cm->group[j]);
                else
                    fprintf(f, " %ld", cm->group[i]);
                i = j + 1;
            }
            putc('\n', f);
        }
        if (cm->group_error) {
            fputs("ge", f);
            put_str(f, cm->group_error);
            putc('\n', f);
        }
        for (int q = 0; q < MQDH_NQUEUES; q++) {
            const struct mqdh_queue *qu = &cm->queues[q];
            fprintf(f, "q %d %s %d", q, queue_states[qu->state], qu->nops);
            put_str(f, qu->error);
            putc('\n', f);
            for (int k = 0; k < qu->nops; k++) {
                const struct mqdh_op *o = &qu->ops[k];
                fprintf(f,
                        "o %d %ld %ld %d %ld %ld %d %" PRIu64 " %ld %ld %ld %ld %d %" PRIu64
                        " %u\n",
                        (int)o->status, o->desired_local_rank, o->desired_global_rank,
                        o->tag_wild, o->desired_tag, o->desired_length, o->system_buffer,
                        o->buffer, o->actual_local_rank, o->actual_global_rank, o->actual_tag,
                        o->actual_length, o->collective, o->request, o->text_address);
                for (int l = 0; l < 5 && o->extra_text[l][0]; l++) {
                    fprintf(f, "x %d", l);
                    put_str(f, o->extra_text[l]);
                    putc('\n', f);
                }
            }
        }
    }
}

int mqdh_result_write(FILE *f, const struct mqdh_dump *d)
{
    if (!f || !d)
        return MQDH_E_USAGE;
    fprintf(f, "mqd-result %d\n", MQDH_RESULT_VERSION);
    fprintf(f, "dump %d %d %u\n", d->nprocs, d->workers, d->files);
    struct modules m = {0};
    for (int i = 0; i < d->nprocs; i++)
        put_process(f, &d->procs[i], d->stacks ? &d->stacks[i] : NULL, &m);
    free(m.path);
    if (m.failed)
        return MQDH_E_NOMEM;
    fprintf(f, "end %d\n", d->nprocs);
    return fflush(f) == 0 && !ferror(f) ? MQDH_OK : MQDH_E_USAGE;
}

/* ---------------------------------------------------------------- reading */

struct reader {
    const char *p, *end; /* the rest of the input */
    int line;            /* of the record being read, from 1 */
    const char *tok;     /* the current record's fields */
    size_t toklen;
    char *err;
    size_t errlen;
    int failed; /* MQDH_E_RESULT or MQDH_E_NOMEM once something failed */
};

static int fail(struct reader *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct reader *r, int code, const char *fmt, ...)
{
    if (r->failed)
        return -1;
    r->failed = code;
    int n = snprintf(r->err, r->errlen, "line %d: ", r->line);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < r->errlen)
        vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    /* The message quotes the agent's bytes: none may drive a terminal. */
    for (char *c = r->err; *c; c++)
        if ((unsigned char)*c < ' ' || *c == 0x7f)
            *c = '?';
    return -1;
}

/* The next field of the current record into tok/toklen; -1 at its end. */
static int field(struct reader *r)
{
    while (r->p < r->end && *r->p == ' ')
        r->p++;
    if (r->p >= r->end || *r->p == '\n')
        return -1;
    r->tok = r->p;
    while (r->p < r->end && *r->p != ' ' && *r->p != '\n')
        r->p++;
    r->toklen = (size_t)(r->p - r->tok);
    return 0;
}

static int need(struct reader *r, const char *what)
{
    if (field(r) != 0)
        return fail(r, MQDH_E_RESULT, "%s missing", what);
    return 0;
}

static int get_ll(struct reader *r, const char *what, long long lo, long long hi, long long *v)
{
    char buf[32];
    if (need(r, what) != 0)
        return -1;
    if (r->toklen >= sizeof buf)
        return fail(r, MQDH_E_RESULT, "%s is not a number", what);
    memcpy(buf, r->tok, r->toklen);
    buf[r->toklen] = '\0';
    char *e;
    errno = 0;
    long long x = strtoll(buf, &e, 10);
    if (*e || e == buf || errno || x < lo || x > hi)
        return fail(r, MQDH_E_RESULT, "%s '%s' is not a number from %lld to %lld", what, buf, lo,
                    hi);
    *v = x;
    return 0;
}

static int get_int(struct reader *r, const char *what, int lo, int hi, int *v)
{
    long long x;
    if (get_ll(r, what, lo, hi, &x) != 0)
        return -1;
    *v = (int)x;
    return 0;
}

static int get_long(struct reader *r, const char *what, long *v)
{
    long long x;
    if (get_ll(r, what, LONG_MIN, LONG_MAX, &x) != 0)
        return -1;
    *v = (long)x;
    return 0;
}

static int get_u64(struct reader *r, const char *what, uint64_t *v)
{
    char buf[32];
    if (need(r, what) != 0)
        return -1;
    if (r->toklen >= sizeof buf || r->tok[0] == '-')
        return fail(r, MQDH_E_RESULT, "%s is not an unsigned number", what);
    memcpy(buf, r->tok, r->toklen);
    buf[r->toklen] = '\0';
    char *e;
    errno = 0;
    unsigned long long x = strtoull(buf, &e, 10);
    if (*e || e == buf || errno)
        return fail(r, MQDH_E_RESULT, "%s '%s' is not an unsigned number", what, buf);
    *v = (uint64_t)x;
    return 0;
}

static int get_ulong(struct reader *r, const char *what, unsigned long *v)
{
    uint64_t x;
    if (get_u64(r, what, &x) != 0)
        return -1;
    if (x > ULONG_MAX)
        return fail(r, MQDH_E_RESULT, "%s is too large", what);
    *v = (unsigned long)x;
    return 0;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                  : -1;
}

/*
 * A string field into out[len] (cut there, always terminated), or, with
 * out NULL, into *dup (malloc'd; NULL for "-").  Control characters and
 * NUL come out as '?': the front end prints what it reads, and an agent's
 * output must never drive a terminal.
 */
static int get_str(struct reader *r, const char *what, char *out, size_t len, char **dup)
{
    if (need(r, what) != 0)
        return -1;
    if (r->toklen == 1 && r->tok[0] == '-') {
        if (dup)
            *dup = NULL;
        else if (len)
            out[0] = '\0';
        return 0;
    }
    if (r->tok[0] != '=')
        return fail(r, MQDH_E_RESULT, "%s is not a string", what);
    char *buf = out;
    if (dup) {
        len = r->toklen; /* never longer than its encoding */
        if (!(buf = malloc(len)))
            return fail(r, MQDH_E_NOMEM, "out of memory");
    }
    size_t o = 0;
    for (size_t i = 1; i < r->toklen; i++) {
        int c = (unsigned char)r->tok[i];
        if (c == '%') {
            int h = i + 2 < r->toklen ? hexval(r->tok[i + 1]) : -1;
            int l = h >= 0 ? hexval(r->tok[i + 2]) : -1;
            if (l < 0) {
                if (dup)
                    free(buf);
                return fail(r, MQDH_E_RESULT, "%s has a bad escape", what);
            }
            c = h * 16 + l;
            i += 2;
        }
        if (c < ' ' || c == 0x7f)
            c = '?';
        if (o + 1 < len)
            buf[o++] = (char)c;
    }
    if (len)
        buf[o] = '\0';
    if (dup)
        *dup = buf;
    return 0;
}

/* The end of the current record: nothing may follow its fields. */
static int end_record(struct reader *r)
{
    if (field(r) == 0)
        return fail(r, MQDH_E_RESULT, "unexpected field '%.*s'",
                    (int)(r->toklen < 40 ? r->toklen : 40), r->tok);
    return 0;
}

/* Past the current record, to the next line. */
static void next_line(struct reader *r)
{
    const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    r->p = nl ? nl + 1 : r->end;
    r->line++;
}

static int read_process(struct reader *r, struct mqdh_process *p)
{
    int dll_source;
    long long pid;
    int tid;
    if (get_ll(r, "pid", 1, 0x7fffffff, &pid) != 0 || get_int(r, "rank", -1, MQDH_MAX_LIST, &p->rank) != 0 ||
        get_int(r, "world", -1, MQDH_MAX_LIST, &p->world) != 0 ||
        get_int(r, "identity", -1, 0x7fffffff, &p->identity) != 0 ||
        get_int(r, "dll_source", MQDH_DLL_NONE, MQDH_DLL_TARGET, &dll_source) != 0 ||
        get_int(r, "line", 0, 0x7fffffff, &p->where_line) != 0 ||
        get_int(r, "thread", 0, 0x7fffffff, &tid) != 0)
        return -1;
    p->pid = (pid_t)pid;
    p->where_tid = (pid_t)tid;
    p->dll_source = (enum mqdh_dll_source)dll_source;
    unsigned long args;
    if (get_ulong(r, "args", &args) != 0 || get_long(r, "source", &p->where_source) != 0 ||
        get_long(r, "dest", &p->where_dest) != 0 || get_long(r, "tag", &p->where_tag) != 0 ||
        get_long(r, "root", &p->where_root) != 0 || get_u64(r, "comm", &p->where_comm) != 0 ||
        get_ulong(r, "callbacks", &p->stats.callbacks) != 0 ||
        get_ulong(r, "fetches", &p->stats.fetches) != 0 ||
        get_ulong(r, "bytes", &p->stats.bytes) != 0 ||
        get_ulong(r, "syscalls", &p->stats.syscalls) != 0 || need(r, "seconds") != 0)
        return -1;
    if (args > 0x1f)
        return fail(r, MQDH_E_RESULT, "args %lu has unknown bits", args);
    p->where_args = (unsigned)args;
    char buf[32], *e;
    snprintf(buf, sizeof buf, "%.*s", (int)(r->toklen < 31 ? r->toklen : 31), r->tok);
    p->stats.seconds = strtod(buf, &e);
    if (*e || e == buf || !(p->stats.seconds >= 0 && p->stats.seconds < 1e9))
        return fail(r, MQDH_E_RESULT, "seconds '%s' is not a time", buf);
    return end_record(r);
}

static int read_string_field(struct reader *r, struct mqdh_process *p)
{
    static const char *const keys[] = {"host", "image", "dll", "dll_why", "error", "call",
                                       "function", "file", "where_error", "args_why"};
    char **slots[] = {&p->host,       &p->image,          &p->dll,        &p->dll_why,
                      &p->error,      &p->where_call,     &p->where_function, &p->where_file,
                      &p->where_error, &p->where_args_why};
    if (need(r, "key") != 0)
        return -1;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (strlen(keys[i]) != r->toklen || memcmp(keys[i], r->tok, r->toklen) != 0)
            continue;
        if (*slots[i])
            return fail(r, MQDH_E_RESULT, "%s given twice", keys[i]);
        if (get_str(r, keys[i], NULL, 0, slots[i]) != 0)
            return -1;
        return end_record(r);
    }
    return 0; /* a string a later version adds: skipped */
}

static int read_comm(struct reader *r, struct mqdh_comm *c)
{
    if (get_u64(r, "unique_id", &c->unique_id) != 0 || get_long(r, "local_rank", &c->local_rank) != 0 ||
        get_long(r, "size", &c->size) != 0 || get_int(r, "has_handle", 0, 1, &c->has_handle) != 0 ||
        get_u64(r, "handle", &c->handle) != 0 || get_str(r, "name", c->name, sizeof c->name, NULL) != 0)
        return -1;
    return end_record(r);
}

static int read_group(struct reader *r, struct mqdh_comm *c)
{
    long long n;
    if (get_ll(r, "group size", 1, MQDH_MAX_LIST, &n) != 0)
        return -1;
    if (n != c->size || c->local_rank < 0 || c->local_rank >= c->size)
        return fail(r, MQDH_E_RESULT, "a group of %lld in a communicator of %ld (rank %ld)", n,
                    c->size, c->local_rank);
    if (!(c->group = malloc((size_t)n * sizeof *c->group)))
        return fail(r, MQDH_E_NOMEM, "out of memory");
    for (long long i = 0; i < n;) {
        if (need(r, "member") != 0)
            return -1;
        const char *dash = r->toklen > 1 ? memchr(r->tok + 1, '-', r->toklen - 1) : NULL;
        if (!dash || r->tok[0] == '-') { /* one member */
            r->p = r->tok;
            if (get_long(r, "member", &c->group[i++]) != 0)
                return -1;
            continue;
        }
        /* A run "A-B", 0 <= A < B, within the count. */
        char buf[48], *e1, *e2;
        if (r->toklen >= sizeof buf)
            return fail(r, MQDH_E_RESULT, "member run is too long");
        memcpy(buf, r->tok, r->toklen);
        buf[r->toklen] = '\0';
        errno = 0;
        long long a = strtoll(buf, &e1, 10);
        long long b = *e1 == '-' ? strtoll(e1 + 1, &e2, 10) : -1;
        if (*e1 != '-' || e1 == buf || *e2 || e2 == e1 + 1 || errno || a < 0 || b <= a ||
            b > LONG_MAX || b - a >= n - i)
            return fail(r, MQDH_E_RESULT, "member run '%s' is not A-B within the group's %lld",
                        buf, n);
        for (long long v = a; v <= b; v++)
            c->group[i++] = (long)v;
    }
    return end_record(r);
}

/* Queue `which` (the next in its communicator). */
static int read_queue(struct reader *r, struct mqdh_queue *q, int which)
{
    int given;
    if (get_int(r, "queue", 0, MQDH_NQUEUES - 1, &given) != 0)
        return -1;
    if (given != which)
        return fail(r, MQDH_E_RESULT, "queue %d where queue %d comes", given, which);
    if (need(r, "state") != 0)
        return -1;
    int state = -1;
    for (int k = 0; k < 3; k++)
        if (strlen(queue_states[k]) == r->toklen && memcmp(queue_states[k], r->tok, r->toklen) == 0)
            state = k;
    if (state < 0)
        return fail(r, MQDH_E_RESULT, "queue state '%.*s' unknown", (int)(r->toklen < 20 ? r->toklen : 20), r->tok);
    int n;
    if (get_int(r, "entries", 0, MQDH_MAX_LIST, &n) != 0 || get_str(r, "error", NULL, 0, &q->error) != 0)
        return -1;
    q->state = (enum mqdh_queue_state)state;
    if ((q->error != NULL) != (q->state == MQDH_QUEUE_ERROR) || (n && q->state != MQDH_QUEUE_OK))
        return fail(r, MQDH_E_RESULT, "queue %d: state, entries and error disagree", which);
    /* Entries are counted as they come: room for them grows with them, not
     * with the number a corrupt line claims. */
    q->nops = n;
    return end_record(r);
}

static int read_op(struct reader *r, struct mqdh_op *o)
{
    int status;
    unsigned long text;
    if (get_int(r, "status", MQDH_OP_PENDING, MQDH_OP_UNKNOWN, &status) != 0 ||
        get_long(r, "desired_local_rank", &o->desired_local_rank) != 0 ||
        get_long(r, "desired_global_rank", &o->desired_global_rank) != 0 ||
        get_int(r, "tag_wild", 0, 1, &o->tag_wild) != 0 || get_long(r, "desired_tag", &o->desired_tag) != 0 ||
        get_long(r, "desired_length", &o->desired_length) != 0 ||
        get_int(r, "system_buffer", 0, 1, &o->system_buffer) != 0 || get_u64(r, "buffer", &o->buffer) != 0 ||
        get_long(r, "actual_local_rank", &o->actual_local_rank) != 0 ||
        get_long(r, "actual_global_rank", &o->actual_global_rank) != 0 ||
        get_long(r, "actual_tag", &o->actual_tag) != 0 ||
        get_long(r, "actual_length", &o->actual_length) != 0 ||
        get_int(r, "collective", 0, 1, &o->collective) != 0 || get_u64(r, "request", &o->request) != 0 ||
        get_ulong(r, "text_address", &text) != 0)
        return -1;
    if (text > 0x1f)
        return fail(r, MQDH_E_RESULT, "text_address %lu has unknown bits", text);
    o->status = (enum mqdh_op_status)status;
    o->text_address = (unsigned)text;
    return end_record(r);
}

static int read_text(struct reader *r, struct mqdh_op *o, int *next)
{
    int l;
    if (get_int(r, "line", 0, 4, &l) != 0)
        return -1;
    if (l != *next)
        return fail(r, MQDH_E_RESULT, "text line %d out of order", l);
    if (get_str(r, "text", o->extra_text[l], sizeof o->extra_text[l], NULL) != 0)
        return -1;
    if (!o->extra_text[l][0])
        return fail(r, MQDH_E_RESULT, "empty text line %d", l);
    (*next)++;
    return end_record(r);
}

/* A thread of a process's stack ("t TID FRAMES ENTRY CALL ERROR"). */
static int read_thread(struct reader *r, struct mqdh_thread *t, int *want)
{
    int tid;
    if (get_int(r, "thread", 1, 0x7fffffff, &tid) != 0 ||
        get_int(r, "frames", 0, MQDH_MAX_FRAMES, want) != 0 ||
        get_int(r, "entry", -1, MQDH_MAX_FRAMES - 1, &t->entry) != 0 ||
        get_str(r, "call", NULL, 0, &t->call) != 0 || get_str(r, "error", NULL, 0, &t->error) != 0)
        return -1;
    t->tid = (pid_t)tid;
    if (t->entry >= *want)
        return fail(r, MQDH_E_RESULT, "entry frame %d of %d", t->entry, *want);
    return end_record(r);
}

/* A frame ("f PC INLINED KIND LINE MODULE FUNCTION FILE"), its module one
 * of the n modules[] given before. */
static int read_frame(struct reader *r, struct mqdh_frame *fr, char *const *modules, int n)
{
    int kind, module;
    if (get_u64(r, "pc", &fr->pc) != 0 || get_int(r, "inlined", 0, 1, &fr->inlined) != 0 ||
        get_int(r, "kind", MQDH_FRAME_USER, MQDH_FRAME_SYSTEM, &kind) != 0 ||
        get_int(r, "line", 0, 0x7fffffff, &fr->line) != 0 ||
        get_int(r, "module", -1, n - 1, &module) != 0 ||
        get_str(r, "function", NULL, 0, &fr->function) != 0 ||
        get_str(r, "file", NULL, 0, &fr->file) != 0)
        return -1;
    fr->kind = (enum mqdh_frame_kind)kind;
    if (module >= 0 && !(fr->module = strdup(modules[module])))
        return fail(r, MQDH_E_NOMEM, "out of memory");
    return end_record(r);
}

/* Where the records being read go. */
struct place {
    struct mqdh_process *p;
    struct mqdh_stack *st; /* p's stack */
    struct mqdh_thread *t;
    int threads_cap, frames_cap, frames_want;
    int comms_cap;
    struct mqdh_comm *c;
    struct mqdh_queue *q;
    int q_next;      /* the queue expected next in c */
    int ops_cap, ops_want;
    struct mqdh_op *o;
    int text_next;
};

/* Is the record's type word `name`? */
static int is(const struct reader *r, const char *name)
{
    return strlen(name) == r->toklen && memcmp(name, r->tok, r->toklen) == 0;
}

/* A queue whose entries have all come, or a communicator whose queues
 * have: else the result is cut short. */
static int close_queue(struct reader *r, struct place *at)
{
    if (at->q && at->q->nops != at->ops_want)
        return fail(r, MQDH_E_RESULT, "a queue with %d of its %d entries", at->q->nops,
                    at->ops_want);
    at->q = NULL;
    at->o = NULL;
    return 0;
}

/* A thread whose frames have all come. */
static int close_thread(struct reader *r, struct place *at)
{
    if (at->t && at->t->nframes != at->frames_want)
        return fail(r, MQDH_E_RESULT, "a thread with %d of its %d frames", at->t->nframes,
                    at->frames_want);
    at->t = NULL;
    return 0;
}

static int close_comm(struct reader *r, struct place *at)
{
    if (close_thread(r, at) != 0)
        return -1;
    if (close_queue(r, at) != 0)
        return -1;
    if (at->c && at->q_next != MQDH_NQUEUES)
        return fail(r, MQDH_E_RESULT, "a communicator with %d of its %d queues", at->q_next,
                    MQDH_NQUEUES);
    at->c = NULL;
    return 0;
}

/* The objects frames name, as given by "m INDEX PATH" records. */
struct module_table {
    char **path;
    int n, cap;
};

static int read_module(struct reader *r, struct module_table *m)
{
    int index;
    if (get_int(r, "module", 0, (1 << 16) - 1, &index) != 0)
        return -1;
    if (index != m->n)
        return fail(r, MQDH_E_RESULT, "module %d where module %d comes", index, m->n);
    if (MQDH_GROW(m->path, m->cap, m->n + 1) != 0)
        return fail(r, MQDH_E_NOMEM, "out of memory");
    if (get_str(r, "path", NULL, 0, &m->path[m->n]) != 0)
        return -1;
    if (!m->path[m->n++])
        return fail(r, MQDH_E_RESULT, "module %d has no path", index);
    return end_record(r);
}

/* Process p's stack, made (zeroed) as the first thread of any process
 * comes: stacks stay as many as the processes. */
static struct mqdh_stack *stack_of(struct mqdh_dump *d, int *stacks_cap, int p)
{
    int had = d->stacks ? *stacks_cap : 0;
    if (MQDH_GROW(d->stacks, *stacks_cap, p + 1) != 0)
        return NULL;
    if (*stacks_cap > had)
        memset(d->stacks + had, 0, (size_t)(*stacks_cap - had) * sizeof *d->stacks);
    return &d->stacks[p];
}

struct stacks_read {
    struct module_table modules;
    int stacks_cap;
};

static int record(struct reader *r, struct mqdh_dump *d, int *procs_cap, struct place *at,
                  struct stacks_read *sr)
{
    if (is(r, "p")) {
        if (close_comm(r, at) != 0)
            return -1;
        if (MQDH_GROW(d->procs, *procs_cap, d->nprocs + 1) != 0 ||
            (d->stacks && !stack_of(d, &sr->stacks_cap, d->nprocs)))
            return fail(r, MQDH_E_NOMEM, "out of memory");
        *at = (struct place){.p = &d->procs[d->nprocs++]};
        memset(at->p, 0, sizeof *at->p);
        return read_process(r, at->p);
    }
    if (is(r, "m"))
        return read_module(r, &sr->modules);
    if (!at->p)
        return fail(r, MQDH_E_RESULT, "a '%.*s' record before any process", (int)r->toklen, r->tok);
    if (is(r, "s"))
        return read_string_field(r, at->p);
    if (is(r, "t")) {
        if (close_comm(r, at) != 0)
            return -1;
        if (!at->st && !(at->st = stack_of(d, &sr->stacks_cap, (int)(at->p - d->procs))))
            return fail(r, MQDH_E_NOMEM, "out of memory");
        if (at->st->nthreads >= MQDH_MAX_THREADS)
            return fail(r, MQDH_E_RESULT, "more than %d threads", MQDH_MAX_THREADS);
        if (MQDH_GROW(at->st->threads, at->threads_cap, at->st->nthreads + 1) != 0)
            return fail(r, MQDH_E_NOMEM, "out of memory");
        at->t = &at->st->threads[at->st->nthreads++];
        memset(at->t, 0, sizeof *at->t);
        at->frames_cap = 0;
        return read_thread(r, at->t, &at->frames_want);
    }
    if (is(r, "f")) {
        if (!at->t || at->t->nframes >= at->frames_want)
            return fail(r, MQDH_E_RESULT, "a frame beyond its thread's count");
        if (MQDH_GROW(at->t->frames, at->frames_cap, at->t->nframes + 1) != 0)
            return fail(r, MQDH_E_NOMEM, "out of memory");
        struct mqdh_frame *fr = &at->t->frames[at->t->nframes++];
        memset(fr, 0, sizeof *fr);
        return read_frame(r, fr, sr->modules.path, sr->modules.n);
    }
    if (is(r, "c")) {
        if (close_comm(r, at) != 0)
            return -1;
        if (MQDH_GROW(at->p->comms, at->comms_cap, at->p->ncomms + 1) != 0)
            return fail(r, MQDH_E_NOMEM, "out of memory");
        at->c = &at->p->comms[at->p->ncomms++];
        memset(at->c, 0, sizeof *at->c);
        at->q_next = 0;
        return read_comm(r, at->c);
    }
    if (!at->c)
        return is(r, "g") || is(r, "ge") || is(r, "q") || is(r, "o") || is(r, "x")
                   ? fail(r, MQDH_E_RESULT, "a '%.*s' record outside a communicator",
                          (int)r->toklen, r->tok)
                   : 0;
    if ((is(r, "g") || is(r, "ge")) && (at->c->group || at->c->group_error))
        return fail(r, MQDH_E_RESULT, "a second group for one communicator");
    if (is(r, "g"))
        return read_group(r, at->c);
    if (is(r, "ge"))
        return get_str(r, "group error", NULL, 0, &at->c->group_error) == 0 ? end_record(r) : -1;
    if (is(r, "q")) {
        if (close_queue(r, at) != 0)
            return -1;
        if (at->q_next >= MQDH_NQUEUES)
            return fail(r, MQDH_E_RESULT, "more than %d queues", MQDH_NQUEUES);
        at->q = &at->c->queues[at->q_next];
        if (read_queue(r, at->q, at->q_next++) != 0)
            return -1;
        at->ops_want = at->q->nops;
        at->q->nops = 0;
        at->ops_cap = 0;
        return 0;
    }
    if (is(r, "o")) {
        if (!at->q || at->q->nops >= at->ops_want)
            return fail(r, MQDH_E_RESULT, "an entry beyond its queue's count");
        if (MQDH_GROW(at->q->ops, at->ops_cap, at->q->nops + 1) != 0)
            return fail(r, MQDH_E_NOMEM, "out of memory");
        at->o = &at->q->ops[at->q->nops++];
        memset(at->o, 0, sizeof *at->o);
        at->text_next = 0;
        return read_op(r, at->o);
    }
    if (is(r, "x"))
        return at->o ? read_text(r, at->o, &at->text_next)
                     : fail(r, MQDH_E_RESULT, "a text line outside an entry");
    return 0; /* a record a later version adds: skipped */
}

int mqdh_result_read(const char *buf, size_t len, struct mqdh_dump **out, char *err, size_t errlen)
{
    char dummy[1];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';
    if (!out)
        return MQDH_E_USAGE;
    *out = NULL;
    if (!buf && len)
        return MQDH_E_USAGE;
    struct reader r = {.p = buf, .end = buf + len, .line = 1, .err = err, .errlen = errlen};
    struct mqdh_dump *d = calloc(1, sizeof *d);
    if (!d)
        return MQDH_E_NOMEM;
    d->version = MQDH_VERSION;
    int procs_cap = 0, ended = 0, declared = -1, version;
    struct place at = {0};
    struct stacks_read sr = {0};
    /* The header: which format, before anything else. */
    if (!buf || len < 11 || memcmp(buf, "mqd-result ", 11) != 0) {
        fail(&r, MQDH_E_RESULT, "not an mqd result (it begins '%.*s')",
             (int)(len < 24 ? len : 24), buf ? buf : "");
        goto out;
    }
    r.p += 11;
    if (get_int(&r, "version", 0, 0x7fffffff, &version) != 0)
        goto out;
    if (version != MQDH_RESULT_VERSION) {
        fail(&r, MQDH_E_RESULT,
             "result format %d, and this mqdump reads format %d: the agent is another mqd "
             "version (install the same one on every host)",
             version, MQDH_RESULT_VERSION);
        goto out;
    }
    next_line(&r);
    while (r.p < r.end && !r.failed) {
        if (field(&r) != 0) { /* an empty line */
            next_line(&r);
            continue;
        }
        if (ended) {
            fail(&r, MQDH_E_RESULT, "a record after the end");
            break;
        }
        if (is(&r, "dump")) {
            long long n, w, f;
            if (get_ll(&r, "processes", 0, MQDH_MAX_LIST, &n) == 0 &&
                get_ll(&r, "workers", 0, 1 << 20, &w) == 0 &&
                get_ll(&r, "files", 0, 1 << 30, &f) == 0) {
                declared = (int)n;
                d->workers = (int)w;
                d->files = (unsigned)f;
            }
        } else if (is(&r, "end")) {
            long long n;
            if (close_comm(&r, &at) == 0 && get_ll(&r, "processes", 0, MQDH_MAX_LIST, &n) == 0 &&
                end_record(&r) == 0 && (n != d->nprocs || n != declared))
                fail(&r, MQDH_E_RESULT, "the end counts %lld processes, and %d came", n,
                     d->nprocs);
            ended = 1;
        } else {
            record(&r, d, &procs_cap, &at, &sr);
        }
        next_line(&r);
    }
    if (!r.failed && !ended)
        fail(&r, MQDH_E_RESULT, "the result stops before its end (the agent died while writing?)");
out:
    for (int i = 0; i < sr.modules.n; i++)
        free(sr.modules.path[i]);
    free(sr.modules.path);
    if (r.failed) {
        int code = r.failed;
        mqdh_dump_free(d);
        return code;
    }
    mqdh_dump_index(d);
    *out = d;
    return MQDH_OK;
}

/* ---------------------------------------------------------------- merging */

struct slot {
    pid_t pid;
    const char *host;
    int index;
};

static int cmp_slot(const void *a, const void *b)
{
    const struct slot *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return strcmp(x->host ? x->host : "", y->host ? y->host : "");
}

int mqdh_dump_merge(struct mqdh_dump *into, struct mqdh_dump *const *from, int nfrom)
{
    return mqdh__merge_marked(into, from, nfrom, NULL);
}

int mqdh__merge_marked(struct mqdh_dump *into, struct mqdh_dump *const *from, int nfrom,
                      unsigned char *placed)
{
    if (!into || nfrom < 0 || (nfrom && !from))
        return -MQDH_E_USAGE;
    struct slot *slots = malloc((size_t)(into->nprocs ? into->nprocs : 1) * sizeof *slots);
    if (!slots)
        return -MQDH_E_NOMEM;
    for (int i = 0; i < into->nprocs; i++)
        slots[i] = (struct slot){into->procs[i].pid, into->procs[i].host, i};
    qsort(slots, (size_t)into->nprocs, sizeof *slots, cmp_slot);
    int n_placed = 0;
    for (int k = 0; k < nfrom; k++) {
        struct mqdh_dump *f = from[k];
        for (int i = 0; f && i < f->nprocs; i++) {
            struct mqdh_process *src = &f->procs[i];
            struct mqdh_stack *src_stack = f->stacks ? &f->stacks[i] : NULL;
            struct slot key = {src->pid, src->host, 0};
            struct slot *hit = bsearch(&key, slots, (size_t)into->nprocs, sizeof *slots, cmp_slot);
            if (!hit || hit->index < 0) {
                mqdh__process_clear(src);
                mqdh__stack_clear(src_stack);
                continue;
            }
            /* Its stack goes with it (the stacks made for into as the
             * first comes; none is kept without memory for them). */
            if (src_stack && src_stack->nthreads && !into->stacks)
                into->stacks = calloc((size_t)into->nprocs, sizeof *into->stacks);
            if (into->stacks) {
                mqdh__stack_clear(&into->stacks[hit->index]);
                if (src_stack) {
                    into->stacks[hit->index] = *src_stack;
                    memset(src_stack, 0, sizeof *src_stack);
                }
            }
            mqdh__stack_clear(src_stack);
            struct mqdh_process *dst = &into->procs[hit->index];
            /* What the front end knows from the launcher stays. */
            char *host = dst->host;
            int rank = dst->rank, world = dst->world, identity = dst->identity;
            dst->host = NULL;
            mqdh__process_clear(dst);
            free(src->host);
            *dst = *src;
            dst->host = host;
            dst->rank = rank;
            dst->world = world;
            dst->identity = identity;
            memset(src, 0, sizeof *src);
            if (placed)
                placed[hit->index] = 1;
            hit->index = -1; /* one place, one process */
            n_placed++;
        }
        if (f) {
            free(f->procs);
            f->procs = NULL;
            free(f->stacks);
            f->stacks = NULL;
            f->nprocs = 0;
            mqdh_dump_index(f);
        }
    }
    free(slots);
    mqdh_dump_index(into);
    return n_placed;
}
