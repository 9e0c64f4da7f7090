/*
 * json.h - a small JSON reader for the tests: enough to check mqdump's
 * --json output field by field (objects, arrays, strings with the escapes
 * mqdump writes, integers, true/false/null).
 */
#ifndef MQD_TESTS_JSON_H
#define MQD_TESTS_JSON_H

#include <stddef.h>

enum json_kind { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json {
    enum json_kind kind;
    long long number; /* JSON_NUMBER (integers), JSON_BOOL (0/1) */
    char *string;     /* JSON_STRING */
    int n;            /* JSON_ARRAY and JSON_OBJECT: items */
    struct json *items;
    char **keys; /* JSON_OBJECT */
};

/* Parse text; NULL with a message in err on a syntax error. */
struct json *json_parse(const char *text, char *err, int errlen);
void json_free(struct json *j);

/* Member key of an object, or NULL. */
const struct json *json_get(const struct json *obj, const char *key);

/* obj's "ranks" array as "0,1,2" into buf[len]; "" if it has none. */
const char *json_ranks(const struct json *obj, char *buf, size_t len);

#endif
