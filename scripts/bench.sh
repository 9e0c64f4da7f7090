#!/usr/bin/env bash
# make bench: how long a plain `mqdump --job` takes on a whole hung job, and
# what it costs, for jobs of growing size, with mqd's DLL and with MPICH's
# libtvmpich.so.  Each size launches `ring` under the cached MPICH and dumps
# it MQD_BENCH_REPS times per DLL.  Per row: the median wall time of one
# whole-job dump, mqdump's own CPU time (user + system) per rank, the first
# rank's dump time (it builds the DWARF type index every later rank
# shares), the median of the other ranks, and the DLL's callbacks, fetches
# and read system calls per rank.  Figures come from mqdump's --json
# --stats, not from its text view.  Exits non-zero if a dump misses a rank.
#   MQD_BENCH_NP   sizes (default "4 16 32")
#   MQD_BENCH_REPS dumps per size and DLL (default 5)
# Then tests/bench_analysis: the analysis and the folded views on synthetic
# dumps of MQD_BENCH_PROCESSES (default 100000) processes.
set -euo pipefail
build=${MQD_BUILD:-build}
sizes=${MQD_BENCH_NP:-4 16 32}
reps=${MQD_BENCH_REPS:-5}
export MQD_BENCH_REPS=$reps MQD_BUILD=$build
export MQD_BENCH_TVMPICH=$MQD_MPICH_PREFIX/lib/libtvmpich.so

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print 0 }'; }
export -f median

# One DLL on the job held by mqd-launch: one table row.
one_dll() {
    local name=$1 dll=$2 walls=() cpus=() json= t
    local tf
    tf=$(mktemp)
    for _ in $(seq "$MQD_BENCH_REPS"); do
        local args=(--job "$MQD_MPIEXEC_PID" --json --stats)
        [ -n "$dll" ] && args+=(--dll "$dll")
        TIMEFORMAT='%R %U %S'
        { time env -u MQD_DLL "$MQD_BUILD/bin/mqdump" "${args[@]}" >"$tf.json" 2>/dev/null || true; } 2>"$tf"
        read -r wall user sys <"$tf"
        walls+=("$(awk -v w="$wall" 'BEGIN { printf "%.0f", w * 1000 }')")
        cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.0f", (u + s) * 1e6 }')")
        json=$(cat "$tf.json")
    done
    rm -f "$tf" "$tf.json"
    # Per process, from the last dump: "seconds", callbacks, fetches, syscalls.
    local dumped secs cb f sc
    dumped=$(grep -o '"error": null' <<<"$json" | wc -l)
    secs=$(grep -o '"seconds": [0-9.]*' <<<"$json" | awk '{ print $2 }')
    cb=$(grep -o '"callbacks": [0-9]*' <<<"$json" | awk '{ s += $2 } END { print s + 0 }')
    f=$(grep -o '"fetches": [0-9]*' <<<"$json" | awk '{ s += $2 } END { print s + 0 }')
    sc=$(grep -o '"syscalls": [0-9]*' <<<"$json" | awk '{ s += $2 } END { print s + 0 }')
    local wall cpu first other
    wall=$(printf '%s\n' "${walls[@]}" | median)
    cpu=$(printf '%s\n' "${cpus[@]}" | median)
    first=$(head -n 1 <<<"$secs")
    other=$(tail -n +2 <<<"$secs" | median)
    awk -v dll="$name" -v np="$MQD_BENCH_NP_NOW" -v d="$dumped" -v wall="$wall" -v cpu="$cpu" \
        -v first="${first:-0}" -v other="${other:-0}" -v cb="$cb" -v f="$f" -v sc="$sc" 'BEGIN {
            printf "%-10s %6d %6d %9.1f %12.2f %10.1f %10.1f %10.0f %8.0f %8.1f\n", dll, np, d,
                wall, cpu / 1000 / np, first * 1000, other * 1000, cb / np, f / np, sc / np
        }'
    [ "$dumped" -eq "$MQD_BENCH_NP_NOW" ] || {
        echo "bench: $name dumped $dumped of $MQD_BENCH_NP_NOW ranks" >&2
        return 1
    }
}
export -f one_dll

one_size() {
    set -euo pipefail
    one_dll mqd ""
    one_dll libtvmpich "$MQD_BENCH_TVMPICH"
}
export -f one_size

printf '%-10s %6s %6s %9s %12s %10s %10s %10s %8s %8s\n' dll ranks dumped "job ms" \
    "cpu ms/rank" "rank0 ms" "other ms" callbacks fetches syscalls
for np in $sizes; do
    MQD_BENCH_NP_NOW=$np "$build/bin/mqd-launch" -n "$np" -t 120 -m "$MQD_MPIEXEC" \
        "$build/samples/ring" -- bash -c one_size </dev/null | grep -Ev '^(mpiexec|rank|ready)'
done

# The analysis and the folded views alone, on synthetic dumps far larger
# than this machine can run (mqdump's own functions; one CPU).
echo
"$build/tests/bench_analysis" "${MQD_BENCH_PROCESSES:-100000}"
