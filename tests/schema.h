/*
 * schema.h - a JSON Schema validator for the tests, of the subset of
 * draft 2020-12 that docs/json-schema.json uses:
 *
 *   type (a name or an array of names: null, boolean, integer, number,
 *   string, array, object), properties, required, additionalProperties
 *   (false or a schema), items (one schema), enum, const, minimum, anyOf,
 *   $ref (to "#/$defs/NAME") and $defs; and the annotations $schema, $id,
 *   $comment, title and description, which it ignores.
 *
 * The document is validated as it is read, straight from its text, so an
 * integer is told from a number with a fraction or an exponent ("integer"
 * accepts 3, not 3.0), and a member given twice is an error.  The schema
 * itself is read with tests/json.h.
 */
#ifndef MQD_TESTS_SCHEMA_H
#define MQD_TESTS_SCHEMA_H

#include "tests/json.h"

#include <stddef.h>

/*
 * Every keyword of schema root (and of every schema inside it) is one the
 * validator knows, every type name one it knows, every $ref resolves, and
 * (closed) every object schema with "properties" has "additionalProperties":
 * false and requires only properties it has.  0, or -1 with the first
 * offence and where it is in err[errlen].
 */
int schema_check(const struct json *root, int closed, char *err, size_t errlen);

/* The schema root's "$defs" member name, or NULL. */
const struct json *schema_def(const struct json *root, const char *name);

/*
 * Validate the JSON document text (all of it: one value and white space)
 * against schema s, a schema of root (which $ref resolves in).  0, or -1
 * with the first difference in err[errlen]: where it is in the document as
 * a JSON pointer ("/processes/0/where/line") and what is wrong.
 */
int schema_validate(const struct json *root, const struct json *s, const char *text, char *err,
                    size_t errlen);

#endif
