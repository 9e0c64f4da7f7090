#!/usr/bin/env bash
# Debian's own stock Open MPI (openmpi-bin, libopenmpi3, libopenmpi-dev,
# openmpi-common: 4.1.4, external PMIx 4 from libpmix2, libmpi's DWARF
# stripped), for running the samples against a second vendor's MPI: fetched
# with `apt-get download` + `dpkg -x`, without installing anything
# (scripts/debian-unpack.sh).  The shared libraries it needs that this machine
# lacks (libpmix2, libhwloc15, libevent-pthreads, libucx0, libfabric1, ...)
# are found by ldd over every ELF file of the unpacked tree (orterun, orted,
# libmpi.so.40, the MCA components Open MPI dlopens, PMIx's own components,
# and the libraries and plugins fetched for them) and fetched the same way.
# Prints the root (holding usr/bin/orterun, usr/lib/MULTIARCH/openmpi/
# {include,lib,lib/openmpi3}, usr/lib/MULTIARCH/pmix2, etc/openmpi) last on
# stdout.  Cached in $MQD_STOCK_OMPI_CACHE (default ~/.cache/mqd/stock-ompi).
#
# The tree does not run where it is by itself: Open MPI was configured with
# --prefix=/usr and PMIx with /usr/lib/MULTIARCH/pmix2, so whoever runs it
# sets OPAL_PREFIX, OPAL_SYSCONFDIR, PMIX_PREFIX, PMIX_PKGDATADIR,
# PMIX_PKGLIBDIR and LD_LIBRARY_PATH (scripts/stock-samples.sh --mpi openmpi
# writes a wrapper that does, and says why).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=debian-unpack.sh
. "$(dirname "$0")/debian-unpack.sh"

unpack_begin fetch-stock-ompi \
    "${MQD_STOCK_OMPI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mqd/stock-ompi}"

# libpmix2 always, even where the machine has it (make openmpi installs
# it to build Open MPI): the wrapper points PMIx at the tree's components.
unpack_packages openmpi-bin libopenmpi3 libopenmpi-dev openmpi-common libpmix2
[ -x "$root/usr/bin/orterun" ] || die "openmpi-bin holds no usr/bin/orterun"
[ -e "$libdir/libmpi.so.40" ] || die "libopenmpi3 holds no $libdir/libmpi.so.40"
[ -f "$libdir/openmpi/include/mpi.h" ] ||
    die "libopenmpi-dev holds no $libdir/openmpi/include/mpi.h"
[ -f "$libdir/openmpi/lib/openmpi3/libompi_dbg_msgq.so" ] ||
    die "libopenmpi3 holds no $libdir/openmpi/lib/openmpi3/libompi_dbg_msgq.so"

# libfabric1 needs libpsm_infinipath.so.1, which libpsm-infinipath1 ships
# only as usr/lib/libpsm1/libpsm_infinipath.so.1.16: its postinst links it
# to /usr/lib/MULTIARCH/libpsm_infinipath.so.1 with update-alternatives.
unpack_link_alternatives
unpack_dependencies
[ -e "$libdir/pmix2/lib/libpmix.so.2" ] || die "no $libdir/pmix2/lib/libpmix.so.2 (libpmix2)"

unpack_end
