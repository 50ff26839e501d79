# bench_accuracy.sh - scripts/bench.sh's part 3, accuracy: a paced flood against levee's
# per-source limit at 2x and 10x, from 1, 100 and 10,000 sources and one and two sending
# CPUs, and what passed beside what should have. Sourced by scripts/bench.sh, not run.
# shellcheck shell=bash

percpu_rx() {  # packets levee saw on each CPU (all reasons), as a JSON array
  bpftool map dump pinned "/sys/fs/bpf/levee/$DEV_RX/lv_percpu" -j \
    | jq -c '[.[0].formatted.values[] | [.value.by_reason[].packets] | add]'
}
# One accuracy record per case.
accuracy_runs() {
  local threads n factor per_src rate burst src f passed percpu
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
}
