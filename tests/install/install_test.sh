#!/usr/bin/env bash
# install_test.sh BUILD VERSION SBINDIR UNITDIR DATADIR SYSCONFDIR MANPAGE (absolute install
# paths; MANPAGE empty when the build has no help2man)
#
# `cmake --install` into a scratch DESTDIR: exactly the expected files, a unit that runs
# the installed binary with the installed config's directory, a completion that loads and
# completes, a binary that runs, a manual page.
set -euo pipefail
build=$1 version=$2 sbindir=$3 unitdir=$4 datadir=$5 sysconfdir=$6 manpage=${7:-}

fail() {
  echo "install_test: $*" >&2
  exit 1
}
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT

# DESTDIR, not --prefix: the unit's paths are fixed when the build is configured, and
# DESTDIR stages the absolute destinations (the systemd unit directory) too, where
# --prefix would write them to this system.
DESTDIR=$dest cmake --install "$build" >/dev/null

expected=(
  "$sbindir/levee"
  "$unitdir/levee@.service"
  "$datadir/bash-completion/completions/levee"
  "$datadir/doc/levee/examples/levee.toml"
  "$datadir/doc/levee/examples/grafana/levee.json"
  "$datadir/doc/levee/docs/CLI.md"
  "$datadir/doc/levee/docs/JSON.md"
  "$datadir/doc/levee/docs/CONFIG.md"
  "$datadir/doc/levee/docs/OPERATING.md"
  "$datadir/doc/levee/docs/LIMITS.md"
  "$sysconfdir/levee/levee.toml.example"
)
[[ -z $manpage ]] || expected+=("$manpage")
# Exactly these: no test, tool or stray file.
diff <(printf '%s\n' "${expected[@]/#/$dest}" | sort) <(find "$dest" -type f -o -type l | sort) >&2 ||
  fail "installed files (>) differ from the expected (<)"

unit=$dest$unitdir/levee@.service
grep -n '@[A-Z_]*@' "$unit" >&2 && fail "$unit: a variable was not substituted"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
[[ $exec_start == "$sbindir/levee run %I --config $sysconfdir/levee/%I.toml "* ]] ||
  fail "ExecStart=$exec_start: not the installed binary, or not the config directory"

# systemd-analyze checks the executables exist: point ExecStart at the staged binary.
if ! command -v systemd-analyze >/dev/null; then
  echo "systemd-analyze verify: skipped, no systemd-analyze"
elif [[ ! -x /bin/kill ]]; then
  echo "systemd-analyze verify: skipped, no /bin/kill (ExecReload; Debian: procps)"
else
  mkdir "$dest/verify"
  sed "s|^ExecStart=$sbindir/|ExecStart=$dest$sbindir/|" "$unit" >"$dest/verify/levee@.service"
  ln -s levee@.service "$dest/verify/levee@eth0.service"
  # It warns (unknown keys, bad values) with exit status 0: any output fails. --man=no:
  # Documentation=man:levee(8) names a page this system need not have installed.
  if ! out=$(systemd-analyze verify --man=no "$dest/verify/levee@eth0.service" 2>&1) || [[ -n $out ]]; then
    fail "systemd-analyze verify: ${out:-failed}"
  fi
fi

completion=$dest$datadir/bash-completion/completions/levee
bash -n "$completion" || fail "$completion: syntax"
# candidates WORD...: the sorted candidates for the last word, from a bash that sourced
# $preload (bash-completion's helpers, or nothing) and the completion, in $dest/cwd.
mkdir "$dest/cwd" && touch "$dest/cwd/drop.netset"
candidates() {
  (cd "$dest/cwd" && bash --norc --noprofile -c '
    [[ -n $1 ]] && . "$1"
    . "$2"
    shift 2
    COMP_WORDS=("$@") COMP_CWORD=$(($# - 1)) COMP_LINE="$*" COMP_POINT=${#COMP_LINE}
    spec=$(complete -p levee) && fn=${spec#*-F } && "${fn%% *}"
    printf "%s\n" "${COMPREPLY[@]}"' _ "$preload" "$completion" "$@") | sort | xargs
}
expect() {
  local want=$1 got
  shift
  got=$(candidates "$@")
  [[ $got == "$want" ]] || fail "completion${preload:+ with $preload} of '$*': '$got', expected '$want'"
}
for preload in '' /usr/share/bash-completion/bash_completion; do
  [[ -z $preload || -r $preload ]] || continue
  expect 'reload run' levee r
  expect 'bytes drops packets' levee top eth0 --by ''
  expect 'auto generic native' levee run eth0 --xdp-mode ''
  expect 'auto generic native' levee attach eth0 --mode ''
  expect 'auto off' levee set eth0 --escalate ''
  expect 'enforce monitor' levee set eth0 --mode ''
  expect 'add del import list' levee deny ''
  expect 'lo' levee attach lo
  expect 'drop.netset' levee deny import lo ''
  expect '--detach-on-exit' levee run lo --d
done

if [[ -n $manpage ]]; then
  page=$(zcat "$dest$manpage")
  grep -q '^\.SS "levee run"' <<<"$page" || fail "$manpage: no section for levee run"
  grep -q '^\.SH "EXIT STATUS"' <<<"$page" || fail "$manpage: no EXIT STATUS section"
  # Every value has a name of its own, not CLI11's type.
  ! grep -nE '(TEXT|UINT|FLOAT)( |$|:)' <<<"$page" >&2 || fail "$manpage: a value is named by its type"
  # What SEE ALSO points to is installed.
  for doc in $(grep -o '/usr/share/doc/levee/docs/[A-Z]*\.md' <<<"$page" | sort -u); do
    [[ -f $dest$datadir/doc/levee/docs/$(basename "$doc") ]] || fail "$manpage points to $doc, which is not installed"
  done
  grep -q '/usr/share/doc/levee/docs/CLI\.md' <<<"$page" || fail "$manpage does not point to the installed CLI.md"
fi

got=$("$dest$sbindir/levee" --version) || fail "levee --version failed"
[[ ${got%%$'\n'*} == "levee $version" ]] || fail "levee --version: '${got%%$'\n'*}', expected 'levee $version'"
echo "install_test: ${#expected[@]} files installed, unit, completion and binary checked"
