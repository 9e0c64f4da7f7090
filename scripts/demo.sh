#!/usr/bin/env bash
# make demo: run a deadlocked sample under the cached MPICH, dump the whole
# job with mqdump (the folded queues, where every rank is, the explained
# deadlock), write its graph, and tear the job down.
#   scripts/demo.sh [SAMPLE [NP]]
# Without arguments: a 16-rank ring (its queues fold into one group), then
# mismatch (a barrier one rank never joins).
set -euo pipefail
build=${MQD_BUILD:-build}
out=${MQD_DEMO_OUT:-$build/demo}
mkdir -p "$out"
if [ $# -eq 0 ]; then
    "$0" ring 16
    "$0" mismatch
    exit
fi
sample=$1
np=${2:-$(awk '$1 == "np" { print $2 }' "samples/$sample.expect")}

show() {
    echo
    echo "== $sample: $np ranks under $MQD_MPIEXEC (mpiexec pid $MQD_MPIEXEC_PID), hung =="
    sed -n '2,/^ \*\//p' "samples/$sample.c" | sed -e 's/^ \*\/$//' -e 's/^ \* \{0,1\}/  /'
    # A rank that blocks in a collective announces itself just before it:
    # give it a moment to get there.
    sleep 0.5
    echo "== mqdump --job $MQD_MPIEXEC_PID --graph $out/$sample.svg =="
    "$MQD_BUILD/bin/mqdump" --job "$MQD_MPIEXEC_PID" --dll "$MQD_BUILD/lib/libmqd_mpich.so" \
        --graph "$out/$sample.svg"
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
}
export -f show
export sample np out MQD_BUILD=$build
# The launcher's own lines (its pids, "ready") are left out.
"$build/bin/mqd-launch" -n "$np" -m "$MQD_MPIEXEC" "$build/samples/$sample" -- bash -c show |
    grep -v -E '^(mpiexec [0-9]+|rank [0-9]+ [0-9]+|ready)$'
