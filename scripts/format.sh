#!/usr/bin/env bash
# scripts/format.sh - lay out every C and C++ file git tracks with clang-format 14.
#
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   change nothing; list the files that differ, exit 1 if any
#
# C++ takes .clang-format at the root; BPF C (bpf/ and every *.bpf.c) takes
# bpf/.clang-format, the kernel's layout.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format-14}
command -v "$CLANG_FORMAT" >/dev/null || { echo "format.sh: $CLANG_FORMAT not found (apt-get install clang-format-14)" >&2; exit 2; }

check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

bad=0
while IFS= read -r f; do
  style=file
  case "$f" in bpf/*|*.bpf.c) style=file:bpf/.clang-format ;; esac
  if [ "$check" = 1 ]; then
    if ! "$CLANG_FORMAT" --style="$style" "$f" | cmp -s - "$f"; then
      echo "$f: not formatted (scripts/format.sh fixes it)"
      bad=1
    fi
  else
    "$CLANG_FORMAT" --style="$style" -i "$f"
  fi
done < <(git ls-files -- '*.c' '*.h' '*.cpp' '*.hpp')
exit "$bad"
