# bench_controller.sh - scripts/bench.sh's parts 4 and 5: kernel memory per tracked
# source, and the controller at 1M sources (levee stats/status/top/prune, a metrics
# scrape of `levee run` alone and beside slow clients, list reloads and `deny add`).
# Each step leaves its figures in globals (named below) for record_controller.
# Sourced by scripts/bench.sh, not run.
# shellcheck shell=bash

# ms per run of a levee command inside the receiver's namespace, one line per run.
time_runs() {
  local runs=$1; shift
  in_rx bash -c 'for i in $(seq 1 "$0"); do s=$EPOCHREALTIME; "$@" >/dev/null || exit 1; echo "$s $EPOCHREALTIME"; done' \
    "$runs" "$@" | awk '{ printf "%.3f\n", ($2 - $1) * 1000 }'
}
memory_case() {  # family sources flood-args... (levee attached by the caller)
  local family=$1 n=$2; shift 2
  f=$(flood "$@" --sources "$n" --count $((3 * n)))
  status=$(levee_rx status --json | jq -c ".interfaces[] | select(.interface == \"$DEV_RX\")")
  map=$(bpftool map show pinned "/sys/fs/bpf/levee/$DEV_RX/lv_state" -j)
  record --arg family "$family" --argjson n "$n" --argjson status "$status" --argjson map "$map" --argjson f "$f" \
    '{kind: "memory", $family, sources_sent: $n, tracked: $status.sources, max_entries: $map.max_entries,
      bytes_key: $map.bytes_key, bytes_value: $map.bytes_value, bytes_memlock: $map.bytes_memlock}
     | .bytes_per_entry = .bytes_memlock / .max_entries'
  jq -r 'select(.kind == "memory") | "   \(.family): \(.tracked) tracked of \(.max_entries), memlock \(.bytes_memlock) B = \(.bytes_per_entry * 10 | round / 10) B per entry"' "$RAW" | tail -1
}
# IPv4: the sandbox may only use 198.18.0.0/15, so every one of its 131,072 addresses;
# the map is 1M entries either way (an LRU map is preallocated: memlock does not grow).
# Leaves levee attached with the 1M IPv6 sources of the last case, for the controller.
memory_cases() {
  levee_rx attach "$DEV_RX" --rate 10 --burst 10 >/dev/null
  memory_case ipv4 131072 --dst 198.18.0.1 --src-base 198.18.0.0
  levee_rx detach "$DEV_RX" >/dev/null
  levee_rx attach "$DEV_RX" --rate 10 --burst 10 --prefix6 128 >/dev/null
  memory_case ipv6 1000000 --dst 2001:db8::1 --src-base 2001:db8:1::
}
# Sets busy, stats_ms, status_ms, top_ms, top_bytes_ms and top.
command_runs() {
  busy=$(wait_quiet)
  stats_ms=$(time_runs "$STATS_RUNS" "$B/levee" stats "$DEV_RX" --json | jq -sc .)
  status_ms=$(time_runs "$STATUS_RUNS" "$B/levee" status --json | jq -sc .)
  top_ms=$(time_runs "$TOP_RUNS" "$B/levee" top "$DEV_RX" -n 10 | jq -sc .)
  top_bytes_ms=$(time_runs "$TOP_RUNS" "$B/levee" top "$DEV_RX" -n 10 --by bytes --json | jq -sc .)
  top=$(levee_rx top "$DEV_RX" -n 10 --json)
}
# A Prometheus scrape of `levee run` at 1M sources: it adopts the attachment (a reload
# into the same class keeps the sources) and serves the counters, the policy and the
# counts of its maintenance walk, which is done once before the timing starts; a scrape
# walks nothing. Timed with curl, whose own start-up is in the figure.
# Sets scrape_ms, scrape_bytes and scrape_slow_ms.
scrape_runs() {
  local metrics_url
  printf '[default]\nrate = 10\nburst = 10\nprefix6 = 128\n' >"$TMP/run.toml"
  in_rx "$B/levee" run "$DEV_RX" --config "$TMP/run.toml" --metrics 19741 --idle off --prune-every 1h \
    >"$TMP/run.out" 2>"$TMP/run.err" &
  RUN_PID=$!
  metrics_url=http://127.0.0.1:19741/metrics
  for _ in $(seq 100); do
    in_rx curl -sf "$metrics_url" 2>/dev/null | grep -q '^levee_sources{' && break
    sleep 0.1
  done
  in_rx curl -sf "$metrics_url" | grep -q '^levee_sources{' || die "levee run did not serve metrics: $(cat "$TMP/run.err")"
  scrape_ms=$(time_runs "$SCRAPE_RUNS" curl -sf -o /dev/null "$metrics_url" | jq -sc .)
  scrape_bytes=$(in_rx curl -sf "$metrics_url" | wc -c)
  # The same while 64 slow clients hold connections, each sending a request line and then
  # one header every 3 s (opened again at once when levee closes it): scrapes must not wait
  # behind them. A session of their own (its leader's pid in slow.pid), ended with the daemon.
  in_rx setsid bash -c 'echo $$ >"$0"; trap "" PIPE
    for i in $(seq 64); do
      ( while :; do
          exec 3<>/dev/tcp/127.0.0.1/19741 || { sleep 0.1; continue; }
          printf "GET /metrics HTTP/1.1\r\n" >&3
          # A read that times out (status > 128) is the next header due; anything else is
          # the end of the connection.
          while :; do read -r -t 3 -u 3 _; [ $? -gt 128 ] && printf "X-Slow: 1\r\n" >&3 2>/dev/null || break; done
          exec 3<&-
        done ) &
    done
    wait' "$TMP/slow.pid" >/dev/null 2>&1 &
  for _ in $(seq 50); do [ -s "$TMP/slow.pid" ] && break; sleep 0.1; done
  SLOW_PID=$(cat "$TMP/slow.pid")
  sleep 1
  scrape_slow_ms=$(time_runs "$SLOW_SCRAPE_RUNS" curl -sf --max-time 10 -o /dev/null "$metrics_url" | jq -sc .)
  kill -- -"$SLOW_PID" 2>/dev/null || true
  SLOW_PID=
  kill "$RUN_PID"; wait "$RUN_PID" 2>/dev/null || true
  RUN_PID=
}
# Last: prune walks every entry as top does, and also checks each for idleness, deletes
# the idle ones and refills the known-source filter from the rest. Nothing of the fill
# has been idle an hour, so every run walks the full map and deletes nothing.
# Sets prune_ms, prune and tracked; detaches levee.
prune_runs() {
  prune_ms=$(time_runs "$PRUNE_RUNS" "$B/levee" prune "$DEV_RX" --idle 1h --json | jq -sc .)
  prune=$(levee_rx prune "$DEV_RX" --idle 1h --json)
  tracked=$(levee_rx status --json | jq ".interfaces[] | select(.interface == \"$DEV_RX\") | .sources")
  levee_rx detach "$DEV_RX" >/dev/null
}
# List changes at LIST_ENTRIES host entries: a reload whose config replaces every deny
# entry by as many others (alternating between two files of IPv6 hosts of
# 2001:db8::/32; list entries are data, no traffic goes to them), then one `deny add`
# to the full list. Each costs what it changes, not the size of the list.
list_config() {  # file, third group of the addresses (a number, written in hex)
  { printf '[default]\nrate = 10\nburst = 10\n[lists]\ndeny = [\n'
    awk -v n="$LIST_ENTRIES" -v g="$2" 'BEGIN { for (i = 0; i < n; i++) printf "\"2001:db8:%x::%x:%x\",\n", g, int(i / 65536), i % 65536 }'
    printf ']\n'; } >"$1"
}
# Sets list_busy, list_replace_ms, deny_add_ms and list_entries.
list_runs() {
  local last
  list_config "$TMP/lists_a.toml" 10
  list_config "$TMP/lists_b.toml" 11
  levee_rx attach "$DEV_RX" --config "$TMP/lists_a.toml" >/dev/null
  list_busy=$(wait_quiet)
  list_replace_ms=$(for i in $(seq 1 "$LIST_RUNS"); do
    [ $((i % 2)) = 1 ] && f=$TMP/lists_b.toml || f=$TMP/lists_a.toml
    time_runs 1 "$B/levee" reload "$DEV_RX" --config "$f"
  done | jq -sc .)
  # The list is full (a family holds LV_MAX_LIST_ENTRIES): one entry of the file loaded
  # last is deleted, and each timed `deny add` puts it back (added, then replaced).
  [ $((LIST_RUNS % 2)) = 1 ] && last=b || last=a
  levee_rx deny del "$DEV_RX" "2001:db8:$last::" >/dev/null
  deny_add_ms=$(time_runs "$DENY_ADD_RUNS" "$B/levee" deny add "$DEV_RX" "2001:db8:$last::" | jq -sc .)
  list_entries=$(levee_rx deny list "$DEV_RX" --json | jq '.entries | length')
  levee_rx detach "$DEV_RX" >/dev/null
}
# The controller record, from what the steps above set, and its summary lines.
record_controller() {
  record --argjson stats "$stats_ms" --argjson status "$status_ms" --argjson tracked "$tracked" \
    --argjson top_ms "$top_ms" --argjson top_bytes_ms "$top_bytes_ms" --argjson top "$top" \
    --argjson prune_ms "$prune_ms" --argjson prune "$prune" --argjson busy "$busy" \
    --argjson scrape_ms "$scrape_ms" --argjson scrape_bytes "$scrape_bytes" --argjson scrape_slow_ms "$scrape_slow_ms" \
    --argjson list_replace_ms "$list_replace_ms" --argjson deny_add_ms "$deny_add_ms" \
    --argjson list_entries "$list_entries" --argjson list_busy "$list_busy" \
    '{kind: "controller", sources: $tracked, busy_before: $busy, stats_ms: $stats, status_ms: $status,
      $top_ms, $top_bytes_ms, top_sources: $top.sources, top_walk_ms: $top.walk_ms, $prune_ms,
      prune: ($prune | {sources_removed, sources_kept, networks_removed, filter_sources, seconds}),
      $scrape_ms, $scrape_bytes, $scrape_slow_ms, $list_entries, $list_busy, $list_replace_ms, $deny_add_ms}'
  jq -r 'def med: sort | .[length / 2 | floor]; select(.kind == "controller") | "   at \(.sources) sources: levee stats \(.stats_ms | med) ms, levee status \(.status_ms | med) ms, levee top \(.top_ms | med) ms (--by bytes --json \(.top_bytes_ms | med) ms), levee prune \(.prune_ms | med) ms, a metrics scrape \(.scrape_ms | med) ms, with 64 slow connections \(.scrape_slow_ms | med) ms, p99 \(.scrape_slow_ms | sort | .[(length * 0.99 | ceil) - 1]) ms (medians; prune removed \(.prune.sources_removed), kept \(.prune.sources_kept))", "   at \(.list_entries) deny entries: a reload replacing them \(.list_replace_ms | med) ms, one levee deny add \(.deny_add_ms | med) ms (medians)"' "$RAW"
}
