#!/usr/bin/env bash
# namespace.sh - libmqdhost's names: what is public reads off mqdhost.h.
#
#   scripts/namespace.sh [BUILD]      (default: build)
#
# Three checks, each printing what breaks it:
#   1. Inside the library (host/ but host/include), every identifier with
#      the public prefix (mqdh_x, MQDH_X) is one mqdhost.h declares; the
#      library's own wear mqdh__ / MQDH__ (STYLE.md, "Names").
#   2. The version script (host/libmqdhost.map) names exactly mqdhost.h's
#      MQDH_API functions, each once, with no wildcard: a function added
#      needs its node.
#   3. BUILD/lib/libmqdhost.so exports exactly those, and nothing else but
#      its version nodes (if it is built).
# Exit status 0 when all hold, 1 otherwise.
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2
build=${1:-build}
header=host/include/mqdhost.h
map=host/libmqdhost.map
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

grep -ohE '\b(mqdh|MQDH)_[A-Za-z0-9][A-Za-z0-9_]*' "$header" | sort -u > "$tmp/public"
find host -path host/include -prune -o -name '*.[ch]' -type f -print | sort |
    xargs grep -noE '\b(mqdh|MQDH)_[A-Za-z0-9][A-Za-z0-9_]*' |
    awk -F: '{print $3, $1 ":" $2}' | sort -k1,1 > "$tmp/used"
join -v1 "$tmp/used" "$tmp/public" > "$tmp/bad"
if [ -s "$tmp/bad" ]; then
    echo "names with the public prefix that mqdhost.h does not declare (use mqdh__/MQDH__):"
    awk '{print "  " $2 ": " $1}' "$tmp/bad" | sort -u | head -50
    status=1
fi

grep -v '^#' "$header" | sed -n 's/.*MQDH_API[^(]*[ *]\([a-z_0-9]*\)(.*/\1/p' | sort > "$tmp/api"
sed -e 's|/\*.*\*/||' -e 's|^ *\*.*||' "$map" | grep -oE '^\s+[A-Za-z_0-9*]+;' |
    tr -d ' \t;' | grep -v '^\*$' | sort > "$tmp/mapped"
if grep -q '\*' "$tmp/mapped"; then
    echo "$map: a wildcard in a global list: $(grep '\*' "$tmp/mapped" | tr '\n' ' ')"
    status=1
fi
if [ -n "$(uniq -d "$tmp/mapped")" ]; then
    echo "$map: named twice: $(uniq -d "$tmp/mapped" | tr '\n' ' ')"
    status=1
fi
if ! diff -q "$tmp/api" "$tmp/mapped" > /dev/null; then
    echo "$map and mqdhost.h's MQDH_API functions differ (< header only, > map only):"
    diff "$tmp/api" "$tmp/mapped" | grep '^[<>]' | sed 's/^/  /'
    status=1
fi

lib=$build/lib/libmqdhost.so
if [ -e "$lib" ]; then
    nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | grep -v '^MQDHOST_' |
        sort -u > "$tmp/exported"
    if ! diff -q "$tmp/api" "$tmp/exported" > /dev/null; then
        echo "$lib exports other than mqdhost.h's functions (< header only, > library only):"
        diff "$tmp/api" "$tmp/exported" | grep '^[<>]' | sed 's/^/  /'
        status=1
    fi
fi
[ "$status" -eq 0 ] && echo "namespace: the library's internals are mqdh__/MQDH__; $(wc -l < "$tmp/api") functions exported, each in its version node"
exit "$status"
