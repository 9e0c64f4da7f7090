#!/usr/bin/env bash
# Build Open MPI 4.1.4 from Debian's own source package configured as
# Debian configures it (debian/rules of openmpi 4.1.4-3: its extra_flags,
# the components it builds, -O3 and dpkg-buildflags' CFLAGS) but keeping
# the debug information, into a cache prefix of its own.  Its DWARF is
# what Debian's stock libmpi.so.40 and mca_pml_ob1.so were built from, and
# ompi_defs/gen-layouts.sh writes the known layout (ompi_defs/layouts.h)
# that libmqd_ompi.so uses on the stock library, which has no DWARF.  Not
# part of make check: the generated layout is committed.
#
# What it leaves out of Debian's build changes no structure libmqd_ompi.so
# reads: the Fortran and Java bindings (separate libraries, no
# conditional member in the C structures), a second flang tree, the
# renames and the test suite.  gen-layouts.sh checks the result against
# the stock binary (its classes' object sizes) before writing anything.
#
# Environment:
#   MQD_OMPI_DEBIAN_PREFIX  install prefix
#                           (default ~/.cache/mqd/openmpi-4.1.4-debian-layout)
#   MQD_OPENMPI_JOBS        parallel make jobs (default: nproc)
# Heavy (a whole Open MPI build): run it under flock /tmp/mqd-heavy.lock on a
# shared machine.  Prints the prefix last on stdout.
set -euo pipefail

version=4.1.4
prefix=${MQD_OMPI_DEBIAN_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/mqd/openmpi-$version-debian-layout}
jobs=${MQD_OPENMPI_JOBS:-$(nproc)}
stamp=$prefix/.mqd-built

say() { printf 'build-openmpi-debian: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if [ -f "$stamp" ] && [ -e "$prefix/lib/libmpi.so" ]; then
    say "using cached Open MPI $version (Debian's configuration) in $prefix"
    echo "$prefix"
    exit 0
fi

# debian/control's Build-Depends that select components (the C part).
build_deps=(libevent-dev libpmix-dev libucx-dev zlib1g-dev libhwloc-dev pkg-config
            libibverbs-dev libfabric-dev libnuma-dev libpsm-infinipath1-dev libpsm2-dev
            flex dpkg-dev binutils)
missing=()
for p in "${build_deps[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
        missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    as_root apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends \
        "${missing[@]}" >&2
fi

# shellcheck source=scripts/deb-src.sh
. "$(dirname "$0")/deb-src.sh"
enable_deb_src openmpi

work=$(mktemp -d "${TMPDIR:-/tmp}/mqd-openmpi-debian.XXXXXX")
cleanup() {
    local rc=$?
    [ $rc -eq 0 ] && rm -rf "$work"
    return $rc
}
trap cleanup EXIT
cd "$work"
fetch_source openmpi "$version"
# The patched files keep the tarball's time, so that make does not rerun
# autotools (scripts/build-openmpi.sh says why); Debian's autogen.pl
# regenerates the same build system.
find . -newer configure ! -path './debian/*' ! -path './.pc/*' -exec touch -h -r configure {} +

multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
pmix=/usr/lib/$multiarch/pmix2
# debian/rules' extra_flags for this architecture (UCX, verbs, libfabric,
# PSM and PSM2 on amd64), its -O3, and dpkg-buildflags' CFLAGS with -g kept.
flags=(--disable-silent-rules --disable-wrapper-runpath
       "--with-package-string=Debian OpenMPI"
       --with-verbs --with-libfabric --with-pmix="$pmix"
       --with-libevent=external --with-hwloc=external
       --enable-mpi-cxx --enable-ipv6 --with-devel-headers --with-slurm --with-sge
       --without-tm --sysconfdir=/etc/openmpi)
case $arch in
amd64) flags+=(--with-psm --with-psm2 --with-ucx) ;;
i386) flags+=(--with-psm) ;;
arm64 | ppc64el) flags+=(--with-ucx) ;;
esac
cflags="$(dpkg-buildflags --get CFLAGS) -O3 -g"
say "as debian/rules configures it, with -g"
export HOSTNAME=hostname USER=username # debian/rules: no build host or user in the binaries
build_and_install "$work" "$jobs" --prefix="$prefix" "${flags[@]}" --disable-mpi-fortran \
    --disable-mpi-java CFLAGS="$cflags"
mkdir -p "$prefix/share/mqd"
cp "$work/configure.log" "$prefix/share/mqd/"
touch "$stamp"
echo "$prefix"
