#!/usr/bin/env bash
# The skips of a ctest run, held to a list of those allowed.
#
#   scripts/skips.sh JUNIT [ALLOWED]
#
# JUNIT is what `ctest --output-junit` wrote. ALLOWED (default .ci/skips) has one line
# per test that may be skipped: its ctest name, a tab, and why. A test ctest did not run
# (a GoogleTest skip, or not run for another reason) that is not on the list fails the
# check, with its name and the reason the test gave.
set -euo pipefail

junit=${1:?usage: scripts/skips.sh JUNIT [ALLOWED]}
allowed=${2:-$(dirname "$0")/../.ci/skips}
[ -r "$junit" ] || { echo "scripts/skips.sh: cannot read $junit; run ctest with --output-junit $junit" >&2; exit 2; }
[ -r "$allowed" ] || { echo "scripts/skips.sh: cannot read the list of allowed skips $allowed" >&2; exit 2; }

# ctest writes one <testcase ... status="notrun"> per test it did not run.
skipped=$(grep -o '<testcase name="[^"]*"[^>]*status="notrun"' "$junit" | sed 's/^<testcase name="\([^"]*\)".*/\1/' || true)
bad=0
while IFS= read -r name; do
  [ -n "$name" ] || continue
  why=$(awk -F'\t' -v n="$name" '!/^#/ && $1 == n { print $2 }' "$allowed")
  if [ -n "$why" ]; then
    echo "skipped, allowed: $name ($why)"
  else
    # GoogleTest prints the skip's own message on the line after "Skipped".
    said=$(awk -v n="$name" 'index($0, "<testcase name=\"" n "\"") { inside = 1 }
                             inside && prev ~ /: Skipped$/ { print; exit }
                             inside { prev = $0 }' "$junit")
    echo "skipped, not allowed: $name${said:+ ($said)}" >&2
    bad=1
  fi
done <<<"$skipped"
if [ "$bad" = 1 ]; then
  echo "scripts/skips.sh: tests were skipped that $allowed does not allow; give the machine what they need, or add them there with why" >&2
  exit 1
fi
echo "scripts/skips.sh: $(printf '%s\n' "$skipped" | grep -c . || true) skipped, each allowed by $allowed"
