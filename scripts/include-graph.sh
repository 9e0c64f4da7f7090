#!/usr/bin/env bash
# include-graph.sh - no cycle among a directory's own files.
#
#   scripts/include-graph.sh [DIR...]      (default: host dll mqdump)
#
# For each directory, two graphs, each of which must have no cycle:
#
#   includes  file -> file it #includes "..." (the project's own files,
#             found beside the file, from the top of the tree, or in
#             host/include), followed across directories;
#   calls     X.c -> Y.c when X.c's object uses a symbol (a function or
#             data) that Y.c's defines: each .c compiled alone (-c) into a
#             temporary directory, and read with nm.  A cycle here is a
#             file that calls back up into one that calls it, which a
#             header's include graph cannot show.
#
# A cycle is printed as the path that closes it, each step with its
# reason (the #include, or the first symbol used).  The exit status is 0
# when every graph of every directory is acyclic, 1 otherwise, 2 when a
# file cannot be compiled (its calls are then not known).
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2
[ $# -gt 0 ] || set -- host dll mqdump
CC=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The cycles of a graph given as lines "FROM TO REASON..." on stdin: one
# block per strongly connected component of more than one node, with a
# path around it.  Nothing printed: no cycle.
cycles() {
    awk '
    function visit(v,    i, w) {
        idx[v] = low[v] = ++counter
        stack[++sp] = v; on[v] = 1
        for (i = 1; i <= nout[v]; i++) {
            w = out[v, i]
            if (!(w in idx)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
            else if (on[w] && idx[w] < low[v]) low[v] = idx[w]
        }
        if (low[v] == idx[v]) {
            ncomp++; size = 0
            do { w = stack[sp--]; on[w] = 0; comp[w] = ncomp; size++ } while (w != v)
            csize[ncomp] = size; croot[ncomp] = v
        }
    }
    # A shortest path from s back to s inside its component (breadth first).
    function around(s,    head, tail, q, i, v, w, seen, prev, path, n, k) {
        head = 1; tail = 0
        for (i = 1; i <= nout[s]; i++) {
            w = out[s, i]
            if (comp[w] == comp[s] && !(w in seen)) { seen[w] = 1; prev[w] = s; q[++tail] = w }
        }
        while (head <= tail) {
            v = q[head++]
            if (v == s) break
            for (i = 1; i <= nout[v]; i++) {
                w = out[v, i]
                if (comp[w] == comp[s] && !(w in seen)) { seen[w] = 1; prev[w] = v; q[++tail] = w }
            }
        }
        # path[1] = s, path[2] = the node before s, ..., path[n] = the one after s
        n = 0; v = s
        do { path[++n] = v; v = prev[v] } while (v != s)
        path[n + 1] = s
        for (k = n + 1; k >= 2; k--) {
            v = path[k]; w = path[k - 1]
            printf "      %s -> %s  (%s)\n", v, w, why[v, w]
        }
    }
    NF >= 2 && $1 != $2 {
        if (!(($1, $2) in why)) {
            out[$1, ++nout[$1]] = $2
            r = $0; sub(/^[^ ]+ [^ ]+ ?/, "", r); why[$1, $2] = r
        }
        node[$1] = 1; node[$2] = 1
    }
    END {
        for (v in node) if (!(v in idx)) visit(v)
        for (c = 1; c <= ncomp; c++) {
            if (csize[c] < 2) continue
            members = ""
            for (v in node) if (comp[v] == c) members = members " " v
            printf "    cycle among%s:\n", members
            around(croot[c])
        }
    }'
}

# The project's file an #include "name" in file f means, or nothing.
resolve() {
    local f=$1 name=$2 d
    d=$(dirname "$f")
    for c in "$d/$name" "$name" "host/include/$name"; do
        if [ -f "$c" ]; then
            realpath --relative-to=. "$c"
            return
        fi
    done
}

# Lines "FILE INCLUDED #include" for f and every project file it reaches.
include_edges() {
    local -A done=()
    local todo=("$@") f name g
    while [ ${#todo[@]} -gt 0 ]; do
        f=${todo[0]}
        todo=("${todo[@]:1}")
        [ -n "${done[$f]+x}" ] && continue
        done[$f]=1
        while read -r name; do
            g=$(resolve "$f" "$name")
            [ -n "$g" ] || continue
            echo "$f $g #include \"$name\""
            todo+=("$g")
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    done
}

stem() {
    local b
    b=$(basename "$1")
    echo "${b%.*}"
}

status=0
for dir in "$@"; do
    dir=${dir%/}
    files=()
    for f in "$dir"/*.c "$dir"/*.h "$dir"/include/*.h; do
        [ -f "$f" ] && files+=("$f")
    done
    echo "$dir: ${#files[@]} files"

    edges=$(include_edges "${files[@]}")
    found=$(printf '%s\n' "$edges" | cycles)
    if [ -n "$found" ]; then
        echo "  includes: CYCLE"
        echo "$found"
        status=1
    else
        echo "  includes: no cycle"
    fi

    obj=$tmp/$(echo "$dir" | tr / _)
    mkdir -p "$obj"
    broken=0
    for f in "$dir"/*.c; do
        [ -f "$f" ] || continue
        if ! $CC -std=c11 -I. -Ihost/include -w -c -o "$obj/$(stem "$f").o" "$f" \
            2>"$obj/$(stem "$f").err"; then
            echo "  calls: cannot compile $f:"
            sed -n '1,3s/^/      /p' "$obj/$(stem "$f").err"
            broken=1
        fi
    done
    if [ "$broken" -ne 0 ]; then
        echo "  calls: not checked"
        [ "$status" -eq 0 ] && status=2
        continue
    fi
    for o in "$obj"/*.o; do
        nm -g --defined-only "$o" | awk -v m="$(stem "$o")" 'NF >= 3 {print $3, m}'
    done | sort -u > "$obj/defined"
    found=$(for o in "$obj"/*.o; do
        nm -u "$o" | awk '{print $NF}' | sort -u | join - "$obj/defined" |
            awk -v m="$(stem "$o")" '$2 != m {print m ".c", $2 ".c", "uses " $1}'
    done | sort -k1,2 -u | cycles)
    if [ -n "$found" ]; then
        echo "  calls: CYCLE"
        echo "$found"
        status=1
    else
        echo "  calls: no cycle"
    fi
done
exit "$status"
