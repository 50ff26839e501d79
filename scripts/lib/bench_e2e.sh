# bench_e2e.sh - scripts/bench.sh's part 2, end to end: the receivers it compares (one
# row each), how each is set up, read and torn down inside the receiving namespace, and
# the rounds that flood each of them in turn. Sourced by scripts/bench.sh, not run.
# shellcheck shell=bash

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

# Every receiver once per round, ${E2E_SECONDS} s of live flood each; one e2e record per
# receiver and round.
e2e_rounds() {
  local round busy row name threads src what rx0 drop0 rx1 drop1 f
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
}
