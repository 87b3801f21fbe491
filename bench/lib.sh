# Shared by the bench scripts (sourced, not run): a work directory removed
# on exit with every background process the script started (it appends
# their pids to pids), and pinning to CPUs with taskset.

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# pin_cpus: srv and peer become taskset prefixes for the proxies and the
# peers/clients when SERVER_CPUS / PEER_CPUS are set (empty otherwise);
# threads is the number of CPUs the proxies get.
pin_cpus() {
  srv=() peer=()
  if [ -n "${SERVER_CPUS:-}" ] || [ -n "${PEER_CPUS:-}" ]; then
    command -v taskset >/dev/null || { echo "SERVER_CPUS/PEER_CPUS need taskset" >&2; exit 1; }
    [ -n "${SERVER_CPUS:-}" ] && srv=(taskset -c "$SERVER_CPUS")
    [ -n "${PEER_CPUS:-}" ] && peer=(taskset -c "$PEER_CPUS")
  fi
  threads=$(${srv[@]+"${srv[@]}"} nproc)
}

# cpu_ticks PID: the user and system CPU time the process has used, in
# clock ticks (0 if it is gone); cpu_us TICKS N: microseconds per item.
cpu_ticks() {
  [ -r "/proc/$1/stat" ] || { echo 0; return; }
  # Fields after the command name (which may hold spaces): utime is the
  # 12th, stime the 13th.
  sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}
cpu_us() {
  awk -v t="$1" -v n="$2" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { if (n > 0) printf "%.1f", t / hz * 1e6 / n; else print "n/a" }'
}

# median: the median of the numbers on stdin, one a line.
median() {
  sort -g | awk '{a[NR]=$1} END {if (NR==0) print 0; else if (NR%2) print a[(NR+1)/2]; else printf "%.1f", (a[NR/2]+a[NR/2+1])/2}'
}

# nginx_backends BYTES ADDR...: one nginx (one worker, keep-alive without
# limit, no access log) per address, each serving a page of BYTES bytes
# from $work/www, as the backends of the side-by-side benchmarks.
nginx_backends() {
  local bytes=$1 b name; shift
  mkdir -p "$work/www"
  chmod 755 "$work" "$work/www" # nginx's workers run as nobody when started by root
  head -c "$bytes" /dev/zero | tr '\0' 'x' >"$work/www/index.html"
  for b in "$@"; do
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
    nginx -c "$work/nginx_$name.conf" -p "$work" &
    pids+=($!)
  done
}

# route10_policy_tmsh: route10's routing as an ltm policy, route10p (a
# policy has no 403 reply: /admin is reset), on route10_tmsh's pools.
route10_policy_tmsh() {
  cat <<'EOF'
create ltm policy route10p legacy strategy all-match rules add { api { ordinal 1 conditions add { 0 { http-host host starts-with values { api. } } } actions add { 0 { forward select pool api_pool } } } static { ordinal 2 conditions add { 0 { http-host host not starts-with values { api. } } 1 { http-uri path starts-with values { /static/ } } } actions add { 0 { forward select pool static_pool } } } old { ordinal 3 conditions add { 0 { http-host host not starts-with values { api. } } 1 { http-uri path starts-with values { /old/ } } } actions add { 0 { http-reply redirect location "tcl:http://[HTTP::host]/new/" } } } admin { ordinal 4 conditions add { 0 { http-host host not starts-with values { api. } } 1 { http-uri path starts-with values { /admin } } } actions add { 0 { forward reset } } } tag { ordinal 5 actions add { 0 { http-header replace name X-Tag value "tcl:[HTTP::path]" } } } }
EOF
}

# route10_tmsh B1 B2: the tmsh of the 10-line HTTP_REQUEST rule the http
# suites measure (host and URI routing with switch, a redirect, a 403 and
# a header replaced), route10, with its pools api_pool and static_pool on
# the backends B1 and B2; the virtual's own pool is bench_pool.
route10_tmsh() {
  cat <<EOF
create ltm pool api_pool members add { $1 $2 }
create ltm pool static_pool members add { $1 $2 }
create ltm rule route10 {
when HTTP_REQUEST {
    switch -glob [string tolower [HTTP::host]] {
        "api.*" { pool api_pool }
        default {
            switch -glob [HTTP::path] {
                "/static/*" { pool static_pool }
                "/old/*" { HTTP::redirect "http://[HTTP::host]/new/" }
                "/admin*" { HTTP::respond 403 content "denied" }
                default { pool bench_pool }
            }
        }
    }
    HTTP::header replace X-Tag [HTTP::path]
}
}
EOF
}
