#!/usr/bin/env bash
# Build Open MPI from Debian's own source package, with the debug information
# its message queue DLL needs, into a cache prefix outside the checkout, and
# reuse it when it is already there.
#
# Debian's libopenmpi3 ships the DLL (libompi_dbg_msgq.so) but strips
# libmpi's DWARF, and the DLL finds every structure it walks by type name
# and field (ompi/debuggers/ompi_common_dll.c, ompi_fill_in_type_info): no
# tool can show that Open MPI's queues.  This one keeps them.
#
# Environment:
#   MQD_OPENMPI_PREFIX  install prefix (default ~/.cache/mqd/openmpi-4.1.4)
#   MQD_OPENMPI_JOBS    parallel make jobs (default: nproc)
#   MQD_OPENMPI_KEEP    1: keep the source tree and logs after a success too
#                       (a failure always keeps them)
#
# The configure and make logs and the DLL's own sources (ompi/debuggers) are
# kept in PREFIX/share/mqd.  Prints nothing but progress on stderr; the
# prefix is printed on stdout last.
set -euo pipefail

version=4.1.4
prefix=${MQD_OPENMPI_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/mqd/openmpi-$version}
jobs=${MQD_OPENMPI_JOBS:-$(nproc)}
stamp=$prefix/.mqd-built
kept=$prefix/share/mqd

# The types the DLL looks up in the image (ompi_fill_in_type_info and
# mqs_setup_image; the ob1 header types there are under #if 0).  An optimized
# libmpi has them only because ompi/debuggers/ompi_debuggers.c is compiled
# with -g and pulls their headers in; a stripped libmpi has none.
dll_types=(
    opal_list_item_t opal_list_t opal_free_list_item_t opal_free_list_t
    opal_hash_table_t opal_pointer_array_t opal_datatype_t
    ompi_request_t ompi_communicator_t ompi_group_t ompi_status_public_t
    ompi_datatype_t
    mca_pml_base_request_t mca_pml_base_send_request_t mca_pml_base_recv_request_t
)

say() { printf 'build-openmpi: %s\n' "$*" >&2; }

# The DLL, wherever this prefix's libdir layout put it.
find_dll() { find "$prefix/lib" -name libompi_dbg_msgq.so -type f 2>/dev/null | head -n 1 || true; }

# Which of dll_types the DWARF of $1 lacks, one per line: the names of the
# typedefs and structures at the top of some unit (depth 1; readelf need not
# print the deeper DIEs: 1.5 of libmpi's 4.3 million lines).
# (No grep -q in a pipe: with pipefail, readelf's SIGPIPE would fail it.)
missing_types() {
    local names t
    names=$(readelf --debug-dump=info --dwarf-depth=2 "$1" 2>/dev/null |
                awk '/^ <[0-9]+><[0-9a-f]+>:/ { top = /^ <1>/ && /DW_TAG_(typedef|structure_type)/ }
                     top && /DW_AT_name/ { print $NF }' | sort -u) || names=
    for t in "${dll_types[@]}"; do
        grep -qxF "$t" <<<"$names" || echo "$t"
    done
}

# A prefix counts only if it was finished and still holds the DLL and a
# libmpi whose DWARF has every type the DLL needs.
usable() {
    [ -f "$stamp" ] && [ -n "$(find_dll)" ] && [ -e "$prefix/lib/libmpi.so" ] &&
        [ -z "$(missing_types "$prefix/lib/libmpi.so")" ]
}

if usable; then
    say "using cached Open MPI $version in $prefix"
    echo "$prefix"
    exit 0
fi

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# Build dependencies, installed if missing.  Debian builds against the
# system's libevent, hwloc and PMIx (debian/rules: --with-libevent=external
# --with-hwloc=external --with-pmix=LIBDIR/pmix2), and so do we: it skips
# compiling Open MPI's bundled copies (PMIx 3 alone has 261 C files; the
# whole build compiles about 1,600) and uses the combination Debian tests.
# zlib1g-dev is used when present (ORTE compresses its launch messages),
# not needed.  dpkg-dev: apt-get source unpacks with dpkg-source; readelf
# (binutils) for the check above.
build_deps=(libevent-dev libhwloc-dev libpmix-dev dpkg-dev binutils)
install_build_deps() {
    local missing=() p
    for p in "${build_deps[@]}"; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
            missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing ${missing[*]}"
    apt_locked as_root apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt_locked as_root apt-get install -y -q --no-install-recommends \
        "${missing[@]}" >&2
}

# shellcheck source=scripts/deb-src.sh
. "$(dirname "$0")/deb-src.sh"

install_build_deps
enable_deb_src openmpi

work=$(mktemp -d "${TMPDIR:-/tmp}/mqd-openmpi.XXXXXX")
# Kept on failure, for its logs, and when asked to.
cleanup() {
    local rc=$?
    [ $rc -eq 0 ] && [ "${MQD_OPENMPI_KEEP:-0}" != 1 ] && rm -rf "$work"
    return $rc
}
trap cleanup EXIT
cd "$work"
fetch_source openmpi "$version"

# apt-get source applies Debian's patches (debian/patches/series), which
# leaves the files they touch newer than the tarball's generated configure
# and Makefile.in: make would rerun autoconf and automake.  Debian's rules
# do, with autogen.pl; we give the patched files the tarball's time instead,
# so the C patches apply and the build system stays the upstream one.  What
# that leaves out only matters elsewhere: libdir.patch (components in
# lib/openmpi3, for co-installing libopenmpi2), hppa.patch, the ofi MTL's
# link line (not built here) and verbose-ompi-rules.patch (log verbosity).
find . -newer configure ! -path './debian/*' ! -path './.pc/*' -exec touch -h -r configure {} +

# Debian's PMIx lives in its own directory (LIBDIR/pmix2), which configure
# only searches when told; its pkg-config file says where.
pmix=$(pkg-config --variable=prefix pmix 2>/dev/null) || pmix=
if [ -z "$pmix" ] || [ ! -f "$pmix/include/pmix.h" ]; then
    say "no PMIx headers found through pkg-config pmix (is libpmix-dev installed?)"
    exit 1
fi

# Shared memory and TCP are all the samples use: no fabrics, no Fortran, no
# OpenSHMEM; nor MPI-IO (ROMIO is a configure and a build of its own), one-
# sided communication, the message-logging and monitoring layers, the
# tree-matching topology or the coll components not chosen by default
# (adapt, han): none holds a queue the DLLs read, and each is time on a
# fresh machine.  CFLAGS without --enable-debug: -g gives every unit its DWARF
# (ompi/debuggers is -g whatever CFLAGS say), and make install does not
# strip.  Prefix-by-default lets orterun tell the daemons where it lives.
configure_args=(
    --prefix="$prefix"
    --enable-shared --disable-static
    --disable-mpi-fortran --disable-oshmem --disable-mpi-java
    --without-ucx --without-ofi --without-verbs --without-psm --without-psm2
    --without-cuda --without-tm --without-slurm
    --with-libevent=external --with-hwloc=external --with-pmix="$pmix"
    --disable-io-romio --disable-dependency-tracking
    --enable-mca-no-build=io,fs,fbtl,fcoll,sharedfp,osc,vprotocol,pml-v,pml-monitoring,topo-treematch,coll-adapt,coll-han,coll-monitoring,op-avx
    --enable-mpirun-prefix-by-default
    CFLAGS="-O2 -g"
)
build_and_install "$work" "$jobs" "${configure_args[@]}"

if [ -z "$(find_dll)" ]; then
    say "built, but no libompi_dbg_msgq.so under $prefix/lib"
    exit 1
fi
lacking=$(missing_types "$prefix/lib/libmpi.so")
if [ -n "$lacking" ]; then
    say "built, but the DWARF of $prefix/lib/libmpi.so lacks types the DLL needs: ${lacking//$'\n'/ }"
    exit 1
fi

say "keeping the logs and the DLL's sources in $kept"
mkdir -p "$kept/ompi-debuggers"
cp "$work/configure.log" "$work/make.log" "$kept/"
cp ompi/debuggers/*.[ch] LICENSE "$kept/ompi-debuggers/"
touch "$stamp"
say "Open MPI $version with its message queue DLL's types installed in $prefix"
echo "$prefix"
