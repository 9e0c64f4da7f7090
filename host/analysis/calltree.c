/*
 * calltree.c - every process's stack merged into one call tree: STAT's
 * prefix tree, whose paths from main outward are labelled with the ranks
 * that take them, so that thousands of ranks read as a handful of paths.
 *
 * A node is a frame on a path: the same function, object, source line and
 * fold on the same path from the thread's start are one node, whatever
 * the process.  Nodes are found by a hash of (parent, frame), so a job of
 * 100,000 processes at 100,000 places merges in time linear in its frames.
 */
#define _GNU_SOURCE
#include "mqdhost.h"

#include "base/array.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const struct mqdh_thread *mqdh_shown_thread(const struct mqdh_dump *d, int i)
{
    if (!d || !d->stacks || i < 0 || i >= d->nprocs || d->stacks[i].nthreads == 0)
        return NULL;
    const struct mqdh_stack *st = &d->stacks[i];
    const struct mqdh_process *p = &d->procs[i];
    if (p->where_call)
        for (int t = 0; t < st->nthreads; t++)
            if (st->threads[t].tid == p->where_tid)
                return &st->threads[t];
    return &st->threads[0];
}

const struct mqdh_frame *mqdh_user_frame(const struct mqdh_dump *d, int i)
{
    const struct mqdh_thread *t = mqdh_shown_thread(d, i);
    /* Inside its MPI call, every frame is the library's or what it calls
     * (UCX, libfabric, hwloc: outside the system's directories on a
     * cluster, where their kind is the program's): its code is outside. */
    int from = t && t->entry >= 0 && t->entry < t->nframes ? t->entry + 1 : 0;
    for (int f = from; t && f < t->nframes; f++)
        if (t->frames[f].kind == MQDH_FRAME_USER)
            return &t->frames[f];
    return NULL;
}

/* A node as it is built: its place among its siblings, and room for its
 * processes. */
struct build_node {
    struct mqdh_stack_node n;
    int procs_cap;
    int first_child, last_child, next_sibling;
    uint64_t hash;
};

struct builder {
    struct build_node *nodes;
    int n, cap;
    int *table; /* node indexes by hash (open addressing); -1 empty */
    size_t table_cap;
    int roots[2][2]; /* first and last root of each tree */
};

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return (h ^ 0xff) * 0x100000001b3ull;
}

/* The frame a node shows: function, module, file, line, fold. */
struct key {
    const char *function, *module, *file;
    int line, inlined, folded;
    enum mqdh_frame_kind kind;
};

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static int same_key(const struct mqdh_stack_node *n, const struct key *k)
{
    return n->line == k->line && n->folded == k->folded && n->inlined == k->inlined &&
           n->kind == k->kind && same_str(n->function, k->function) &&
           same_str(n->file, k->file) && same_str(n->module, k->module);
}

static int rehash(struct builder *b)
{
    size_t cap = b->table_cap ? b->table_cap * 2 : 256;
    int *t = malloc(cap * sizeof *t);
    if (!t)
        return -1;
    memset(t, 0xff, cap * sizeof *t);
    for (int i = 0; i < b->n; i++) {
        size_t s = b->nodes[i].hash & (cap - 1);
        while (t[s] >= 0)
            s = (s + 1) & (cap - 1);
        t[s] = i;
    }
    free(b->table);
    b->table = t;
    b->table_cap = cap;
    return 0;
}

/*
 * The child of parent (-1, -2: a root of the first or second tree) that
 * shows frame k, made if there is none.  Its index, or -1 out of memory.
 */
static int child(struct builder *b, int parent, const struct key *k)
{
    uint64_t h = hash_str(hash_str(hash_str(0xcbf29ce484222325ull ^ (uint64_t)(int64_t)parent,
                                            k->function),
                                   k->module),
                          k->file);
    h = (h ^ (uint64_t)k->line ^ (uint64_t)(k->folded << 1 | k->inlined) << 40 ^
         (uint64_t)k->kind << 44) * 0x100000001b3ull;
    if ((size_t)(b->n + 1) * 2 > b->table_cap && rehash(b) != 0)
        return -1;
    size_t s = h & (b->table_cap - 1);
    for (; b->table[s] >= 0; s = (s + 1) & (b->table_cap - 1)) {
        struct build_node *c = &b->nodes[b->table[s]];
        if (c->hash == h && c->n.parent == parent && same_key(&c->n, k))
            return b->table[s];
    }
    if (MQDH__GROW(b->nodes, b->cap, b->n + 1) != 0)
        return -1;
    int i = b->n++;
    struct build_node *c = &b->nodes[i];
    memset(c, 0, sizeof *c);
    c->n = (struct mqdh_stack_node){.parent = parent, .function = k->function, .module = k->module,
                                    .file = k->file, .line = k->line, .inlined = k->inlined,
                                    .kind = k->kind, .folded = k->folded};
    c->hash = h;
    c->first_child = c->last_child = c->next_sibling = -1;
    b->table[s] = i;
    int *first = parent >= 0 ? &b->nodes[parent].first_child : &b->roots[-parent - 1][0];
    int *last = parent >= 0 ? &b->nodes[parent].last_child : &b->roots[-parent - 1][1];
    if (*last >= 0)
        b->nodes[*last].next_sibling = i;
    else
        *first = i;
    *last = i;
    return i;
}

/* The frame of t the tree starts from: main for the main thread; past
 * the system's frames that start a thread (clone3, start_thread) for the
 * others, and for a main thread without main. */
static int outermost(const struct mqdh_thread *t, int main_thread)
{
    if (main_thread)
        for (int i = t->nframes - 1; i >= 0; i--)
            if (t->frames[i].function && strcmp(t->frames[i].function, "main") == 0)
                return i;
    int i = t->nframes - 1;
    while (i > 0 && (t->frames[i].kind == MQDH_FRAME_SYSTEM ||
                     (t->frames[i].function && strcmp(t->frames[i].function, "_start") == 0)))
        i--;
    return i;
}

int mqdh_thread_path(const struct mqdh_thread *t, int main_thread, unsigned flags,
                     struct mqdh_path_frame *out, int max)
{
    int n = 0;
    for (int i = t && t->nframes ? outermost(t, main_thread) : -1; i >= 0; i--, n++) {
        const struct mqdh_frame *f = &t->frames[i];
        int fold = !(flags & MQDH_STACKS_FULL) && f->kind != MQDH_FRAME_USER;
        if (n < max) {
            struct mqdh_path_frame *o = &out[n];
            *o = (struct mqdh_path_frame){f, f->function ? f->function : "??", f->file,
                                          f->line, fold};
            if (fold) {
                if (i == t->entry && t->call)
                    o->function = t->call;
                o->file = NULL;
                o->line = 0;
            }
        }
        if (fold)
            return n + 1;
    }
    return n;
}

/* Add process p's thread t (its main thread: main_thread) to tree `tree`
 * (0 the shown threads, 1 the others).  0, or -1 out of memory. */
static int add_thread(struct builder *b, int tree, int p, const struct mqdh_thread *t,
                      int main_thread, unsigned flags)
{
    int parent = -1 - tree;
    struct mqdh_path_frame path[MQDH_PATH_MAX_FRAMES];
    int len = mqdh_thread_path(t, main_thread, flags, path, MQDH_PATH_MAX_FRAMES);
    for (int j = 0; j < len && j < MQDH_PATH_MAX_FRAMES; j++) {
        const struct mqdh_path_frame *pf = &path[j];
        const struct mqdh_frame *f = pf->frame;
        struct key k = {pf->function, f->module, pf->file, pf->line,
                        pf->folded ? 0 : f->inlined, pf->folded, f->kind};
        int c = child(b, parent, &k);
        if (c < 0)
            return -1;
        struct mqdh_stack_node *n = &b->nodes[c].n;
        n->nthreads++;
        if (!n->nprocs || n->procs[n->nprocs - 1] != p) {
            if (MQDH__GROW(n->procs, b->nodes[c].procs_cap, n->nprocs + 1) != 0)
                return -1;
            n->procs[n->nprocs++] = p;
        }
        parent = c;
    }
    return 0;
}

static void reverse(int *v, int from, int to)
{
    for (int l = from, r = to - 1; l < r; l++, r--) {
        int x = v[l];
        v[l] = v[r];
        v[r] = x;
    }
}

/* The nodes of b in depth-first order, children in the order they were
 * made (that of their lowest process), into t. */
static int flatten(struct builder *b, struct mqdh_stack_tree *t)
{
    int *stack = malloc(((size_t)b->n + 1) * sizeof *stack);
    int *at = malloc(((size_t)b->n + 1) * sizeof *at); /* new index of each */
    t->nodes = malloc(((size_t)b->n + 1) * sizeof *t->nodes);
    if (!stack || !at || !t->nodes) {
        free(stack);
        free(at);
        return -1;
    }
    for (int tree = 0; tree < 2; tree++) {
        int sp = 0;
        for (int r = b->roots[tree][0]; r >= 0; r = b->nodes[r].next_sibling)
            stack[sp++] = r;
        reverse(stack, 0, sp); /* the first root on top */
        while (sp > 0) {
            int i = stack[--sp];
            struct mqdh_stack_node *n = &t->nodes[t->nnodes];
            *n = b->nodes[i].n;
            b->nodes[i].n.procs = NULL; /* now the tree's */
            at[i] = t->nnodes++;
            n->parent = n->parent >= 0 ? at[n->parent] : -1;
            n->depth = n->parent >= 0 ? t->nodes[n->parent].depth + 1 : 0;
            int first = sp;
            for (int c = b->nodes[i].first_child; c >= 0; c = b->nodes[c].next_sibling)
                stack[sp++] = c;
            reverse(stack, first, sp);
        }
        if (tree == 0)
            t->nshown = t->nnodes;
    }
    free(stack);
    free(at);
    return 0;
}

int mqdh_stack_tree(const struct mqdh_dump *d, unsigned flags, struct mqdh_stack_tree **out)
{
    if (!out)
        return MQDH_E_USAGE;
    *out = NULL;
    if (!d || !d->stacks)
        return MQDH_E_USAGE;
    struct builder b = {.roots = {{-1, -1}, {-1, -1}}};
    struct mqdh_stack_tree *t = calloc(1, sizeof *t);
    int rc = MQDH_E_NOMEM;
    if (!t)
        goto out;
    for (int p = 0; p < d->nprocs; p++) {
        const struct mqdh_thread *shown = mqdh_shown_thread(d, p);
        if (!shown)
            continue;
        t->nprocs++;
        const struct mqdh_stack *st = &d->stacks[p];
        if (add_thread(&b, 0, p, shown, shown == &st->threads[0], flags) != 0)
            goto out;
        for (int k = 0; k < st->nthreads; k++) {
            if (&st->threads[k] == shown || st->threads[k].nframes == 0)
                continue;
            t->nothers++;
            if (add_thread(&b, 1, p, &st->threads[k], k == 0, flags) != 0)
                goto out;
        }
    }
    if (flatten(&b, t) != 0)
        goto out;
    *out = t;
    t = NULL;
    rc = MQDH_OK;
out:
    for (int i = 0; i < b.n; i++)
        free(b.nodes[i].n.procs);
    free(b.nodes);
    free(b.table);
    mqdh_stack_tree_free(t);
    return rc;
}

void mqdh_stack_tree_free(struct mqdh_stack_tree *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->nnodes; i++)
        free(t->nodes[i].procs);
    free(t->nodes);
    free(t);
}
