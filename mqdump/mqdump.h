/*
 * mqdump.h - the views of mqdump, for the command that shows a dump
 * through them (main.c) and for tests/bench_analysis.c: one header per
 * view, each over the public libmqdhost API (mqdhost.h) alone.  The views
 * share common.h and dot.h, never each other's functions.
 */
#ifndef MQDUMP_H
#define MQDUMP_H

#include "mqdhost.h"

#include "graph.h"
#include "json.h"
#include "stacks.h"
#include "text.h"

#endif
