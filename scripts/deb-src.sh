# shellcheck shell=bash
# Sourced by the build scripts: enable_deb_src PACKAGE makes apt-get source
# PACKAGE work, deriving a deb-src entry from the system's own apt sources
# when none is there, so that no archive address is ever written down here.
# Needs say() and as_root() from the caller.
#
# make check builds its MPIs at once (scripts/build-mpich.sh twice,
# scripts/build-openmpi.sh): what they ask of apt is done one at a time,
# under apt_locked.

# apt_locked COMMAND...: COMMAND (a function too) while no other build
# script of this user uses apt.
apt_locked() {
    local fd rc=0
    exec {fd}>>"${TMPDIR:-/tmp}/mqd-apt.$(id -u).lock"
    flock "$fd"
    "$@" || rc=$?
    exec {fd}>&-
    return "$rc"
}

enable_deb_src() {
    # (Not grep -q: with pipefail, apt-get's SIGPIPE would fail the test.)
    # shellcheck disable=SC2143
    if [ -n "$(apt_locked apt-get source --print-uris "$1" 2>/dev/null | grep -F .dsc)" ]; then
        return 0
    fi
    local out=/etc/apt/sources.list.d/mqd-deb-src.sources
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        say "enabling source packages in $out (derived from debian.sources)"
        sed -e 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
            as_root tee "$out" >/dev/null
    elif grep -qs '^deb ' /etc/apt/sources.list; then
        out=/etc/apt/sources.list.d/mqd-deb-src.list
        say "enabling source packages in $out (derived from sources.list)"
        sed -n -e 's/^deb /deb-src /p' /etc/apt/sources.list | as_root tee "$out" >/dev/null
    else
        say "no apt sources found to derive a deb-src entry from"
        exit 1
    fi
    apt_locked as_root apt-get update -q >&2
}

# fetch_source PACKAGE VERSION: apt-get source PACKAGE (Debian's patches
# applied) into the current directory, and enter its tree, which must be
# VERSION's.
fetch_source() {
    say "fetching the $1 source package into $PWD"
    apt_locked apt-get source -q "$1" >&2
    local src
    src=$(find . -maxdepth 1 -type d -name "$1-$2*" | head -n1)
    if [ -z "$src" ]; then
        say "this system's source package is not $1 $2 (found: $(ls -d "$1"-*/ 2>/dev/null))"
        exit 1
    fi
    cd "$src" || exit 1
}

# build_and_install WORK JOBS CONFIGURE-ARGS...: ./configure, make -jJOBS
# and make install in the current tree, their logs in WORK (configure.log,
# make.log), the end of a log on stderr if a step fails (then exit 1).
build_and_install() {
    local work=$1 jobs=$2
    shift 2
    say "configuring (log: $work/configure.log)"
    SECONDS=0
    if ! ./configure "$@" >"$work/configure.log" 2>&1; then
        tail -40 "$work/configure.log" >&2
        say "configure failed"
        exit 1
    fi
    say "configured in ${SECONDS}s; building with $jobs jobs (log: $work/make.log)"
    SECONDS=0
    if ! make -j"$jobs" >"$work/make.log" 2>&1 || ! make install >>"$work/make.log" 2>&1; then
        tail -60 "$work/make.log" >&2
        say "build failed"
        exit 1
    fi
    say "built and installed in ${SECONDS}s"
}
