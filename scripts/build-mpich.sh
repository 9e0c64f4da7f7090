#!/usr/bin/env bash
# Build MPICH with debugger support from Debian's own source package, into a
# cache prefix outside the checkout, and reuse it when it is already there.
#
# Distribution MPICH is configured without --enable-debuginfo: it keeps no
# debug queues and exports no MPIR_* symbols, so no tool can show its message
# queues.  The tests need one that can.
#
# Environment:
#   MQD_MPICH_DEVICE  ch3 (default: ch3:nemesis, the tests' first build) or
#                     ch4 (ch4:ofi over Debian's libfabric: MPICH's default
#                     device, the one real sites run)
#   MQD_MPICH_PREFIX  install prefix (default ~/.cache/mqd/mpich-4.0.2, or
#                     mpich-4.0.2-ch4 for ch4)
#   MQD_MPICH_JOBS    parallel make jobs (default: nproc)
#
# Prints nothing but progress on stderr; the prefix is printed on stdout last.
set -euo pipefail

version=4.0.2
device=${MQD_MPICH_DEVICE:-ch3}
case $device in
    ch3) device_opts=(--with-device=ch3:nemesis); suffix= ;;
    # The system libfabric: the embedded copy would double the build time.
    ch4) device_opts=(--with-device=ch4:ofi --with-libfabric=/usr); suffix=-ch4 ;;
    *) echo "build-mpich: MQD_MPICH_DEVICE must be ch3 or ch4, not '$device'" >&2; exit 2 ;;
esac
prefix=${MQD_MPICH_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/mqd/mpich-$version$suffix}
jobs=${MQD_MPICH_JOBS:-$(nproc)}
stamp=$prefix/.mqd-built
# MPICH's own stub debugger (src/mpi/debugger/dbgstub.c and tvtest.c): a
# third-party MQD host for the DLL tests.  dbgstub.c needs MPICH's internal
# headers, so it is compiled here, in the configured tree, and kept.
stub=$prefix/share/mqd/dbgstub

say() { printf 'build-mpich (%s): %s\n' "$device" "$*" >&2; }

# Does this libmpi.so export the debugger symbols?  (No grep -q in a pipe:
# with pipefail, nm's SIGPIPE would fail the test.)
has_debugger_support() {
    local syms
    syms=$(nm -D "$1" 2>/dev/null) || return 1
    grep -qw MPIR_All_communicators <<<"$syms"
}

# A prefix counts only if it was finished and really has debugger support.
if [ -f "$stamp" ] && has_debugger_support "$prefix/lib/libmpi.so" && [ -f "$stub/dbgstub.o" ]; then
    say "using cached MPICH $version ($device) in $prefix"
    echo "$prefix"
    exit 0
fi

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# shellcheck source=scripts/deb-src.sh
. "$(dirname "$0")/deb-src.sh"

enable_deb_src mpich

work=$(mktemp -d "${TMPDIR:-/tmp}/mqd-mpich.XXXXXX")
# Kept on failure, for its logs.
trap 'rc=$?; [ $rc -eq 0 ] && rm -rf "$work"' EXIT
cd "$work"
fetch_source mpich "$version"

say "configuring (log: $work/configure.log)"
# dataloop instead of yaksa: yaksa generates thousands of files and triples
# the build time; the datatype engine does not change the queues.  The
# system's hwloc (libhwloc-dev), as Debian's own build: the embedded copy
# is another configure and a hundred files more.
# -fcommon: MPICH 4.0.2 has tentative definitions that newer GCC rejects otherwise.
if ! ./configure --prefix="$prefix" \
        --enable-debuginfo --enable-shared --disable-static \
        "${device_opts[@]}" \
        --disable-fortran --disable-cxx --disable-romio \
        --with-hwloc=/usr --disable-dependency-tracking \
        --with-datatype-engine=dataloop --with-pm=hydra \
        --enable-g=dbg --enable-fast=O2 \
        CFLAGS="-O2 -g -fcommon" >"$work/configure.log" 2>&1; then
    tail -40 "$work/configure.log" >&2
    say "configure failed"
    exit 1
fi
say "building with $jobs jobs (log: $work/make.log)"
if ! make -j"$jobs" >"$work/make.log" 2>&1 || ! make install >>"$work/make.log" 2>&1; then
    tail -60 "$work/make.log" >&2
    say "build failed"
    exit 1
fi
if ! has_debugger_support "$prefix/lib/libmpi.so"; then
    say "built, but libmpi.so lacks MPIR_All_communicators: no debugger support"
    exit 1
fi
say "compiling MPICH's stub debugger into $stub"
# automake's suffix rule compiles it with MPICH's own flags and includes.
if ! make src/mpi/debugger/dbgstub.o >>"$work/make.log" 2>&1; then
    tail -30 "$work/make.log" >&2
    say "dbgstub.o failed to compile"
    exit 1
fi
mkdir -p "$stub"
cp src/mpi/debugger/dbgstub.o src/mpi/debugger/tvtest.c src/mpi/debugger/mpi_interface.h \
    COPYRIGHT "$stub/"
touch "$stamp"
say "MPICH $version ($device) with debugger support installed in $prefix"
echo "$prefix"
