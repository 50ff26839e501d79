#!/usr/bin/env bash
# scripts/demo.sh - levee in a sandbox: a flood from spoofed random sources and a
# well-behaved client side by side, the counters live, then the tally. levee is attached
# with nothing but a per-source limit: its autopilot (on by default) finds the flood of
# new sources and refuses it, and the client, known before the flood, loses nothing.
# Then new TCP clients connect through a spoofed SYN flood: syn_auth = "auto" (on by
# default) answers the SYNs of sources levee does not know with cookies once the flood
# engages the autopilot, and a client's handshake proves it.
#
#   lvdemo-c (client 198.18.0.2 + attacker) --veth--> lvdemo-s (server 198.18.0.1, levee)
#
# Builds if needed, creates two network namespaces joined by a veth pair, attaches
# levee to the server side, and removes everything on exit (also on Ctrl-C).
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"

SECONDS_OF_FLOOD=${DEMO_SECONDS:-8}
RATE=100     # packets/s each source may send
BURST=20
CLIENT_PPS=50
TCP_CLIENTS=40 SYN_RATE=300000 SYN_SECONDS=6
NS_C=lvdemo-c NS_S=lvdemo-s
DEV_C=lvdemo0 DEV_S=lvdemo1
B=$LEVEE_BUILD

need_root
ensure_packages python3  # the TCP listener and clients of part 2
if [ ! -x "$B/levee" ] || [ ! -x "$B/levee-flood" ] || [ ! -x "$B/levee-sink" ] ||
  [ ! -f "$B/tests/e2e/bpf/peer_sink.bpf.o" ]; then
  ensure_packages "${LEVEE_PACKAGES[@]}"
  # Only what the demo runs: the tests are scripts/test.sh's to build.
  build_levee levee levee-flood levee-sink peer_sink_skel_gen
fi
ensure_bpffs

in_server() { nsenter --net="/var/run/netns/$NS_S" "$@"; }
TMP=
cleanup() {
  jobs -p | xargs -r kill 2>/dev/null || true
  wait 2>/dev/null || true
  in_server "$B/levee" detach "$DEV_S" >/dev/null 2>&1 || true
  ip netns del "$NS_C" 2>/dev/null || true
  ip netns del "$NS_S" 2>/dev/null || true
  [ -z "$TMP" ] || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cleanup  # a previous demo killed hard
TMP=$(mktemp -d)

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "sandbox: $NS_C ($DEV_C, client 198.18.0.2) <-> $NS_S ($DEV_S, server 198.18.0.1)"
ip netns add "$NS_C"
ip netns add "$NS_S"
ip link add "$DEV_C" netns "$NS_C" type veth peer name "$DEV_S" netns "$NS_S"
ip -n "$NS_C" addr add 198.18.0.2/24 dev "$DEV_C"
ip -n "$NS_S" addr add 198.18.0.1/24 dev "$DEV_S"
# Part 2's: the server's IPv6 address before the attach (levee reads the host's own
# addresses then), the new TCP clients' addresses, and the way back to them.
ip -n "$NS_C" addr add 2001:db8::2/64 dev "$DEV_C" nodad
ip -n "$NS_S" addr add 2001:db8::1/64 dev "$DEV_S" nodad
for i in $(seq 1 "$TCP_CLIENTS"); do ip -n "$NS_C" addr add "2001:db8:100:$i::1/128" dev "$DEV_C" nodad; done
for ns in "$NS_C" "$NS_S"; do ip -n "$ns" link set lo up; done
ip -n "$NS_C" link set "$DEV_C" up
ip -n "$NS_S" link set "$DEV_S" up
ip -n "$NS_S" route add 2001:db8::/32 dev "$DEV_S"

say "levee attach $DEV_S --rate $RATE --burst $BURST   (nothing else: the autopilot is on by default)"
in_server "$B/levee" attach "$DEV_S" --rate "$RATE" --burst "$BURST" --max-sources 100k
# What the autopilot does, as it does it: engaged, released, escalated.
in_server "$B/levee" events "$DEV_S" --duration $((SECONDS_OF_FLOOD + 2)) >"$TMP/events" 2>&1 &

say "a well-behaved client at $CLIENT_PPS packets/s; after a second, for ${SECONDS_OF_FLOOD}s, a flood"
echo "   from spoofed random sources of 198.19.0.0/16 at full speed; the server counts what arrives"
"$B/levee-sink" --netns "$NS_S" --port 9 --duration $((SECONDS_OF_FLOOD + 3)) >"$TMP/sink" &
sleep 0.3
"$B/levee-flood" --netns "$NS_C" --dev "$DEV_C" --src 198.18.0.2 --dst 198.18.0.1 --dport 9 \
  --method packet --rate "$CLIENT_PPS" --duration $((SECONDS_OF_FLOOD + 1)) --json >"$TMP/client" &
sleep 1  # the client is known before the flood starts
"$B/levee-flood" --netns "$NS_C" --dev "$DEV_C" --dst 198.18.0.1 --random 198.19.0.0/16 \
  --dport 9 --duration "$SECONDS_OF_FLOOD" --json >"$TMP/flood" 2>"$TMP/flood.err" &
in_server "$B/levee" stats "$DEV_S" --watch --count "$SECONDS_OF_FLOOD"
wait

json_int() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" "$2"; }
sent_client=$(json_int packets "$TMP/client")
sent_flood=$(json_int packets "$TMP/flood")
got_client=$(awk '$1 == "198.18.0.2" { print $2 }' "$TMP/sink")
got_total=$(awk '$1 == "total" { print $2 }' "$TMP/sink")
got_client=${got_client:-0}
got_flood=$((got_total - got_client))

say "levee stats $DEV_S"
in_server "$B/levee" stats "$DEV_S"

say "result"
if [ -z "$sent_flood" ]; then
  echo "the flood generator failed:"; cat "$TMP/flood.err"; exit 1
fi
printf '  client   sent %9d   server received %9d   lost %d\n' "$sent_client" "$got_client" $((sent_client - got_client))
printf '  flood    sent %9d   server received %9d   (its /16 escalated: its new sources refused)\n' \
  "$sent_flood" "$got_flood"

say "what the autopilot said (levee events)"
cat "$TMP/events"

# ---- 2. new TCP clients through a spoofed SYN flood --------------------------------------
# A random IPv6 SYN flood spreads over many /48s: no network is escalated, the class's
# autopilot engages, and syn_auth = "auto" (the default) challenges the SYNs of sources
# levee does not know: a new client's handshake proves it, a spoofed SYN gets a SYN-ACK
# that nobody answers. On a veth, levee's answers (XDP_TX) reach the far end only if it
# runs an XDP program of its own (a NIC needs nothing): the tests' pass-through sink.
say "new TCP clients through a spoofed SYN flood: $TCP_CLIENTS clients levee has never seen, 10/s,"
echo "   connect to a listener at [2001:db8::1]:80 while SYNs from random sources of 2001:db8:8000::/33 arrive"
ip -n "$NS_C" link set "$DEV_C" xdp obj "$B/tests/e2e/bpf/peer_sink.bpf.o" sec xdp
ip netns exec "$NS_S" python3 -c '
import socket
s = socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("2001:db8::1", 80)); s.listen(128); s.settimeout(0.2)
while True:
    try: s.accept()[0].close()
    except OSError: pass' &
listener=$!
sleep 0.5
"$B/levee-flood" --netns "$NS_C" --dev "$DEV_C" --dst 2001:db8::1 --random 2001:db8:8000::/33 --proto syn \
  --dport 80 --rate "$SYN_RATE" --duration "$SYN_SECONDS" --json >"$TMP/synflood" 2>"$TMP/synflood.err" &
sleep 1.5  # the flood first: the class engages
ip netns exec "$NS_C" python3 -c '
import socket, sys, time
n = int(sys.argv[1]); ok = 0
for i in range(1, n + 1):
    t = time.monotonic()
    c = socket.socket(socket.AF_INET6); c.settimeout(3)
    try:
        c.bind(("2001:db8:100:%d::1" % i, 0)); c.connect(("2001:db8::1", 80)); ok += 1
    except OSError as e: print("client %d: %s after %.1f s" % (i, e, time.monotonic() - t), file=sys.stderr)
    c.close(); time.sleep(max(0, 0.1 - (time.monotonic() - t)))
print(ok)' "$TCP_CLIENTS" >"$TMP/tcp"
kill "$listener"
wait
connected=$(cat "$TMP/tcp")
sent_syn=$(json_int packets "$TMP/synflood")
[ -n "$sent_syn" ] || { echo "the SYN flood generator failed:"; cat "$TMP/synflood.err"; exit 1; }

say "levee stats $DEV_S"
in_server "$B/levee" stats "$DEV_S"
say "result"
printf '  SYN flood sent %9d   new TCP clients connected %d of %d\n' "$sent_syn" "$connected" "$TCP_CLIENTS"

say "levee status"
in_server "$B/levee" status
[ "$got_client" -eq "$sent_client" ] || { echo "the client lost packets"; exit 1; }
[ "$connected" -eq "$TCP_CLIENTS" ] || { echo "new TCP clients failed to connect"; exit 1; }
