#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS_EACH] - build the libFuzzer harnesses of tests/fuzz into
# build-fuzz (clang-14, -DLEVEE_FUZZ=ON: ASan and UBSan, no recovery) and run each for
# SECONDS_EACH seconds (default 60), as many at once as there are CPUs.
#
# Each starts from a copy of its seed corpus (tests/fuzz/corpus/NAME/, never written
# to) in build-fuzz/fuzz/corpus/NAME/, with a fixed seed (LEVEE_FUZZ_SEED, default 1)
# so that a run can be repeated. Prints the inputs each ran; fails if any harness
# crashed, leaked, tripped UBSan or broke a property. A failing input is saved as
# build-fuzz/fuzz/crashes/NAME/crash-*; reproduce it with
#   build-fuzz/fuzz/levee_fuzz_NAME build-fuzz/fuzz/crashes/NAME/crash-...
#
# Root is needed: the synpath harness runs the XDP program (BPF_PROG_TEST_RUN), and
# clang-14 and libfuzzer-14-dev are installed when they are missing.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"

SECONDS_EACH=${1:-60}
[[ "$SECONDS_EACH" =~ ^[1-9][0-9]*$ ]] || die "usage: $0 [SECONDS_EACH]: a whole number of seconds, not '$SECONDS_EACH'"
SEED=${LEVEE_FUZZ_SEED:-1}
FUZZ_BUILD=$LEVEE_ROOT/build-fuzz

missing=0
for p in "${LEVEE_PACKAGES[@]}" "${FUZZ_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing=1
done
if [ "$missing" = 1 ]; then
  need_root
  ensure_packages "${LEVEE_PACKAGES[@]}" "${FUZZ_PACKAGES[@]}"
fi

(
  LEVEE_BUILD=$FUZZ_BUILD
  LEVEE_CMAKE_EXTRA=(-DLEVEE_FUZZ=ON -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14)
  build_levee levee_fuzzers
)

export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
work=$FUZZ_BUILD/fuzz

# One harness for SECONDS_EACH: its summary line in $work/NAME.summary, and on a failure
# its log's findings in $work/NAME.failed.
fuzz_one() {
  local name=$1 binary=$2 rc=0 execs dict
  local scratch=$work/corpus/$name crashes=$work/crashes/$name log=$work/$name.log
  local args=(-max_total_time="$SECONDS_EACH" -seed="$SEED" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048
              -artifact_prefix="$crashes/")
  dict=$LEVEE_ROOT/tests/fuzz/$name.dict
  [ -f "$dict" ] && args+=(-dict="$dict")
  "$binary" "${args[@]}" "$scratch" </dev/null >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  printf '%-10s %12s inputs  %s\n' "$name" "${execs:-?}" "$([ "$rc" = 0 ] && echo clean || echo "FAILED (rc $rc)")" \
    >"$work/$name.summary"
  if [ "$rc" != 0 ]; then
    { grep -E -A12 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error|property does not hold' "$log" \
        | head -60 || true
      echo "fuzz.sh: $name failed; the whole log is $log, the input in $crashes/"; } >"$work/$name.failed"
  fi
}

# As many harnesses at once as there are CPUs: each still runs SECONDS_EACH, and the
# stage takes a CPU count's share of their sum.
names=()
while read -r name binary corpus; do
  [ -n "$name" ] || continue
  names+=("$name")
  rm -rf "$work/corpus/$name" "$work/crashes/$name" "$work/$name.summary" "$work/$name.failed"
  mkdir -p "$work/corpus/$name" "$work/crashes/$name"
  [ -d "$corpus" ] && cp -R "$corpus/." "$work/corpus/$name/"
  echo "fuzz.sh: $name for ${SECONDS_EACH}s (seed $SEED, $(find "$work/corpus/$name" -type f | wc -l) seeds)"
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  fuzz_one "$name" "$binary" &
done <"$work/fuzzers.txt"
wait

failed=()
summary=()
for name in "${names[@]}"; do
  summary+=("$(cat "$work/$name.summary" 2>/dev/null || echo "$name: no summary (the harness did not finish)")")
  if [ -f "$work/$name.failed" ] || [ ! -f "$work/$name.summary" ]; then
    failed+=("$name")
    cat "$work/$name.failed" >&2 2>/dev/null || true
  fi
done

echo
echo "fuzz.sh: ${SECONDS_EACH}s each, seed $SEED"
printf '  %s\n' "${summary[@]}"
[ ${#failed[@]} -eq 0 ] || die "${failed[*]} failed (above); reproduce with build-fuzz/fuzz/levee_fuzz_NAME CRASH_FILE"
