#!/usr/bin/env bash
# TLS benchmark: wrk over HTTPS through ltmd and through HAProxy (Debian's
# 2.6), both terminating TLS with the same certificate and key (ECDSA
# P-256, made here with openssl) in front of the same two nginx backends:
#   - http: an HTTP virtual (tcp, http and a client-ssl profile) against
#     HAProxy `mode http` with `bind ... ssl`;
#   - l4:   a standard virtual (tcp and client-ssl) against HAProxy
#     `mode tcp` with `bind ... ssl`.
# Keep-alive requests/s, and new connections (Connection: close, so every
# request is a full TLS handshake: new handshakes/s). Neither side resumes
# sessions (client-ssl's session-ticket is disabled by default; HAProxy
# runs with no-tls-tickets). Runs alternate openltm and HAProxy; each
# figure is the median of ROUNDS.
#
#   bash bench/tls.sh                  # 5 s per run, 3 rounds
#   DURATION=10 ROUNDS=5 CONNS=64 bash bench/tls.sh
#   ONECONNECT=0 bash bench/tls.sh     # the HTTP virtual without one-connect
#
# Needs haproxy, wrk, nginx and openssl (Debian packages); says so and
# exits 0 when one is missing. Everything listens on 127.32.0.0/24.
set -uo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-32}
THREADS=${THREADS:-2}
NET=127.32.0
B1=$NET.2:8080
B2=$NET.3:8080

for tool in haproxy wrk nginx openssl; do
  command -v $tool >/dev/null || { echo "bench/tls: $tool is not installed; skipping"; exit 0; }
done

. bench/lib.sh # the script runs from the project root (cd above)

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=bench.example" \
  -addext "subjectAltName=DNS:bench.example" -keyout "$work/bench.key" -out "$work/bench.crt" 2>/dev/null ||
  { echo "bench/tls: openssl could not make a certificate"; exit 1; }
cat "$work/bench.crt" "$work/bench.key" >"$work/bench.pem"

mkdir -p "$work/www"
head -c 612 /dev/zero | tr '\0' 'x' >"$work/www/index.html"
for b in $B1 $B2; do
  name=${b//[.:]/_}
  cat >"$work/nginx_$name.conf" <<NGX
worker_processes 1;
daemon off;
pid $work/nginx_$name.pid;
error_log $work/nginx_$name.err;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  server { listen $b reuseport; root $work/www; }
}
NGX
  nginx -c "$work/nginx_$name.conf" -p "$work" & pids+=($!)
done

cat >"$work/haproxy.cfg" <<HAP
global
  nbthread 2
  maxconn 8000
  ssl-default-bind-options no-tls-tickets
defaults
  timeout connect 5s
  timeout client 300s
  timeout server 300s
frontend fe_http
  mode http
  bind $NET.10:443 ssl crt $work/bench.pem
  default_backend be_http
backend be_http
  mode http
  http-reuse safe
  balance roundrobin
  server s1 $B1
  server s2 $B2
frontend fe_l4
  mode tcp
  bind $NET.12:443 ssl crt $work/bench.pem
  default_backend be_l4
backend be_l4
  mode tcp
  balance roundrobin
  server s1 $B1
  server s2 $B2
HAP
haproxy -f "$work/haproxy.cfg" -db >"$work/haproxy.log" 2>&1 & pids+=($!)

go build -o "$work/" ./cmd/ltmd ./cmd/tmsh || { echo "bench/tls: build failed"; exit 1; }
"$work/ltmd" --busy-poll "${BUSY_POLL:-200us}" --state-dir "$work/state" --socket "$work/ltmd.sock" 2>"$work/ltmd.err" & pids+=($!)
for _ in $(seq 100); do [ -S "$work/ltmd.sock" ] && break; sleep 0.1; done
"$work/tmsh" --socket "$work/ltmd.sock" -f /dev/stdin <<TMSH || { echo "bench/tls: configuring ltmd failed"; cat "$work/ltmd.err"; exit 1; }
install sys crypto cert bench.crt from-local-file $work/bench.crt
install sys crypto key bench.key from-local-file $work/bench.key
create ltm profile client-ssl bench_ssl cert-key-chain replace-all-with { bench { cert bench.crt key bench.key } }
create ltm profile one-connect bench_oc
create ltm pool bench_pool members add { $B1 $B2 }
create ltm virtual vs_http destination $NET.11:443 pool bench_pool source-address-translation { type automap } profiles replace-all-with { tcp http bench_ssl $([ "${ONECONNECT:-1}" = 1 ] && echo bench_oc) }
create ltm virtual vs_l4 destination $NET.13:443 pool bench_pool profiles replace-all-with { tcp bench_ssl }
TMSH
sleep 1

rps() {
  local target=$1; shift
  wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" "$@" "https://$target/" 2>/dev/null |
    awk '/Requests\/sec/ {printf "%d", $2}'
}
declare -A R
for round in $(seq "$ROUNDS"); do
  for mode in keepalive close; do
    args=()
    [ "$mode" = close ] && args=(-H "Connection: close")
    for kind in http l4; do
      if [ "$kind" = http ]; then hap=$NET.10:443 ltm=$NET.11:443; else hap=$NET.12:443 ltm=$NET.13:443; fi
      # Alternate which goes first, so a burst of other load on the
      # machine does not always fall on the same side.
      if [ $((round % 2)) = 1 ]; then
        R[openltm,$kind,$mode]+="$(rps $ltm "${args[@]}") "
        R[haproxy,$kind,$mode]+="$(rps $hap "${args[@]}") "
      else
        R[haproxy,$kind,$mode]+="$(rps $hap "${args[@]}") "
        R[openltm,$kind,$mode]+="$(rps $ltm "${args[@]}") "
      fi
    done
  done
done
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {if (NR == 0) print 0; else if (NR % 2) print a[(NR+1)/2]; else printf "%d", (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
printf '%-40s %12s %14s\n' "req/s, median of $ROUNDS (wrk -c$CONNS -d${DURATION}s)" keep-alive "new TLS conns"
for kind in http l4; do
  for who in haproxy openltm; do
    printf '%-40s %12s %14s\n' "$who $kind" "$(median "${R[$who,$kind,keepalive]}")" "$(median "${R[$who,$kind,close]}")"
  done
  printf '%-40s %12s %14s\n' "openltm / haproxy ($kind)" \
    "$(ratio "$(median "${R[openltm,$kind,keepalive]}")" "$(median "${R[haproxy,$kind,keepalive]}")")" \
    "$(ratio "$(median "${R[openltm,$kind,close]}")" "$(median "${R[haproxy,$kind,close]}")")"
done
