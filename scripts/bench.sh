#!/usr/bin/env bash
# scripts/bench.sh - levee's published numbers, measured in one go on this machine:
#   1. program cost    levee-progbench (BPF_PROG_TEST_RUN): ns/packet of levee's paths
#                      beside a bare XDP_DROP and the parse + LRU + clock floor
#   2. end to end      packets/s dropped through one veth by bare XDP_DROP, the floor,
#                      levee (1 source, 10k sources, IPv6, random IPv6), an nftables
#                      meter and iptables hashlimit, interleaved over several rounds
#   3. accuracy        passed / (burst + rate x t) per source at 2x and 10x the limit,
#                      1, 100 and 10,000 sources, one and two sending CPUs
#   4. memory          kernel memory per tracked source (map memlock / max_entries)
#   5. controller      wall time of `levee stats`, `levee status`, `levee top` and
#                      `levee prune` at 1M sources; a metrics scrape of `levee run`, alone
#                      and while 64 slow clients hold connections (its p99); a reload
#                      replacing 1M host list entries and one `levee deny add` to a 1M-entry list
# and writes bench/results.json, bench/results.png and the tables of BENCHMARKS.md.
#
#   scripts/bench.sh [--quick] [--rounds N]
#   scripts/bench.sh --render     # only redraw the chart and tables from bench/results.json
#
# --quick (CI) runs every part briefly (under 2 minutes once built) to check that the
# instruments work, and writes the same three files into the build tree instead
# (build/bench/: results.json, results.png and a copy of BENCHMARKS.md with its tables
# redrawn): one brief run's figures are never published. Only a full run refreshes the
# tracked files.
#
# Needs root. Builds what it needs. All traffic stays inside two network namespaces it
# creates (lvbench-tx -> lvbench-rx, one veth pair with two queues, 198.18.0.0/15 and
# 2001:db8::/32), and everything it creates - namespaces, links, XDP programs and pins,
# nftables tables, iptables chains - is removed on exit, also on failure and Ctrl-C. The host's own interfaces and rulesets are never touched: the
# nftables table and the iptables chain live inside lvbench-rx.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
# The parts of the bench, by job (shellcheck -x reads them with this file).
# shellcheck source-path=SCRIPTDIR source=lib/bench_render.sh
. "$(dirname "$0")/lib/bench_render.sh"
# shellcheck source-path=SCRIPTDIR source=lib/bench_e2e.sh
. "$(dirname "$0")/lib/bench_e2e.sh"
# shellcheck source-path=SCRIPTDIR source=lib/bench_accuracy.sh
. "$(dirname "$0")/lib/bench_accuracy.sh"
# shellcheck source-path=SCRIPTDIR source=lib/bench_controller.sh
. "$(dirname "$0")/lib/bench_controller.sh"

BENCH_PACKAGES=(nftables iptables gnuplot-nox jq curl)

QUICK=0 RENDER_ONLY=0
ROUNDS=5          # end-to-end rounds (the median of per-round ratios is reported)
E2E_SECONDS=5     # flood length per receiver and round
ACC_SECONDS=10    # accuracy sender length
ACC_TOTAL_PPS=200000
STATS_RUNS=21
STATUS_RUNS=7
TOP_RUNS=7        # each of the two `levee top` commands
SCRAPE_RUNS=21    # GET /metrics of `levee run`
SLOW_SCRAPE_RUNS=200  # the same while 64 slow connections are open (a p99)
PRUNE_RUNS=7
LIST_ENTRIES=1000000  # host entries of the list benchmarks
LIST_RUNS=3       # reloads that replace every entry
DENY_ADD_RUNS=7   # `levee deny add` of one entry to the full list
while [ $# -gt 0 ]; do
  case $1 in
    --quick) QUICK=1 ;;
    --render) RENDER_ONLY=1 ;;
    --rounds) ROUNDS=${2:?--rounds needs a number}; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [--quick] [--rounds N] | --render" >&2; exit 2 ;;
  esac
  shift
done
if [ "$QUICK" = 1 ]; then
  ROUNDS=1 E2E_SECONDS=1 ACC_SECONDS=2 STATS_RUNS=5 STATUS_RUNS=3 TOP_RUNS=3 PRUNE_RUNS=3 SCRAPE_RUNS=5 SLOW_SCRAPE_RUNS=20
  LIST_ENTRIES=100000 LIST_RUNS=1 DENY_ADD_RUNS=3
fi
[[ $ROUNDS =~ ^[1-9][0-9]?$ ]] || die "--rounds takes 1 to 99"

NS_TX=lvbench-tx NS_RX=lvbench-rx
DEV_TX=lvbench0 DEV_RX=lvbench1
B=$LEVEE_BUILD
# Where results go: the published files for a full run (and --render), the build tree
# for --quick.
OUT=$LEVEE_ROOT/bench
MD=$LEVEE_ROOT/BENCHMARKS.md
if [ "$QUICK" = 1 ] && [ "$RENDER_ONLY" = 0 ]; then
  OUT=$B/bench
  MD=$OUT/BENCHMARKS.md
fi

# --render: only the chart and the tables (render: scripts/lib/bench_render.sh).
if [ "$RENDER_ONLY" = 1 ]; then
  command -v gnuplot >/dev/null && command -v jq >/dev/null || { need_root; ensure_packages gnuplot-nox jq; }
  render
  exit 0
fi
need_root
# One bench at a time: a second one would sweep the first one's sandbox as left over.
LOCK=/run/lock/levee-bench.lock
mkdir -p /run/lock
exec 9>>"$LOCK"
flock -n 9 || die "another scripts/bench.sh is running (it holds $LOCK)"
trap 'rm -f "$LOCK"' EXIT

ensure_packages "${LEVEE_PACKAGES[@]}" "${BENCH_PACKAGES[@]}"
ensure_bpffs
# Always (re)build: stale binaries would publish someone else's numbers. Only the four
# tools the bench runs; a no-op when they are up to date.
build_levee levee levee-flood levee-progbench levee-benchrx >/dev/null

T_START=$EPOCHREALTIME
in_rx() { nsenter --net="/var/run/netns/$NS_RX" "$@"; }
levee_rx() { in_rx "$B/levee" "$@"; }
benchrx() { "$B/levee-benchrx" "$@"; }
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

TMP=
cleanup() {
  set +e
  [ -z "${SLOW_PID:-}" ] || kill -- -"$SLOW_PID" 2>/dev/null
  [ -z "${RUN_PID:-}" ] || { kill "$RUN_PID" 2>/dev/null; wait "$RUN_PID" 2>/dev/null; }
  if [ -e "/var/run/netns/$NS_RX" ]; then
    levee_rx detach "$DEV_RX" >/dev/null 2>&1
    benchrx detach "$DEV_RX" >/dev/null 2>&1
    in_rx nft delete table netdev lvbench 2>/dev/null
    in_rx iptables -t raw -D PREROUTING -j LVBENCH 2>/dev/null
    in_rx iptables -t raw -F LVBENCH 2>/dev/null
    in_rx iptables -t raw -X LVBENCH 2>/dev/null
  fi
  ip netns del "$NS_TX" 2>/dev/null
  ip netns del "$NS_RX" 2>/dev/null
  # Pins and lock files of ours that outlived their interface (a run killed hard), and
  # the lock `levee run` leaves: the names are ours.
  rm -rf "/sys/fs/bpf/levee/$DEV_RX" "/sys/fs/bpf/levee-bench/$DEV_RX" "/run/levee/$DEV_RX.lock" \
    "/run/levee/$DEV_RX.daemon"
  rmdir /sys/fs/bpf/levee /sys/fs/bpf/levee-bench 2>/dev/null
  [ -z "$TMP" ] || rm -rf "$TMP"
  return 0
}
trap 'cleanup; rm -f "$LOCK"' EXIT
trap 'exit 130' INT TERM
cleanup  # what a previous run killed with SIGKILL left behind
TMP=$(mktemp -d /tmp/levee-bench.XXXXXX)
RAW=$TMP/raw.jsonl
: >"$RAW"
record() { jq -cn "$@" >>"$RAW"; }

# Share of the machine busy with other work over half a second (0..1). The numbers
# move by 2x when other jobs run; each round records it, and a full run waits (up to a
# minute) for a quiet machine before each round.
cpu_busy() {
  local a b
  a=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
  sleep 0.5
  b=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
  awk -v a="$a" -v b="$b" 'BEGIN { split(a, x); split(b, y); t = y[2] - x[2];
    printf "%.2f\n", (t > 0 ? (y[1] - x[1]) / t : 0) }'
}
wait_quiet() {
  local busy i
  for i in $(seq 1 12); do
    busy=$(cpu_busy)
    [ "$QUICK" = 1 ] && break
    awk -v b="$busy" 'BEGIN { exit !(b < 0.15) }' && break
    echo "   machine busy ($busy of both CPUs in use by other work): waiting" >&2
    sleep 4.5
  done
  echo "$busy"
}

say "sandbox: $NS_TX ($DEV_TX) --veth, 2 queues--> $NS_RX ($DEV_RX, 198.18.0.1, 2001:db8::1)"
ip netns add "$NS_TX"
ip netns add "$NS_RX"
ip link add "$DEV_TX" netns "$NS_TX" numtxqueues 2 numrxqueues 2 type veth \
  peer name "$DEV_RX" netns "$NS_RX" numtxqueues 2 numrxqueues 2
for ns in "$NS_TX" "$NS_RX"; do
  # No IPv6 stack on the pair: no router or neighbour solicitations land in a counter,
  # and IPv6 frames a filter passes die at ipv6_rcv instead of a route lookup.
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done
ip netns exec "$NS_TX" sysctl -qw "net.ipv6.conf.$DEV_TX.disable_ipv6=1"
ip netns exec "$NS_RX" sysctl -qw "net.ipv6.conf.$DEV_RX.disable_ipv6=1"
ip -n "$NS_TX" addr add 198.18.0.2/24 dev "$DEV_TX"
ip -n "$NS_RX" addr add 198.18.0.1/24 dev "$DEV_RX"
ip -n "$NS_TX" link set "$DEV_TX" up
ip -n "$NS_RX" link set "$DEV_RX" up
ip -n "$NS_RX" link set lo up  # `levee run`'s metrics listen on the namespace's loopback

flood() { "$B/levee-flood" --netns "$NS_TX" --dev "$DEV_TX" --json "$@"; }

# ---- 1. program cost -------------------------------------------------------------------
say "1. program cost (levee-progbench$([ "$QUICK" = 1 ] && echo ' --quick'))"
if [ "$QUICK" = 1 ]; then
  "$B/levee-progbench" --quick --json "$TMP/progbench.json"
else
  "$B/levee-progbench" --repeat 10M --runs 5 --json "$TMP/progbench.json"
fi

# ---- 2. end to end ---------------------------------------------------------------------
# The receivers and the rounds: scripts/lib/bench_e2e.sh.
say "2. end to end: ${#E2E_ROWS[@]} receivers x $ROUNDS round(s), ${E2E_SECONDS} s live flood each"
e2e_rounds

# ---- 3. accuracy -----------------------------------------------------------------------
say "3. accuracy: paced sender at ${ACC_TOTAL_PPS} pps for ${ACC_SECONDS} s, 2x and 10x the limit"
accuracy_runs

# ---- 4. memory, 5. controller ----------------------------------------------------------
say "4. memory per tracked source, 5. controller at 1M sources"
memory_cases
command_runs
scrape_runs
prune_runs
list_runs
record_controller

# ---- results ---------------------------------------------------------------------------
say "results: ${OUT#"$LEVEE_ROOT"/}/results.json, ${OUT#"$LEVEE_ROOT"/}/results.png, ${MD#"$LEVEE_ROOT"/}"
mkdir -p "$OUT"
# A quick run redraws its tables in a copy of the published page (prose and all), to be
# read or diffed beside it.
[ "$MD" = "$LEVEE_ROOT/BENCHMARKS.md" ] || cp "$LEVEE_ROOT/BENCHMARKS.md" "$MD"
wall=$(awk -v a="$T_START" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
jq -n --slurpfile raw "$RAW" --slurpfile pb "$TMP/progbench.json" \
  --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg kernel "$(uname -r)" \
  --arg cpu "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)" --argjson ncpu "$(nproc)" \
  --arg memtotal "$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)" \
  --arg os "Debian $(cat /etc/debian_version 2>/dev/null || echo '?')" \
  --arg virt "$(systemd-detect-virt 2>/dev/null || echo unknown)" \
  --arg clang "$(clang --version | sed -n 's/.*clang version \([^ ]*\).*/\1/p' | head -1)" \
  --arg libbpf "$(pkg-config --modversion libbpf 2>/dev/null || echo '?')" \
  --arg bpftool "$(bpftool version 2>/dev/null | sed -n 's/.*v\([0-9.]*\).*/\1/p' | head -1)" \
  --arg commit "$(git -C "$LEVEE_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$LEVEE_ROOT" diff --quiet HEAD -- bpf userspace tools 2>/dev/null || echo '+local changes')" \
  --arg mode "$([ "$QUICK" = 1 ] && echo quick || echo full)" --argjson rounds "$ROUNDS" \
  --argjson e2e_s "$E2E_SECONDS" --argjson acc_s "$ACC_SECONDS" --argjson acc_pps "$ACC_TOTAL_PPS" \
  --argjson wall "$wall" -f "$LEVEE_ROOT/scripts/lib/bench_results.jq" >"$OUT/results.json"

render
jq -r '.goals[] | "   \(if .met then "met    " elif .pending then "not judged" else "NOT met" end)  \(.goal): \(.measured)"' "$OUT/results.json"
echo "   wall time $(awk -v a="$T_START" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s"
