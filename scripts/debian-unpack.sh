# shellcheck shell=bash
# Sourced by scripts/fetch-stock-*.sh: Debian packages fetched with
# `apt-get download` and unpacked with `dpkg -x` into a cache directory,
# without installing anything, plus every package (by name, from the Depends
# of the ones already unpacked) that ships a shared library this machine
# lacks, found by ldd over every ELF file of the unpacked tree, in rounds.
# A fetch script reads as
#
#   unpack_begin NAME CACHE      (prints the root and exits if CACHE is done)
#   unpack_packages PKG...       then its own checks of what they hold
#   [unpack_link_alternatives]
#   unpack_dependencies
#   unpack_end                   (prints the root last on stdout)
#
# Between unpack_begin and unpack_end the fetch script may read root (the
# tree: CACHE/root), libdir (root/usr/lib/MULTIARCH), multiarch and unpacked
# (the packages so far), and call die.  A finished cache is marked by
# root/.mqd-fetched and lists its packages in root/.mqd-packages.

# The message prefix, the cache and the tree; set by unpack_begin.
unpack_name=unpack
cache=
root=
libdir=
multiarch=
arch=
unpacked=()      # packages unpacked, in order
rejected=()      # packages downloaded and found to ship no missing soname
missing=()       # sonames ldd could not find, this round
alternatives=0   # 1 after unpack_link_alternatives

die() { echo "$unpack_name: $*" >&2; exit 1; }

# unpack_begin NAME CACHE: NAME prefixes every message.  If CACHE/root is
# finished, prints it and exits 0; otherwise checks the tools, sets arch,
# multiarch, root and libdir and empties the cache.
unpack_begin() {
    unpack_name=$1
    cache=$2
    root=$cache/root
    if [ -f "$root/.mqd-fetched" ]; then
        echo "$root"
        exit 0
    fi
    local tool
    for tool in apt-get apt-cache dpkg dpkg-deb dpkg-query ldd; do
        command -v "$tool" >/dev/null || die "needs $tool (a Debian-like system)"
    done
    arch=$(dpkg --print-architecture)
    multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
    libdir=$root/usr/lib/$multiarch
    mkdir -p "$cache"
    rm -rf "$root" "$cache/debs"
    mkdir -p "$cache/debs"
}

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

# Unpacks downloaded package $1 into root.
unpack() {
    local deb
    deb=$(deb_of "$1")
    [ -n "$deb" ] || die "no .deb for $1 after apt-get download"
    dpkg -x "$deb" "$root"
    unpacked+=("$1")
}

# unpack_packages PKG...: downloads and unpacks the packages named.
unpack_packages() {
    local p
    download "$@"
    for p in "$@"; do unpack "$p"; done
}

# Every shared library ldd cannot find for the unpacked ELF files: programs,
# libraries and the plugins that are only ever dlopened (Open MPI's MCA
# components in openmpi/lib/openmpi3, PMIx's in pmix2/lib/pmix, UCX's
# transports).  ldd searches the tree's two library directories first (the
# ones a wrapper puts in LD_LIBRARY_PATH and programs in their rpath;
# libnl-3-200 ships lib/MULTIARCH, not usr/lib/MULTIARCH), then every other
# directory holding a shared object: plugins of one directory need each
# other by soname (UCX's libuct_rdmacm.so.0 needs libuct_ib.so.0, loaded
# before it).  Scanning the plugins is the point: ldd of Open MPI's orterun
# alone misses libpmix.so.2, which only mca_pmix_ext3x.so needs, and the
# transports' libraries.
missing_sonames() {
    local path plugins
    plugins=$(find "$root" -name '*.so*' -printf '%h\n' | sort -u | paste -sd: -)
    path=$libdir:$root/lib/$multiarch:$plugins
    find "$root/usr/bin" "$root/usr/lib" "$root/lib" -type f \( -perm -u+x -o -name '*.so*' \) \
            -print0 2>/dev/null |
        while IFS= read -r -d '' f; do
            head -c 4 "$f" 2>/dev/null | grep -q 'ELF' || continue
            LD_LIBRARY_PATH=$path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ldd "$f" 2>/dev/null |
                awk '/=> not found/ { print $1 }' || true
        done | sort -u
}

# The not-installed, not-yet-tried packages that the unpacked ones depend on
# (every alternative of every Depends/PreDepends).
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

# The paths (./usr/lib/...) of the files and links in .deb $1.
deb_paths() { dpkg-deb -c "$1" | sed -e 's/ -> .*//' -e 's|^.* \./|./|'; }

# $1 as a basic regular expression matching itself.
bre() { printf '%s' "$1" | sed 's/[.[\*^$]/\\&/g'; }

# A basic regular expression matching a path ending in soname $1, or (after
# unpack_link_alternatives) also in $1.N... (the real file a soname link
# names).
soname_re() {
    if [ "$alternatives" -eq 1 ]; then
        printf '/%s\\(\\.[0-9][0-9]*\\)*$' "$(bre "$1")"
    else
        printf '/%s$' "$(bre "$1")"
    fi
}

# Whether .deb $1 holds one of ${missing[@]} (or a file SONAME.N...).
ships_missing() {
    local so res=()
    for so in "${missing[@]}"; do res+=("$(soname_re "$so")"); done
    deb_paths "$1" | grep -q -f <(printf '%s\n' "${res[@]}")
}

# For each missing soname that .deb $1 has only a SONAME.N... file of, links
# the soname to that file in libdir, as the package's postinst would with
# update-alternatives (see unpack_link_alternatives).
link_alternatives() {
    local so f
    for so in "${missing[@]}"; do
        deb_paths "$1" | grep -q "/$(bre "$so")\$" && continue
        f=$(deb_paths "$1" | grep "$(soname_re "$so")" | head -n 1 || true)
        [ -n "$f" ] || continue
        [ -e "$libdir/$so" ] ||
            ln -s "$(realpath -m --relative-to="$libdir" "$root/${f#./}")" "$libdir/$so"
        echo "$unpack_name: linked $so to ${f#./} (as its postinst would)" >&2
    done
}

# unpack_link_alternatives: Debian installs some sonames only through
# update-alternatives, from a package's postinst, which dpkg -x never runs.
# From here on, unpack_dependencies also keeps a package that ships only a
# file SONAME.N... of a missing soname, and makes the soname's link to it
# beside the other libraries.
unpack_link_alternatives() { alternatives=1; }

# unpack_dependencies: up to 8 rounds of: the sonames ldd misses, the
# candidates among the Depends, download them, and unpack those that ship a
# missing soname.  Dies if a round makes no progress or sonames are still
# missing after the last.
unpack_dependencies() {
    local round p deb progress cands
    for round in 1 2 3 4 5 6 7 8; do
        mapfile -t missing < <(missing_sonames)
        [ ${#missing[@]} -eq 0 ] && break
        echo "$unpack_name: round $round, missing: ${missing[*]}" >&2
        mapfile -t cands < <(candidates)
        [ ${#cands[@]} -gt 0 ] ||
            die "cannot find a package for ${missing[*]} among the Depends of ${unpacked[*]}"
        download "${cands[@]}"
        progress=0
        for p in "${cands[@]}"; do
            deb=$(deb_of "$p")
            [ -n "$deb" ] || die "no .deb for $p after apt-get download"
            if ships_missing "$deb"; then
                echo "$unpack_name: + $p" >&2
                unpack "$p"
                [ "$alternatives" -eq 0 ] || link_alternatives "$deb"
                progress=1
            else
                rejected+=("$p")
            fi
        done
        [ $progress -eq 1 ] || die "no Depends of ${unpacked[*]} ships ${missing[*]}"
    done
    mapfile -t missing < <(missing_sonames)
    [ ${#missing[@]} -eq 0 ] || die "still missing after 8 rounds: ${missing[*]}"
}

# unpack_end: drops the .debs, marks the cache finished and prints the root
# last on stdout.
unpack_end() {
    rm -rf "$cache/debs"
    printf '%s\n' "${unpacked[@]}" >"$root/.mqd-packages"
    echo "$unpack_name: unpacked ${unpacked[*]}" >&2
    touch "$root/.mqd-fetched"
    echo "$root"
}
