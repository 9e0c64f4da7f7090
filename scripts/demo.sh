#!/usr/bin/env bash
# make demo: run a sample that deadlocks, dump every rank's message queues
# with mqdump, and show the entries the sample promises next to them.
set -euo pipefail
build=${MQD_BUILD:-build}
sample=${1:-ring}
np=$(awk '$1 == "np" { print $2 }' "samples/$sample.expect")

show() {
    echo
    echo "== $sample: $np ranks, every one of them ready and blocked =="
    echo "mpiexec pid $MQD_MPIEXEC_PID"
    read -r -a pids <<<"$MQD_RANK_PIDS"
    for r in "${!pids[@]}"; do
        printf 'rank %-3s pid %-8s state %s\n' "$r" "${pids[$r]}" \
            "$(awk '/^State:/ { print $2, $3 }' "/proc/${pids[$r]}/status")"
    done
    echo
    echo "== mqdump --job $MQD_MPIEXEC_PID (through MPICH's own libtvmpich.so) =="
    "$MQD_BUILD/bin/mqdump" --job "$MQD_MPIEXEC_PID" --dll "$MQD_MPICH_PREFIX/lib/libtvmpich.so" |
        grep -v -e '"--unnamed--"' -e '"MPI_ICOMM_WORLD"' -e '"MPI_COMM_SELF"'
    echo "(MPICH-internal communicators left out; libtvmpich.so shows element counts"
    echo " as \"bytes\" and no global ranks)"
    echo
    echo "== the queue entries $sample promises (samples/$sample.expect) =="
    awk '$1 == "op" {
            if (!hdr++) printf "%-5s %-15s %-11s %-9s %-5s %-6s %-4s %s\n",
                "rank", "communicator", "queue", "status", "peer", "global", "tag", "bytes"
            printf "%-5s %-15s %-11s %-9s %-5s %-6s %-4s %s\n", $2, ($3 == "-" ? "(unnamed)" : $3),
                $4, $5, $6, $7, $8, $9 }' "samples/$sample.expect"
    echo
    echo "(the job is torn down now)"
}
export -f show
export sample np MQD_BUILD=$build
"$build/bin/mqd-launch" -n "$np" -m "$MQD_MPIEXEC" "$build/samples/$sample" -- bash -c show
