#!/usr/bin/env bash
# Open MPI's message queue DLL, for testing mqd's host against a second
# vendor's DLL: extracted from Debian's libopenmpi3 package with
# `apt-get download` + `dpkg -x`, without installing Open MPI.  Prints the
# DLL's path.  Cached in $MQD_OMPI_CACHE (default ~/.cache/mqd/openmpi-dll).
set -euo pipefail
cache=${MQD_OMPI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mqd/openmpi-dll}
find_dll() { find "$cache/root" -name libompi_dbg_msgq.so -type f 2>/dev/null | head -n 1 || true; }

dll=$(find_dll)
if [ -z "$dll" ]; then
    mkdir -p "$cache"
    rm -rf "$cache/root" "$cache"/*.deb
    # apt-get download needs package lists; a fresh machine may have none.
    if ! (cd "$cache" && apt-get -q -o APT::Sandbox::User=root download libopenmpi3 >&2); then
        apt-get -q update >&2
        (cd "$cache" && apt-get -q -o APT::Sandbox::User=root download libopenmpi3 >&2)
    fi
    dpkg -x "$cache"/libopenmpi3_*.deb "$cache/root"
    rm -f "$cache"/*.deb
    dll=$(find_dll)
    if [ -z "$dll" ]; then
        echo "fetch-ompi-dll: libopenmpi3 holds no libompi_dbg_msgq.so" >&2
        exit 1
    fi
fi
echo "$dll"
