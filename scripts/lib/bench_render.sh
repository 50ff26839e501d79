# bench_render.sh - scripts/bench.sh's output pages: the chart bench/results.png and
# the tables of BENCHMARKS.md, drawn from results.json (also alone: bench.sh --render).
# Sourced by scripts/bench.sh, not run; reads its OUT and MD.
# shellcheck shell=bash

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
