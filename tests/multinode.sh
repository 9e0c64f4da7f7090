#!/usr/bin/env bash
# Simulated cluster nodes on one machine, for the multi-node tests: each
# node is a network namespace (a veth pair onto a bridge), a PID, UTS and
# mount namespace of its own (its own pids, host name, /etc/hosts and ssh
# client configuration), and an OpenSSH server inside it that accepts a key
# made for the test.  The file system is shared, as a cluster's is.
#
#   multinode.sh up DIR NODE...        make the nodes (DIR: their keys, configs)
#   multinode.sh run DIR NODE CMD...   run CMD in NODE (its namespaces)
#   multinode.sh sshd-stop DIR NODE    stop NODE's ssh server (it is unreachable)
#   multinode.sh down DIR              stop every node, remove the links
#
# Needs root (namespaces, links), iproute2, util-linux and openssh-server.
# Exit status of up: 0 ready; 3 something is missing or the kernel refused
# (the reason on stderr).
set -euo pipefail

NET=10.213.0

# The links of the nodes in DIR, named after DIR, so that two runs (two
# checkouts, two users) on one machine never take each other's: the bridge
# mqbXXXXXX and each node's end of its veth pair mqvXXXXXXN.
links_of() {
    local id
    id=$(printf '%s' "$(cd "$1" && pwd)" | cksum | awk '{printf "%06x", $1 % 16777216}')
    BRIDGE=mqb$id
    VETH=mqv$id
}

die() { echo "multinode: $*" >&2; exit 3; }

node_pid() { cat "$1/$2.pid" 2>/dev/null || die "no node $2 in $1"; }

up() {
    local dir=$1
    shift
    [ "$(id -u)" = 0 ] || die "needs root (namespaces and network links)"
    for t in ip unshare nsenter ssh ssh-keygen /usr/sbin/sshd; do
        command -v "$t" >/dev/null || die "$t is missing (iproute2, util-linux, openssh-server)"
    done
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    links_of "$dir"
    rm -f "$dir"/*.pid "$dir"/*.ready
    shm_list >"$dir/shm.before"  # the nodes' jobs' shared memory: what is new at down
    ssh-keygen -q -t ed25519 -N '' -C mqd-test -f "$dir/id" <<<y >/dev/null
    ssh-keygen -q -t ed25519 -N '' -C mqd-test-host -f "$dir/host_key" <<<y >/dev/null
    cp "$dir/id.pub" "$dir/authorized_keys"
    chmod 600 "$dir/id" "$dir/host_key" "$dir/authorized_keys"
    { echo "127.0.0.1 localhost"; local i=11
      for n in "$@"; do echo "$NET.$i $n"; i=$((i + 1)); done; } >"$dir/hosts"
    cat >"$dir/sshd_config" <<EOF
ListenAddress 0.0.0.0
HostKey $dir/host_key
PidFile none
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
LogLevel ERROR
EOF
    cat >"$dir/ssh_config" <<EOF
Host *
    IdentityFile $dir/id
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
    GlobalKnownHostsFile /dev/null
    ConnectTimeout 5
    LogLevel ERROR
EOF
    # What runs as each node's pid 1: its name, files and address, its ssh
    # server, and then it reaps orphans until it is stopped.
    cat >"$dir/node-init.sh" <<'EOF'
set -e
dir=$1 name=$2 addr=$3
hostname "$name"
mount --bind "$dir/hosts" /etc/hosts
mount --bind "$dir/ssh_config" /etc/ssh/ssh_config
mkdir -p /run/sshd
for i in $(seq 100); do ip link show eth0 >/dev/null 2>&1 && break; sleep 0.05; done
ip link set lo up
ip addr add "$addr/24" dev eth0
ip link set eth0 up
/usr/sbin/sshd -D -e -f "$dir/sshd_config" 2>>"$dir/$name.sshd.log" &
echo $! >"$dir/$name.sshd"
touch "$dir/$name.ready"
trap 'exit 0' TERM
while :; do wait 2>/dev/null || true; sleep 0.2; done
EOF
    ip link del "$BRIDGE" 2>/dev/null || true
    ip link add "$BRIDGE" type bridge || die "cannot make a bridge (is this a container without NET_ADMIN?)"
    ip link set "$BRIDGE" up
    local i=11
    for n in "$@"; do
        setsid unshare --net --pid --uts --mount --fork --mount-proc --propagation private \
            bash "$dir/node-init.sh" "$dir" "$n" "$NET.$i" </dev/null >>"$dir/$n.log" 2>&1 &
        local outer=$!
        # The node's pid 1 is unshare's child.
        local init=""
        for _ in $(seq 100); do
            init=$(cat /proc/$outer/task/$outer/children 2>/dev/null | awk '{print $1}')
            [ -n "$init" ] && break
            sleep 0.05
        done
        [ -n "$init" ] || die "node $n did not start (the kernel refused namespaces?): $(cat "$dir/$n.log")"
        echo "$init" >"$dir/$n.pid"
        ip link add "$VETH$i" type veth peer name eth0 netns "$init" ||
            die "cannot make a veth pair for $n"
        ip link set "$VETH$i" master "$BRIDGE" up
        i=$((i + 1))
    done
    for n in "$@"; do
        for _ in $(seq 200); do [ -e "$dir/$n.ready" ] && break; sleep 0.05; done
        [ -e "$dir/$n.ready" ] || die "node $n is not ready: $(cat "$dir/$n.log")"
    done
    # Each node reaches every other's ssh server.
    for n in "$@"; do
        for m in "$@"; do
            local ok=0
            for _ in $(seq 50); do
                if run "$dir" "$n" ssh -o BatchMode=yes "$m" true 2>/dev/null; then ok=1; break; fi
                sleep 0.1
            done
            [ $ok = 1 ] || die "$n cannot ssh to $m: $(run "$dir" "$n" ssh -o BatchMode=yes "$m" true 2>&1 | tail -n 2)"
        done
    done
}

run() {
    local dir=$1 n=$2
    shift 2
    nsenter -t "$(node_pid "$dir" "$n")" -n -p -u -m --wd="$PWD" "$@"
}

sshd_stop() {
    local dir=$1 n=$2
    run "$dir" "$n" sh -c "kill \$(cat '$dir/$n.sshd')"
}

# /dev/shm's files as "NAME INODE" lines.
shm_list() {
    find /dev/shm -maxdepth 1 -type f -printf '%f %i\n' 2>/dev/null | sort
}

down() {
    local dir=$1
    links_of "$dir"
    for f in "$dir"/*.pid; do
        [ -e "$f" ] || continue
        # Ending a PID namespace's init ends every process in it.
        kill -KILL "$(cat "$f")" 2>/dev/null || true
        rm -f "$f"
    done
    # A veth pair goes with its node's network namespace.
    ip link del "$BRIDGE" 2>/dev/null || true
    # Shared memory the nodes' jobs left (MPICH 5.0 leaves a segment per
    # killed job; mqd-launch removes only its own descendants'): what is
    # new since up by name and inode, and mapped by no process.
    if [ -f "$dir/shm.before" ]; then
        sleep 0.2
        shm_list | comm -13 "$dir/shm.before" - | while read -r name _; do
            grep -qsF "/dev/shm/$name" /proc/[0-9]*/maps || rm -f "/dev/shm/$name"
        done
        rm -f "$dir/shm.before"
    fi
}

cmd=${1:-}
shift || true
case $cmd in
up) up "$@" ;;
run) run "$@" ;;
sshd-stop) sshd_stop "$@" ;;
down) down "$@" ;;
*) echo "usage: multinode.sh up|run|sshd-stop|down DIR ..." >&2; exit 64 ;;
esac
