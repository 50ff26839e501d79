#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS_EACH] - build the libFuzzer harnesses of tests/fuzz into
# build-fuzz (clang-14, -DLEVEE_FUZZ=ON: ASan and UBSan, no recovery) and run each for
# SECONDS_EACH seconds (default 60), one after the other.
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
failed=()
summary=()
while read -r name binary corpus; do
  [ -n "$name" ] || continue
  scratch=$work/corpus/$name crashes=$work/crashes/$name log=$work/$name.log
  rm -rf "$scratch" "$crashes"
  mkdir -p "$scratch" "$crashes"
  [ -d "$corpus" ] && cp -R "$corpus/." "$scratch/"
  args=(-max_total_time="$SECONDS_EACH" -seed="$SEED" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048
        -artifact_prefix="$crashes/")
  dict=$LEVEE_ROOT/tests/fuzz/$name.dict
  [ -f "$dict" ] && args+=(-dict="$dict")
  echo "fuzz.sh: $name for ${SECONDS_EACH}s (seed $SEED, $(find "$scratch" -type f | wc -l) seeds)"
  rc=0
  "$binary" "${args[@]}" "$scratch" </dev/null >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  summary+=("$(printf '%-10s %12s inputs  %s' "$name" "${execs:-?}" "$([ "$rc" = 0 ] && echo clean || echo "FAILED (rc $rc)")")")
  if [ "$rc" != 0 ]; then
    failed+=("$name")
    grep -E -A12 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error|property does not hold' "$log" | head -60 >&2 || true
    echo "fuzz.sh: $name failed; the whole log is $log, the input in $crashes/" >&2
  fi
done <"$work/fuzzers.txt"

echo
echo "fuzz.sh: ${SECONDS_EACH}s each, seed $SEED"
printf '  %s\n' "${summary[@]}"
[ ${#failed[@]} -eq 0 ] || die "${failed[*]} failed (above); reproduce with build-fuzz/fuzz/levee_fuzz_NAME CRASH_FILE"
