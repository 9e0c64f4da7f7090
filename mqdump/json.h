/*
 * json.h - mqdump --json (json.c): the dump, its analysis and mqdump's
 * cost as members of one JSON object on standard output, and --list
 * --json.  docs/JSON.md documents every member and docs/json-schema.json
 * describes them for a program; tests/test_json_format.c checks every
 * sample's output against that schema.
 *
 * The object is written member by member: json_begin, json_processes,
 * then any of json_analysis, json_stacks (stacks.h) and json_cost, and
 * json_end.  Strings are written as the dump holds them (JSON escapes by
 * its own grammar): call these before mqdh_dump_escape.
 */
#ifndef MQDUMP_JSON_H
#define MQDUMP_JSON_H

#include "mqdhost.h"

/*
 * The format of every JSON object mqdump writes, its first member
 * ("format": 1).  Within a format, members may be added; a member changed
 * (its type or meaning) or removed makes a new format (docs/JSON.md).
 */
#define MQDUMP_JSON_FORMAT 1

/* The object's opening brace and its "format" member. */
void json_begin(void);
/* The "processes" member; stacks: each process's threads and frames too
 * ("threads"), stats: its "stats". */
void json_processes(const struct mqdh_dump *d, int stats, int stacks);
/* The "deadlock" member: the analysis a of d. */
void json_analysis(const struct mqdh_dump *d, const struct mqdh_analysis *a);
/* --stats: the "cost" member, what mqdump itself took (CPU, peak memory)
 * and how the dump was made (workers, files). */
void json_cost(const struct mqdh_dump *d);
/* The object's closing brace and a newline. */
void json_end(void);

/* --list --json: a whole object of its own. */
void json_jobs(const struct mqdh_job_info *jobs, int n);

#endif
