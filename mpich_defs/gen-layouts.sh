#!/bin/bash
# gen-layouts.sh - regenerate mpich_defs/layouts.h from the DWARF of the
# cached MPICH build (scripts/build-mpich.sh), with mpich_defs/gen_layout.c.
#
#   mpich_defs/gen-layouts.sh [OUTPUT]     (default: mpich_defs/layouts.h)
#
# Environment: MQD_MPICH_PREFIX (the MPICH install), MQD_BUILD (build dir).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-mpich_defs/layouts.h}
prefix=${MQD_MPICH_PREFIX:?set MQD_MPICH_PREFIX to the MPICH install}
build=${MQD_BUILD:-build}
gen=$build/bin/gen_layout
[ -x "$gen" ] || { echo "gen-layouts.sh: $gen not built (make $gen)" >&2; exit 1; }
info=$("$prefix/bin/mpichversion")
version=$(sed -n 's/^MPICH Version:[[:space:]]*//p' <<<"$info")
device=$(sed -n 's/^MPICH Device:[[:space:]]*//p' <<<"$info")
[ -n "$version" ] && [ -n "$device" ] ||
    { echo "gen-layouts.sh: no version or device from mpichversion" >&2; exit 1; }
lib=$(readlink -f "$prefix/lib/libmpi.so")
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$gen" "$lib" "$version" "$device" >"$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "gen-layouts.sh: $out from $lib (MPICH $version, $device)"
