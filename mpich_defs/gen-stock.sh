#!/usr/bin/env bash
# gen-stock.sh - regenerate mpich_defs/stock_builds.h: Debian's own MPICH,
# as scripts/fetch-stock-mpich.sh unpacks it (4.0.2, ch4:ucx, configured
# without --enable-debuginfo, stripped), and what mqd's DLL needs to read
# its own lists: the layout of its types and where its hidden globals are.
#
#   mpich_defs/gen-stock.sh [OUTPUT]      (default: mpich_defs/stock_builds.h)
#
# Heavy: it rebuilds Debian's source package (dpkg-buildpackage -B, with
# Debian's own rules and configure: its ch4:ucx) and takes about an hour
# and a half on 2 cores.  Run it under flock /tmp/mqd-heavy.lock; CI never
# does (the table it writes is committed).  As root, or with sudo.
#
# 1. The stock library: its build-id, its version and device strings, and
#    the directory it was built in (its MPII_Version_CC's
#    -ffile-prefix-map=DIR=.).
# 2. Debian's source package (apt-get source, deb-src derived from the
#    system's own sources as scripts/build-mpich.sh does), unpacked in that
#    very directory and built with dpkg-buildpackage -B, its build
#    dependencies installed (apt-get build-dep --arch-only), LC_ALL=C.UTF-8,
#    nocheck; kept in the cache ($MQD_STOCK_REBUILD, default
#    ~/.cache/mqd/stock-rebuild/DIR-NAME) and reused.
# 3. The rebuilt library, unstripped (debian/tmp), against the stock one:
#    equal build-ids prove the rebuild is the very binary Debian ships, and
#    its symbol table then gives the hidden globals' addresses.  Otherwise
#    they are found in the stock library's own exported code
#    (mpich_defs/stock-symbols.sh: the same functions' references to them,
#    matched instruction by instruction with the rebuild's), and each is
#    checked by every reference that names it.
# 4. The layout: every step of mpich_defs.h's field paths in the rebuild's
#    DWARF (build/bin/gen_layout --steps).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-mpich_defs/stock_builds.h}
build=${MQD_BUILD:-build}
gen=$build/bin/gen_layout
say() { printf 'gen-stock: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
[ -x "$gen" ] || die "$gen not built (make $gen)"
for tool in readelf nm objdump dpkg-buildpackage apt-get; do
    command -v "$tool" >/dev/null || die "needs $tool"
done

# ---------------------------------------------------------------- 1. the stock library
root=$(scripts/fetch-stock-mpich.sh | tail -n 1)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
stock=$(readlink -f "$root/usr/lib/$multiarch/libmpich.so.12")
[ -f "$stock" ] || die "no libmpich.so.12 in $root"

build_id() { readelf -n "$1" | sed -n 's/^ *Build ID: *//p' | head -n 1; }
# The string an exported symbol of $1 holds (.rodata: file offset = address).
dynstr() {
    local addr
    addr=$(nm -D --defined-only "$1" | awk -v s="$2" '$3 == s { print $1 }')
    [ -n "$addr" ] || return 1
    tail -c +"$((16#$addr + 1))" "$1" | tr '\0' '\n' | head -n 1
}
stock_id=$(build_id "$stock")
version=$(dynstr "$stock" MPII_Version_string)
device=$(dynstr "$stock" MPII_Version_device)
cc_line=$(dynstr "$stock" MPII_Version_CC)
builddir=$(sed -n 's/.*-ffile-prefix-map=\([^= ]*\)=\..*/\1/p' <<<"$cc_line")
[ -n "$stock_id" ] && [ -n "$version" ] && [ -n "$device" ] && [ -n "$builddir" ] ||
    die "cannot read the build-id, version, device or build directory of $stock"
pkgver=$(dpkg-deb -f "$(compgen -G "$root/../debs/libmpich12_*.deb" | head -n 1)" Version)
say "stock $stock: MPICH $version ($device), Debian $pkgver, build-id $stock_id, built in $builddir"

# ---------------------------------------------------------------- 2. the rebuild
cache=${MQD_STOCK_REBUILD:-${XDG_CACHE_HOME:-$HOME/.cache}/mqd/stock-rebuild}
src=$builddir
rebuilt=$src/debian/tmp/usr/lib/$multiarch/libmpich.so.12
if [ ! -e "$rebuilt" ]; then
    # shellcheck source=scripts/deb-src.sh
    . scripts/deb-src.sh
    enable_deb_src mpich
    parent=$(dirname "$builddir")
    as_root mkdir -p "$parent"
    (cd "$parent" && apt-get source -q "mpich=$pkgver" >&2)
    [ -d "$src/debian" ] || die "apt-get source gave no $src"
    as_root apt-get build-dep -y -q --arch-only "mpich=$pkgver" >&2
    say "building Debian's mpich $pkgver in $src (log: $src.log)"
    (cd "$src" && LC_ALL=C.UTF-8 DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
        dpkg-buildpackage -B -uc -us >"$src.log" 2>&1) || die "dpkg-buildpackage failed: $src.log"
fi
rebuilt=$(readlink -f "$rebuilt")
mkdir -p "$cache"
rebuilt_id=$(build_id "$rebuilt")
say "rebuilt $rebuilt: build-id $rebuilt_id"

# ---------------------------------------------------------------- 3. the globals
globals=(MPIDI_global MPIR_Process MPIR_Comm_mem MPIR_Request_mem all_schedules)
if [ "$rebuilt_id" = "$stock_id" ]; then
    how="the rebuild reproduces the binary (equal build-ids): its symbol table"
    symtab=$(nm "$rebuilt")
    addr_of() {
        local a
        a=$(awk -v s="$1" '$3 == s { print $1 }' <<<"$symtab")
        [ "$(wc -l <<<"$a")" = 1 ] && [ -n "$a" ] || die "$1: not exactly one symbol in $rebuilt"
        echo "0x$a"
    }
else
    how="found in the stock library's exported code, matched with the rebuild's"
    found=$(mpich_defs/stock-symbols.sh "$stock" "$rebuilt" "${globals[@]}") ||
        die "the globals could not be found in the stock library's code"
    addr_of() { awk -v s="$1" '$1 == s { print $2 }' <<<"$found"; }
fi
say "globals: $how"

# ---------------------------------------------------------------- 4. the table
note=$(readelf -SW "$stock" | awk '$2 == ".note.gnu.build-id" { print $4 }')
anchor=$(nm -D --defined-only "$stock" | awk '$3 == "MPII_Version_string" { print $1 }')
[ -n "$note" ] && [ -n "$anchor" ] || die "no build-id note or MPII_Version_string in $stock"
id=DEBIAN_MPICH_$(tr -c 'A-Za-z0-9\n' '_' <<<"$pkgver" | tr 'a-z' 'A-Z')
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
    cat <<EOF
/*
 * stock_builds.h - MPICH builds that distributions ship without debugger
 * support, for MPICH_GEN_CH4_STOCK (dll/mpich_stock.c).  Generated by
 * mpich_defs/gen-stock.sh from the distribution's own source package;
 * do not edit.  A build: its name, MPICH version and device, pointer
 * size, byte order, build-id, the build-id note's descriptor, an exported
 * symbol and its address (link-time addresses); then its hidden globals,
 * and the layout of every type step of mpich_defs.h's field paths.
 *
 * Debian's mpich $pkgver ($multiarch): libmpich.so.12 build-id $stock_id;
 * the globals' addresses: $how.
 */
EOF
    printf 'MPICH_STOCK_BUILD(%s, "Debian'"'"'s mpich %s (%s)", "%s", "%s", 8, 0, "%s", 0x%x,\n' \
        "$id" "$pkgver" "$multiarch" "$version" "$device" "$stock_id" "$((16#$note + 16))"
    printf '                  "MPII_Version_string", 0x%s)\n' "$anchor"
    for g in "${globals[@]}"; do
        a=$(addr_of "$g")
        [ -n "$a" ] || die "no address for $g"
        printf 'MPICH_STOCK_SYMBOL(%s, "%s", %s)\n' "$id" "$g" "$a"
    done
    "$gen" --steps "$id" "$rebuilt"
} >"$tmp"
mv "$tmp" "$out"
trap - EXIT
say "$out: $id, $(grep -c MPICH_STOCK_FIELD "$out") field steps"
