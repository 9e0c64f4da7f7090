#!/usr/bin/env bash
# make demo: run a deadlocked sample under the cached MPICH, dump the whole
# job with plain `mqdump --job PID` as a user would (no --dll: mqdump picks
# mqd's own DLL for MPICH by itself), show the folded queues, where every
# rank is and the explained deadlock, write its graph, check that every rank
# runs on untraced, and tear the job down.
#   scripts/demo.sh [SAMPLE [NP]]
# Without arguments: a 16-rank ring (its queues fold into one group, and
# its graph into one node with its cycle), then
# mismatch (a barrier one rank never joins), then hidden on 8 ranks with
# --stacks (no deadlock: one rank computes outside MPI, and the merged
# stacks and the report show where).  Exits non-zero if a dump fails,
# shows no deadlock (hidden: not the rank that holds the job up), draws
# the ring other than folded, or leaves a rank stopped or traced.
set -euo pipefail
build=${MQD_BUILD:-build}
out=${MQD_DEMO_OUT:-$build/demo}
mkdir -p "$out"
if [ $# -eq 0 ]; then
    "$0" ring 16
    "$0" mismatch
    "$0" hidden 8
    echo
    echo "demo: both deadlocks shown and explained, and the rank that holds up hidden found" \
        "with its source line; every rank was left running"
    exit
fi
sample=$1
np=${2:-$(awk '$1 == "np" { print $2 }' "samples/$sample.expect")}

show() {
    set -uo pipefail
    # What the dump must show: a deadlock; for hidden, the rank holding it up.
    local want='^DEADLOCK' what="no deadlock shown" graph=--graph
    if [ "$sample" = hidden ]; then
        want='^  rank [0-9]+, not in MPI: in relax at samples/hidden.c:[0-9]+, holds up'
        what="not the rank that holds the job up" graph="--stacks --stacks-graph"
    fi
    echo
    echo "== $sample: $np ranks under $MQD_MPIEXEC (mpiexec pid $MQD_MPIEXEC_PID), hung =="
    sed -n '2,/^ \*\//p' "samples/$sample.c" | sed -e 's/^ \*\/$//' -e 's/^ \* \{0,1\}/  /'
    echo "== mqdump --job $MQD_MPIEXEC_PID $graph $out/$sample.svg =="
    # A rank that blocks in a collective announces itself just before it:
    # dump again (5 s at most) until the deadlock it is heading for shows.
    local rc log=$out/$sample.txt
    for _ in $(seq 50); do
        rc=0
        # shellcheck disable=SC2086 # $graph is one or two options
        env -u MQD_DLL "$MQD_BUILD/bin/mqdump" --job "$MQD_MPIEXEC_PID" \
            $graph "$out/$sample.svg" >"$log" 2>&1 || rc=$?
        [ "$rc" -eq 0 ] && grep -Eq "$want" "$log" && break
        sleep 0.1
    done
    cat "$log"
    echo
    echo "== the graph: $out/$sample.svg (DOT: $out/$sample.svg.dot)"
    read -r -a pids <<<"$MQD_RANK_PIDS"
    running=0 traced=0
    for pid in "${pids[@]}"; do
        [ "$(awk '/^State:/ { print $2 }' "/proc/$pid/status")" != T ] && running=$((running + 1))
        [ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$pid/status")" != 0 ] && traced=$((traced + 1))
    done
    echo "after the dump: ${running} of ${#pids[@]} ranks running, ${traced} traced"
    echo "(the job is torn down now)"
    local bad=
    [ "$rc" -eq 0 ] || bad="mqdump exited $rc"
    grep -Eq "$want" "$log" || bad="${bad:+$bad; }$what"
    grep -q "^DLL: .*mqd's DLL for MPICH" "$log" || bad="${bad:+$bad; }mqd's DLL was not used"
    [ "$running" -eq "${#pids[@]}" ] && [ "$traced" -eq 0 ] || bad="${bad:+$bad; }ranks left stopped or traced"
    # The ring's picture folds as the text does: its ranks one node, the
    # cycle one red loop on it that says how many it holds.
    if [ "$sample" = ring ]; then
        local dot=$out/$sample.svg.dot nodes
        nodes=$(grep -c '^  p[0-9]* \[label=' "$dot" || true)
        if [ "$nodes" -eq 1 ] &&
            grep -q "^  p0 -> p0 \[color=red.*cycle of $np processes" "$dot"; then
            echo "the ring's graph: its $np ranks one node, its cycle of $np processes a loop on it"
        else
            bad="${bad:+$bad; }the ring's graph is $nodes nodes, not one with its cycle"
        fi
    fi
    if [ -n "$bad" ]; then
        echo "demo: FAILED on $sample: $bad" >&2
        return 1
    fi
}
export -f show
export sample np out MQD_BUILD=$build
# The launcher's own lines (its pids, "ready") are left out.
"$build/bin/mqd-launch" -n "$np" -m "$MQD_MPIEXEC" "$build/samples/$sample" -- bash -c show |
    grep -v -E '^(mpiexec [0-9]+|rank [0-9]+ [0-9]+|ready)$'
