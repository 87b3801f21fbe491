#!/usr/bin/env bash
# Message-based load balancing benchmark: messages per second through an
# ltmd MBLB virtual (seed 000's rule with one-read messages; the mblb
# profile's length framing; length framing with OneConnect), straight to
# one member, and through HAProxy in tcp mode (which balances connections
# only), for 64-byte and 16 KiB messages and 1 to 64 synchronous clients.
# The members and the load are tcpkit (server -frame length, load).
#
#   bash bench/mblb.sh                 # 3 s per run
#   DURATION=10 CLIENTS="1 8 64" SIZES="64 16384" bash bench/mblb.sh
#   ROUNDS=5 bash bench/mblb.sh        # median of 5 rounds, order alternating
#   BUSY_POLL=0 bash bench/mblb.sh     # ltmd --busy-poll (default auto; or hold)
#   HAPROXY_BUSY=1 bash bench/mblb.sh  # HAProxy with busy-polling too
#   ONE_MEMBER=1 bash bench/mblb.sh  # and length framing to one member
#       # only (row "one"): the work HAProxy's connection balancing does
#       # at one client, to tell the proxy's cost from what balancing
#       # each message over two members costs the members and the client
#   PROXY_CPUS=1 PEER_CPUS=0 bash bench/mblb.sh
#       # the proxy (ltmd or HAProxy) on its own CPUs, the clients and
#       # members on the others (taskset lists), as an appliance runs;
#       # HAProxy gets one thread per proxy CPU
#
# Everything listens on 127.31.0.0/24 (NET=127.x.y to move it). HAProxy is
# used when installed.
set -uo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-3}
ROUNDS=${ROUNDS:-1}
CLIENTS=${CLIENTS:-"1 8 64"}
SIZES=${SIZES:-"64 16384"}
NET=${NET:-127.31.0}
. bench/lib.sh # the script runs from the project root (cd above)
go build -o "$work" ./cmd/ltmd ./cmd/tmsh ./cmd/tcpkit || exit 1
# peer and proxy prefix the commands with their CPU sets, if any.
peer=() proxy=() nbthread=""
if [ -n "${PROXY_CPUS:-}" ] || [ -n "${PEER_CPUS:-}" ]; then
  command -v taskset >/dev/null || { echo "PROXY_CPUS/PEER_CPUS need taskset" >&2; exit 1; }
  [ -n "${PEER_CPUS:-}" ] && peer=(taskset -c "$PEER_CPUS")
  if [ -n "${PROXY_CPUS:-}" ]; then
    proxy=(taskset -c "$PROXY_CPUS")
    nbthread="  nbthread $(taskset -c "$PROXY_CPUS" nproc)"
  fi
fi
export PATH=$work:$PATH OPENLTM_SOCKET=$work/ltmd.sock OPENLTM_STATE_DIR=$work/state
"${peer[@]}" tcpkit server -listen $NET.2:9000 -label S1 -frame length -quiet >/dev/null & pids+=($!)
member_pids=($!)
"${peer[@]}" tcpkit server -listen $NET.2:9001 -label S2 -frame length -quiet >/dev/null & pids+=($!)
member_pids+=($!)
"${proxy[@]}" ltmd --busy-poll "${BUSY_POLL:-auto}" --state-dir "$work/state" --socket "$work/ltmd.sock" >"$work/ltmd.log" 2>&1 & pids+=($!)
ltmd_pid=$!
for i in $(seq 50); do [ -S "$work/ltmd.sock" ] && break; sleep 0.1; done
tmsh -f /dev/stdin <<TMSH || exit 1
create ltm rule mblb-basic {
when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA { TCP::release; TCP::notify request; TCP::collect }
when SERVER_CONNECTED { TCP::collect }
when SERVER_DATA { TCP::release; TCP::notify response; TCP::collect }
}
create ltm profile mblb mblb_length framing length
create ltm profile one-connect oc8 max-size 8
create ltm pool p slow-ramp-time 0 members add { $NET.2:9000 $NET.2:9001 }
create ltm virtual v_rule destination $NET.10:9000 source-address-translation { type automap } pool p profiles replace-all-with { mblb { } tcp { } } rules { mblb-basic }
create ltm virtual v_len destination $NET.11:9000 source-address-translation { type automap } pool p profiles replace-all-with { mblb_length { } tcp { } }
create ltm pool p_one slow-ramp-time 0 members add { $NET.2:9000 }
create ltm virtual v_one destination $NET.14:9000 source-address-translation { type automap } pool p_one profiles replace-all-with { mblb_length { } tcp { } }
create ltm virtual v_oc destination $NET.12:9000 source-address-translation { type automap } pool p profiles replace-all-with { mblb_length { } tcp { } oc8 { } }
TMSH
targets=("direct $NET.2:9000" "rule $NET.10:9000" "length $NET.11:9000" "oneconnect $NET.12:9000")
[ "${ONE_MEMBER:-0}" = 1 ] && targets+=("one $NET.14:9000")
if command -v haproxy >/dev/null; then
  cat >"$work/haproxy.cfg" <<HAP
global
  maxconn 1000
$nbthread
$([ "${HAPROXY_BUSY:-0}" = 1 ] && echo "  busy-polling")
defaults
  mode tcp
  timeout connect 5s
  timeout client 60s
  timeout server 60s
listen mb
  bind $NET.13:9000
  balance roundrobin
  server s1 $NET.2:9000
  server s2 $NET.2:9001
HAP
  "${proxy[@]}" haproxy -f "$work/haproxy.cfg" -db >/dev/null 2>&1 & pids+=($!)
  haproxy_pid=$!
  targets+=("haproxy $NET.13:9000")
fi
sleep 0.5
# Each cell runs every target ROUNDS times, the order reversed every other
# round so that a drift in the machine's load favours none; it prints the
# median rate, its ratio to going direct and to HAProxy, and the median CPU
# spent per message (µs, user + system of whole processes) by the proxy,
# by the two members together and by the load generator. On a small
# machine that all of them share, the peers' CPU counts as much as the
# proxy's: balancing each message (ltmd without OneConnect) gives every
# client a connection to each member, which costs the members more than
# one connection per client does (HAProxy).
members_ticks() { echo $(($(cpu_ticks "${member_pids[0]}") + $(cpu_ticks "${member_pids[1]}"))); }
TIMEFORMAT='%3U %3S'
printf "%-11s %6s %7s %12s %8s %8s %10s %10s %10s\n" target size clients msg/s /direct /haproxy "cpu-us/msg" "members-us" "load-us"
declare -A RATE CPU MCPU LCPU
for size in $SIZES; do
  for n in $CLIENTS; do
    for round in $(seq "$ROUNDS"); do
      order=("${targets[@]}")
      if [ $((round % 2)) = 0 ]; then
        order=()
        for ((k = ${#targets[@]} - 1; k >= 0; k--)); do order+=("${targets[k]}"); done
      fi
      for t in "${order[@]}"; do
        name=${t%% *}; addr=${t#* }
        # The seed's rule takes one read for one message: only sizes that
        # fit one read are meaningful there.
        if [ "$name" = rule ] && [ "$size" -gt 16384 ]; then continue; fi
        pid=$ltmd_pid
        case $name in direct) pid="" ;; haproxy) pid=$haproxy_pid ;; esac
        t0=0; [ -n "$pid" ] && t0=$(cpu_ticks "$pid")
        m0=$(members_ticks)
        out=$( { time "${peer[@]}" tcpkit load -connect "$addr" -clients "$n" -size "$size" -duration "${DURATION}s" 2>&1; } 2>"$work/load.time")
        t1=0; [ -n "$pid" ] && t1=$(cpu_ticks "$pid")
        m1=$(members_ticks)
        rate=$(sed -n 's/.* \([0-9]*\) msg\/s$/\1/p' <<<"$out")
        msgs=$(sed -n 's/.* \([0-9]*\) messages in .*/\1/p' <<<"$out")
        [ -z "$rate" ] && { echo "$name: $out" >&2; continue; }
        RATE[$name]+="$rate "
        [ -n "$pid" ] && CPU[$name]+="$(cpu_us $((t1 - t0)) "$msgs") "
        MCPU[$name]+="$(cpu_us $((m1 - m0)) "$msgs") "
        LCPU[$name]+="$(awk -v n="$msgs" '{ if (n > 0) printf "%.1f", ($1 + $2) * 1e6 / n; else print "n/a" }' "$work/load.time") "
      done
    done
    med() { tr ' ' '\n' <<<"${1:-}" | grep . | median; }
    direct=$(med "${RATE[direct]:-}") hap=$(med "${RATE[haproxy]:-}")
    for t in "${targets[@]}"; do
      name=${t%% *}
      [ -z "${RATE[$name]:-}" ] && continue
      rate=$(med "${RATE[$name]}")
      cpu="-"; [ -n "${CPU[$name]:-}" ] && cpu=$(med "${CPU[$name]}")
      printf "%-11s %6s %7s %12s %8s %8s %10s %10s %10s\n" "$name" "$size" "$n" "$rate" \
        "$(awk -v a="$rate" -v b="$direct" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')" \
        "$(awk -v a="$rate" -v b="${hap:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')" "$cpu" \
        "$(med "${MCPU[$name]}")" "$(med "${LCPU[$name]}")"
    done
    RATE=() CPU=() MCPU=() LCPU=()
  done
done
echo "(median of $ROUNDS round(s) of ${DURATION}s; load average $(cut -d' ' -f1-3 /proc/loadavg))"
