#!/usr/bin/env bash
# make bench: what a plain `mqdump --job` costs on a whole hung job, for
# jobs of growing size, with mqd's DLL and with MPICH's libtvmpich.so under
# the same host; against the padb method (gdb attached to one rank, reading
# the queues' heads with a script).
#
# Each size launches `ring` under the cached MPICH (every rank blocked in
# MPI_Waitall, spinning in MPICH's progress loop) and dumps it
# MQD_BENCH_REPS times per DLL.  Per row, medians over the runs:
#   job ms       wall time of one whole-job dump (mqdump started to exited)
#   cpu ms/rank  mqdump's own CPU (user + system) over the ranks
#   sys/rank     system calls over the ranks (one more run, under strace -f -c)
# The runs of the two DLLs are made in turn; below the table, per size:
# mqd's CPU over libtvmpich's (the median of the pairs' ratios; again with
# the ranks held stopped, twice as many pairs) and the system calls per
# rank by call, for both.
#   peak MB      mqdump's peak resident memory
#   rank0 ms     the first rank's dump (it reads the files every rank shares)
#   other ms     the other ranks' (median)
#   workers      threads that set up and read the ranks (mqdump --jobs)
# Figures come from mqdump's --json --stats ("cost", per-process "stats").
# The ranks spin on the same cores mqdump runs on until they are stopped:
# wall time includes competing with them, CPU time does not.
# Exits non-zero if a dump misses a rank.
#   MQD_BENCH_NP   sizes (default "16 64 256"; 1024 fits this 2-core, 23 GB
#                  machine); one above MQD_BENCH_MAX_JOB (default 128) runs
#                  with MPIR_CVAR_NOLOCAL=1 (see below)
#   MQD_BENCH_REPS dumps per size and DLL (default 5)
# Per size, below the table: how long the job took to start, its ranks'
# memory, the load, and mqdump --graph on it (to SVG through Graphviz dot).
# Then the sentinel's cost to a working job: `latehang 3600` (ranks that
# compute and meet in MPI_Allreduce, for an hour) on MQD_BENCH_SENTINEL_NP
# (16) ranks, watched by mqdump --sentinel --interval MQD_BENCH_SENTINEL_I
# (10, the default) for MQD_BENCH_SENTINEL_S (120) seconds; then the job is
# ended and the sentinel says what its looks cost: how long each held the
# ranks stopped, and its CPU time against the job's (measured by the
# sentinel itself: the library's progress calls, getrusage, the ranks'
# CPU time at its first and last looks).
# Then tests/bench_analysis: the analysis, the folded views and the folded
# --graph (to DOT, and to SVG rendered by Graphviz dot; a handful of nodes)
# on synthetic dumps of MQD_BENCH_PROCESSES (default 100000) processes, and the merge of
# 1,024 ranks from 64 hosts and MQD_BENCH_MERGE_RANKS (10000) ranks from
# MQD_BENCH_MERGE_HOSTS (1000) hosts.
set -euo pipefail
build=${MQD_BUILD:-build}
sizes=${MQD_BENCH_NP:-16 64 256}
reps=${MQD_BENCH_REPS:-5}
export MQD_BENCH_REPS=$reps MQD_BUILD=$build
export MQD_BENCH_TVMPICH=$MQD_MPICH_PREFIX/lib/libtvmpich.so
export MQD_BENCH_OUT
MQD_BENCH_OUT=$(mktemp -d)
trap 'rm -rf "$MQD_BENCH_OUT"' EXIT

# Milliseconds from bash's $EPOCHREALTIME t0 to t1.  A clock read by a
# command ($(date)) would itself be a process to start, which behind a node
# of spinning ranks can take longer than the dump.
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f\n", (b - a) * 1000 }'; }
export -f ms

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print 0 }'; }
export -f median

# A number from mqdump's JSON: the value of "key": in file, summed or each.
json_each() { grep -o "\"$1\": [0-9.]*" "$2" | awk '{ print $2 }'; }
export -f json_each

# One dump of the job mqd-launch holds with one DLL: its wall time, CPU and
# peak memory appended to that DLL's files.
one_run() {
    local name=$1 dll=$2 tf=$MQD_BENCH_OUT/$1.$MQD_BENCH_NP_NOW
    # shellcheck disable=SC2206 # "--job PID" or "--pid P --pid Q ...": words
    local args=($MQD_BENCH_ARGS --json --stats)
    [ -n "$dll" ] && args+=(--dll "$dll")
    local t0 t1
    t0=$EPOCHREALTIME
    (unset MQD_DLL && exec "$MQD_BUILD/bin/mqdump" "${args[@]}") >"$tf.json" 2>/dev/null || true
    t1=$EPOCHREALTIME
    ms "$t0" "$t1" >>"$tf.walls"
    json_cpu "$tf.json" >>"$tf.cpus"
    json_each max_rss_kb "$tf.json" >>"$tf.rss"
}
export -f one_run

# mqdump's own CPU (user + system, ms) from its --json --stats "cost".
json_cpu() {
    awk '/"cost"/ { for (i = 1; i <= NF; i++) { if ($i ~ /user_seconds/) u = $(i + 1);
             if ($i ~ /system_seconds/) s = $(i + 1) } gsub(/,/, "", u); gsub(/,/, "", s);
             printf "%.3f\n", (u + s) * 1000 }' "$1"
}
export -f json_cpu

# How many ranks a dump's --json says it read (an error null each).
json_dumped() { grep -o '"error": null' "$1" | wc -l; }
export -f json_dumped

# The same ratio with the job's ranks held stopped (SIGSTOP, then SIGCONT:
# the job runs on as before): the same dumps without the ranks spinning on
# the cores mqdump runs on, which move a pair's ratio by a fifth either
# way; held, by a few percent.  Twice MQD_BENCH_REPS pairs, in turn
# (one_run, as held_mqd and held_libtvmpich), every rank dumped each time;
# their ratio into held_ratio.NP (cpu_ratio).
held_ratio() {
    local np=$MQD_BENCH_NP_NOW ranks tf
    ranks=$(pgrep -P "$(pgrep -P "$MQD_MPIEXEC_PID" | head -n 1)" | tr '\n' ' ')
    [ -n "$ranks" ] || return 0
    for tf in "$MQD_BENCH_OUT"/held_{mqd,libtvmpich}."$np".{walls,cpus,rss}; do
        : >"$tf"
    done
    # shellcheck disable=SC2086 # the ranks' pids: words
    kill -STOP $ranks
    # shellcheck disable=SC2064 # the pids now
    trap "kill -CONT $ranks 2>/dev/null" EXIT
    local dumped=0
    for _ in $(seq $((MQD_BENCH_REPS * 2))); do
        one_run held_mqd ""
        dumped=$((dumped + $(json_dumped "$MQD_BENCH_OUT/held_mqd.$np.json")))
        one_run held_libtvmpich "$MQD_BENCH_TVMPICH"
        dumped=$((dumped + $(json_dumped "$MQD_BENCH_OUT/held_libtvmpich.$np.json")))
    done
    # shellcheck disable=SC2086
    kill -CONT $ranks
    trap - EXIT
    [ "$dumped" -eq $((np * MQD_BENCH_REPS * 4)) ] || {
        echo "bench: held stopped, $dumped of $((np * MQD_BENCH_REPS * 4)) ranks dumped" >&2
        return 1
    }
    cpu_ratio held_mqd held_libtvmpich held_ratio
}
export -f held_ratio

# One DLL's table row, from its runs; and its system calls, counted in one
# more run under strace -f -c (slower: not timed).
one_row() {
    local name=$1 dll=$2 tf=$MQD_BENCH_OUT/$1.$MQD_BENCH_NP_NOW
    # shellcheck disable=SC2206 # "--job PID" or "--pid P --pid Q ...": words
    local args=($MQD_BENCH_ARGS --json --stats)
    [ -n "$dll" ] && args+=(--dll "$dll")
    # mqdump's calls alone: env runs outside strace (its own start-up, the
    # locale files, is a hundred calls).
    env -u MQD_DLL strace -f -c -o "$tf.strace" "$MQD_BUILD/bin/mqdump" "${args[@]}" \
        >/dev/null 2>&1 || true
    local np=$MQD_BENCH_NP_NOW dumped secs workers sc
    dumped=$(json_dumped "$tf.json")
    secs=$(json_each seconds "$tf.json")
    workers=$(json_each workers "$tf.json" | head -n 1)
    sc=$(awk '$NF == "total" { print $4 }' "$tf.strace")
    local wall cpu rss first other
    wall=$(median <"$tf.walls")
    cpu=$(median <"$tf.cpus")
    rss=$(median <"$tf.rss")
    first=$(head -n 1 <<<"$secs")
    other=$(tail -n +2 <<<"$secs" | median)
    awk -v dll="$name" -v np="$np" -v d="$dumped" -v w="${workers:-1}" -v wall="$wall" \
        -v cpu="$cpu" -v sc="${sc:-0}" -v rss="${rss:-0}" -v first="${first:-0}" \
        -v other="${other:-0}" 'BEGIN {
            printf "%-10s %6d %6d %7d %8.0f %11.2f %9.1f %8.0f %9.1f %9.2f\n", dll, np, d, w,
                wall, cpu / np, sc / np, rss / 1024, first * 1000, other * 1000
        }' | tee -a "$MQD_BENCH_OUT/rows"
    [ "$dumped" -eq "$np" ] || {
        echo "bench: $name dumped $dumped of $np ranks" >&2
        return 1
    }
}
export -f one_row

# mqd's CPU over libtvmpich's under the same host: the median of the
# ratios of runs made in turn (each pair sees the same load), then the
# lowest and highest of them.  With the ranks spinning on the cores mqdump
# runs on, one pair's ratio moves by a third either way: the range says
# whether the median's side of 1.0 means anything.  Of the runs named a
# over those named b (mqd and libtvmpich), into out.NP (ratio.NP).
cpu_ratio() {
    local np=$MQD_BENCH_NP_NOW r a=${1:-mqd} b=${2:-libtvmpich} out=${3:-ratio}
    r=$(paste "$MQD_BENCH_OUT/$a.$np.cpus" "$MQD_BENCH_OUT/$b.$np.cpus" |
        awk '$2 > 0 { print $1 / $2 }' | sort -n)
    [ -n "$r" ] || return 0
    echo "$(median <<<"$r") $(head -n 1 <<<"$r") $(tail -n 1 <<<"$r")" >"$MQD_BENCH_OUT/$out.$np"
}
export -f cpu_ratio

# Where each rank's system calls go: per call, mqd's and libtvmpich's, per
# rank (strace -f -c of one run each), the calls of at least 0.5 per rank.
calls_table() {
    local np=$1 m=$MQD_BENCH_OUT/mqd.$1.strace t=$MQD_BENCH_OUT/libtvmpich.$1.strace
    [ -s "$m" ] && [ -s "$t" ] || return 0
    printf '  %-18s %8s %11s\n' "system call" mqd libtvmpich
    awk -v np="$np" '
        FNR == 1 { f++ }
        $NF == "total" || NF < 5 || $1 ~ /^[-%]/ { next }
        { c[$NF, f] = $4; seen[$NF] = 1; if (f == 1) tot[$NF] = $4 }
        END {
            for (k in seen) {
                a = c[k, 1] / np; b = c[k, 2] / np
                if (a >= 0.5 || b >= 0.5) printf "  %-18s %8.1f %11.1f\n", k, a, b
                else { oa += a; ob += b }
            }
            if (oa + ob > 0) printf "  %-18s %8.1f %11.1f\n", "(the others)", oa, ob
        }' "$m" "$t" | sort -k2,2nr
    awk -v np="$np" 'FNR == 1 { f++ } $NF == "total" { t[f] = $4 }
        END { printf "  %-18s %8.1f %11.1f\n", "total", t[1] / np, t[2] / np }' "$m" "$t"
}

# The padb method on one rank: gdb attaches, reads the communicator list's
# and the posted and unexpected receive queues' heads, and detaches.
gdb_rank() {
    local pid=$1 tf=$MQD_BENCH_OUT/gdb
    : >"$tf.walls"
    : >"$tf.cpus"
    for _ in $(seq "$MQD_BENCH_REPS"); do
        local t0 t1
        t0=$EPOCHREALTIME
        TIMEFORMAT='%U %S'
        { time gdb -batch -nx -p "$pid" \
            -ex 'print MPIR_All_communicators.head' \
            -ex 'print *MPIR_All_communicators.head' \
            -ex 'print *MPID_Recvq_posted_head_ptr' \
            -ex 'print *MPID_Recvq_unexpected_head_ptr' >"$tf.out" 2>&1; } 2>"$tf.time"
        t1=$EPOCHREALTIME
        ms "$t0" "$t1" >>"$tf.walls"
        awk '{ printf "%.0f\n", ($1 + $2) * 1000 }' "$tf.time" >>"$tf.cpus"
    done
    grep -q '^\$1 = ' "$tf.out" || {
        echo "bench: gdb did not read the queues:" >&2
        cat "$tf.out" >&2
        return 1
    }
    echo "$(median <"$tf.walls") $(median <"$tf.cpus")" >"$MQD_BENCH_OUT/gdb.result"
}
export -f gdb_rank

# The job itself, once every rank is ready: how long it took to start, its
# ranks' memory (proportional set size: shared pages split between them),
# the load; then mqdump --graph on it, timed to the SVG, with its nodes.
job_facts() {
    local ranks pss t1 t2 nodes
    ranks=$(pgrep -P "$(pgrep -P "$MQD_MPIEXEC_PID" | head -n 1)")
    # One awk for every rank: behind a node of spinning ranks, each process
    # started takes long.
    # shellcheck disable=SC2046 # one path per rank
    pss=$(awk '/^Pss:/ { k += $2 } END { print k + 0 }' \
        $(printf '/proc/%s/smaps_rollup ' $ranks) 2>/dev/null) || true
    printf '%6d ranks: started in %.1f s%s; ranks %.1f MB each (PSS), %.0f MB in all; load %s\n' \
        "$MQD_BENCH_NP_NOW" "$(awk -v a="$MQD_BENCH_T0" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')" \
        "${MQD_BENCH_NOTE:-}" \
        "$(awk -v k="$pss" -v n="$MQD_BENCH_NP_NOW" 'BEGIN { print k / n / 1024 }')" \
        "$(awk -v k="$pss" 'BEGIN { print k / 1024 }')" \
        "$(cut -d ' ' -f 1-3 /proc/loadavg)" >>"$MQD_BENCH_OUT/facts"
    t1=$EPOCHREALTIME
    (unset MQD_DLL && exec "$MQD_BUILD/bin/mqdump" --job "$MQD_MPIEXEC_PID" \
        --graph "$MQD_BENCH_OUT/g.svg") >/dev/null 2>&1 || true
    t2=$EPOCHREALTIME
    nodes=$(grep -c 'class="node"' "$MQD_BENCH_OUT/g.svg" 2>/dev/null) || true
    echo "        mqdump --job --graph g.svg (the folded graph, rendered): $(ms "$t1" "$t2") ms" \
        "wall, ${nodes:-0} node(s)" >>"$MQD_BENCH_OUT/facts"
    rm -f "$MQD_BENCH_OUT/g.svg"
    [ "${nodes:-0}" -gt 0 ] || {
        echo "bench: mqdump --graph drew no graph of $MQD_BENCH_NP_NOW ranks" >&2
        return 1
    }
}
export -f job_facts

one_size() {
    set -euo pipefail
    MQD_BENCH_ARGS="--job $MQD_MPIEXEC_PID"
    job_facts
    local tf
    for tf in "$MQD_BENCH_OUT"/{mqd,libtvmpich}."$MQD_BENCH_NP_NOW".{walls,cpus,rss}; do
        : >"$tf"
    done
    # In turn, so that each of mqd's runs has a libtvmpich run beside it
    # under the same load.
    for _ in $(seq "$MQD_BENCH_REPS"); do
        one_run mqd ""
        one_run libtvmpich "$MQD_BENCH_TVMPICH"
    done
    one_row mqd ""
    one_row libtvmpich "$MQD_BENCH_TVMPICH"
    cpu_ratio
    held_ratio
    if [ ! -s "$MQD_BENCH_OUT/gdb.result" ]; then
        gdb_rank "$(pgrep -P "$(pgrep -P "$MQD_MPIEXEC_PID" | head -n 1)" | head -n 1)"
    fi
}
export -f one_size

printf '%-10s %6s %6s %7s %8s %11s %9s %8s %9s %9s\n' dll ranks dumped workers "job ms" \
    "cpu ms/rank" "sys/rank" "peak MB" "rank0 ms" "other ms"
# MPICH 4.0.2 (ch3) crashes in MPI_Init with more than about 180 ranks on
# one node (a hello world does too: its shared memory between the ranks).
# MPIR_CVAR_NOLOCAL=1 turns that off: the ranks talk over TCP as if each
# were on a node of its own, and their queues are the same.  A larger job
# takes longer to start (every rank spins once it is in MPI): the launcher
# waits MQD_BENCH_START seconds (default 600, or 1 per rank above that).
# Memory: about 6 MB per rank (PSS, measured), so a size is skipped (said)
# if 8 MB per rank is more than the memory available.
max_job=${MQD_BENCH_MAX_JOB:-128}
: >"$MQD_BENCH_OUT/facts"
for np in $sizes; do
    export MQD_BENCH_NP_NOW=$np MQD_BENCH_T0=$EPOCHREALTIME MQD_BENCH_NOTE=
    avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
    if [ $((np * 8)) -gt "$avail" ]; then
        echo "$(printf '%6d' "$np") ranks: skipped: about $((np * 8)) MB needed, $avail MB" \
            "available" | tee -a "$MQD_BENCH_OUT/facts" >&2
        continue
    fi
    start=${MQD_BENCH_START:-$((np > 600 ? np : 600))}
    if [ "$np" -gt "$max_job" ]; then
        export MPIR_CVAR_NOLOCAL=1 MQD_BENCH_NOTE=" (MPIR_CVAR_NOLOCAL=1)"
    fi
    "$build/bin/mqd-launch" -n "$np" -t "$start" -m "$MQD_MPIEXEC" "$build/samples/ring" -- \
        bash -c one_size </dev/null | grep -Ev '^(mpiexec|rank|ready)'
    unset MPIR_CVAR_NOLOCAL
done

echo
cat "$MQD_BENCH_OUT/facts"
# mqd's CPU against MPICH's own DLL, and where the system calls go.
for np in $sizes; do
    [ -s "$MQD_BENCH_OUT/ratio.$np" ] || continue
    echo
    read -r ratio lowest highest <"$MQD_BENCH_OUT/ratio.$np"
    printf '%d ranks: mqd'\''s CPU is %.2fx libtvmpich'\''s under the same host (median of the ratios of %s runs in turn; they ranged %.2f-%.2f)\n' \
        "$np" "$ratio" "$MQD_BENCH_REPS" "$lowest" "$highest"
    if [ -s "$MQD_BENCH_OUT/held_ratio.$np" ]; then
        read -r ratio lowest highest <"$MQD_BENCH_OUT/held_ratio.$np"
        printf '  the ranks held stopped: %.2fx (median of %s runs in turn; %.2f-%.2f)\n' \
            "$ratio" "$((MQD_BENCH_REPS * 2))" "$lowest" "$highest"
    fi
    echo "system calls per rank, $np ranks (strace -f -c of one whole-job dump each):"
    calls_table "$np"
done
# Side by side: the padb method's one rank against mqdump's whole job.
read -r gwall gcpu <"$MQD_BENCH_OUT/gdb.result"
echo
echo "padb's method (gdb -p on one rank, 4 prints): $gwall ms wall, $gcpu ms CPU per rank"
awk -v gw="$gwall" -v gc="$gcpu" '$1 == "mqd" {
        printf "  %4d ranks: mqdump does the whole job in %.0f ms, %.1fx faster than gdb on one " \
               "rank after another (%.0f ms); CPU per rank %.1fx less\n", $2, $5, gw * $2 / $5,
               gw * $2, gc / $6
    }' "$MQD_BENCH_OUT/rows"

# The sentinel beside a working job: its summary line, and the share of
# the watch the ranks spent stopped.
sentinel_np=${MQD_BENCH_SENTINEL_NP:-16}
sentinel_i=${MQD_BENCH_SENTINEL_I:-10}
sentinel_s=${MQD_BENCH_SENTINEL_S:-120}
export sentinel_i sentinel_s
sentinel_watch() {
    "$MQD_BUILD/bin/mqdump" --sentinel --job "$MQD_MPIEXEC_PID" --interval "$sentinel_i" -q \
        2>"$MQD_BENCH_OUT/sentinel.err" &
    local s=$!
    sleep "$sentinel_s"
    kill -TERM "$MQD_MPIEXEC_PID"
    wait "$s"
    echo "exit $?" >>"$MQD_BENCH_OUT/sentinel.err"
}
export -f sentinel_watch
echo
"$build/bin/mqd-launch" -n "$sentinel_np" -t 600 -m "$MQD_MPIEXEC" "$build/samples/latehang" \
    3600 -- bash -c sentinel_watch >/dev/null 2>&1 || true
line=$(grep ' looks in ' "$MQD_BENCH_OUT/sentinel.err" || true)
if [ -z "$line" ] || ! grep -q '^exit 0$' "$MQD_BENCH_OUT/sentinel.err"; then
    echo "bench: the sentinel did not watch the working job to its end:" >&2
    cat "$MQD_BENCH_OUT/sentinel.err" >&2
    exit 1
fi
echo "mqdump --sentinel --interval $sentinel_i beside $sentinel_np working ranks for" \
    "${sentinel_s} s (latehang 3600):"
echo "  ${line#mqdump: }"
awk -v l="$line" 'BEGIN {
        n = l; sub(/ looks in .*/, "", n); sub(/.*: /, "", n)
        t = l; sub(/.* looks in /, "", t); sub(/ s,.*/, "", t)
        m = l; sub(/.*stopped /, "", m); sub(/ ms on average.*/, "", m)
        if (t > 0) printf "  the ranks stopped %.3f%% of the time (%d looks x %.1f ms in %.0f s)\n",
                          100 * n * m / 1000 / t, n, m, t
    }'

# The analysis, the folded views and the folded graph alone, on synthetic
# dumps far larger than this machine can run (mqdump's own functions; one
# CPU; Graphviz dot renders the graph).
echo
"$build/tests/bench_analysis" "${MQD_BENCH_PROCESSES:-100000}"
# A job across hosts: reading and merging every host's agent result (made
# beforehand, synthetic), then the same analysis over the whole job.
"$build/tests/bench_analysis" --merge 1024 64
"$build/tests/bench_analysis" --merge "${MQD_BENCH_MERGE_RANKS:-10000}" "${MQD_BENCH_MERGE_HOSTS:-1000}"
