#!/usr/bin/env bash
# limits.sh - files and functions of a size a reader can hold.
#
#   scripts/limits.sh [DIR...]     (default: host dll mqdump mpich_defs)
#
# Every product .c file at most MAX_FILE lines (700), every function at
# most MAX_FUNC lines (80), counted from the line of its name to its
# closing brace.  A function is what the project's layout makes of one: a
# line that opens with its name at column 0 (its return type on the same
# line), its body from a "{" at column 0 to the next "}" at column 0.
# Prints each one over, longest first.  And no two product files (.c, .h)
# share a name: a reader who meets "progress.c" knows which one it is.
# Exit status 1 if anything is over or shared, else 0.
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2
[ $# -gt 0 ] || set -- host dll mqdump mpich_defs
MAX_FILE=${MAX_FILE:-700}
MAX_FUNC=${MAX_FUNC:-80}
status=0
files=$(find "$@" -name '*.c' -type f | sort)
over=$(for f in $files; do
    n=$(wc -l < "$f")
    [ "$n" -gt "$MAX_FILE" ] && echo "$n $f: $n lines (at most $MAX_FILE)"
done | sort -rn | cut -d' ' -f2-)
if [ -n "$over" ]; then
    echo "files over $MAX_FILE lines:"
    echo "$over" | sed 's/^/  /'
    status=1
fi
over=$(for f in $files; do
    awk -v file="$f" -v max="$MAX_FUNC" '
    # A signature: starts at column 0 with a letter, holds "(", is no
    # statement (no ";" at its end) and no preprocessor line.
    /^[A-Za-z_][^;]*\(/ && $0 !~ /;[[:space:]]*$/ && $0 !~ /^(static )?(const )?struct [a-z_]+ \{/ {
        if (!inbody) { sig = NR; name = $0; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name) }
    }
    /^\{/ && sig { inbody = 1 }
    /^\}/ && inbody {
        len = NR - sig + 1
        if (len > max) printf "%d %s:%d: %s, %d lines (at most %d)\n", len, file, sig, name, len, max
        inbody = 0; sig = 0
    }' "$f"
done | sort -rn | cut -d' ' -f2-)
if [ -n "$over" ]; then
    echo "functions over $MAX_FUNC lines:"
    echo "$over" | sed 's/^/  /'
    status=1
fi
twice=$(find "$@" -name '*.[ch]' -type f | sed 's|.*/||' | sort | uniq -d)
if [ -n "$twice" ]; then
    echo "file names in two folders:"
    for n in $twice; do
        echo "  $n: $(find "$@" -name "$n" -type f | sort | tr '\n' ' ')"
    done
    status=1
fi
[ "$status" -eq 0 ] && echo "limits: no .c file over $MAX_FILE lines, no function over $MAX_FUNC, no name twice"
exit "$status"
