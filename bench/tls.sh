#!/usr/bin/env bash
# TLS benchmark: wrk over HTTPS through ltmd and through HAProxy (Debian's
# 2.6), both terminating TLS with the same certificate and key (ECDSA
# P-256, made here with openssl) in front of the same two nginx backends:
#   - http: an HTTP virtual (tcp, http and a client-ssl profile) against
#     HAProxy `mode http` with `bind ... ssl`;
#   - l4:   a standard virtual (tcp and client-ssl) against HAProxy
#     `mode tcp` with `bind ... ssl`.
# Keep-alive requests/s, and new connections (Connection: close, so every
# request is a new TLS handshake: new handshakes/s). wrk offers the last
# session again on each reconnect (SSL_clear keeps it), so whether a new
# connection is a full handshake is up to the server: by default neither
# side resumes (client-ssl's session-ticket is disabled, as BIG-IP's
# default is; HAProxy runs with no-tls-tickets and tune.ssl.cachesize 0,
# without which its session cache resumes every one of wrk's reconnects);
# RESUME=1 lets both resume (session-ticket enabled on the client-ssl
# profile, HAProxy's default session cache). Runs alternate openltm and HAProxy; each
# figure is the median of ROUNDS, with the proxy's CPU per request (user +
# system time of its process over the run, from /proc, divided by the
# requests wrk made) beside it.
#
#   bash bench/tls.sh                  # 5 s per run, 3 rounds
#   DURATION=10 ROUNDS=5 CONNS=64 bash bench/tls.sh
#   ONECONNECT=0 bash bench/tls.sh     # the HTTP virtual without one-connect
#   RESUME=1 bash bench/tls.sh         # both resume wrk's sessions
#   B_ENV="GOGC=400" bash bench/tls.sh # A/B: a second ltmd (openltm-b) with
#                                      # this environment (B_ARGS: its extra
#                                      # flags; B_SSL: extra client-ssl
#                                      # settings) in the same rounds
#   B_BIN=/tmp/old/ltmd bash bench/tls.sh # A/B against another build of ltmd
#   RULE=1 bash bench/tls.sh           # the HTTP virtual with bench/run.sh's
#                                      # 10-line HTTP_REQUEST rule (HAProxy:
#                                      # the same ACLs and set-header)
#   BODY=65536 bash bench/tls.sh       # the response body's size (612)
#
# Needs haproxy, wrk, nginx and openssl (Debian packages); says so and
# exits 0 when one is missing. Everything listens on 127.32.0.0/24 (NET=a.b.c:
# another /24).
set -uo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-32}
THREADS=${THREADS:-2}
NET=${NET:-127.32.0}
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

nginx_backends "${BODY:-612}" "$B1" "$B2"

cat >"$work/haproxy.cfg" <<HAP
global
  nbthread 2
  maxconn 8000
  stats socket $work/haproxy.sock
$([ "${RESUME:-0}" = 1 ] || printf '  ssl-default-bind-options no-tls-tickets\n  tune.ssl.cachesize 0')
defaults
  timeout connect 5s
  timeout client 300s
  timeout server 300s
frontend fe_http
  mode http
  bind $NET.10:443 ssl crt $work/bench.pem
$([ "${RULE:-0}" = 1 ] && printf '%s\n' "  acl api hdr_beg(host) -i api." "  acl static path_beg /static/" \
  "  acl old path_beg /old/" "  acl admin path_beg /admin" "  http-request redirect location /new/ if old" \
  "  http-request deny deny_status 403 if admin" "  http-request set-header X-Tag %[path]" \
  "  use_backend be_http if api" "  use_backend be_http if static")
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
hap_pid=${pids[-1]}

# start_ltmd NAME HTTP_ADDR L4_ADDR [ENV...]: an ltmd in $work/NAME with the
# two virtuals; its pid in ltmd_pid.
start_ltmd() {
  local name=$1 http=$2 l4=$3; shift 3
  mkdir -p "$work/$name"
  # shellcheck disable=SC2086
  env "$@" "${ltmd_bin:-$work/ltmd}" --busy-poll "${BUSY_POLL:-auto}" ${extra_args:-} --state-dir "$work/$name/state" --socket "$work/$name/ltmd.sock" 2>"$work/$name/ltmd.err" & pids+=($!)
  ltmd_pid=$!
  for _ in $(seq 100); do [ -S "$work/$name/ltmd.sock" ] && break; sleep 0.1; done
  "$work/tmsh" --socket "$work/$name/ltmd.sock" -f /dev/stdin <<TMSH || { echo "bench/tls: configuring $name failed"; cat "$work/$name/ltmd.err"; exit 1; }
install sys crypto cert bench.crt from-local-file $work/bench.crt
install sys crypto key bench.key from-local-file $work/bench.key
create ltm profile client-ssl bench_ssl cert-key-chain replace-all-with { bench { cert bench.crt key bench.key } } $([ "${RESUME:-0}" = 1 ] && echo session-ticket enabled) ${ssl_opts:-}
create ltm profile one-connect bench_oc
create ltm pool bench_pool members add { $B1 $B2 }
$(route10_tmsh "$B1" "$B2")
create ltm virtual vs_http destination $http pool bench_pool source-address-translation { type automap } profiles replace-all-with { tcp http bench_ssl $([ "${ONECONNECT:-1}" = 1 ] && echo bench_oc) } $([ "${RULE:-0}" = 1 ] && echo "rules { route10 }")
create ltm virtual vs_l4 destination $l4 pool bench_pool profiles replace-all-with { tcp bench_ssl }
TMSH
}
declare -A PID HTTP L4
start_ltmd a $NET.11:443 $NET.13:443
PID[openltm]=$ltmd_pid
PID[haproxy]=$hap_pid
HTTP[haproxy]=$NET.10:443 L4[haproxy]=$NET.12:443
HTTP[openltm]=$NET.11:443 L4[openltm]=$NET.13:443
peers=(openltm haproxy)
if [ -n "${B_ENV:-}${B_ARGS:-}${B_SSL:-}${B_BIN:-}" ]; then
  # shellcheck disable=SC2086
  ltmd_bin=${B_BIN:-} extra_args=${B_ARGS:-} ssl_opts=${B_SSL:-} start_ltmd b $NET.21:443 $NET.23:443 ${B_ENV:-}
  PID[openltm-b]=$ltmd_pid
  HTTP[openltm-b]=$NET.21:443 L4[openltm-b]=$NET.23:443
  peers+=(openltm-b)
fi
sleep 1

hz=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# run WHO KIND ARGS...: one wrk run; appends req/s to R and CPU µs per
# request to C.
declare -A R C
run() {
  local who=$1 kind=$2; shift 2
  local target=${HTTP[$who]} pid=${PID[$who]}
  [ "$kind" = l4 ] && target=${L4[$who]}
  local t0 out t1
  t0=$(ticks "$pid")
  out=$(wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" "$@" "https://$target/" 2>/dev/null)
  t1=$(ticks "$pid")
  [ -n "${VERBOSE:-}" ] && echo "$who $kind $mode: $(grep -E 'Transfer/sec' <<<"$out")" >&2
  R[$who,$kind,$mode]+="$(awk '/Requests\/sec/ {printf "%d", $2}' <<<"$out") "
  C[$who,$kind,$mode]+="$(awk -v d=$((t1 - t0)) -v hz="$hz" '/requests in/ { if ($1 > 0) printf "%.1f", d * 1e6 / hz / $1; else printf "0" }' <<<"$out") "
}
for round in $(seq "$ROUNDS"); do
  for mode in keepalive close; do
    args=()
    [ "$mode" = close ] && args=(-H "Connection: close")
    for kind in http l4; do
      # Rotate which goes first, so a burst of other load on the machine
      # does not always fall on the same side.
      n=${#peers[@]}
      for i in $(seq 0 $((n - 1))); do
        run "${peers[$(((i + round) % n))]}" "$kind" "${args[@]}"
      done
    done
  done
done
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {if (NR == 0) print 0; else if (NR % 2) print a[(NR+1)/2]; else printf "%.1f", (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
printf '%-34s %11s %9s %13s %9s\n' "median of $ROUNDS (wrk -c$CONNS -d${DURATION}s)" keep-alive "µs/req" "new TLS/s" "µs/req"
for kind in http l4; do
  for who in "${peers[@]}"; do
    printf '%-34s %11s %9s %13s %9s\n' "$who $kind" "$(median "${R[$who,$kind,keepalive]}")" "$(median "${C[$who,$kind,keepalive]}")" \
      "$(median "${R[$who,$kind,close]}")" "$(median "${C[$who,$kind,close]}")"
  done
  for who in "${peers[@]}"; do
    [ "$who" = haproxy ] && continue
    printf '%-34s %11s %9s %13s %9s\n' "$who / haproxy ($kind)" \
      "$(ratio "$(median "${R[$who,$kind,keepalive]}")" "$(median "${R[haproxy,$kind,keepalive]}")")" \
      "$(ratio "$(median "${C[$who,$kind,keepalive]}")" "$(median "${C[haproxy,$kind,keepalive]}")")" \
      "$(ratio "$(median "${R[$who,$kind,close]}")" "$(median "${R[haproxy,$kind,close]}")")" \
      "$(ratio "$(median "${C[$who,$kind,close]}")" "$(median "${C[haproxy,$kind,close]}")")"
  done
done
if command -v socat >/dev/null; then
  echo "haproxy: $(echo "show info" | socat - "UNIX:$work/haproxy.sock" | grep -E '^(CumSslConns|SslCacheLookups|SslCacheMisses):' | tr '\n' ' ')"
fi
if [ -n "${VERBOSE:-}" ]; then
  for k in "${!R[@]}"; do echo "runs $k: req/s ${R[$k]}| µs/req ${C[$k]}"; done | sort
fi
