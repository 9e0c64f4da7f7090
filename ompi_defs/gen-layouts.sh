#!/bin/bash
# gen-layouts.sh - regenerate ompi_defs/layouts.h: the known layout of
# Debian's stock Open MPI 4.1.4, for libmqd_ompi.so on a libmpi without its
# DWARF.  The layout comes from the DWARF of the same source package built
# as Debian builds it but with -g (scripts/build-openmpi-debian.sh, made
# once into its cache: long, and heavy on a shared machine), and is only
# written if every class the DLL checks at run time (OMPI_CLASS_SIZES) has
# the same object size in the stock binaries (scripts/fetch-stock-ompi.sh)
# as in that DWARF.
#
#   ompi_defs/gen-layouts.sh [OUTPUT]     (default: ompi_defs/layouts.h)
#
# Environment: MQD_BUILD (build dir, holding bin/gen_ompi_layout),
# MQD_OMPI_DEBIAN_PREFIX (that build's prefix, see the script).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-ompi_defs/layouts.h}
build=${MQD_BUILD:-build}
gen=$build/bin/gen_ompi_layout
[ -x "$gen" ] || { echo "gen-layouts.sh: $gen not built (make $gen)" >&2; exit 1; }
prefix=$(scripts/build-openmpi-debian.sh | tail -n 1)
stock=$(scripts/fetch-stock-ompi.sh | tail -n 1)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
lib=$stock/usr/lib/$multiarch
# The stock package's version names the build: its changelog's first line,
# "openmpi (4.1.4-3) unstable; urgency=medium".
dpkg_version=$(zcat "$stock/usr/share/doc/libopenmpi3/changelog.Debian.gz" |
                   sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p')
[ -n "$dpkg_version" ] || { echo "gen-layouts.sh: no version in libopenmpi3's changelog" >&2; exit 1; }
arch=$(dpkg --print-architecture)
ompi_version=$("$prefix/bin/ompi_info" --parsable 2>/dev/null |
                   sed -n 's/^ompi:version:full://p' | head -n 1)
[ -n "$ompi_version" ] || { echo "gen-layouts.sh: no version from ompi_info" >&2; exit 1; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$gen" "$ompi_version" "Debian $dpkg_version $arch" \
    "$(readlink -f "$prefix/lib/libmpi.so")" "$(readlink -f "$prefix/lib/libopen-pal.so")" \
    "$prefix/lib/openmpi/mca_pml_ob1.so" -- \
    "$(readlink -f "$lib/libmpi.so.40")" "$(readlink -f "$lib/libopen-pal.so.40")" \
    "$lib/openmpi/lib/openmpi3/mca_pml_ob1.so" >"$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "gen-layouts.sh: $out from $prefix (Open MPI $ompi_version, Debian $dpkg_version $arch)," \
     "checked against $lib"
