#!/usr/bin/env bash
# Side-by-side L4 benchmark: ltmd (configured with tmsh) vs HAProxy (Debian's 2.6)
# vs going direct, on the same two nginx backends, with wrk; keep-alive and a
# new connection per request. Prints requests/s and the ratios.
#
#   bash bench/run.sh            # 10 s per run
#   DURATION=30 CONNS=128 bash bench/run.sh
#   CONNS="1 2 8 64" ROUNDS=5 DURATION=5 bash bench/run.sh   # several cells
#   BUSY_POLL=0 bash bench/run.sh      # ltmd --busy-poll (default auto; or hold)
#   HAPROXY_BUSY=1 bash bench/run.sh   # HAProxy with busy-polling too
#   bash bench/run.sh http       # L7: HTTP virtuals vs HAProxy mode http
#   CASES="h2 plain" bash bench/run.sh http   # only those cases
#   HOLD=1 bash bench/run.sh     # set the L4 targets up, print them and their pids
#
# The http suite compares openltm's HTTP virtual with OneConnect against
# HAProxy 2.6 in `mode http` with `http-reuse safe`, on the same nginx
# backends, in four cases: plain, with cookie persistence (openltm's
# cookie profile, HAProxy's `cookie ... insert`), with a 10-line
# HTTP_REQUEST rule switching on host and URI and replacing a header
# (HAProxy: the same with ACLs and http-request set-header), and with the
# same routing as an ltm policy (against the same HAProxy ACLs), and
# compressing a 16 KiB page with gzip (the httpcompression profile;
# HAProxy's `compression algo gzip`), and HTTP/2 clients in cleartext
# (h2load -m 10, the http2 profile's default concurrent streams; an http2
# profile with activation-modes always, frames of up to 16384 bytes as
# HAProxy's tune.h2.max-frame-size, against HAProxy's `bind ... proto
# h2`; members HTTP/1.1 either way). The two
# alternate, ROUNDS times (default 5); it prints the median requests/s
# and p99 latency of each, their ratio, and the CPU time each proxy
# spent per request (user+system, all threads, from /proc).
#
# Installs haproxy, wrk and nginx-light with apt-get when they are missing;
# if that is impossible it says so and exits 0. Everything listens on
# 127.30.0.0/24 only.
set -uo pipefail
cd "$(dirname "$0")/.."

SUITE=${1:-l4}
DURATION=${DURATION:-10}
CONNS=${CONNS:-64}
THREADS=${THREADS:-2}
NET=${NET:-127.30.0}
B1=$NET.2:8080
B2=$NET.3:8080
HAP=$NET.10:80
LTM=$NET.11:80

need=()
command -v haproxy >/dev/null || need+=(haproxy)
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || need+=(nginx-light)
[ "$SUITE" = http ] && { command -v h2load >/dev/null || need+=(nghttp2-client); }
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${need[@]}"; } >/dev/null 2>&1 ||
    { echo "bench: cannot install ${need[*]}; skipping the benchmark"; exit 0; }
fi

. bench/lib.sh # the script runs from the project root (cd above)

# Backends: two nginx instances serving a 612-byte page.
nginx_backends 612 "$B1" "$B2"

cat >"$work/haproxy.cfg" <<EOF
global
  nbthread 2
$([ "${HAPROXY_BUSY:-0}" = 1 ] && echo "  busy-polling")
  maxconn 8000
defaults
  mode tcp
  timeout connect 5s
  timeout client 300s
  timeout server 300s
frontend fe
  bind $HAP
  default_backend be
backend be
  balance roundrobin
  server s1 $B1
  server s2 $B2
EOF
haproxy -f "$work/haproxy.cfg" -db >/dev/null 2>&1 &
pids+=($!)
haproxy_pid=$!

go build -o "$work/" ./cmd/ltmd ./cmd/tmsh || { echo "bench: build failed"; exit 1; }
"$work/ltmd" --busy-poll "${BUSY_POLL:-auto}" --state-dir "$work/state" --socket "$work/ltmd.sock" 2>"$work/ltmd.err" &
pids+=($!)
ltmd_pid=$!
for _ in $(seq 100); do [ -S "$work/ltmd.sock" ] && break; sleep 0.1; done
"$work/tmsh" --socket "$work/ltmd.sock" -c "create ltm pool bench_pool members add { $B1 $B2 }; create ltm virtual bench_vs destination $LTM pool bench_pool profiles replace-all-with { tcp { } }" ||
  { echo "bench: configuring ltmd failed"; cat "$work/ltmd.err"; exit 1; }
sleep 1

if [ -n "${HOLD:-}" ] && [ "$SUITE" != http ]; then
  echo "haproxy $HAP pid $haproxy_pid; ltmd $LTM pid $ltmd_pid; backends $B1 $B2 (nginx)"
  echo "holding; interrupt to stop"
  while sleep 3600; do :; done
fi

# rps TARGET [wrk args...]: requests per second of one wrk run.
rps() {
  local target=$1; shift
  wrk -t"$(( THREADS < CONNS ? THREADS : CONNS ))" -c"$CONNS" -d"${DURATION}s" "$@" "http://$target/" 2>/dev/null |
    awk '/Requests\/sec/ {printf "%d", $2}'
}

# rps_direct [wrk args...]: both backends at once, half the connections each,
# so going direct uses the same two nginx workers the proxies spread over.
rps_direct() {
  local half=$(( CONNS / 2 )) a b
  if [ "$half" = 0 ]; then # one connection: one backend
    wrk -t1 -c1 -d"${DURATION}s" "$@" "http://$B1/" 2>/dev/null | awk '/Requests\/sec/ {printf "%d", $2}'
    return
  fi
  a=$(mktemp -p "$work") b=$(mktemp -p "$work")
  wrk -t1 -c"$half" -d"${DURATION}s" "$@" "http://$B1/" 2>/dev/null >"$a" &
  wrk -t1 -c"$half" -d"${DURATION}s" "$@" "http://$B2/" 2>/dev/null >"$b"
  wait $!
  cat "$a" "$b" | awk '/Requests\/sec/ {s += $2} END {printf "%d", s}'
}

if [ "$SUITE" = http ]; then
  HAPH=$NET.20
  LTMH=$NET.21
  cat >"$work/haproxy_http.cfg" <<EOF
global
  nbthread 2
$([ "${HAPROXY_BUSY:-0}" = 1 ] && echo "  busy-polling")
  maxconn 8000
defaults
  mode http
  http-reuse safe
  timeout connect 5s
  timeout client 300s
  timeout server 300s
frontend plain
  bind $HAPH:80
  default_backend be
frontend cookie
  bind $HAPH:81
  default_backend be_cookie
frontend h2
  bind $HAPH:85 proto h2
  default_backend be
frontend compress
  bind $HAPH:84
  compression algo gzip
  compression type text/plain text/html
  default_backend be
frontend rule
  bind $HAPH:82
  bind $HAPH:83
  acl api hdr_beg(host) -i api.
  acl static path_beg /static/
  acl old path_beg /old/
  acl admin path_beg /admin
  http-request redirect location /new/ if old
  http-request deny deny_status 403 if admin
  http-request set-header X-Tag %[path]
  use_backend be if api
  use_backend be if static
  default_backend be
backend be
  balance roundrobin
  server s1 $B1
  server s2 $B2
backend be_cookie
  balance roundrobin
  cookie SRV insert indirect nocache
  server s1 $B1 cookie s1
  server s2 $B2 cookie s2
EOF
  haproxy -f "$work/haproxy_http.cfg" -db >/dev/null 2>&1 &
  pids+=($!)
  haph_pid=$!
  cat >"$work/http.tmsh" <<EOF
$(route10_tmsh "$B1" "$B2")
create ltm persistence cookie bench_cookie defaults-from cookie
create ltm virtual http_plain destination $LTMH:80 pool bench_pool profiles replace-all-with { tcp { } http { } oneconnect { } }
create ltm virtual http_cookie destination $LTMH:81 pool bench_pool profiles replace-all-with { tcp { } http { } oneconnect { } } persist replace-all-with { bench_cookie { default yes } }
create ltm virtual http_rule destination $LTMH:82 pool bench_pool rules { route10 } profiles replace-all-with { tcp { } http { } oneconnect { } }
$(route10_policy_tmsh)
create ltm virtual http_policy destination $LTMH:83 pool bench_pool policies replace-all-with { route10p } profiles replace-all-with { tcp { } http { } oneconnect { } }
create ltm profile http-compression bench_compress defaults-from httpcompression cpu-saver disabled
create ltm virtual http_compress destination $LTMH:84 pool bench_pool profiles replace-all-with { tcp { } http { } oneconnect { } bench_compress { } }
create ltm profile http2 bench_h2c activation-modes replace-all-with { always } frame-size 16384 write-size 32768
create ltm virtual http_h2 destination $LTMH:85 pool bench_pool profiles replace-all-with { tcp { } http { } oneconnect { } bench_h2c { } }
EOF
  # The compress case fetches a 16 KiB text page (nginx sends it as
  # text/plain) with Accept-Encoding: gzip; both proxies compress at
  # level 1 (HAProxy's default tune.comp.maxlevel, the httpcompression
  # profile's gzip-level); neither stops compressing under load (the
  # profile's cpu-saver disabled, HAProxy's maxcompcpuusage at its
  # default 100).
  i=0
  while [ "$(stat -c %s "$work/www/page.html" 2>/dev/null || echo 0)" -lt 16384 ]; do
    echo "<tr><td>member $i</td><td>10.1.$((i / 250)).$((i % 250)):8080</td><td>connections $(( (i * 37) % 1000 ))</td></tr>" >>"$work/www/page.html"
    i=$((i + 1))
  done
  "$work/tmsh" --socket "$work/ltmd.sock" -f "$work/http.tmsh" ||
    { echo "bench: configuring the http virtuals failed"; cat "$work/ltmd.err"; exit 1; }
  sleep 1
  # run TARGET PID: "req/s p99-ms cpu-us-per-request" of one wrk run
  # (--latency); the CPU is the proxy process's (PID), all its threads.
  # run TARGET PID [PATH [wrk args...]]
  run() {
    local before after target=$1 pid=$2 path=${3:-/}
    shift 2; [ $# -gt 0 ] && shift
    if [ "$path" = h2 ]; then
      # HTTP/2: h2load reports no percentiles; the latency is its mean.
      before=$(cpu_ticks "$pid")
      h2load -c"$CONNS" -m10 -t"$THREADS" -D"$DURATION" "http://$target/" 2>/dev/null >"$work/h2load.out"
      after=$(cpu_ticks "$pid")
      awk -v cpu=$((after - before)) -v tck="$(getconf CLK_TCK)" '/^finished in/ {r=$4}
           /^requests:/ {n=$8}
           /^time for request:/ {v=$6; if (v ~ /us$/) {sub(/us/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000}; p=v}
           END {printf "%d %.2f %.2f", r, p, (n > 0 ? cpu / tck * 1e6 / n : 0)}' "$work/h2load.out"
      return
    fi
    before=$(cpu_ticks "$pid")
    wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" --latency "$@" "http://$target$path" 2>/dev/null >"$work/wrk.out"
    after=$(cpu_ticks "$pid")
    awk -v cpu=$((after - before)) -v tck="$(getconf CLK_TCK)" '/Requests\/sec/ {r=$2}
         /requests in/ {n=$1}
         $1=="99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000}; p=v}
         END {printf "%d %.2f %.2f", r, p, (n > 0 ? cpu / tck * 1e6 / n : 0)}' "$work/wrk.out"
  }
  ROUNDS=${ROUNDS:-5}
  declare -A RPS P99 CPU
  cases=()
  for c in plain:80 cookie:81 rule:82 policy:83 compress:84 h2:85; do
    # CASES="h2 plain" runs only those.
    [ -z "${CASES:-}" ] || [[ " $CASES " == *" ${c%%:*} "* ]] && cases+=("$c")
  done
  for round in $(seq "$ROUNDS"); do
    for c in "${cases[@]}"; do
      name=${c%%:*} port=${c##*:}
      # Alternate which side goes first, so a drift in the machine's
      # load does not favour one.
      order=(haproxy openltm)
      [ $((round % 2)) = 0 ] && order=(openltm haproxy)
      for who in "${order[@]}"; do
        target=$HAPH:$port pid=$haph_pid
        [ "$who" = openltm ] && target=$LTMH:$port pid=$ltmd_pid
        extra=()
        [ "$name" = compress ] && extra=(/page.html -H "Accept-Encoding: gzip")
        [ "$name" = h2 ] && extra=(h2)
        read -r r p c <<<"$(run "$target" "$pid" "${extra[@]}")"
        RPS[$who,$name]+="$r "
        P99[$who,$name]+="$p "
        CPU[$who,$name]+="$c "
      done
    done
  done
  printf '%-10s %14s %14s %8s %12s %12s %12s %12s\n' "median/$ROUNDS" "haproxy req/s" "openltm req/s" ratio "haproxy p99" "openltm p99" "haproxy CPU" "openltm CPU"
  for c in "${cases[@]}"; do
    name=${c%%:*}
    hr=$(tr ' ' '\n' <<<"${RPS[haproxy,$name]}" | grep . | median)
    orr=$(tr ' ' '\n' <<<"${RPS[openltm,$name]}" | grep . | median)
    hp=$(tr ' ' '\n' <<<"${P99[haproxy,$name]}" | grep . | median)
    op=$(tr ' ' '\n' <<<"${P99[openltm,$name]}" | grep . | median)
    hc=$(tr ' ' '\n' <<<"${CPU[haproxy,$name]}" | grep . | median)
    oc=$(tr ' ' '\n' <<<"${CPU[openltm,$name]}" | grep . | median)
    printf '%-10s %14s %14s %8s %10sms %10sms %10sus %10sus\n' "$name" "$hr" "$orr" \
      "$(awk -v a="$orr" -v b="$hr" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')" "$hp" "$op" "$hc" "$oc"
    echo "           runs: haproxy ${RPS[haproxy,$name]}| openltm ${RPS[openltm,$name]}"
  done
  echo "(wrk -t$THREADS -c$CONNS -d${DURATION}s --latency; p99 in ms; h2: h2load -c$CONNS -m10, mean latency; CPU: the proxy's user+system time per request, in µs)"
  exit 0
fi

# Each cell (connections × keep-alive or not) runs direct, HAProxy and
# ltmd ROUNDS times, the order reversed every other round so that a drift
# in the machine's load favours none; it prints the median requests/s, the
# ratios, and the median CPU each proxy spent per request (µs, from /proc:
# user + system of the whole process), which is steadier than throughput
# on a busy machine. CONNS may list several counts ("1 2 8 64").
ROUNDS=${ROUNDS:-3}
declare -A R C
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
# measure WHO PID [wrk args...]: appends one run's req/s to R and the
# process's CPU µs per request to C.
measure() {
  local who=$1 pid=$2 t0 t1 r; shift 2
  t0=$(cpu_ticks "${pid:-0}")
  case $who in
    direct) r=$(rps_direct "$@") ;;
    haproxy) r=$(rps $HAP "$@") ;;
    openltm) r=$(rps $LTM "$@") ;;
  esac
  t1=$(cpu_ticks "${pid:-0}")
  R[$who,$CONNS,$mode]+="${r:-0} "
  [ -n "$pid" ] && C[$who,$CONNS,$mode]+="$(cpu_us $((t1 - t0)) $(( ${r:-0} * DURATION )) ) "
}
conns_list=$CONNS
for CONNS in $conns_list; do
  for round in $(seq "$ROUNDS"); do
    for mode in keepalive close; do
      args=()
      [ "$mode" = close ] && args=(-H "Connection: close")
      order=(direct haproxy openltm)
      [ $((round % 2)) = 0 ] && order=(openltm haproxy direct)
      for who in "${order[@]}"; do
        pid=""
        [ "$who" = haproxy ] && pid=$haproxy_pid
        [ "$who" = openltm ] && pid=$ltmd_pid
        measure "$who" "$pid" "${args[@]}"
      done
    done
  done
done
med() { tr ' ' '\n' <<<"${1:-}" | grep . | median; }
printf '%-6s %-9s %9s %9s %9s %7s %7s %11s %11s\n' conns mode direct haproxy openltm /hap /direct "hap-cpu-us" "ltm-cpu-us"
for CONNS in $conns_list; do
  for mode in keepalive close; do
    d=$(med "${R[direct,$CONNS,$mode]}") h=$(med "${R[haproxy,$CONNS,$mode]}") o=$(med "${R[openltm,$CONNS,$mode]}")
    printf '%-6s %-9s %9s %9s %9s %7s %7s %11s %11s\n' "$CONNS" "$mode" "$d" "$h" "$o" "$(ratio "$o" "$h")" "$(ratio "$o" "$d")" \
      "$(med "${C[haproxy,$CONNS,$mode]}")" "$(med "${C[openltm,$CONNS,$mode]}")"
  done
done
echo "(median of $ROUNDS round(s), wrk -t$THREADS -d${DURATION}s; new-conn: Connection: close; load average $(cut -d' ' -f1-3 /proc/loadavg))"
