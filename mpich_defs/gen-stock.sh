#!/usr/bin/env bash
# gen-stock.sh - regenerate mpich_defs/stock_builds.h: Debian's own MPICH,
# as scripts/fetch-stock-mpich.sh unpacks it (4.0.2, ch4:ucx, configured
# without --enable-debuginfo, stripped), and what mqd's DLL needs to read
# it: the layout of its types and where its hidden globals are.
#
#   mpich_defs/gen-stock.sh [OUTPUT]      (default: mpich_defs/stock_builds.h)
#
# Needs build/bin/gen_layout and build/bin/gen_stock_syms (make
# stock-tools); as root, or with sudo.  About 15 minutes on 2 cores (the
# build dependencies, Debian's configure, a dozen source files); with
# MQD_STOCK_FULL_REBUILD=1 also the whole package (hours: on 2 shared
# cores, 56 minutes brought it to a quarter of yaksa's 436 generated
# files, before MPICH's own).  Run it under flock /tmp/mqd-heavy.lock; CI
# never does (the table it writes is committed).
#
# A full rebuild reproduces the binary's build-id only with the very
# compiler Debian built it with: GCC writes its version, Debian revision
# included, into every object's .comment, and the linker hashes .comment
# into the build-id before dh_strip removes it.  Debian 12's compiler is
# now gcc-12 12.2.0-14+deb12u1, and the stock binaries (4.0.2-3+b1, a
# binNMU) were built in January 2023 (their files' date, the changelog's),
# before that update: the rebuild here cannot give
# the stock build-id, and the globals come from the code (step 4).
#
# 1. The stock library: its build-id, its version and device strings, and
#    the directory it was built in (its MPII_Version_CC's
#    -ffile-prefix-map=DIR=.).
# 2. Debian's source package (apt-get source, deb-src derived from the
#    system's own sources as scripts/build-mpich.sh does), unpacked in that
#    very directory and configured by Debian's own rules, its build
#    dependencies installed (apt-get build-dep --arch-only).
# 3. A dozen of its source files compiled again as the build compiles them
#    for the shared library: their DWARF lays out the types (gen_layout
#    --steps: every T:f step of mpich_defs.h's field paths), their code
#    reaches the hidden globals.
# 4. The globals: each function of those objects that refers to one is
#    found in the stock library's code, byte for byte but its relocations
#    (gen_stock_syms); its references there give the global's address, and
#    every reference must agree.  With a full rebuild (dpkg-buildpackage
#    -B), equal build-ids prove it the very binary Debian ships, and its
#    symbol table must name the same addresses.
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

build_id() { readelf -n "$1" | sed -n 's/^ *Build ID: *//p' | sed -n 1p; }
# The string an exported symbol of $1 holds (.rodata: file offset = address).
dynstr() {
    local addr
    addr=$(nm -D --defined-only "$1" | awk -v s="$2" '$3 == s { print $1 }')
    [ -n "$addr" ] || return 1
    # a bounded read, whole (no reader closes early: pipefail)
    dd if="$1" iflag=skip_bytes,count_bytes skip="$((16#$addr))" count=4096 bs=4096 \
        2>/dev/null | tr '\0' '\n' | sed -n 1p
}
stock_id=$(build_id "$stock")
version=$(dynstr "$stock" MPII_Version_string)
device=$(dynstr "$stock" MPII_Version_device)
cc_line=$(dynstr "$stock" MPII_Version_CC)
builddir=$(sed -n 's/.*-ffile-prefix-map=\([^= ]*\)=\..*/\1/p' <<<"$cc_line")
[ -n "$stock_id" ] && [ -n "$version" ] && [ -n "$device" ] && [ -n "$builddir" ] ||
    die "cannot read the build-id, version, device or build directory of $stock"
# The binary package's version (4.0.2-3+b1: a binNMU) names the build; its
# source package's (4.0.2-3) is what apt-get source fetches.
show=$(apt-cache show --no-all-versions libmpich12)
pkgver=$(sed -n 's/^Version: *//p' <<<"$show")
srcver=$(sed -n 's/^Source: *[^ ]* *(\(.*\))/\1/p' <<<"$show")
srcver=${srcver:-${pkgver%+b*}}
[ -n "$pkgver" ] || die "apt-cache knows no libmpich12"
say "stock $stock: MPICH $version ($device), Debian $pkgver (source $srcver), build-id" \
    "$stock_id, built in $builddir"

# ---------------------------------------------------------------- 2. the source, configured
# Debian's source package in the very directory the stock library was built
# in (its paths are in the binary), configured by Debian's own rules.
src=$builddir
if [ ! -f "$src/src/include/mpichconf.h" ]; then
    # shellcheck source=scripts/deb-src.sh
    . scripts/deb-src.sh
    enable_deb_src mpich
    parent=$(dirname "$builddir")
    as_root mkdir -p "$parent"
    (cd "$parent" && apt-get source -q "mpich=$srcver" >&2)
    [ -d "$src/debian" ] || die "apt-get source gave no $src"
    as_root apt-get build-dep -y -q --arch-only "mpich=$srcver" >&2
    say "configuring Debian's mpich $srcver in $src (log: $src.configure.log)"
    (cd "$src" && eval "$(dpkg-buildflags --export=sh)" && export LC_ALL=C.UTF-8 &&
        debian/rules override_dh_autoreconf override_dh_auto_configure) \
        >"$src.configure.log" 2>&1 || die "configure failed: $src.configure.log"
fi

# ---------------------------------------------------------------- 3. objects
# The source files whose code reaches the globals and whose DWARF lays out
# the types, compiled again as the build compiles them for the shared
# library (the Makefile's own command, -fPIC -DPIC as libtool adds).
units=(src/mpid/ch4/src/ch4_globals.c src/mpid/ch4/src/ch4_init.c src/mpid/ch4/src/ch4_comm.c
       src/mpid/common/sched/mpidu_sched.c src/mpi/request/mpir_request.c
       src/mpi/comm/commutil.c src/mpi/group/grouputil.c src/mpi/datatype/typeutil.c
       src/mpi/init/mpir_init.c src/binding/c/request/wait.c src/binding/c/comm/comm_rank.c
       src/binding/c/init/initialized.c)
objs=$(mktemp -d)
trap 'rm -rf "$objs"' EXIT
compile=$(cd "$src" && make -n src/mpid/ch4/src/ch4_globals.lo 2>/dev/null |
          sed -n 's|^.*--mode=compile \(gcc .*\) -c -o src/mpid/ch4/src/ch4_globals.lo .*|\1|p' |
          sed -n 1p)
[ -n "$compile" ] || die "no compile command for the library's objects in $src's Makefile"
for u in "${units[@]}"; do
    (cd "$src" && eval "$compile -fPIC -DPIC -c -o $objs/$(basename "$u" .c).o $u") ||
        die "cannot compile $u"
done
gcc -shared -o "$objs/layout.so" "$objs"/*.o
say "compiled ${#units[@]} of the library's source files as its build does"

# ---------------------------------------------------------------- 4. the globals
globals=(MPIDI_global MPIR_Process MPIR_Comm_mem MPIR_Request_mem all_schedules)
found=$("$build/bin/gen_stock_syms" "$stock" "$objs"/*.o -- "${globals[@]}") ||
    die "the globals could not be found in the stock library's code"
addr_of() { awk -v s="$1" '$1 == s { print $2 }' <<<"$found"; }
while read -r g a n; do say "$g at $a: $n references agree"; done <<<"$found"
how="found in the stock library's own code (gen_stock_syms: each reference agrees)"
# A full rebuild (dpkg-buildpackage -B, MQD_STOCK_FULL_REBUILD=1, hours):
# equal build-ids would prove it the very binary, and its symbol table
# must then name the same addresses (see above why they differ here).
rebuilt=$src/debian/tmp/usr/lib/$multiarch/libmpich.so.12
if [ "${MQD_STOCK_FULL_REBUILD:-0}" = 1 ] && [ ! -e "$rebuilt" ]; then
    say "building Debian's mpich $srcver in full (log: $src.log)"
    (cd "$src" && LC_ALL=C.UTF-8 DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
        dpkg-buildpackage -B -uc -us >"$src.log" 2>&1) || die "dpkg-buildpackage failed: $src.log"
fi
if [ -e "$rebuilt" ]; then
    rebuilt=$(readlink -f "$rebuilt")
    rebuilt_id=$(build_id "$rebuilt")
    say "rebuilt $rebuilt: build-id $rebuilt_id ($([ "$rebuilt_id" = "$stock_id" ] &&
        echo "the stock one: reproduced" || echo "not the stock one's $stock_id"))"
    if [ "$rebuilt_id" = "$stock_id" ]; then
        for g in "${globals[@]}"; do
            a=$(nm "$rebuilt" | awk -v s="$g" '$3 == s { print "0x" $1 }' | sed 's/0x0*/0x/')
            [ "$a" = "$(addr_of "$g")" ] || die "$g: the rebuild's symbol table says $a"
        done
        how="$how; the rebuild reproduces the binary (equal build-ids) and its symbol table agrees"
    fi
fi
say "globals: $how"

# ---------------------------------------------------------------- 4. the table
note=$(readelf -SW "$stock" | sed -n 's/.*\.note\.gnu\.build-id *NOTE *\([0-9a-f]*\) .*/\1/p')
anchor=$(nm -D --defined-only "$stock" | awk '$3 == "MPII_Version_string" { print $1 }')
[ -n "$note" ] && [ -n "$anchor" ] || die "no build-id note or MPII_Version_string in $stock"
id=DEBIAN_MPICH_$(tr -c 'A-Za-z0-9\n' '_' <<<"$pkgver" | tr 'a-z' 'A-Z')
tmp=$(mktemp)
trap 'rm -rf "$tmp" "$objs"' EXIT
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
    printf '                  "MPII_Version_string", 0x%x)\n' "$((16#$anchor))"
    for g in "${globals[@]}"; do
        a=$(addr_of "$g")
        [ -n "$a" ] || die "no address for $g"
        printf 'MPICH_STOCK_SYMBOL(%s, "%s", %s)\n' "$id" "$g" "$a"
    done
    "$gen" --steps "$id" "$objs/layout.so"
} >"$tmp"
mv "$tmp" "$out"
say "$out: $id, $(grep -c MPICH_STOCK_FIELD "$out") field steps"
