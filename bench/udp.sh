#!/usr/bin/env bash
# UDP virtual server benchmark: dnsperf through an openltm UDP virtual and
# through nginx's stream UDP proxy, side by side, to the same two DNS
# servers (gdnsd), plus dnsperf straight to one of them for scale. Two
# modes, each proxy set up alike:
#   flow      one member per client address and port, kept while active
#             (openltm: the udp profile; nginx: a UDP session per client,
#             proxy_timeout 60s)
#   datagram  every query balanced on its own (openltm: a udp profile with
#             datagram-load-balancing enabled; nginx: proxy_responses 1)
#
# Each round runs every target once, in turn (the starting target rotates
# from round to round), dnsperf at full speed: queries/s, and the proxy's
# CPU time per query (utime+stime from /proc over the run); the table gives
# the medians over the rounds and the ratio openltm / nginx per mode.
#
#   bash bench/udp.sh                       # 5 rounds of 5 s
#   ROUNDS=7 DURATION=10 bash bench/udp.sh
#   CLIENTS=8 OUTSTANDING=200 bash bench/udp.sh   # dnsperf -c / -q
#   SERVER_CPUS=1 PEER_CPUS=0 bash bench/udp.sh   # proxies pinned (taskset)
#   HOLD=1 bash bench/udp.sh                # set everything up, print the targets
#                                           # and pids, and wait (profiling by hand)
#
# Installs dnsperf, gdnsd and nginx's stream module (libnginx-mod-stream)
# with apt-get when they are missing. Everything listens on 127.33.0.0/24.
# Allocations per datagram on openltm's forwarding path:
#   go test -run XXX -bench UDP -benchmem ./dataplane
set -uo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5}
CLIENTS=${CLIENTS:-4}
OUTSTANDING=${OUTSTANDING:-100}
NET=127.33.0
PORT=5301
DNSPORT=5300

need=()
command -v dnsperf >/dev/null || need+=(dnsperf)
command -v gdnsd >/dev/null || [ -x /usr/sbin/gdnsd ] || need+=(gdnsd)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx)
stream_mod=$(ls /usr/lib/nginx/modules/ngx_stream_module.so /usr/lib/*/nginx/modules/ngx_stream_module.so 2>/dev/null | head -1)
[ -z "$stream_mod" ] && need+=(libnginx-mod-stream)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" != 0 ] && SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${need[@]}" >/dev/null || { echo "could not install ${need[*]}" >&2; exit 1; }
  stream_mod=$(ls /usr/lib/nginx/modules/ngx_stream_module.so /usr/lib/*/nginx/modules/ngx_stream_module.so 2>/dev/null | head -1)
fi
PATH=$PATH:/usr/sbin

. bench/lib.sh # the script runs from the project root (cd above)

pin_cpus

# The DNS servers: gdnsd on two addresses, one zone.
mkdir -p "$work/gdnsd/zones" "$work/gdnsd/run" "$work/gdnsd/state"
cat >"$work/gdnsd/config" <<EOF
options => {
  listen => [ $NET.11, $NET.12 ]
  dns_port => $DNSPORT
  udp_threads => $threads
  tcp_threads => 1
  run_dir => $work/gdnsd/run
  state_dir => $work/gdnsd/state
}
EOF
cat >"$work/gdnsd/zones/example.com" <<EOF
\$TTL 30
@       IN SOA ns1.example.com. hostmaster.example.com. 1 3600 600 86400 30
@       IN NS  ns1
ns1     IN A   $NET.11
www     IN A   10.0.0.1
EOF
gdnsd -c "$work/gdnsd" start >"$work/gdnsd.log" 2>&1 &
pids+=($!)

# openltm: a per-flow virtual and a datagram-balanced one.
go build -o "$work" ./cmd/ltmd ./cmd/tmsh ./cmd/tcpkit || exit 1
export OPENLTM_SOCKET=$work/ltmd.sock OPENLTM_STATE_DIR=$work/state
${srv[@]+"${srv[@]}"} "$work/ltmd" --state-dir "$work/state" --socket "$work/ltmd.sock" >"$work/ltmd.log" 2>&1 &
ltmd_pid=$!
pids+=($ltmd_pid)
for i in $(seq 50); do [ -S "$work/ltmd.sock" ] && break; sleep 0.1; done
cat >"$work/ltm.tmsh" <<EOF
create ltm pool dns_pool members add { $NET.11:$DNSPORT $NET.12:$DNSPORT }
create ltm profile udp udp_dgram defaults-from udp datagram-load-balancing enabled
create ltm virtual dns_flow destination $NET.1:$PORT ip-protocol udp pool dns_pool profiles replace-all-with { udp }
create ltm virtual dns_dgram destination $NET.2:$PORT ip-protocol udp pool dns_pool profiles replace-all-with { udp_dgram }
EOF
"$work/tmsh" -f "$work/ltm.tmsh" || { cat "$work/ltmd.log"; exit 1; }

# nginx: the same two modes with its stream module.
mkdir -p "$work/nginx"
cat >"$work/nginx/nginx.conf" <<EOF
load_module $stream_mod;
daemon off;
master_process on;
worker_processes $threads;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 65536; }
stream {
    upstream dns { server $NET.11:$DNSPORT; server $NET.12:$DNSPORT; }
    server { listen $NET.3:$PORT udp reuseport; proxy_pass dns; proxy_timeout 60s; }
    server { listen $NET.4:$PORT udp reuseport; proxy_pass dns; proxy_responses 1; proxy_timeout 60s; }
}
EOF
${srv[@]+"${srv[@]}"} nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" >"$work/nginx.log" 2>&1 &
nginx_pid=$!
pids+=($nginx_pid)

targets=("openltm-flow $NET.1 $PORT $ltmd_pid"
  "nginx-flow $NET.3 $PORT $nginx_pid"
  "openltm-datagram $NET.2 $PORT $ltmd_pid"
  "nginx-datagram $NET.4 $PORT $nginx_pid"
  "direct $NET.11 $DNSPORT 0")

# Every target must answer before anything is timed.
for t in "${targets[@]}"; do
  read -r name addr port pid <<<"$t"
  ok=""
  for i in $(seq 50); do
    if "$work/tcpkit" ldns -addr $NET.100 -port 0 -ask www.example.com -server "$addr:$port" 2>/dev/null | grep -q ' IN A '; then
      ok=1
      break
    fi
    sleep 0.2
  done
  [ -z "$ok" ] && { echo "$name ($addr:$port) does not answer" >&2; tail -5 "$work"/*.log "$work"/nginx/error.log >&2; exit 1; }
done

if [ -n "${HOLD:-}" ]; then
  for t in "${targets[@]}"; do echo "target $t (name addr port pid); dnsperf -a $NET.100"; done
  echo "holding; interrupt to stop"
  while sleep 3600; do :; done
fi

cpu() { # pid -> utime+stime of the process and its children (nginx's workers), in clock ticks
  local p total=0
  [ "$1" = 0 ] && { echo 0; return; }
  for p in $1 $(pgrep -P "$1"); do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo $total
}
hz=$(getconf CLK_TCK)
yes "www.example.com A" | head -1000 >"$work/q.txt"
run() { # addr port pid -> "qps cpu_us_per_query lost%"
  local addr=$1 port=$2 pid=$3 out c0 c1
  c0=$(cpu "$pid")
  out=$(${peer[@]+"${peer[@]}"} dnsperf -s "$addr" -p "$port" -a $NET.100 -d "$work/q.txt" -l "$DURATION" \
    -c "$CLIENTS" -q "$OUTSTANDING" -T "$CLIENTS" 2>&1)
  c1=$(cpu "$pid")
  local qps done lost cpq
  qps=$(awk '/Queries per second:/ {print int($4)}' <<<"$out")
  done=$(awk '/Queries completed:/ {print $3}' <<<"$out")
  lost=$(awk '/Queries lost:/ {gsub(/[()%]/, "", $4); print $4}' <<<"$out")
  cpq=$(awk -v c="$((c1 - c0))" -v hz="$hz" -v n="${done:-0}" 'BEGIN {printf "%.2f", (n > 0 ? c / hz * 1e6 / n : 0)}')
  echo "${qps:-0} $cpq ${lost:-0}"
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

declare -A res
nt=${#targets[@]}
for r in $(seq "$ROUNDS"); do
  for k in $(seq 0 $((nt - 1))); do
    read -r name addr port pid <<<"${targets[$(((k + r) % nt))]}"
    res[$name]+="$(run "$addr" "$port" "$pid")"$'\n'
  done
  echo "round $r of $ROUNDS done" >&2
  [ -n "${VERBOSE:-}" ] && for k in "${!res[@]}"; do echo "$k: ${res[$k]}" >&2; done
done

col() { # name field
  grep -v '^$' <<<"${res[$1]}" | awk -v f="$2" '{print $f}' | median
}
echo "medians of $ROUNDS rounds; ${DURATION}s per run; dnsperf -c $CLIENTS -q $OUTSTANDING; $threads proxy threads (nginx workers); load average $(cut -d' ' -f1 /proc/loadavg)"
printf "%-17s %9s %6s %9s %7s\n" target "queries/s" ratio "us-cpu/q" "lost%"
for t in "${targets[@]}"; do
  read -r name _ <<<"$t"
  q=$(col "$name" 1)
  ratio=-
  case $name in
  openltm-*) n=$(col "nginx-${name#openltm-}" 1); [ "${n%.*}" -gt 0 ] && ratio=$(printf "%.2f" "$(echo "$q / $n" | bc -l)") ;;
  esac
  printf "%-17s %9.0f %6s %9.2f %7s\n" "$name" "$q" "$ratio" "$(col "$name" 2)" "$(col "$name" 3)"
done
echo "(ratio: openltm over nginx in the same mode; us-cpu/q: the proxy's CPU time per answered query)"
