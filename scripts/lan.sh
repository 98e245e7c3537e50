#!/usr/bin/env bash
# lan.sh - a small virtual LAN of Locafoto "hosts" on one Linux machine, for
# end-to-end tests of discovery and transfers between machines.
#
#   lan.sh up [HOST...]            create the LAN (hosts from args, else $LAN_HOSTS, else "a b c")
#   lan.sh down                    kill EVERY process inside the LAN's namespaces, delete them
#   lan.sh exec HOST CMD [ARG...]  run CMD inside HOST (its network + its own /run/dbus, avahi)
#   lan.sh status                  namespaces, addresses, daemons, mDNS blocks
#   lan.sh addr HOST [4|6]         print HOST's IPv4 (default) or IPv6 link-local address
#   lan.sh block-mdns HOST [PEER]  nftables in HOST's netns: drop UDP 5353 to/from PEER's
#                                  addresses (IPv4 + IPv6); without PEER: drop ALL mDNS on
#                                  HOST (any UDP 5353, so also 224.0.0.251 / ff02::fb)
#   lan.sh unblock-mdns HOST [PEER] undo (without PEER: every block on HOST)
#   lan.sh gc                      `down` every LAN whose owner process (LAN_OWNER_PID) is gone
#
# Topology. The switch is a bridge `br0` in its own netns <LAN>-sw (multicast
# snooping off, STP off). Host h is netns <LAN>-h holding a veth `eth0` with
# <subnet>.<i>/24 (i = position in the host list, from 1) and an IPv6
# link-local address (fixed MAC 02:4c:46:00:00:<i>, DAD off so it is usable at
# once); its peer `p-h` is a bridge port. Veths are created straight inside the
# namespaces: nothing is ever added to, or changed in, the root namespace (no
# interface, no address, no route, no sysctl, no nftables rule), and there is no
# default route, so LAN traffic cannot leave.
#
# Per host a long-lived *holder* process (`sleep`) lives in the host's netns and
# in a private mount namespace where <state>/hosts/h/run/{dbus,avahi-daemon} are
# bind-mounted over /run/dbus and /run/avahi-daemon. Started from it: a
# `dbus-daemon --system` and an `avahi-daemon` (allow-interfaces=eth0,
# host-name=host-h, IPv4 + IPv6, wide-area off, log in <state>/hosts/h/avahi.log).
# `exec` enters the holder's net + mount namespaces with nsenter (same working
# directory), so programs find "their" system bus at the default path. Everything
# else (/tmp, /work, the rest of /run) is shared with the root namespace; Unix
# sockets are paths, so an agent's control socket is reachable from anywhere.
#
# Environment:
#   LAN_NAME     namespace prefix and state subfolder (default lflan; [a-z0-9]{1,10}).
#                Different names give independent LANs that can run side by side.
#   LAN_HOSTS    host names for `up` ([a-z0-9]{1,12}, not "sw"); default "a b c"
#   LAN_SUBNET   IPv4 /24 for `up` (default 10.77.0.0/24)
#   LAN_STATE    state root (default /run/locafoto-lan, else $TMPDIR/locafoto-lan)
#   LAN_OWNER_PID  recorded by `up`: `gc` downs the LAN once that process is gone
#   LAN_WAIT     seconds `up` waits for the daemons (default 15)
#
# The root namespace's own dbus/avahi-daemon (e.g. from scripts/avahi-lo.sh) is
# neither used nor touched. Needs root, iproute2, util-linux (unshare, nsenter),
# dbus, avahi-daemon; nftables for block-mdns.
set -euo pipefail

SELF=$(readlink -f "${BASH_SOURCE[0]}")
LAN=${LAN_NAME:-lflan}
if [[ -n ${LAN_STATE:-} ]]; then
    STATE_ROOT=$LAN_STATE
elif [[ -w /run ]]; then
    STATE_ROOT=/run/locafoto-lan
else
    STATE_ROOT=${TMPDIR:-/tmp}/locafoto-lan
fi
STATE=$STATE_ROOT/$LAN
SW=$LAN-sw
WAIT_SECONDS=${LAN_WAIT:-15}
NFT_TABLE=locafoto_lan

say() { echo "lan[$LAN]: $*"; }
die() { echo "lan[$LAN]: error: $*" >&2; exit 1; }

[[ $LAN =~ ^[a-z0-9]{1,10}$ ]] || die "LAN_NAME must be 1-10 characters a-z0-9 (got '$LAN')"

# ---------------------------------------------------------------- helpers

ns_of() { echo "$LAN-$1"; }
hostdir() { echo "$STATE/hosts/$1"; }

ns_exists() { [[ -e /run/netns/$1 ]]; }

# Every netns that belongs to this LAN: <LAN>-sw and <LAN>-<host>. Found by
# name, so `down` also works when the state folder is gone or incomplete.
our_namespaces() {
    ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$LAN-[a-z0-9]+\$" || true
}

# Hosts of the LAN that is up, in order (from the state file).
hosts_up() {
    [[ -f $STATE/hosts.list ]] || return 0
    awk '{print $1}' "$STATE/hosts.list"
}

host_index() {  # $1 host -> its number in the LAN (1-based)
    local i
    i=$(awk -v h="$1" '$1 == h {print $2}' "$STATE/hosts.list" 2>/dev/null || true)
    [[ -n $i ]] || die "no host '$1' in LAN $LAN (hosts: $(hosts_up | xargs)); is it up?"
    echo "$i"
}

subnet_prefix() {  # "10.77.0.0/24", "10.77.0.0" or "10.77.0" -> "10.77.0"
    local s=$1 o
    if [[ $s == */* ]]; then
        [[ $s == */24 ]] || die "only /24 subnets are supported (got $1)"
        s=${s%/24}
    fi
    [[ $s =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}(\.0)?$ ]] || die "bad LAN_SUBNET '$1' (want e.g. 10.77.0.0/24)"
    s=$(cut -d. -f1-3 <<<"$s")
    for o in ${s//./ }; do ((10#$o <= 255)) || die "bad LAN_SUBNET '$1'"; done
    echo "$s"
}

# True if process $1 exists and is not a zombie.
alive() {
    local stat
    [[ $1 =~ ^[0-9]+$ ]] || return 1
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [[ ${stat%% *} != Z ]]
}

proc_start_time() {  # field 22 of /proc/PID/stat (guards against pid reuse)
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    # shellcheck disable=SC2086
    set -- $stat
    echo "${20}"
}

# The holder pid of host $1, checked: alive and really in the host's netns.
holder_pid() {
    local h=$1 pid f
    f=$(hostdir "$h")/holder.pid
    [[ -s $f ]] || die "host '$h' has no holder (is LAN $LAN up? \`$0 status\`)"
    pid=$(<"$f")
    alive "$pid" || die "the holder of host '$h' (pid $pid) is gone; run \`$0 down\` and \`up\` again"
    [[ $(stat -L -c %i "/proc/$pid/ns/net" 2>/dev/null) == $(stat -L -c %i "/run/netns/$(ns_of "$h")" 2>/dev/null) ]] ||
        die "pid $pid is not in netns $(ns_of "$h") (stale state?)"
    echo "$pid"
}

in_host() {  # host cmd... : run inside the host (net + mount namespace), same cwd
    local pid
    pid=$(holder_pid "$1"); shift
    nsenter -t "$pid" -n -m --wd="$PWD" -- "$@"
}

# Closes inherited descriptors above 2, then runs "$@". Daemons that inherit a
# caller's pipe keep it open forever and a caller waiting for EOF would hang.
without_inherited_fds() {
    local fd
    for fd in "/proc/$BASHPID/fd/"*; do
        fd=${fd##*/}
        [[ $fd =~ ^[0-9]+$ ]] && ((fd > 2)) && eval "exec $fd>&-" 2>/dev/null
    done
    exec "$@"
}

write_avahi_conf() {  # $1 host  $2 file
    cat >"$2" <<CONF
# Generated by scripts/lan.sh for host $1 of LAN $LAN: only the host's own eth0.
[server]
host-name=host-$1
domain-name=local
use-ipv4=yes
use-ipv6=yes
allow-interfaces=eth0
enable-dbus=yes
ratelimit-interval-usec=1000000
ratelimit-burst=1000

[wide-area]
enable-wide-area=no

[publish]
publish-hinfo=no
publish-workstation=no

[reflector]
enable-reflector=no

[rlimits]
CONF
}

# ---------------------------------------------------------------- holder (internal)

# Runs as `lan.sh _holder DIR` inside the host's netns and a fresh private mount
# namespace (see start_host). Never returns: becomes `sleep infinity`.
holder_main() {
    local d=$1
    echo $$ >"$d/holder.pid"
    # Mount points normally exist already (standard Debian directories); they are
    # only created, empty, if missing. The bind mounts stay in this mount namespace.
    mkdir -p /run/dbus /run/avahi-daemon
    mount --bind "$d/run/dbus" /run/dbus
    mount --bind "$d/run/avahi-daemon" /run/avahi-daemon
    dbus-daemon --system --fork --print-pid >"$d/dbus.pid"
    avahi-daemon -f "$d/avahi-daemon.conf" --no-chroot --no-drop-root --no-rlimits \
        </dev/null >"$d/avahi.log" 2>&1 &
    echo $! >"$d/avahi.pid"
    exec sleep infinity
}

# ---------------------------------------------------------------- up

start_host() {  # $1 host  $2 index
    local h=$1 i=$2 n d mac
    n=$(ns_of "$h"); d=$(hostdir "$h")
    mkdir -p "$d/run/dbus" "$d/run/avahi-daemon"
    write_avahi_conf "$h" "$d/avahi-daemon.conf"
    ip netns add "$n"
    # IPv6 on, no DAD (addresses are unique by construction): eth0 inherits these.
    ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0 \
        net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.default.dad_transmits=0
    ip -n "$n" link set lo up
    printf -v mac '02:4c:46:00:%02x:%02x' $((i / 256)) $((i % 256))
    ip -n "$n" link add eth0 address "$mac" type veth peer name "p-$h" netns "$SW"
    ip -n "$SW" link set "p-$h" master br0 up
    ip -n "$n" addr add "$PREFIX.$i/24" dev eth0
    ip -n "$n" link set eth0 up
    # A host on a real LAN reaches multicast groups through its default route; these hosts have
    # none, so the groups get a route of their own (LocalSend joins and sends by route; avahi
    # names its interface itself).
    ip -n "$n" route add 224.0.0.0/4 dev eth0
    (without_inherited_fds setsid ip netns exec "$n" unshare --mount --propagation private -- \
        "$SELF" _holder "$d" </dev/null >"$d/holder.log" 2>&1) &
}

avahi_running_in() {  # $1 host: avahi answers on the host's bus and is RUNNING (state 2)
    local d pid
    d=$(hostdir "$1")
    [[ -s $d/holder.pid ]] || return 1
    pid=$(<"$d/holder.pid")
    alive "$pid" || return 1
    nsenter -t "$pid" -n -m -- timeout 3 dbus-send --system --print-reply --reply-timeout=2000 \
        --dest=org.freedesktop.Avahi / org.freedesktop.Avahi.Server.GetState 2>/dev/null | grep -q 'int32 2'
}

cmd_up() {
    [[ $EUID -eq 0 ]] || die "must run as root"
    local h i=0 hosts=()
    if (($# > 0)); then hosts=("$@"); else read -r -a hosts <<<"${LAN_HOSTS:-a b c}"; fi
    for cmd in ip nsenter unshare dbus-daemon dbus-send avahi-daemon; do
        command -v "$cmd" >/dev/null || die "$cmd not found (scripts/setup.sh installs what is needed)"
    done
    if [[ -n $(our_namespaces) || -e $STATE ]]; then
        die "LAN $LAN is already up (or left over): run \`LAN_NAME=$LAN $0 down\` first"
    fi
    PREFIX=$(subnet_prefix "${LAN_SUBNET:-10.77.0.0/24}")
    local seen=" "
    for h in "${hosts[@]}"; do
        [[ $h =~ ^[a-z0-9]{1,12}$ && $h != sw ]] || die "bad host name '$h' (1-12 characters a-z0-9, not 'sw')"
        [[ $seen == *" $h "* ]] && die "host '$h' given twice"
        seen+="$h "
    done
    ((${#hosts[@]} >= 1 && ${#hosts[@]} <= 254)) || die "1 to 254 hosts"

    local t0=$SECONDS
    mkdir -p "$STATE/hosts"
    echo "$PREFIX.0/24" >"$STATE/subnet"
    if [[ -n ${LAN_OWNER_PID:-} ]]; then
        echo "$LAN_OWNER_PID $(proc_start_time "$LAN_OWNER_PID" || echo 0)" >"$STATE/owner"
    fi
    : >"$STATE/hosts.list"
    # Whatever fails from here on (set -e exit included): leave nothing half-built behind.
    trap 'echo "lan[$LAN]: up failed; cleaning up" >&2; cmd_down >&2' EXIT

    ip netns add "$SW"
    ip netns exec "$SW" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "$SW" link set lo up
    ip -n "$SW" link add br0 type bridge stp_state 0 forward_delay 0 mcast_snooping 0
    ip -n "$SW" link set br0 up
    for h in "${hosts[@]}"; do
        i=$((i + 1))
        echo "$h $i" >>"$STATE/hosts.list"
        start_host "$h" "$i"
    done

    local deadline=$((SECONDS + WAIT_SECONDS)) pending
    while :; do
        pending=()
        for h in "${hosts[@]}"; do
            avahi_running_in "$h" || pending+=("$h")
        done
        ((${#pending[@]} == 0)) && break
        if ((SECONDS >= deadline)); then
            for h in "${pending[@]}"; do
                echo "--- host $h: $(hostdir "$h")/avahi.log" >&2
                tail -n 20 "$(hostdir "$h")/avahi.log" >&2 2>/dev/null || true
                tail -n 5 "$(hostdir "$h")/holder.log" >&2 2>/dev/null || true
            done
            false  # set -e exit -> EXIT trap: down
        fi
        sleep 0.1
    done
    # Link-local addresses: no DAD, but wait until they are there and not tentative.
    for h in "${hosts[@]}"; do
        for i in $(seq 1 50); do
            if ip -n "$(ns_of "$h")" -6 addr show dev eth0 scope link | grep -q 'inet6 fe80' &&
                ! ip -n "$(ns_of "$h")" -6 addr show dev eth0 tentative | grep -q inet6; then
                break
            fi
            ((i == 50)) && { echo "host $h: no usable IPv6 link-local address" >&2; false; }
            sleep 0.1
        done
    done
    trap - EXIT
    say "up in $((SECONDS - t0)) s"
    cmd_status
}

# ---------------------------------------------------------------- down

kill_all_in() {  # $1 netns: TERM, wait up to 5 s, KILL. Everything inside is ours.
    local ns=$1 pids i
    pids=$(ip netns pids "$ns" 2>/dev/null | xargs || true)
    [[ -z $pids ]] && return 0
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    for i in $(seq 1 50); do
        pids=$(ip netns pids "$ns" 2>/dev/null | xargs || true)
        [[ -z $pids ]] && return 0
        sleep 0.1
    done
    echo "lan[$LAN]: still running in $ns after SIGTERM, sending SIGKILL: $pids" >&2
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    for i in $(seq 1 20); do
        [[ -z $(ip netns pids "$ns" 2>/dev/null) ]] && return 0
        sleep 0.1
    done
    echo "lan[$LAN]: warning: processes survive SIGKILL in $ns: $(ip netns pids "$ns" 2>/dev/null | xargs)" >&2
}

cmd_down() {
    local ns h pid all=()
    mapfile -t all < <(our_namespaces)
    # Hosts first (agents, daemons, holders), the switch last.
    for ns in "${all[@]}"; do [[ $ns == "$SW" ]] || kill_all_in "$ns"; done
    # A holder whose netns is already gone (half-failed up) is found by its pid file.
    for h in $(hosts_up); do
        pid=$(cat "$(hostdir "$h")/holder.pid" 2>/dev/null || true)
        if alive "$pid" && [[ $(cat "/proc/$pid/comm" 2>/dev/null) == sleep ]]; then kill -KILL "$pid" 2>/dev/null || true; fi
    done
    for ns in "${all[@]}"; do
        [[ $ns == "$SW" ]] && kill_all_in "$ns"
        ip netns del "$ns" 2>/dev/null || echo "lan[$LAN]: warning: could not delete netns $ns" >&2
    done
    rm -rf "$STATE"
    rmdir "$STATE_ROOT" 2>/dev/null || true
    if [[ -n $(our_namespaces) ]]; then die "namespaces left: $(our_namespaces | xargs)"; fi
    say "down (${#all[@]} namespaces removed)"
}

# ---------------------------------------------------------------- status

cmd_status() {
    local h d n pid v4 v6
    if [[ ! -f $STATE/hosts.list ]]; then
        say "not up (state $STATE)"
        [[ -n $(our_namespaces) ]] && say "but namespaces exist: $(our_namespaces | xargs) (\`$0 down\` removes them)"
        return 3
    fi
    say "subnet $(cat "$STATE/subnet"), switch netns $SW, state $STATE"
    for h in $(hosts_up); do
        d=$(hostdir "$h"); n=$(ns_of "$h")
        v4=$(ip -n "$n" -4 -o addr show dev eth0 2>/dev/null | awk '{print $4}' | xargs)
        v6=$(ip -n "$n" -6 -o addr show dev eth0 scope link 2>/dev/null | awk '{print $4}' | xargs)
        pid=$(cat "$d/holder.pid" 2>/dev/null || echo '?')
        printf '  %-8s netns %-12s eth0 %s %s  holder %s dbus %s avahi %s%s\n' "$h" "$n" "${v4:-?}" "${v6:-?}" \
            "$pid" "$(cat "$d/dbus.pid" 2>/dev/null || echo '?')" "$(cat "$d/avahi.pid" 2>/dev/null || echo '?')" \
            "$(avahi_running_in "$h" && echo ' (avahi running)' || echo ' (avahi NOT answering)')"
        if ip netns exec "$n" nft list table inet "$NFT_TABLE" >/dev/null 2>&1; then
            ip netns exec "$n" nft list table inet "$NFT_TABLE" |
                grep -E 'elements|counter' | sed -e 's/^[[:space:]]*/      block: /'
        fi
    done
}

# ---------------------------------------------------------------- addresses, exec

addr_of() {  # host [4|6]
    local n
    n=$(ns_of "$1")
    host_index "$1" >/dev/null
    case ${2:-4} in
        4) ip -n "$n" -4 -o addr show dev eth0 | awk '{split($4, a, "/"); print a[1]}' ;;
        6) ip -n "$n" -6 -o addr show dev eth0 scope link | awk '{split($4, a, "/"); print a[1]}' ;;
        *) die "addr: family is 4 or 6" ;;
    esac
}

cmd_exec() {
    (($# >= 2)) || die "usage: $0 exec HOST CMD [ARG...]"
    local h=$1 pid; shift
    host_index "$h" >/dev/null
    pid=$(holder_pid "$h")
    exec nsenter -t "$pid" -n -m --wd="$PWD" -- "$@"
}

# ---------------------------------------------------------------- mDNS blocking

nft_in() {  # host args... (nft inside the host's netns)
    command -v nft >/dev/null || die "nft not found: apt-get install nftables (scripts/setup.sh)"
    ip netns exec "$(ns_of "$1")" nft "${@:2}"
}

ensure_table() {  # host
    nft_in "$1" list table inet "$NFT_TABLE" >/dev/null 2>&1 && return 0
    nft_in "$1" -f - <<NFT
table inet $NFT_TABLE {
    comment "scripts/lan.sh block-mdns"
    set peers4 { type ipv4_addr; }
    set peers6 { type ipv6_addr; }
    chain in {
        type filter hook input priority filter; policy accept;
        ip saddr @peers4 udp sport 5353 counter drop
        ip saddr @peers4 udp dport 5353 counter drop
        ip6 saddr @peers6 udp sport 5353 counter drop
        ip6 saddr @peers6 udp dport 5353 counter drop
    }
    chain out {
        type filter hook output priority filter; policy accept;
        ip daddr @peers4 udp sport 5353 counter drop
        ip daddr @peers4 udp dport 5353 counter drop
        ip6 daddr @peers6 udp sport 5353 counter drop
        ip6 daddr @peers6 udp dport 5353 counter drop
    }
}
NFT
}

cmd_block() {
    (($# == 1 || $# == 2)) || die "usage: $0 block-mdns HOST [PEER]"
    local h=$1 p=${2:-} v4 v6
    host_index "$h" >/dev/null
    ensure_table "$h"
    if [[ -z $p ]]; then
        nft_in "$h" list chain inet "$NFT_TABLE" in | grep -q 'comment "all"' && { say "$h: all mDNS already blocked"; return 0; }
        nft_in "$h" add rule inet "$NFT_TABLE" in udp dport 5353 counter drop comment '"all"'
        nft_in "$h" add rule inet "$NFT_TABLE" in udp sport 5353 counter drop comment '"all"'
        nft_in "$h" add rule inet "$NFT_TABLE" out udp dport 5353 counter drop comment '"all"'
        nft_in "$h" add rule inet "$NFT_TABLE" out udp sport 5353 counter drop comment '"all"'
        say "$h: ALL mDNS (UDP 5353, any address incl. 224.0.0.251 and ff02::fb) dropped in and out"
        return 0
    fi
    [[ $p != "$h" ]] || die "a host cannot block itself"
    host_index "$p" >/dev/null
    v4=$(addr_of "$p" 4); v6=$(addr_of "$p" 6)
    [[ -n $v4 && -n $v6 ]] || die "could not read $p's addresses"
    nft_in "$h" add element inet "$NFT_TABLE" peers4 "{ $v4 }"
    nft_in "$h" add element inet "$NFT_TABLE" peers6 "{ $v6 }"
    say "$h: mDNS (UDP 5353) from/to $p ($v4, $v6) dropped in $h's netns (one-way view: add \`block-mdns $p $h\` to cut both sides)"
}

cmd_unblock() {
    (($# == 1 || $# == 2)) || die "usage: $0 unblock-mdns HOST [PEER]"
    local h=$1 p=${2:-} v4 v6
    host_index "$h" >/dev/null
    if ! nft_in "$h" list table inet "$NFT_TABLE" >/dev/null 2>&1; then
        say "$h: nothing blocked"; return 0
    fi
    if [[ -z $p ]]; then
        nft_in "$h" delete table inet "$NFT_TABLE"
        say "$h: every mDNS block removed"
        return 0
    fi
    host_index "$p" >/dev/null
    v4=$(addr_of "$p" 4); v6=$(addr_of "$p" 6)
    nft_in "$h" delete element inet "$NFT_TABLE" peers4 "{ $v4 }" 2>/dev/null || true
    nft_in "$h" delete element inet "$NFT_TABLE" peers6 "{ $v6 }" 2>/dev/null || true
    say "$h: mDNS from/to $p allowed again"
}

# ---------------------------------------------------------------- gc

cmd_gc() {
    local dir name pid start now
    [[ -d $STATE_ROOT ]] || return 0
    for dir in "$STATE_ROOT"/*/; do
        [[ -f $dir/owner ]] || continue
        name=$(basename "$dir")
        read -r pid start <"$dir/owner" || continue
        now=$(proc_start_time "$pid" 2>/dev/null || true)
        if ! alive "$pid" || [[ $now != "$start" ]]; then
            echo "lan: owner $pid of LAN $name is gone: removing it" >&2
            LAN_NAME=$name "$SELF" down || true
        fi
    done
}

usage() {
    sed -n '2,/^set -e/p' "$SELF" | sed -e '/^set -e/d' -e 's/^# \{0,1\}//'
}

case ${1:-} in
    up) shift; cmd_up "$@" ;;
    down) cmd_down ;;
    status) cmd_status ;;
    exec) shift; cmd_exec "$@" ;;
    addr) shift; (($# >= 1)) || die "usage: $0 addr HOST [4|6]"; addr_of "$@" ;;
    block-mdns) shift; cmd_block "$@" ;;
    unblock-mdns) shift; cmd_unblock "$@" ;;
    gc) cmd_gc ;;
    _holder) shift; holder_main "$@" ;;
    -h | --help | help) usage ;;
    *) usage >&2; exit 2 ;;
esac
