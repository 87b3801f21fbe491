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
