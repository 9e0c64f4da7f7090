#!/usr/bin/env bash
# Debian's own stock MPICH (mpich, libmpich12, libmpich-dev: 4.0.2,
# ch4:ucx, built without --enable-debuginfo), for running the samples against
# a distribution's MPICH: fetched with `apt-get download` + `dpkg -x`, without
# installing anything (scripts/debian-unpack.sh).  The shared libraries it
# needs that this machine lacks (libhwloc15, libucx0, libslurm38, ...) are
# found by ldd over the unpacked tree (programs, libmpich and the UCX
# transport modules it loads) and fetched the same way.  Prints the prefix
# (holding usr/bin/mpiexec.hydra, usr/include/x86_64-linux-gnu/mpich,
# usr/lib/x86_64-linux-gnu/libmpich.so) last on stdout.  Cached in
# $MQD_STOCK_MPICH_CACHE (default ~/.cache/mqd/stock-mpich).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=debian-unpack.sh
. "$(dirname "$0")/debian-unpack.sh"

unpack_begin fetch-stock-mpich \
    "${MQD_STOCK_MPICH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mqd/stock-mpich}"

unpack_packages mpich libmpich12 libmpich-dev
[ -x "$root/usr/bin/mpiexec.hydra" ] || die "mpich holds no usr/bin/mpiexec.hydra"
[ -e "$libdir/libmpich.so.12" ] || die "libmpich12 holds no $libdir/libmpich.so.12"

unpack_dependencies

unpack_end
