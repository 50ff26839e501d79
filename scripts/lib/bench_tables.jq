# bench_tables.jq - one Markdown section of BENCHMARKS.md from bench/results.json.
#   jq -r --arg s SECTION -f bench_tables.jq bench/results.json
# SECTION: run | program | e2e | accuracy | memory | controller | goals

def n(d): if . == null then "–" else tostring end;
# 12345678 -> "12,345,678"
def commas: tostring | if test("^[0-9]+$") then
    [explode | reverse | _nwise(3) | reverse | implode] | reverse | join(",")
  else . end;
def x: if . == null then "–" else "\(.)×" end;
def row: "| " + join(" | ") + " |";

if $s == "run" then
  "| | |", "|---|---|",
  (["date", .date] | row),
  (["mode", "\(.mode): \(.end_to_end.rounds) end-to-end round(s) of \(.end_to_end.flood_seconds) s, accuracy senders of \(.accuracy.seconds) s, program cost median of \(.program_cost.runs)"] | row),
  (["machine", "\(.machine.cpu), \(.machine.cpus) CPUs, \(.machine.memory) (systemd-detect-virt: \(.machine.virtualization))"] | row),
  (["system", "\(.machine.os), kernel \(.machine.kernel)"] | row),
  (["toolchain", "clang \(.machine.clang), libbpf \(.machine.libbpf), bpftool \(.machine.bpftool)"] | row),
  (["commit", .commit] | row),
  (["wall time", "\(.wall_seconds) s"] | row)

elif $s == "program" then
  "| case | what | ns/packet | runs (ns) | × floor | × bare drop |",
  "|---|---|--:|---|--:|--:|",
  (.program_cost.cases[] | [("`" + .name + "`"), .what, (.median_ns | tostring), (.runs_ns | map(tostring) | join(" ")),
     (.ratio_to_floor | x), (.ratio_to_bare | x)] | row)

elif $s == "e2e" then
  "| receiver | sender threads | Mpps (median) | Mpps per round | × bare XDP_DROP (median of rounds) | sent Mpps |",
  "|---|--:|--:|---|--:|--:|",
  (.end_to_end.receivers[] | [.what + (if .metric == "received" then " ¹" else "" end), (.threads | tostring),
     ("**" + (.mpps_median | tostring) + "**"), (.mpps_runs | map(tostring) | join(" ")),
     (.ratio_to_bare_median | x), (.sent_mpps_median | tostring)] | row),
  "",
  "| comparison (median of per-round ratios) | ratio | per round |",
  "|---|--:|---|",
  (.end_to_end as $e | [
     ["levee ÷ nftables meter, one source", $e.levee_vs_nft],
     ["levee ÷ iptables hashlimit, one source", $e.levee_vs_hashlimit],
     ["levee ÷ floor program, one source", $e.levee_vs_floor],
     ["levee random IPv6 sources, as attached (the autopilot) ÷ one IPv6 source", $e.random_defaults_vs_one_source_v6],
     ["levee random IPv4 sources, as attached (the autopilot) ÷ one IPv4 source", $e.random_defaults_vs_one_source_v4],
     ["levee random IPv6 sources, admission budget ÷ one IPv6 source", $e.random_vs_one_source_v6],
     ["levee random IPv4 sources, admission budget ÷ one IPv4 source", $e.random_vs_one_source_v4],
     ["levee random IPv6 sources, the autopilot off, no budget ÷ one IPv6 source", $e.random_unguarded_vs_one_source_v6],
     ["levee random IPv6 sources, as attached ÷ bare XDP_DROP of the same flood", $e.random_defaults_vs_bare_random_v6],
     ["levee SYN authentication, random IPv6 SYNs (each answered) ÷ one IPv6 source", $e.syn_flood_vs_one_source_v6],
     ["levee SYN authentication, random IPv4 SYNs of a /15 ÷ one IPv4 source", $e.syn_flood_vs_one_source_v4],
     ["levee SYN authentication, random IPv6 SYNs ÷ bare XDP_DROP of a random IPv6 flood", $e.syn_flood_vs_bare_random_v6],
     ["bare XDP_DROP, random IPv6 sources ÷ one source (the generator's own cost)", $e.bare_random_vs_bare]][]
   | [.[0], (.[1].median | x), (.[1].runs | map(tostring) | join(" "))] | row),
  "",
  "¹ packets/s levee *received*: without the autopilot or a budget every packet of a random-source flood is a new source, and a new source's first packet conforms, so nothing is dropped (the other random rows show what the autopilot and a budget change)."

elif $s == "accuracy" then
  "| sources | sender ÷ limit | sender threads | rate, burst per source | sent in t | passed | burst + rate·t | passed ÷ (burst + rate·t) | exact-limiter count | passed ÷ exact | frames seen per CPU |",
  "|--:|--:|--:|---|---|--:|--:|--:|--:|--:|---|",
  (.accuracy.cases[] | [(.sources | commas), "\(.factor)×", (.threads | tostring), "\(.rate | commas) pps, \(.burst | commas)",
     "\(.sent | commas) in \(.seconds) s", (.passed | commas), (.expected | round | commas),
     (.ratio | tostring), (.exact | round | commas), ("**" + (.ratio_exact | tostring) + "**"),
     (.per_cpu_seen | map(commas) | join(" / "))] | row),
  "",
  "Worst deviation: \(.accuracy.worst_deviation_exact * 10000 | round / 100)% from the exact-limiter count, \(.accuracy.worst_deviation * 10000 | round / 100)% from burst + rate·t."

elif $s == "memory" then
  "| keys | sources sent | tracked | max_entries | key + value | map memlock | per entry |",
  "|---|--:|--:|--:|--:|--:|--:|",
  (.memory[] | [.family, (.sources_sent | commas), (.tracked | commas), (.max_entries | commas),
     "\(.bytes_key) + \(.bytes_value) B", "\(.bytes_memlock | commas) B", "**\(.bytes_per_entry) B**"] | row)

elif $s == "controller" then
  "| command | tracked sources | wall time (median) | runs (ms) |",
  "|---|--:|--:|---|",
  # A run from before a command was timed has no field for it: its row is left out.
  (.controller as $c | [
     ["`levee stats IFACE --json`", "stats"],
     ["`levee status --json` (batch walk of every entry)", "status"],
     ["`levee top IFACE -n 10` (walk, rank by drops)", "top"],
     ["`levee top IFACE -n 10 --by bytes --json`", "top_bytes"],
     ["`levee prune IFACE --idle 1h --json` (walk, deletes none here)", "prune"],
     ["`curl` of `levee run`'s `/metrics` (no walk)", "scrape"],
     ["the same while 64 slow connections are open", "scrape_slow"]][]
   | [.[0], $c["\(.[1])_ms_median"], $c["\(.[1])_ms_runs"]] | select(.[1] != null)
   | [.[0], ($c.sources | commas), "**\(.[1]) ms**", (.[2] | map(tostring) | join(" "))] | row),
  # The list changes run on an attachment of their own: list entries, no tracked sources.
  (.controller as $c | [
     ["`levee reload` replacing every host entry of the deny list (IPv6 /128s)", "list_replace"],
     ["`levee deny add IFACE ADDR` to that list", "deny_add"]][]
   | [.[0], $c["\(.[1])_ms_median"], $c["\(.[1])_ms_runs"]] | select(.[1] != null)
   | ["\(.[0]), \($c.list_entries | commas) entries", "–", "**\(.[1]) ms**", (.[2] | map(tostring) | join(" "))] | row),
  (.controller | select(.busy_before != null) | "", "Other work kept \(.busy_before * 100 | round) % of the CPUs busy just before these timings.")

elif $s == "goals" then
  "| goal | target | measured | |",
  "|---|---|---|---|",
  (.goals[] | [.goal, .target, .measured,
     (if .met then "met" elif .pending then "not judged here" else "**not met**" end)] | row)
else
  error("unknown section \($s)")
end
