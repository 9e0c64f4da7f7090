#!/usr/bin/env bash
# include-graph.sh - no cycle among a directory's own files, and host/'s
# layers used one way.
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
# reason (the #include, or the first symbol used).
#
# host/ is in layers (docs/DEVELOPMENT.md): base <- target <- protocol <-
# job, each using only itself and those before it, and analysis using only
# itself and base; host/include (the public header) is every layer's.  Both
# graphs are checked against that rule too: an include or a call that
# points up, or across into analysis, is printed with its reason.
#
# The exit status is 0 when every graph of every directory is acyclic and
# host/'s layers are kept, 1 otherwise, 2 when a file cannot be compiled
# (its calls are then not known).
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
    for c in "$d/$name" "$name" "host/$name" "host/include/$name"; do
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

# The edges ("FROM TO REASON...", host/ paths) that break host/'s layers,
# one line each; nothing when every edge keeps them.
layer_breaks() {
    awk '
    function layer(f) {
        if (f ~ /^host\/include\//) return "public"
        if (match(f, /^host\/[a-z]+\//)) return substr(f, 6, RLENGTH - 6)
        return ""
    }
    BEGIN {
        rank["base"] = 0; rank["target"] = 1; rank["protocol"] = 2; rank["job"] = 3
    }
    NF >= 2 {
        a = layer($1); b = layer($2)
        if (a == "" || b == "" || a == b || b == "public" || a == "public") next
        ok = (a == "analysis") ? (b == "base") : (b != "analysis" && (b in rank) && (a in rank) && rank[b] <= rank[a])
        if (!ok) printf "    %s (%s) -> %s (%s): %s\n", $1, a, $2, b, substr($0, length($1) + length($2) + 3)
    }'
}

status=0
for dir in "$@"; do
    dir=${dir%/}
    files=()
    while read -r f; do
        files+=("$f")
    done < <(find "$dir" -name '*.[ch]' -type f | sort)
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
    found=$(printf '%s\n' "$edges" | layer_breaks)
    if [ -n "$found" ]; then
        echo "  includes: LAYERS BROKEN"
        echo "$found"
        status=1
    elif [ "$dir" = host ]; then
        echo "  includes: layers kept"
    fi

    obj=$tmp/$(echo "$dir" | tr / _)
    mkdir -p "$obj"
    broken=0
    for f in "${files[@]}"; do
        case $f in *.c) ;; *) continue ;; esac
        o=$obj/$(echo "${f%.c}" | tr / @)
        if ! $CC -std=c11 -I. -Ihost -Ihost/include -w -c -o "$o.o" "$f" 2>"$o.err"; then
            echo "  calls: cannot compile $f:"
            sed -n '1,3s/^/      /p' "$o.err"
            broken=1
        fi
    done
    if [ "$broken" -ne 0 ]; then
        echo "  calls: not checked"
        [ "$status" -eq 0 ] && status=2
        continue
    fi
    # Each object by its source's path ("host@base@dump" is host/base/dump.c).
    for o in "$obj"/*.o; do
        nm -g --defined-only "$o" | awk -v m="$(stem "$o" | tr @ /)" 'NF >= 3 {print $3, m}'
    done | sort -u > "$obj/defined"
    calls=$(for o in "$obj"/*.o; do
        nm -u "$o" | awk '{print $NF}' | sort -u | join - "$obj/defined" |
            awk -v m="$(stem "$o" | tr @ /)" '$2 != m {print m ".c", $2 ".c", "uses " $1}'
    done | sort -k1,2 -u)
    found=$(printf '%s\n' "$calls" | cycles)
    if [ -n "$found" ]; then
        echo "  calls: CYCLE"
        echo "$found"
        status=1
    else
        echo "  calls: no cycle"
    fi
    found=$(printf '%s\n' "$calls" | layer_breaks)
    if [ -n "$found" ]; then
        echo "  calls: LAYERS BROKEN"
        echo "$found"
        status=1
    elif [ "$dir" = host ]; then
        echo "  calls: layers kept"
    fi
done
exit "$status"
