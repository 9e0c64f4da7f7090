#!/usr/bin/env bash
# Run CMocka test programs one after another and add up their results.
# Each program's own output is shown as it runs; the last line is the total,
# "N passed, N failed".  Exits non-zero if any test failed or any program
# exited non-zero without saying why (a crash counts as a failure).  The
# failed tests are named again just before the total, so that the end of a
# long log says which they were.
#
# An argument NAME=VALUE sets that environment variable for the programs
# after it (make check: the same suite under a second MPICH, one total).
set -u
passed=0 failed=0 broken=() names=()
for t in "$@"; do
    if [[ $t =~ ^[A-Z_][A-Z0-9_]*= ]]; then
        export "${t?}"
        echo "run-tests: $t"
        continue
    fi
    log=$(mktemp)
    start=$SECONDS
    "$t" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    echo "run-tests: ${t##*/} took $((SECONDS - start)) s"
    p=$(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n1)
    f=$(sed -n 's/.*\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n1)
    while IFS= read -r n; do names+=("${t##*/}: $n"); done \
        < <(sed -n 's/^\[  FAILED  \] \([A-Za-z0-9_]*\)$/\1/p' "$log" | sort -u)
    rm -f "$log"
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
    if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
        broken+=("$t (exit $rc)")
        failed=$((failed + 1))
    fi
done
for n in "${names[@]+"${names[@]}"}"; do echo "run-tests: failed: $n" >&2; done
for b in "${broken[@]+"${broken[@]}"}"; do echo "run-tests: $b ended abnormally" >&2; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
