#!/usr/bin/env bash
# GSLB benchmark: dnsperf against openltm's GSLB listener for three wide
# IPs (round-robin, topology, LDNS persistence), side by side with gdnsd
# and PowerDNS (bind backend) serving a name of their own zone. Every
# answer holds the same four A records (openltm: a pool of four virtual
# servers with max-answers-returned 4).
#
# Each round runs every target once, in turn (the starting target rotates
# from round to round), in two phases:
#   max   dnsperf at full speed: queries/s, and the server's CPU time
#         per query (utime+stime from /proc over the run)
#   fixed dnsperf at RATE queries/s: latency percentiles (from dnsperf's
#         per-query report) and CPU time per query at that rate
# and the table gives the medians over the rounds.
#
#   bash bench/gslb.sh                    # 5 rounds of 5 s per phase
#   ROUNDS=7 DURATION=10 RATE=20000 bash bench/gslb.sh
#   CLIENTS=8 OUTSTANDING=200 bash bench/gslb.sh   # dnsperf -c / -q
#   SERVER_CPUS=1 PEER_CPUS=0 bash bench/gslb.sh   # servers pinned (taskset)
#   VERBOSE=1 bash bench/gslb.sh          # every run's figures after each round
#   TARGETS="openltm-rr gdnsd powerdns" bash bench/gslb.sh   # only these targets
#   BASELINE_LTMD=/tmp/ltmd-before bash bench/gslb.sh  # also that ltmd build
#                                         # (targets baseline-rr, baseline-topology, baseline-persist), for A/B in one run
#   CLIENTS=64 THREADS=4 OUTSTANDING=200 bash bench/gslb.sh  # many client sockets
#                                         # (answers rarely share a requester)
#   HOLD=1 bash bench/gslb.sh             # set the servers up, print their addresses
#                                         # and pids, and wait (profiling by hand)
#   PERF=openltm-rr bash bench/gslb.sh    # perf record that target's server in its
#                                         # first full-speed run (into PERF_OUT, default /tmp/gslb-perf.data)
#
# Installs dnsperf, gdnsd, pdns-server and pdns-backend-bind with apt-get
# when they are missing. Everything listens on 127.32.0.0/24.
set -uo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5}
RATE=${RATE:-10000}
CLIENTS=${CLIENTS:-4}
OUTSTANDING=${OUTSTANDING:-100}
THREADS=${THREADS:-$CLIENTS}
NET=127.32.0
LDNS=$NET.100
PORT=5300

need=()
command -v dnsperf >/dev/null || need+=(dnsperf)
command -v gdnsd >/dev/null || [ -x /usr/sbin/gdnsd ] || need+=(gdnsd)
command -v pdns_server >/dev/null || [ -x /usr/sbin/pdns_server ] || need+=(pdns-server)
[ -e /usr/lib/x86_64-linux-gnu/pdns/libbindbackend.so ] || ls /usr/lib/*/pdns/libbindbackend.so >/dev/null 2>&1 || need+=(pdns-backend-bind)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" != 0 ] && SUDO=sudo
  $SUDO apt-get install -y "${need[@]}" >/dev/null || { echo "could not install ${need[*]}" >&2; exit 1; }
fi
PATH=$PATH:/usr/sbin

. bench/lib.sh # the script runs from the project root (cd above)

pin_cpus

# openltm
go build -o "$work" ./cmd/ltmd ./cmd/tmsh ./cmd/tcpkit || exit 1
export OPENLTM_SOCKET=$work/ltmd.sock OPENLTM_STATE_DIR=$work/state
${srv[@]+"${srv[@]}"} "$work/ltmd" --state-dir "$work/state" --socket "$work/ltmd.sock" >"$work/ltmd.log" 2>&1 &
ltmd_pid=$!
pids+=($ltmd_pid)
for i in $(seq 50); do [ -S "$work/ltmd.sock" ] && break; sleep 0.1; done
members() {
  local i
  for i in 1 2 3 4; do echo "        /Common/lc:vs$i { member-order $i }"; done
}
pool() { # name mode
  cat <<EOF
gtm pool a /Common/$1 {
    load-balancing-mode $2
    alternate-mode round-robin
    max-answers-returned 4
    members {
$(members)
    }
}
EOF
}
cat >"$work/gtm.conf" <<EOF
gtm datacenter /Common/dc1 { }
gtm datacenter /Common/dc2 { }
gtm server /Common/lc {
    datacenter /Common/dc1
    addresses { $NET.1 { device-name lc } }
    product generic-host
    virtual-servers {
        vs1 { destination 10.0.0.1:80 }
        vs2 { destination 10.0.0.2:80 }
        vs3 { destination 10.0.0.3:80 }
        vs4 { destination 10.0.0.4:80 }
    }
}
$(pool rr_pool round-robin)
$(pool topo_pool topology)
$(pool persist_pool round-robin)
gtm wideip a /Common/rr.example.com { pools { /Common/rr_pool { order 0 } } }
gtm wideip a /Common/topo.example.com { pools { /Common/topo_pool { order 0 } } }
gtm wideip a /Common/persist.example.com {
    persistence enabled
    ttl-persistence 3600
    pools { /Common/persist_pool { order 0 } }
}
gtm topology ldns: subnet 10.9.0.0/16 server: subnet 10.0.0.1/32 { score 50 }
gtm topology ldns: subnet $NET.0/24 server: subnet 10.0.0.0/24 { score 100 }
gtm listener /Common/bench_udp {
    address $NET.10
    port $PORT
    ip-protocol udp
}
gtm zone /Common/example.com {
    definition {
\$TTL 30
@       IN SOA ns1.example.com. hostmaster.example.com. 1 3600 600 86400 30
@       IN NS  ns1
ns1     IN A   $NET.10
    }
}
EOF
"$work/tmsh" -c "load sys config merge file $work/gtm.conf" || { cat "$work/ltmd.log"; exit 1; }

# A second ltmd, another build, on its own address: A/B in the same run.
if [ -n "${BASELINE_LTMD:-}" ]; then
  mkdir -p "$work/base"
  ${srv[@]+"${srv[@]}"} "$BASELINE_LTMD" --state-dir "$work/base/state" --socket "$work/base/ltmd.sock" >"$work/base.log" 2>&1 &
  base_pid=$!
  pids+=($base_pid)
  for i in $(seq 50); do [ -S "$work/base/ltmd.sock" ] && break; sleep 0.1; done
  sed "s/address $NET.10\$/address $NET.13/" "$work/gtm.conf" >"$work/base/gtm.conf"
  OPENLTM_SOCKET=$work/base/ltmd.sock OPENLTM_STATE_DIR=$work/base/state \
    "$work/tmsh" -c "load sys config merge file $work/base/gtm.conf" || { cat "$work/base.log"; exit 1; }
fi

# gdnsd
mkdir -p "$work/gdnsd/zones" "$work/gdnsd/run" "$work/gdnsd/state"
cat >"$work/gdnsd/config" <<EOF
options => {
  listen => [ $NET.11 ]
  dns_port => $PORT
  udp_threads => $threads
  tcp_threads => 1
  run_dir => $work/gdnsd/run
  state_dir => $work/gdnsd/state
}
EOF
zone() { # ns address
  cat <<EOF
\$TTL 30
@       IN SOA ns1.example.com. hostmaster.example.com. 1 3600 600 86400 30
@       IN NS  ns1
ns1     IN A   $1
www     IN A   10.0.0.1
www     IN A   10.0.0.2
www     IN A   10.0.0.3
www     IN A   10.0.0.4
EOF
}
zone $NET.11 >"$work/gdnsd/zones/example.com"
${srv[@]+"${srv[@]}"} gdnsd -c "$work/gdnsd" start >"$work/gdnsd.log" 2>&1 &
gdnsd_pid=$!
pids+=($gdnsd_pid)

# PowerDNS
mkdir -p "$work/pdns"
zone $NET.12 >"$work/pdns/example.com.zone"
echo "zone \"example.com\" { type master; file \"$work/pdns/example.com.zone\"; };" >"$work/pdns/named.conf"
${srv[@]+"${srv[@]}"} pdns_server --no-config --daemon=no --guardian=no --disable-syslog --write-pid=no \
  --socket-dir="$work/pdns" --launch=bind --bind-config="$work/pdns/named.conf" \
  --local-address=$NET.12 --local-port=$PORT --reuseport=yes --receiver-threads="$threads" \
  --loglevel=3 >"$work/pdns.log" 2>&1 &
pdns_pid=$!
pids+=($pdns_pid)

targets=("openltm-rr $NET.10 rr.example.com $ltmd_pid"
  "openltm-topology $NET.10 topo.example.com $ltmd_pid"
  "openltm-persist $NET.10 persist.example.com $ltmd_pid"
  "gdnsd $NET.11 www.example.com $gdnsd_pid"
  "powerdns $NET.12 www.example.com $pdns_pid")
[ -n "${BASELINE_LTMD:-}" ] && targets+=("baseline-rr $NET.13 rr.example.com $base_pid"
  "baseline-topology $NET.13 topo.example.com $base_pid"
  "baseline-persist $NET.13 persist.example.com $base_pid")
if [ -n "${TARGETS:-}" ]; then
  keep=()
  for t in "${targets[@]}"; do
    for w in $TARGETS; do [ "${t%% *}" = "$w" ] && keep+=("$t"); done
  done
  [ ${#keep[@]} -gt 0 ] || { echo "TARGETS names none of: openltm-rr openltm-topology openltm-persist gdnsd powerdns baseline-rr baseline-topology baseline-persist" >&2; exit 1; }
  targets=("${keep[@]}")
fi

# Every target must answer with four A records before anything is timed.
for t in "${targets[@]}"; do
  read -r name addr qname pid <<<"$t"
  ok=""
  for i in $(seq 50); do
    ans=$("$work/tcpkit" ldns -addr $LDNS -port 0 -ask "$qname" -server "$addr:$PORT" 2>/dev/null | grep -o ' IN A ' | wc -l)
    if [ "$ans" = 4 ]; then ok=1; break; fi
    sleep 0.2
  done
  [ -z "$ok" ] && { echo "$name ($addr) does not answer $qname with 4 A records (answers: ${ans:-none})" >&2; tail -5 "$work"/*.log >&2; exit 1; }
done

if [ -n "${HOLD:-}" ]; then
  for t in "${targets[@]}"; do echo "target $t (name addr:$PORT qname pid); dnsperf -a $LDNS"; done
  echo "holding; interrupt to stop"
  while sleep 3600; do :; done
fi

cpu() { # pid -> utime+stime in clock ticks
  awk '{print $14 + $15}' "/proc/$1/stat"
}
hz=$(getconf CLK_TCK)
run() { # name addr qname pid phase -> "qps cpu_us_per_query p50 p90 p99 (ms)"
  local name=$1 addr=$2 qname=$3 pid=$4 phase=$5 out c0 c1
  yes "$qname A" | head -1000 >"$work/q.txt"
  c0=$(cpu "$pid")
  local perfpid=""
  if [ "$phase" = max ] && [ "${PERF:-}" = "$name" ]; then
    perf record -g -o "${PERF_OUT:-/tmp/gslb-perf.data}" -p "$pid" -- sleep "$DURATION" >/dev/null 2>&1 &
    perfpid=$!
    PERF=""
  fi
  if [ "$phase" = max ]; then
    out=$(${peer[@]+"${peer[@]}"} dnsperf -s "$addr" -p $PORT -a $LDNS -d "$work/q.txt" -l "$DURATION" \
      -c "$CLIENTS" -q "$OUTSTANDING" -T "$THREADS" 2>&1)
  else
    out=$(${peer[@]+"${peer[@]}"} dnsperf -s "$addr" -p $PORT -a $LDNS -d "$work/q.txt" -l "$DURATION" \
      -c "$CLIENTS" -q "$OUTSTANDING" -T "$THREADS" -Q "$RATE" -v 2>&1)
  fi
  c1=$(cpu "$pid")
  [ -n "$perfpid" ] && wait "$perfpid"
  local qps done cpq p50=- p90=- p99=-
  qps=$(awk '/Queries per second:/ {print int($4)}' <<<"$out")
  done=$(awk '/Queries completed:/ {print $3}' <<<"$out")
  cpq=$(awk -v c="$((c1 - c0))" -v hz="$hz" -v n="${done:-0}" 'BEGIN {printf "%.2f", (n > 0 ? c / hz * 1e6 / n : 0)}')
  if [ "$phase" = fixed ]; then
    # "> NOERROR www.example.com A 0.000123": the last field is seconds.
    read -r p50 p90 p99 < <(awk '/^> NOERROR/ {print $NF * 1000}' <<<"$out" | sort -g |
      awk '{v[NR] = $1} END {printf "%.3f %.3f %.3f\n", v[int(NR*0.5)+1], v[int(NR*0.9)+1], v[int(NR*0.99)+1]}')
  fi
  echo "${qps:-0} $cpq $p50 $p90 $p99"
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

declare -A res
nt=${#targets[@]}
for r in $(seq "$ROUNDS"); do
  for k in $(seq 0 $((nt - 1))); do
    t=${targets[$(((k + r) % nt))]}
    read -r name addr qname pid <<<"$t"
    res[$name max]+="$(run "$name" "$addr" "$qname" "$pid" max)"$'\n'
    res[$name fixed]+="$(run "$name" "$addr" "$qname" "$pid" fixed)"$'\n'
  done
  echo "round $r of $ROUNDS done" >&2
  [ -n "${VERBOSE:-}" ] && for k in "${!res[@]}"; do echo "$k: ${res[$k]}" >&2; done
done

col() { # name phase field
  grep -v '^$' <<<"${res[$1 $2]}" | awk -v f="$3" '{print $f}' | median
}
best=0
for t in gdnsd powerdns; do
  [ -n "${res[$t max]:-}" ] || continue
  q=$(col "$t" max 1)
  [ "${q%.*}" -gt "$best" ] && best=${q%.*}
done
[ "$best" -gt 0 ] || best=1
echo "medians of $ROUNDS rounds; ${DURATION}s per run; dnsperf -c $CLIENTS -T $THREADS -q $OUTSTANDING; fixed rate $RATE q/s; $threads server threads"
printf "%-17s %9s %6s %12s %12s %9s %9s %9s\n" target "queries/s" ratio "us-cpu/q" "us-cpu/q@$RATE" "p50 ms" "p90 ms" "p99 ms"
for t in "${targets[@]}"; do
  read -r name _ <<<"$t"
  q=$(col "$name" max 1)
  printf "%-17s %9.0f %6.2f %12.2f %12.2f %9.3f %9.3f %9.3f\n" "$name" "$q" "$(echo "$q / $best" | bc -l)" \
    "$(col "$name" max 2)" "$(col "$name" fixed 2)" "$(col "$name" fixed 3)" "$(col "$name" fixed 4)" "$(col "$name" fixed 5)"
done
echo "(ratio: queries/s over the faster of gdnsd and PowerDNS)"
