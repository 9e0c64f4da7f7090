/* schema.c - a JSON Schema validator for the tests (schema.h). */
#define _GNU_SOURCE
#include "tests/schema.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the schema */

static const char *const annotations[] = {"$schema", "$id", "$comment", "title", "description"};
/* The type names, in the order of enum kind below. */
static const char *const type_names[] = {"null", "boolean", "integer", "number",
                                         "string", "array", "object"};

static int is_one_of(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, list[i]) == 0)
            return 1;
    return 0;
}
#define IS_ONE_OF(s, list) is_one_of((s), (list), sizeof(list) / sizeof((list)[0]))

const struct json *schema_def(const struct json *root, const char *name)
{
    return json_get(json_get(root, "$defs"), name);
}

/* The schema "$ref": "#/$defs/NAME" names, or NULL. */
static const struct json *resolve(const struct json *root, const char *ref)
{
    static const char prefix[] = "#/$defs/";
    if (!ref || strncmp(ref, prefix, sizeof prefix - 1) != 0)
        return NULL;
    return schema_def(root, ref + sizeof prefix - 1);
}

struct checker {
    const struct json *root;
    int closed;
    char path[1024];
    char *err;
    size_t errlen;
};

static int check_fail(struct checker *k, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(k->err, k->errlen, "schema at \"%s\": %s", k->path[0] ? k->path : "#", what);
    return -1;
}

static int check_schema(struct checker *k, const struct json *s);

/* Schema member key of k's current schema, the schema at k->path/key. */
static int check_at(struct checker *k, const char *key, const struct json *s)
{
    size_t mark = strlen(k->path);
    snprintf(k->path + mark, sizeof k->path - mark, "/%s", key);
    int rc = check_schema(k, s);
    k->path[mark] = '\0';
    return rc;
}

/* Each member of object o a schema. */
static int check_members(struct checker *k, const char *key, const struct json *o)
{
    if (o->kind != JSON_OBJECT)
        return check_fail(k, "\"%s\" is not an object", key);
    size_t mark = strlen(k->path);
    snprintf(k->path + mark, sizeof k->path - mark, "/%s", key);
    for (int i = 0; i < o->n; i++)
        if (check_at(k, o->keys[i], &o->items[i]) != 0)
            return -1;
    k->path[mark] = '\0';
    return 0;
}

static int check_type(struct checker *k, const struct json *t)
{
    if (t->kind == JSON_STRING)
        return IS_ONE_OF(t->string, type_names) ? 0
                                                : check_fail(k, "unknown type \"%s\"", t->string);
    if (t->kind != JSON_ARRAY || t->n == 0)
        return check_fail(k, "\"type\" is neither a name nor an array of names");
    for (int i = 0; i < t->n; i++)
        if (t->items[i].kind != JSON_STRING || check_type(k, &t->items[i]) != 0)
            return check_fail(k, "\"type\" has an item that is not a type's name");
    return 0;
}

static int is_scalar(const struct json *j)
{
    return j->kind != JSON_ARRAY && j->kind != JSON_OBJECT;
}

/* One keyword of schema s, its value v. */
static int check_keyword(struct checker *k, const struct json *s, const char *key,
                         const struct json *v)
{
    if (IS_ONE_OF(key, annotations))
        return 0;
    if (strcmp(key, "$defs") == 0 || strcmp(key, "properties") == 0)
        return check_members(k, key, v);
    if (strcmp(key, "$ref") == 0)
        return v->kind == JSON_STRING && resolve(k->root, v->string)
                   ? 0
                   : check_fail(k, "\"$ref\" does not name one of \"#/$defs/\"");
    if (strcmp(key, "type") == 0)
        return check_type(k, v);
    if (strcmp(key, "required") == 0) {
        const struct json *props = json_get(s, "properties");
        if (v->kind != JSON_ARRAY)
            return check_fail(k, "\"required\" is not an array");
        for (int i = 0; i < v->n; i++)
            if (v->items[i].kind != JSON_STRING ||
                (k->closed && !json_get(props, v->items[i].string)))
                return check_fail(k, "\"required\" item %d is not one of its properties", i);
        return 0;
    }
    if (strcmp(key, "additionalProperties") == 0)
        return v->kind == JSON_BOOL ? 0 : check_at(k, key, v);
    if (strcmp(key, "items") == 0)
        return check_at(k, key, v);
    if (strcmp(key, "enum") == 0) {
        if (v->kind != JSON_ARRAY || v->n == 0)
            return check_fail(k, "\"enum\" is not an array of values");
        for (int i = 0; i < v->n; i++)
            if (!is_scalar(&v->items[i]))
                return check_fail(k, "\"enum\" item %d is not a string, number, boolean or "
                                     "null", i);
        return 0;
    }
    if (strcmp(key, "const") == 0)
        return is_scalar(v) ? 0 : check_fail(k, "\"const\" is not a scalar");
    if (strcmp(key, "minimum") == 0)
        return v->kind == JSON_NUMBER ? 0 : check_fail(k, "\"minimum\" is not a number");
    if (strcmp(key, "anyOf") == 0) {
        if (v->kind != JSON_ARRAY || v->n == 0)
            return check_fail(k, "\"anyOf\" is not an array of schemas");
        for (int i = 0; i < v->n; i++) {
            char idx[32];
            snprintf(idx, sizeof idx, "anyOf/%d", i);
            if (check_at(k, idx, &v->items[i]) != 0)
                return -1;
        }
        return 0;
    }
    return check_fail(k, "unknown keyword \"%s\" (not in the validator's subset)", key);
}

static int check_schema(struct checker *k, const struct json *s)
{
    if (s->kind != JSON_OBJECT)
        return check_fail(k, "a schema must be an object");
    int alone = 0; /* $ref and anyOf stand alone, but for annotations */
    for (int i = 0; i < s->n; i++) {
        if (check_keyword(k, s, s->keys[i], &s->items[i]) != 0)
            return -1;
        alone += !IS_ONE_OF(s->keys[i], annotations) && strcmp(s->keys[i], "$defs") != 0;
    }
    if ((json_get(s, "$ref") || json_get(s, "anyOf")) && alone > 1)
        return check_fail(k, "\"$ref\" and \"anyOf\" take no other keyword here");
    const struct json *addl = json_get(s, "additionalProperties");
    if (k->closed && json_get(s, "properties") &&
        (!addl || addl->kind != JSON_BOOL || addl->number != 0))
        return check_fail(k, "an object with properties must have \"additionalProperties\": "
                             "false");
    return 0;
}

int schema_check(const struct json *root, int closed, char *err, size_t errlen)
{
    struct checker k = {.root = root, .closed = closed, .err = err, .errlen = errlen};
    err[0] = '\0';
    return check_schema(&k, root);
}

/* ---------------------------------------------------------------- the document */

enum kind { K_NULL, K_BOOLEAN, K_INTEGER, K_NUMBER, K_STRING, K_ARRAY, K_OBJECT };

/* A scalar value read from the document. */
struct scalar {
    enum kind kind;
    int boolean;
    long long integer; /* K_INTEGER (saturated beyond long long) */
    double number;     /* K_INTEGER and K_NUMBER */
    char *string;      /* K_STRING, decoded (malloc'd) */
};

struct reader {
    const struct json *root;
    const char *p;
    char path[1024]; /* the JSON pointer of the value being read */
    size_t pathlen;
    int depth;
    char err[2048];      /* the first error */
    const char *fail_at; /* where it was found */
};

static int fail(struct reader *r, const char *fmt, ...)
{
    if (r->err[0])
        return -1;
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(r->err, sizeof r->err, "at %s: %s (at \"%.32s\")",
             r->pathlen ? r->path : "the top", what, r->p);
    r->fail_at = r->p;
    return -1;
}

/* Append a member name (escaped as a JSON pointer says) or an index to the
 * path; the old length, to cut it back to. */
static size_t path_push(struct reader *r, const char *key, int index)
{
    size_t mark = r->pathlen;
    char seg[512];
    size_t n = 0;
    if (key) {
        for (const char *c = key; *c && n + 3 < sizeof seg; c++) {
            if (*c == '~' || *c == '/') {
                seg[n++] = '~';
                seg[n++] = *c == '~' ? '0' : '1';
            } else {
                seg[n++] = *c;
            }
        }
        seg[n] = '\0';
    } else {
        snprintf(seg, sizeof seg, "%d", index);
    }
    int w = snprintf(r->path + mark, sizeof r->path - mark, "/%s", seg);
    if (w > 0)
        r->pathlen = mark + (size_t)w < sizeof r->path ? mark + (size_t)w : sizeof r->path - 1;
    return mark;
}

static void path_pop(struct reader *r, size_t mark)
{
    r->pathlen = mark;
    r->path[mark] = '\0';
}

static void skip_ws(struct reader *r)
{
    while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')
        r->p++;
}

/* Code point cp as UTF-8 into s (room for 4). */
static size_t utf8(char *s, unsigned cp)
{
    if (cp < 0x80) {
        s[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        s[0] = (char)(0xc0 | cp >> 6);
        s[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        s[0] = (char)(0xe0 | cp >> 12);
        s[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        s[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    s[0] = (char)(0xf0 | cp >> 18);
    s[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    s[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    s[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

static int hex4(const char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16;
        if (d == 16)
            return -1;
        *v = *v << 4 | d;
    }
    return 0;
}

/* One \u escape (after the backslash and the u), a surrogate pair as one
 * code point, into *cp. */
static int unicode_escape(struct reader *r, unsigned *cp)
{
    if (hex4(r->p, cp) != 0)
        return fail(r, "a \\u escape without four hex digits");
    r->p += 4;
    if (*cp >= 0xdc00 && *cp < 0xe000)
        return fail(r, "a lone low surrogate");
    if (*cp >= 0xd800 && *cp < 0xdc00) {
        unsigned lo;
        if (r->p[0] != '\\' || r->p[1] != 'u' || hex4(r->p + 2, &lo) != 0 || lo < 0xdc00 ||
            lo >= 0xe000)
            return fail(r, "a high surrogate without its low one");
        r->p += 6;
        *cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    return 0;
}

/* A string at r->p, decoded into *out (malloc'd). */
static int read_string(struct reader *r, char **out)
{
    if (*r->p != '"')
        return fail(r, "expected a string");
    r->p++;
    size_t cap = 64, n = 0;
    char *s = malloc(cap);
    if (!s)
        return fail(r, "out of memory");
    for (;;) {
        if (n + 5 > cap) {
            char *ns = realloc(s, cap *= 2);
            if (!ns) {
                free(s);
                return fail(r, "out of memory");
            }
            s = ns;
        }
        unsigned char c = (unsigned char)*r->p;
        if (c == '"')
            break;
        if (c == '\0' || c < 0x20) {
            free(s);
            return fail(r, c ? "a control character in a string" : "a string not closed");
        }
        r->p++;
        if (c != '\\') {
            s[n++] = (char)c;
            continue;
        }
        char e = *r->p++;
        const char *plain = strchr("\"\\/bfnrt", e);
        if (e && plain) {
            s[n++] = "\"\\/\b\f\n\r\t"[plain - "\"\\/bfnrt"];
        } else if (e == 'u') {
            unsigned cp;
            if (unicode_escape(r, &cp) != 0) {
                free(s);
                return -1;
            }
            n += utf8(s + n, cp);
        } else {
            r->p--;
            free(s);
            return fail(r, "a bad escape in a string");
        }
    }
    r->p++;
    s[n] = '\0';
    *out = s;
    return 0;
}

/* A number at r->p, as the JSON grammar has it: an integer if it has
 * neither a fraction nor an exponent. */
static int read_number(struct reader *r, struct scalar *v)
{
    const char *start = r->p, *q = r->p;
    if (*q == '-')
        q++;
    if (*q == '0')
        q++;
    else if (*q >= '1' && *q <= '9')
        while (*q >= '0' && *q <= '9')
            q++;
    else
        return fail(r, "expected a value");
    v->kind = K_INTEGER;
    if (*q == '.') {
        v->kind = K_NUMBER;
        if (*++q < '0' || *q > '9')
            return fail(r, "a number with no digit after its point");
        while (*q >= '0' && *q <= '9')
            q++;
    }
    if (*q == 'e' || *q == 'E') {
        v->kind = K_NUMBER;
        if (*++q == '+' || *q == '-')
            q++;
        if (*q < '0' || *q > '9')
            return fail(r, "a number with no digit in its exponent");
        while (*q >= '0' && *q <= '9')
            q++;
    }
    v->number = strtod(start, NULL);
    if (v->kind == K_INTEGER)
        v->integer = strtoll(start, NULL, 10); /* saturates: still an integer */
    r->p = q;
    return 0;
}

/* A scalar at r->p into *v (its string to be freed). */
static int read_scalar(struct reader *r, struct scalar *v)
{
    memset(v, 0, sizeof *v);
    if (*r->p == '"') {
        v->kind = K_STRING;
        return read_string(r, &v->string);
    }
    if (strncmp(r->p, "true", 4) == 0 || strncmp(r->p, "false", 5) == 0) {
        v->kind = K_BOOLEAN;
        v->boolean = *r->p == 't';
        r->p += v->boolean ? 4 : 5;
        return 0;
    }
    if (strncmp(r->p, "null", 4) == 0) {
        v->kind = K_NULL;
        r->p += 4;
        return 0;
    }
    return read_number(r, v);
}

/* Does a value of kind k have the type s names (no "type": any)? */
static int type_allows(const struct json *s, enum kind k)
{
    const struct json *t = json_get(s, "type");
    if (!t)
        return 1;
    int n = t->kind == JSON_ARRAY ? t->n : 1;
    for (int i = 0; i < n; i++) {
        const char *name = t->kind == JSON_ARRAY ? t->items[i].string : t->string;
        if (name && (strcmp(name, type_names[k]) == 0 ||
                     (k == K_INTEGER && strcmp(name, "number") == 0)))
            return 1;
    }
    return 0;
}

/* Is v the schema's value j? */
static int same_value(const struct scalar *v, const struct json *j)
{
    switch (j->kind) {
    case JSON_NULL: return v->kind == K_NULL;
    case JSON_BOOL: return v->kind == K_BOOLEAN && v->boolean == (int)j->number;
    case JSON_NUMBER: return v->kind == K_INTEGER && v->integer == j->number;
    case JSON_STRING: return v->kind == K_STRING && strcmp(v->string, j->string) == 0;
    case JSON_ARRAY:
    case JSON_OBJECT: break;
    }
    return 0;
}

static const char *const kind_words[] = {"null", "a boolean", "an integer", "a number",
                                         "a string", "an array", "an object"};

/* The name a schema's "type" gives (the only one, or "its list"). */
static const char *type_said(const struct json *s)
{
    const struct json *t = json_get(s, "type");
    return t->kind == JSON_STRING ? t->string : "the types of its \"type\" list";
}

/* The scalar at r->p, checked against s's type, const, enum and minimum. */
static int scalar_value(struct reader *r, const struct json *s)
{
    const char *at = r->p;
    struct scalar v;
    if (read_scalar(r, &v) != 0) {
        free(v.string);
        return -1;
    }
    const char *end = r->p;
    r->p = at; /* errors point at the value */
    int rc = 0;
    const struct json *c = json_get(s, "const"), *e = json_get(s, "enum"),
                      *min = json_get(s, "minimum");
    if (!type_allows(s, v.kind)) {
        rc = fail(r, "%s where the schema allows only %s", kind_words[v.kind], type_said(s));
    } else if (c && !same_value(&v, c)) {
        rc = fail(r, "not the one value the schema allows (\"const\")");
    } else if (e) {
        int found = 0;
        for (int i = 0; i < e->n && !found; i++)
            found = same_value(&v, &e->items[i]);
        if (!found)
            rc = fail(r, "not one of the values the schema lists (\"enum\")");
    }
    if (rc == 0 && min && (v.kind == K_INTEGER || v.kind == K_NUMBER) &&
        (v.kind == K_INTEGER ? v.integer < min->number : v.number < (double)min->number))
        rc = fail(r, "less than the schema's minimum %lld", min->number);
    if (rc == 0)
        r->p = end;
    free(v.string);
    return rc;
}

static int value(struct reader *r, const struct json *s);

/* Has member name been seen (seen[0..n-1])? */
static int seen_before(char **seen, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(seen[i], name) == 0)
            return 1;
    return 0;
}

/* The members of the object at r->p (its brace), and the required ones
 * all there. */
static int object_value(struct reader *r, const struct json *s)
{
    const struct json *props = json_get(s, "properties"), *req = json_get(s, "required"),
                      *addl = json_get(s, "additionalProperties");
    char **seen = NULL;
    int nseen = 0, rc = -1;
    const char *brace = r->p++;
    skip_ws(r);
    while (*r->p != '}') {
        char *name;
        if (read_string(r, &name) != 0)
            goto out;
        char **ns = realloc(seen, (size_t)(nseen + 1) * sizeof *ns);
        if (!ns) {
            free(name);
            fail(r, "out of memory");
            goto out;
        }
        seen = ns;
        seen[nseen++] = name;
        size_t mark = path_push(r, name, 0);
        if (seen_before(seen, nseen - 1, name)) {
            fail(r, "member \"%s\" given twice", name);
            goto out;
        }
        skip_ws(r);
        if (*r->p++ != ':') {
            r->p--;
            fail(r, "expected ':' after a member's name");
            goto out;
        }
        skip_ws(r);
        const struct json *sub = json_get(props, name);
        if (!sub && addl && addl->kind == JSON_BOOL && !addl->number) {
            fail(r, "member \"%s\" is not in the schema (undocumented)", name);
            goto out;
        }
        if (!sub && addl && addl->kind == JSON_OBJECT)
            sub = addl;
        if (value(r, sub) != 0)
            goto out;
        path_pop(r, mark);
        skip_ws(r);
        if (*r->p == ',') {
            r->p++;
            skip_ws(r);
            if (*r->p == '}') {
                fail(r, "a comma before the end of an object");
                goto out;
            }
        } else if (*r->p != '}') {
            fail(r, "expected ',' or '}' in an object");
            goto out;
        }
    }
    r->p++;
    for (int i = 0; req && i < req->n; i++)
        if (!seen_before(seen, nseen, req->items[i].string)) {
            r->p = brace;
            fail(r, "required member \"%s\" missing", req->items[i].string);
            goto out;
        }
    rc = 0;
out:
    for (int i = 0; i < nseen; i++)
        free(seen[i]);
    free(seen);
    return rc;
}

/* The items of the array at r->p (its bracket). */
static int array_value(struct reader *r, const struct json *s)
{
    const struct json *items = json_get(s, "items");
    r->p++;
    skip_ws(r);
    for (int i = 0; *r->p != ']'; i++) {
        size_t mark = path_push(r, NULL, i);
        if (value(r, items) != 0)
            return -1;
        path_pop(r, mark);
        skip_ws(r);
        if (*r->p == ',') {
            r->p++;
            skip_ws(r);
            if (*r->p == ']')
                return fail(r, "a comma before the end of an array");
        } else if (*r->p != ']') {
            return fail(r, "expected ',' or ']' in an array");
        }
    }
    r->p++;
    return 0;
}

/* The value at r->p against the alternatives of anyOf: the first that
 * fits it; else the error of the one that read furthest. */
static int any_of(struct reader *r, const struct json *any)
{
    const char *start = r->p;
    size_t pathlen = r->pathlen;
    int depth = r->depth;
    char best[sizeof r->err] = "";
    const char *best_at = NULL;
    for (int i = 0; i < any->n; i++) {
        r->p = start;
        r->err[0] = '\0';
        r->fail_at = NULL;
        path_pop(r, pathlen);
        r->depth = depth;
        if (value(r, &any->items[i]) == 0)
            return 0;
        if (!best_at || r->fail_at > best_at) {
            memcpy(best, r->err, sizeof best);
            best_at = r->fail_at;
        }
    }
    memcpy(r->err, best, sizeof best);
    r->fail_at = best_at;
    return -1;
}

/* The value at r->p against schema s (NULL: any value). */
static int value(struct reader *r, const struct json *s)
{
    while (s && json_get(s, "$ref"))
        s = resolve(r->root, json_get(s, "$ref")->string);
    skip_ws(r);
    if (++r->depth > 200)
        return fail(r, "nested too deeply");
    int rc;
    const struct json *any = json_get(s, "anyOf");
    if (any)
        rc = any_of(r, any);
    else if (*r->p == '{' || *r->p == '[') {
        enum kind k = *r->p == '{' ? K_OBJECT : K_ARRAY;
        if (!type_allows(s, k))
            rc = fail(r, "%s where the schema allows only %s", kind_words[k], type_said(s));
        else
            rc = k == K_OBJECT ? object_value(r, s) : array_value(r, s);
    } else {
        rc = scalar_value(r, s);
    }
    r->depth--;
    return rc;
}

int schema_validate(const struct json *root, const struct json *s, const char *text, char *err,
                    size_t errlen)
{
    struct reader r = {.root = root, .p = text};
    int rc = value(&r, s);
    if (rc == 0) {
        skip_ws(&r);
        if (*r.p)
            rc = fail(&r, "text after the document");
    }
    snprintf(err, errlen, "%s", rc ? r.err : "");
    return rc;
}
