#!/usr/bin/env bash
# Commit messages as DEVELOPING.md asks: a subject of at most 72 characters ("area: what
# changed"), then a blank line, then the body (why, and the figures).
#
#   scripts/commits.sh              every commit since the rule began (CI runs this)
#   scripts/commits.sh --message F  one message about to be committed (scripts/hooks/commit-msg)
#
# The commits before d18bc01 predate the rule and are not read. A shallow clone without
# it has only its newest commits checked, and says so.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly RULE_FROM=d18bc015d7cdadbb29d191010a0ac7224859f8ca
readonly MAX=72

# One message on stdin; what is wrong with it on stdout, nothing if it is right.
check_message() {
  local subject second
  # A message file from `git commit` still has its comment lines.
  local msg
  msg=$(grep -v '^#' || true)
  subject=$(printf '%s\n' "$msg" | sed -n 1p)
  second=$(printf '%s\n' "$msg" | sed -n 2p)
  if [ -z "$subject" ]; then
    echo "the subject is empty"
  elif [ "${#subject}" -gt "$MAX" ]; then
    echo "the subject is ${#subject} characters, more than $MAX: \"$subject\""
  fi
  if [ -n "$second" ]; then
    echo "the line after the subject is not blank: \"$second\""
  fi
}

if [ "${1:-}" = "--message" ]; then
  [ -r "${2:-}" ] || { echo "scripts/commits.sh: --message needs a readable file" >&2; exit 2; }
  wrong=$(check_message <"$2")
  if [ -n "$wrong" ]; then
    printf '%s\n' "$wrong" | sed 's/^/commit message: /' >&2
    echo "fix: a subject of at most $MAX characters (\"area: what changed\"), a blank line, then the body" >&2
    exit 1
  fi
  exit 0
fi
[ $# -eq 0 ] || { echo "usage: scripts/commits.sh [--message FILE]" >&2; exit 2; }

if git cat-file -e "$RULE_FROM^{commit}" 2>/dev/null; then
  range="$RULE_FROM..HEAD"
else
  echo "scripts/commits.sh: this clone lacks ${RULE_FROM:0:12} (shallow?): checking the newest 50 commits" >&2
  range="-50 HEAD"
fi
bad=0
# shellcheck disable=SC2086 # range is one or two words on purpose
for c in $(git rev-list $range); do
  wrong=$(git log -1 --format=%B "$c" | check_message)
  if [ -n "$wrong" ]; then
    printf '%s\n' "$wrong" | sed "s/^/$(git log -1 --format=%h "$c"): /" >&2
    bad=1
  fi
done
[ "$bad" = 0 ] || { echo "fix: reword these commits (a subject of at most $MAX characters, a blank line, the body)" >&2; exit 1; }
echo "scripts/commits.sh: every commit since ${RULE_FROM:0:12} has a subject of at most $MAX characters and a blank line after it"
