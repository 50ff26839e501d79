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

# BENCHMARKS.md: replace what lies between a pair of marker comments.
refresh_md() {  # section, file with the new body
  local begin="<!-- bench:$1:begin -->" end="<!-- bench:$1:end -->"
  if ! grep -qF "$begin" "$MD" || ! grep -qF "$end" "$MD"; then
    echo "   BENCHMARKS.md has no $begin ... $end: section $1 not refreshed" >&2
    return 0
  fi
  awk -v b="$begin" -v e="$end" -v f="$2" '
    $0 == b { print; while ((getline line < f) > 0) print line; skip = 1; next }
    $0 == e { skip = 0 }
    !skip' "$MD" >"$MD.tmp" && mv "$MD.tmp" "$MD"
}

# $OUT/results.png and the tables of $MD, from $OUT/results.json.
render() {
  local json=$OUT/results.json tmp section
  [ -f "$json" ] || die "no $json to render"
  tmp=$(mktemp -d /tmp/levee-bench-render.XXXXXX)
  # Chart: end-to-end Mpps per receiver (median; bars from the slowest to the fastest
  # round) and ns/packet per program case (median).
  jq -r '.end_to_end.receivers[] | "\(.name)\t\(.mpps_median)\t\(.mpps_runs | min)\t\(.mpps_runs | max)"' \
    "$json" >"$tmp/e2e.dat"
  jq -r '.program_cost.cases[] | "\(.name)\t\(.median_ns)"' "$json" >"$tmp/prog.dat"
  gnuplot <<EOF || { rm -rf "$tmp"; die "gnuplot failed"; }
set terminal pngcairo size 1400,600 font "sans,10"
set output "$OUT/results.png"
set multiplot layout 1,2 title "$(jq -r '"levee, \(.mode) run \(.date): \(.machine.cpus) CPUs, kernel \(.machine.kernel)"' "$json")"
set style fill solid 0.6 border -1
set boxwidth 0.7
set grid ytics
set xtics rotate by 30 right noenhanced
set bmargin 8
set rmargin 3
set title "end to end through one veth: Mpps dropped (random: received)"
set ylabel "Mpps"
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
plot "$tmp/e2e.dat" using 0:2:xtic(1) with boxes lc rgb "#4a7ab0" notitle, \
     "" using 0:2:3:4 with yerrorbars lc rgb "black" pt 0 notitle, \
     "" using 0:4:(sprintf("%.2f", \$2)) with labels offset 0,0.8 notitle
set title "program cost (BPF\\\_PROG\\\_TEST\\\_RUN): ns per packet"
set ylabel "ns / packet"
set logscale y
set yrange [1:*]
set offsets 0, 0, 0, 0
plot "$tmp/prog.dat" using 0:2:xtic(1) with boxes lc rgb "#c0703a" notitle, \
     "" using 0:2:(sprintf("%.1f", \$2)) with labels offset 0,0.8 notitle
unset multiplot
EOF
  if [ -f "$MD" ]; then
    for section in run program e2e accuracy memory controller goals; do
      jq -r --arg s "$section" -f "$LEVEE_ROOT/scripts/lib/bench_tables.jq" "$json" >"$tmp/$section.md"
      refresh_md "$section" "$tmp/$section.md"
    done
  else
    echo "   no $MD: tables not written" >&2
  fi
  rm -rf "$tmp"
}

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
# name | threads | flood sources | what (limits of levee rows: a one-source flood is held
# at 1k pps burst 100 like the nftables and iptables meters; 10k sources at 10 pps
# burst 10 so that nearly all is dropped)
E2E_ROWS=(
  "bare|1|v4one|bare XDP_DROP (counting)"
  "bare_rand|1|v6rand|bare XDP_DROP (counting), a new random IPv6 /64 every packet"
  "floor|1|v4one|floor: parse + LRU lookup + bpf_ktime_get_ns + drop (counting)"
  "levee|1|v4one|levee, one IPv4 source (1k pps, burst 100)"
  "levee_10k|1|v4rr|levee, 10,000 IPv4 sources round robin (10 pps, burst 10), known sources"
  "levee_v6|1|v6one|levee, one IPv6 source (1k pps, burst 100)"
  "levee_random|1|v6rand|levee as attached (the autopilot engaged), a new random IPv6 /64 every packet"
  "levee_random4|1|v4rand|levee as attached (the autopilot engaged), random IPv4 sources of a /15"
  "levee_admit|1|v6rand|levee, a new random IPv6 /64 every packet, admission budget 1k new sources/s"
  "levee_admit4|1|v4rand|levee, random IPv4 sources of a /15, admission budget 1k new sources/s"
  "levee_unguarded|1|v6rand|levee with the autopilot off and no budget, a new random IPv6 /64 every packet (1M-entry LRU full)"
  "levee_syn|1|v6syn|levee, SYN authentication: a SYN from a new random IPv6 /64 every packet, each answered with a cookie SYN-ACK"
  "levee_syn4|1|v4syn|levee, SYN authentication: SYNs from random IPv4 sources of a /15 (512 /24s at their answer rate; the rest refused an answer)"
  "nft|1|v4one|nftables netdev ingress meter, one source (XDP_PASS in front)"
  "hashlimit|1|v4one|iptables hashlimit, raw PREROUTING, one source (XDP_PASS in front)"
  "bare_2t|2|v4one|bare XDP_DROP (counting), 2 sender threads"
  "levee_2t|2|v4one|levee, one IPv4 source, 2 sender threads"
)
flood_sources() {
  case $1 in
    v4one) echo "--dst 198.18.0.1 --src 198.18.1.5" ;;
    v4rr) echo "--dst 198.18.0.1 --sources 10000 --src-base 198.18.16.0" ;;
    v6one) echo "--dst 2001:db8::1 --src 2001:db8:1::5" ;;
    v6rand) echo "--dst 2001:db8::1 --random 2001:db8:8000::/33" ;;
    v4rand) echo "--dst 198.18.0.1 --random 198.18.0.0/15" ;;
    v6syn) echo "--dst 2001:db8::1 --random 2001:db8:8000::/33 --proto syn --dport 80" ;;
    v4syn) echo "--dst 198.18.0.1 --random 198.18.0.0/15 --proto syn --dport 80" ;;
  esac
}

rx_setup() {
  case $1 in
    bare|bare_2t|bare_rand) benchrx attach "$DEV_RX" --prog drop --netns "$NS_RX" >/dev/null ;;
    floor) benchrx attach "$DEV_RX" --prog floor --netns "$NS_RX" >/dev/null ;;
    levee|levee_v6|levee_2t|levee_random|levee_random4) levee_rx attach "$DEV_RX" --rate 1k --burst 100 >/dev/null ;;
    levee_10k)
      # A botnet of real addresses: known sources (a floor above their 10,000 arrivals
      # at once, which would otherwise put most of them on probation first).
      printf '[default]\nrate = 10\nburst = 10\n[auto]\nfloor = "20k"\n' >"$TMP/10k.toml"
      levee_rx attach "$DEV_RX" --config "$TMP/10k.toml" >/dev/null
      ;;
    levee_unguarded)
      printf '[default]\nrate = 10\nburst = 10\nnew_sources = "off"\nescalate = "off"\n' >"$TMP/unguarded.toml"
      levee_rx attach "$DEV_RX" --config "$TMP/unguarded.toml" >/dev/null
      ;;
    levee_syn|levee_syn4)
      # The veth's sender end runs no XDP program, so the SYN-ACKs levee sends are
      # dropped by the veth (a NIC would send them): the cost measured is levee's.
      printf '[[class]]\nname = "web"\nmatch = { proto = "tcp", port = 80 }\nrate = "1k"\nburst = 100\nsyn_auth = "cookie"\n[default]\nrate = "1k"\nburst = 100\n' >"$TMP/syn.toml"
      levee_rx attach "$DEV_RX" --config "$TMP/syn.toml" >/dev/null
      ;;
    levee_admit|levee_admit4)
      printf '[default]\nrate = "1k"\nburst = 100\nnew_sources = "1k"\nnew_sources_burst = 100\n' >"$TMP/admit.toml"
      levee_rx attach "$DEV_RX" --config "$TMP/admit.toml" >/dev/null
      ;;
    nft)
      benchrx attach "$DEV_RX" --prog pass --netns "$NS_RX" >/dev/null
      # The earliest hook nftables has: netdev ingress, before any IP processing.
      in_rx nft -f - <<EOF
table netdev lvbench {
	set meter4 {
		type ipv4_addr
		size 65536
		flags dynamic,timeout
		timeout 60s
	}
	chain ingress {
		type filter hook ingress device "$DEV_RX" priority -500; policy accept;
		update @meter4 { ip saddr limit rate over 1000/second burst 100 packets } counter drop
	}
}
EOF
      ;;
    hashlimit)
      benchrx attach "$DEV_RX" --prog pass --netns "$NS_RX" >/dev/null
      in_rx iptables -t raw -N LVBENCH
      in_rx iptables -t raw -A LVBENCH -m hashlimit --hashlimit-above 1000/sec --hashlimit-burst 100 \
        --hashlimit-mode srcip --hashlimit-name lvbench --hashlimit-htable-size 65536 -j DROP
      in_rx iptables -t raw -A PREROUTING -j LVBENCH
      ;;
  esac
}
# Prints "received dropped", both from the receiver's own counters.
rx_read() {
  local rx
  case $1 in
    bare|bare_2t|bare_rand|floor) rx=$(benchrx count "$DEV_RX" --json | jq .packets); echo "$rx $rx" ;;
    levee*) levee_rx stats "$DEV_RX" --json | jq -r '"\(.rx_packets) \(.dropped_packets)"' ;;
    nft)
      rx=$(benchrx count "$DEV_RX" --json | jq .packets)
      echo "$rx $(in_rx nft -j list chain netdev lvbench ingress \
        | jq '[.nftables[].rule? // empty | .expr[] | .counter? // empty | .packets] | add')"
      ;;
    hashlimit)
      rx=$(benchrx count "$DEV_RX" --json | jq .packets)
      echo "$rx $(in_rx iptables -t raw -L LVBENCH -n -v -x | awk '$3 == "DROP" { print $1 }')"
      ;;
  esac
}
rx_teardown() {
  case $1 in
    levee*) levee_rx detach "$DEV_RX" >/dev/null ;;
    nft) in_rx nft delete table netdev lvbench; benchrx detach "$DEV_RX" ;;
    hashlimit)
      in_rx iptables -t raw -D PREROUTING -j LVBENCH
      in_rx iptables -t raw -F LVBENCH
      in_rx iptables -t raw -X LVBENCH
      benchrx detach "$DEV_RX"
      ;;
    *) benchrx detach "$DEV_RX" ;;
  esac
}

say "2. end to end: ${#E2E_ROWS[@]} receivers x $ROUNDS round(s), ${E2E_SECONDS} s live flood each"
for round in $(seq 1 "$ROUNDS"); do
  busy=$(wait_quiet)
  printf '   round %d (other load before it: %s)\n' "$round" "$busy"
  for row in "${E2E_ROWS[@]}"; do
    IFS='|' read -r name threads src what <<<"$row"
    rx_setup "$name"
    # A random-source flood is measured as under a sustained attack: without the
    # autopilot with the LRU already full (evicting; filling it is cheaper per packet),
    # with it once it has engaged (250 ms of abnormal arrivals), as the same 2M
    # packets make it do; the 10,000 sources once they are known.
    # shellcheck disable=SC2046
    case $name in
      levee_unguarded|levee_random|levee_random4|levee_10k) flood $(flood_sources "$src") --count 2000000 >/dev/null ;;
    esac
    read -r rx0 drop0 < <(rx_read "$name")
    # shellcheck disable=SC2046
    f=$(flood $(flood_sources "$src") --method live --threads "$threads" --duration "$E2E_SECONDS")
    read -r rx1 drop1 < <(rx_read "$name")
    rx_teardown "$name"
    record --arg name "$name" --arg what "$what" --argjson round "$round" --argjson threads "$threads" \
      --argjson rx $((rx1 - rx0)) --argjson dropped $((drop1 - drop0)) --argjson busy "$busy" \
      --argjson f "$f" '{kind: "e2e", $round, $name, $what, $threads, $rx, $dropped, busy_before: $busy,
        seconds: $f.seconds, sent: $f.packets, sent_pps: $f.pps, dev_tx_dropped: $f.dev_tx_dropped}'
    jq -r --arg n "$name" 'select(.name == $n and .round == '"$round"') |
      "   \(.name | . + " " * (14 - length)) dropped \(.dropped / .seconds / 1e6 * 100 | round / 100) Mpps  received \(.rx / .seconds / 1e6 * 100 | round / 100) Mpps  (sent \(.sent_pps / 1e6 * 100 | round / 100))"' "$RAW"
  done
done

# ---- 3. accuracy -----------------------------------------------------------------------
say "3. accuracy: paced sender at ${ACC_TOTAL_PPS} pps for ${ACC_SECONDS} s, 2x and 10x the limit"
percpu_rx() {  # packets levee saw on each CPU (all reasons), as a JSON array
  bpftool map dump pinned "/sys/fs/bpf/levee/$DEV_RX/lv_percpu" -j \
    | jq -c '[.[0].formatted.values[] | [.value.by_reason[].packets] | add]'
}
for threads in 1 2; do
  for n in 1 100 10000; do
    for factor in 2 10; do
      per_src=$((ACC_TOTAL_PPS / n))
      rate=$((per_src / factor))
      burst=$((rate / 10 > 10 ? rate / 10 : 10))
      # The per-source limiter alone: the autopilot would rightly see 10,000 sources
      # arriving within 50 ms as abnormal, and 100 sources of one /16 at 1,000 pps each as
      # a network over 64 sources' worth.
      levee_rx attach "$DEV_RX" --rate "$rate" --burst "$burst" --max-sources 100k \
        --new-sources off --escalate off >/dev/null
      if [ "$n" = 1 ]; then src="--src 198.18.2.1"; else src="--sources $n --src-base 198.18.32.0"; fi
      # shellcheck disable=SC2086
      f=$(flood --dst 198.18.0.1 $src --method packet --rate "$ACC_TOTAL_PPS" --threads "$threads" \
        --duration "$ACC_SECONDS")
      passed=$(levee_rx stats "$DEV_RX" --json | jq .passed.conforming)
      percpu=$(percpu_rx)
      levee_rx detach "$DEV_RX" >/dev/null
      record --argjson n "$n" --argjson factor "$factor" --argjson threads "$threads" --argjson rate "$rate" \
        --argjson burst "$burst" --argjson passed "$passed" --argjson f "$f" --argjson percpu "$percpu" \
        --argjson total "$ACC_TOTAL_PPS" \
        '{kind: "accuracy", sources: $n, $factor, $threads, $rate, $burst, send_pps: $total, sent: $f.packets,
          seconds: ($f.end_unix - $f.start_unix), schedule_slipped: $f.schedule_slipped, $passed,
          per_cpu_seen: $percpu}
         | .expected = .sources * (.burst + .rate * .seconds) | .ratio = .passed / .expected
         # What an exact limiter passes to this sender, in whole packets: each source sends
         # m packets evenly over its span (m - 1) x sources / total and passes
         # burst + floor(rate x span) of them (the sender rate is a whole multiple of the
         # limit, so passes fall on arrivals).
         | (.sent / .sources) as $m | (($m - 1) * .sources / .send_pps) as $span
         | .exact = .sources * ([$m, .burst + (.rate * $span + 1e-6 | floor)] | min)
         | .ratio_exact = .passed / .exact'
      jq -r 'select(.kind == "accuracy") | "   \(.sources) source(s) at \(.factor)x, \(.threads) thread(s): passed \(.passed) expected \(.expected | round)  ratio \(.ratio * 10000 | round / 10000), to the exact count \(.ratio_exact * 10000 | round / 10000)  (per CPU \(.per_cpu_seen))"' "$RAW" | tail -1
    done
  done
done

# ---- 4. memory, 5. controller ----------------------------------------------------------
say "4. memory per tracked source, 5. controller at 1M sources"
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
levee_rx attach "$DEV_RX" --rate 10 --burst 10 >/dev/null
memory_case ipv4 131072 --dst 198.18.0.1 --src-base 198.18.0.0
levee_rx detach "$DEV_RX" >/dev/null
levee_rx attach "$DEV_RX" --rate 10 --burst 10 --prefix6 128 >/dev/null
memory_case ipv6 1000000 --dst 2001:db8::1 --src-base 2001:db8:1::
busy=$(wait_quiet)
stats_ms=$(time_runs "$STATS_RUNS" "$B/levee" stats "$DEV_RX" --json | jq -sc .)
status_ms=$(time_runs "$STATUS_RUNS" "$B/levee" status --json | jq -sc .)
top_ms=$(time_runs "$TOP_RUNS" "$B/levee" top "$DEV_RX" -n 10 | jq -sc .)
top_bytes_ms=$(time_runs "$TOP_RUNS" "$B/levee" top "$DEV_RX" -n 10 --by bytes --json | jq -sc .)
top=$(levee_rx top "$DEV_RX" -n 10 --json)
# A Prometheus scrape of `levee run` at 1M sources: it adopts the attachment (a reload
# into the same class keeps the sources) and serves the counters, the policy and the
# counts of its maintenance walk, which is done once before the timing starts; a scrape
# walks nothing. Timed with curl, whose own start-up is in the figure.
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
# Last: prune walks every entry as top does, and also checks each for idleness, deletes
# the idle ones and refills the known-source filter from the rest. Nothing of the fill
# has been idle an hour, so every run walks the full map and deletes nothing.
prune_ms=$(time_runs "$PRUNE_RUNS" "$B/levee" prune "$DEV_RX" --idle 1h --json | jq -sc .)
prune=$(levee_rx prune "$DEV_RX" --idle 1h --json)
tracked=$(levee_rx status --json | jq ".interfaces[] | select(.interface == \"$DEV_RX\") | .sources")
levee_rx detach "$DEV_RX" >/dev/null
# List changes at LIST_ENTRIES host entries: a reload whose config replaces every deny
# entry by as many others (alternating between two files of IPv6 hosts of
# 2001:db8::/32; list entries are data, no traffic goes to them), then one `deny add`
# to the full list. Each costs what it changes, not the size of the list.
list_config() {  # file, third group of the addresses (a number, written in hex)
  { printf '[default]\nrate = 10\nburst = 10\n[lists]\ndeny = [\n'
    awk -v n="$LIST_ENTRIES" -v g="$2" 'BEGIN { for (i = 0; i < n; i++) printf "\"2001:db8:%x::%x:%x\",\n", g, int(i / 65536), i % 65536 }'
    printf ']\n'; } >"$1"
}
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
