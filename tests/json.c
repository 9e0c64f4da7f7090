/* json.c - a small JSON reader for the tests. */
#define _GNU_SOURCE
#include "json.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parser {
    const char *p;
    char *err;
    int errlen;
    int depth;
};

static int fail(struct parser *ps, const char *what)
{
    if (!ps->err[0])
        snprintf(ps->err, (size_t)ps->errlen, "%s at \"%.20s\"", what, ps->p);
    return -1;
}

static void skip_ws(struct parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\t' || *ps->p == '\r')
        ps->p++;
}

static int parse_value(struct parser *ps, struct json *out);

static int parse_string(struct parser *ps, char **out)
{
    if (*ps->p != '"')
        return fail(ps, "expected a string");
    ps->p++;
    size_t cap = 64, n = 0;
    char *s = malloc(cap);
    if (!s)
        return fail(ps, "out of memory");
    for (;;) {
        char c = *ps->p;
        /* The end of the input, also right after a backslash: ps->p stays
         * on the terminating NUL, which fail() quotes from. */
        if (c == '\0' || (c == '\\' && ps->p[1] == '\0')) {
            free(s);
            return fail(ps, "unterminated string");
        }
        ps->p++;
        if (c == '"')
            break;
        if (c == '\\') {
            char e = *ps->p++;
            switch (e) {
            case '"': case '\\': case '/': c = e; break;
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                unsigned v;
                if (!isxdigit((unsigned char)ps->p[0]) || !isxdigit((unsigned char)ps->p[1]) ||
                    !isxdigit((unsigned char)ps->p[2]) || !isxdigit((unsigned char)ps->p[3]) ||
                    sscanf(ps->p, "%4x", &v) != 1 || v > 0xff) {
                    free(s);
                    return fail(ps, "unsupported \\u escape");
                }
                ps->p += 4;
                c = (char)v;
                break;
            }
            default:
                free(s);
                return fail(ps, "bad escape");
            }
        }
        if (n + 2 > cap) {
            char *ns = realloc(s, cap *= 2);
            if (!ns) {
                free(s);
                return fail(ps, "out of memory");
            }
            s = ns;
        }
        s[n++] = c;
    }
    s[n] = '\0';
    *out = s;
    return 0;
}

static int add_item(struct parser *ps, struct json *j, char *key)
{
    struct json *items = realloc(j->items, (size_t)(j->n + 1) * sizeof *items);
    if (!items)
        return fail(ps, "out of memory");
    j->items = items;
    if (j->kind == JSON_OBJECT) {
        char **keys = realloc(j->keys, (size_t)(j->n + 1) * sizeof *keys);
        if (!keys)
            return fail(ps, "out of memory");
        j->keys = keys;
        keys[j->n] = key;
    }
    memset(&j->items[j->n], 0, sizeof j->items[j->n]);
    j->n++;
    return parse_value(ps, &j->items[j->n - 1]);
}

static int parse_container(struct parser *ps, struct json *j, char close)
{
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        return 0;
    }
    for (;;) {
        skip_ws(ps);
        char *key = NULL;
        if (j->kind == JSON_OBJECT) {
            if (parse_string(ps, &key) != 0)
                return -1;
            skip_ws(ps);
            if (*ps->p++ != ':') {
                free(key);
                return fail(ps, "expected ':'");
            }
        }
        if (add_item(ps, j, key) != 0)
            return -1;
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            return 0;
        }
        return fail(ps, "expected ',' or the end of a container");
    }
}

static int parse_value(struct parser *ps, struct json *out)
{
    skip_ws(ps);
    if (++ps->depth > 64)
        return fail(ps, "nested too deeply");
    int rc = 0;
    if (*ps->p == '{') {
        out->kind = JSON_OBJECT;
        rc = parse_container(ps, out, '}');
    } else if (*ps->p == '[') {
        out->kind = JSON_ARRAY;
        rc = parse_container(ps, out, ']');
    } else if (*ps->p == '"') {
        out->kind = JSON_STRING;
        rc = parse_string(ps, &out->string);
    } else if (strncmp(ps->p, "true", 4) == 0 || strncmp(ps->p, "false", 5) == 0) {
        out->kind = JSON_BOOL;
        out->number = *ps->p == 't';
        ps->p += out->number ? 4 : 5;
    } else if (strncmp(ps->p, "null", 4) == 0) {
        out->kind = JSON_NULL;
        ps->p += 4;
    } else {
        char *end;
        out->kind = JSON_NUMBER;
        out->number = strtoll(ps->p, &end, 10);
        if (end == ps->p)
            return fail(ps, "expected a value");
        if (*end == '.' || *end == 'e' || *end == 'E') /* not an integer: skip the rest */
            strtod(ps->p, &end);
        ps->p = end;
    }
    ps->depth--;
    return rc;
}

static void free_members(struct json *j)
{
    for (int i = 0; i < j->n; i++) {
        free_members(&j->items[i]);
        if (j->keys)
            free(j->keys[i]);
    }
    free(j->items);
    free(j->keys);
    free(j->string);
}

void json_free(struct json *j)
{
    if (!j)
        return;
    free_members(j);
    free(j);
}

struct json *json_parse(const char *text, char *err, int errlen)
{
    struct parser ps = {text, err, errlen, 0};
    struct json *j = calloc(1, sizeof *j);
    err[0] = '\0';
    if (!j) {
        snprintf(err, (size_t)errlen, "out of memory");
        return NULL;
    }
    if (parse_value(&ps, j) != 0) {
        json_free(j);
        return NULL;
    }
    skip_ws(&ps);
    if (*ps.p) {
        fail(&ps, "trailing text");
        json_free(j);
        return NULL;
    }
    return j;
}

const struct json *json_get(const struct json *obj, const char *key)
{
    if (!obj || obj->kind != JSON_OBJECT)
        return NULL;
    for (int i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return &obj->items[i];
    return NULL;
}

const char *json_ranks(const struct json *obj, char *buf, size_t len)
{
    const struct json *r = json_get(obj, "ranks");
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; r && i < r->n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%lld", i ? "," : "", r->items[i].number);
    return buf;
}
