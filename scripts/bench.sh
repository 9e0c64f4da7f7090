#!/usr/bin/env bash
# make bench: how long mqdump takes on a whole job, and what it costs the
# target, for jobs of growing size.  Each size launches `ring` under the
# cached MPICH and dumps it MQD_BENCH_REPS times with MPICH's libtvmpich.so
# (or $MQD_DLL), reporting the median wall time of one whole-job dump, the
# first rank's time (it builds the DWARF type index every later rank
# shares), the median of the other ranks, and the DLL's callbacks, fetches
# and read system calls per rank.
set -euo pipefail
build=${MQD_BUILD:-build}
sizes=${MQD_BENCH_NP:-4 16 32}
reps=${MQD_BENCH_REPS:-5}
dll=${MQD_DLL:-$MQD_MPICH_PREFIX/lib/libtvmpich.so}
export MQD_BENCH_REPS=$reps MQD_BENCH_DLL=$dll MQD_BUILD=$build

one_size() {
    set -euo pipefail
    local times=() ranks
    for _ in $(seq "$MQD_BENCH_REPS"); do
        local t0 t1 out
        t0=$(date +%s%N)
        out=$("$MQD_BUILD/bin/mqdump" --job "$MQD_MPIEXEC_PID" --dll "$MQD_BENCH_DLL" --stats)
        t1=$(date +%s%N)
        times+=($(((t1 - t0) / 1000)))
        ranks=$(grep -c '^process ' <<<"$out")
    done
    median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
    # Per-rank figures from the last run.
    local stats wall first other
    stats=$(awk '/stats:/ { print $2, substr($4, 2), $9, $(NF - 1) }' <<<"$out")
    wall=$(printf '%s\n' "${times[@]}" | median)
    first=$(head -n 1 <<<"$stats" | awk '{ print $4 }')
    other=$(tail -n +2 <<<"$stats" | awk '{ print $4 }' | median)
    awk -v np="$MQD_BENCH_NP_NOW" -v ranks="$ranks" -v wall="$wall" -v first="$first" \
        -v other="${other:-0}" '
        { n++; cb += $1; f += $2; sc += $3 }
        END {
            printf "%6d %6d %12.1f %12.1f %12.1f %10.0f %9.0f %9.1f\n", np, ranks, wall / 1000.0,
                first * 1000, other * 1000, cb / n, f / n, sc / n
        }' <<<"$stats"
}
export -f one_size

printf '%6s %6s %12s %12s %12s %10s %9s %9s\n' ranks dumped "job ms" "rank0 ms" "other ms" \
    callbacks fetches syscalls
for np in $sizes; do
    MQD_BENCH_NP_NOW=$np "$build/bin/mqd-launch" -n "$np" -t 120 -m "$MQD_MPIEXEC" \
        "$build/samples/ring" -- bash -c one_size </dev/null | grep -Ev '^(mpiexec|rank|ready)'
done
