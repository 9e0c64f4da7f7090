#!/usr/bin/env bash
# Install the Debian packages mqd needs to build and test, if any is missing.
# Quiet and quick when everything is already there.
set -euo pipefail

packages=(
    build-essential g++ pkg-config   # compilers, make
    gcc-multilib                     # the public structures' i686 layout (make check-abi)
    libcmocka-dev                    # unit tests
    libdw-dev libelf-dev             # elfutils: ELF symbols, DWARF types
    dpkg-dev xz-utils                # apt-get source mpich, and unpacking it
    binutils                         # nm, objcopy: the MPICH build check, stripped copies
    procps                           # ps/pgrep in the scripts' diagnostics
    graphviz                         # dot: mqdump --graph pictures, and the test that renders them
    man-db                           # man -l: the install test renders mqdump(1)
    openssh-server openssh-client    # the multi-node test: an ssh server per simulated node
    iproute2                         # ... its network links (ip); util-linux's unshare/nsenter
    pdsh                             # ... and one command for all its nodes (--remote '... {hosts}')
    strace                           # the fault tests: a rank already traced by another tracer
    debuginfod                       # a local server: libdw fetching DWARF by DEBUGINFOD_URLS
    libfabric-dev                    # MPICH's ch4:ofi build (MQD_MPICH_DEVICE=ch4) ...
    libpsm-infinipath1-dev libpsm2-dev librdmacm-dev libibverbs-dev  # ... and what libfabric.pc links
    libhwloc-dev                     # MPICH and Open MPI against the system's hwloc, not their own
    libevent-dev libpmix-dev         # Open MPI's build (scripts/build-openmpi.sh), as Debian builds it
)
# make bench (install-deps.sh --bench): system calls per rank, and the
# padb method's baseline.
if [ "${1:-}" = --bench ]; then
    packages+=(gdb)
fi
# make fuzz (install-deps.sh --fuzz): clang's libFuzzer and sanitizer runtimes.
if [ "${1:-}" = --fuzz ]; then
    packages+=(clang libclang-rt-dev)
fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
        missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
as_root apt-get update -q >&2
as_root apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
