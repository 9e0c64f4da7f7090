#!/usr/bin/env bash
# Debian's own stock MPICH (mpich, libmpich12, libmpich-dev: 4.0.2,
# ch4:ucx, built without --enable-debuginfo), for running the samples against
# a distribution's MPICH: fetched with `apt-get download` + `dpkg -x`, without
# installing anything.  The shared libraries it needs that this machine lacks
# (libhwloc15, libucx0, libslurm38, ...) are found by ldd over the unpacked
# tree and fetched the same way, by package name, from the Depends of the
# packages already unpacked.  Prints the prefix (holding usr/bin/mpiexec.hydra,
# usr/include/x86_64-linux-gnu/mpich, usr/lib/x86_64-linux-gnu/libmpich.so)
# last on stdout.  Cached in $MQD_STOCK_MPICH_CACHE (default
# ~/.cache/mqd/stock-mpich); a finished cache is marked by root/.mqd-fetched.
set -euo pipefail
cache=${MQD_STOCK_MPICH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mqd/stock-mpich}
root=$cache/root
stamp=$root/.mqd-fetched
base_pkgs=(mpich libmpich12 libmpich-dev)

die() { echo "fetch-stock-mpich: $*" >&2; exit 1; }

if [ -f "$stamp" ]; then
    echo "$root"
    exit 0
fi

for tool in apt-get apt-cache dpkg dpkg-deb dpkg-query ldd; do
    command -v "$tool" >/dev/null || die "needs $tool (a Debian-like system)"
done

arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
libdir=$root/usr/lib/$multiarch

mkdir -p "$cache"
rm -rf "$root" "$cache/debs"
mkdir -p "$cache/debs"

# apt-get download needs package lists; a fresh machine may have none.
download() {
    if ! (cd "$cache/debs" && apt-get -q -o APT::Sandbox::User=root download "$@" >&2); then
        apt-get -q update >&2
        (cd "$cache/debs" && apt-get -q -o APT::Sandbox::User=root download "$@" >&2) ||
            die "apt-get download $* failed"
    fi
}

# The .deb file of package $1 in debs/, if downloaded.
deb_of() { compgen -G "$cache/debs/${1}_*_*.deb" | head -n 1 || true; }

installed() {
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$1:$arch" 2>/dev/null ||
         dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

unpacked=()
unpack() {
    local deb
    deb=$(deb_of "$1")
    [ -n "$deb" ] || die "no .deb for $1 after apt-get download"
    dpkg -x "$deb" "$root"
    unpacked+=("$1")
}

download "${base_pkgs[@]}"
for p in "${base_pkgs[@]}"; do unpack "$p"; done
[ -x "$root/usr/bin/mpiexec.hydra" ] || die "mpich holds no usr/bin/mpiexec.hydra"
[ -e "$libdir/libmpich.so.12" ] || die "libmpich12 holds no $libdir/libmpich.so.12"

# Every shared library ldd cannot find for the unpacked ELF files (programs,
# libmpich and the UCX transport modules it loads), with the tree's own
# library directories searched first.
missing_sonames() {
    local path
    path=$(find "$root" -name '*.so*' -printf '%h\n' | sort -u | paste -sd: -)
    find "$root/usr/bin" "$root/usr/lib" -type f \( -perm -u+x -o -name '*.so*' \) \
            -print0 2>/dev/null |
        while IFS= read -r -d '' f; do
            head -c 4 "$f" 2>/dev/null | grep -q 'ELF' || continue
            LD_LIBRARY_PATH=$path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ldd "$f" 2>/dev/null |
                awk '/=> not found/ { print $1 }' || true
        done | sort -u
}

# The not-installed, not-yet-tried packages that the unpacked ones depend on
# (every alternative of every Depends/PreDepends).
rejected=()
candidates() {
    apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
            --no-replaces --no-enhances "${unpacked[@]}" 2>/dev/null |
        awk '$1 ~ /^\|?(Pre)?Depends:$/ && $2 !~ /^</ { print $2 }' | sort -u |
        while read -r p; do
            case " ${unpacked[*]} ${rejected[*]} " in *" $p "*) continue ;; esac
            installed "$p" && continue
            echo "$p"
        done
}

for round in 1 2 3 4 5 6 7 8; do
    mapfile -t missing < <(missing_sonames)
    [ ${#missing[@]} -eq 0 ] && break
    echo "fetch-stock-mpich: round $round, missing: ${missing[*]}" >&2
    mapfile -t cands < <(candidates)
    [ ${#cands[@]} -gt 0 ] ||
        die "cannot find a package for ${missing[*]} among the Depends of ${unpacked[*]}"
    download "${cands[@]}"
    progress=0
    for p in "${cands[@]}"; do
        deb=$(deb_of "$p")
        [ -n "$deb" ] || die "no .deb for $p after apt-get download"
        # Keep the package only if it ships one of the missing sonames.
        if dpkg-deb -c "$deb" | sed -e 's/ -> .*//' -e 's|.*/||' |
                grep -qxF -f <(printf '%s\n' "${missing[@]}"); then
            echo "fetch-stock-mpich: + $p" >&2
            unpack "$p"
            progress=1
        else
            rejected+=("$p")
        fi
    done
    [ $progress -eq 1 ] || die "no Depends of ${unpacked[*]} ships ${missing[*]}"
done

mapfile -t missing < <(missing_sonames)
[ ${#missing[@]} -eq 0 ] || die "still missing after 8 rounds: ${missing[*]}"

rm -rf "$cache/debs"
printf '%s\n' "${unpacked[@]}" >"$root/.mqd-packages"
echo "fetch-stock-mpich: unpacked ${unpacked[*]}" >&2
touch "$stamp"
echo "$root"
