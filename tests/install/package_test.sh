#!/usr/bin/env bash
# package_test.sh BUILD SOURCE VERSION PREFIX
#
# The Debian package (cmake/Package.cmake), end to end, in a temp dir of the build tree:
# cpack makes it; its control fields and file list are what operators are promised; dpkg
# installs, removes and purges it in a scratch root with its own database (never this
# system's: --root, scripts run without chroot but told DPKG_ROOT); the maintainer
# scripts touch systemd only when they should; lintian finds no error.
set -euo pipefail
build=$1 source=$2 version=$3 prefix=$4

fail() {
  echo "package_test: $*" >&2
  exit 1
}
[[ $prefix == /usr ]] ||
  fail "the package is made from a build configured with -DCMAKE_INSTALL_PREFIX=/usr, $build has $prefix: configure it again with that (scripts/test.sh does)"
for tool in cpack dpkg dpkg-deb dpkg-query dpkg-shlibdeps file lintian; do
  command -v "$tool" >/dev/null || fail "$tool not found: apt-get install dpkg-dev file lintian (scripts/test.sh installs them)"
done

tmp=$(mktemp -d "$build/package-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The version is the latest changelog entry's, whose upstream part must be the project's.
deb_version=$(sed -n '1s/^levee (\([^)]*\)).*/\1/p' "$source/dist/debian/changelog")
[[ ${deb_version%-*} == "$version" ]] ||
  fail "dist/debian/changelog's latest entry is $deb_version, the project is $version: add an entry for $version-1"

if ! cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1; then
  cat "$tmp/cpack.log" >&2
  fail "cpack failed (a file not built yet? cmake --build $build first)"
fi
deb=$tmp/out/levee_${deb_version}_$(dpkg --print-architecture).deb
[[ -f $deb ]] || fail "cpack made $(cd "$tmp/out" && echo *.deb), not $(basename "$deb")"

field() { dpkg-deb -f "$deb" "$1"; }
for kv in Package=levee "Version=$deb_version" Section=net Priority=optional; do
  [[ $(field "${kv%%=*}") == "${kv#*=}" ]] || fail "control field ${kv%%=*}: '$(field "${kv%%=*}")', expected '${kv#*=}'"
done
[[ -n $(field Maintainer) && -n $(field Description) ]] || fail "control: no Maintainer or Description"
[[ -z $(field Homepage) ]] || fail "control: a Homepage levee does not have"
# What the binary links (dpkg-shlibdeps), and procps for the unit's /bin/kill.
depends=$(field Depends)
for pkg in libbpf1 libc6 libstdc++6 libfmt9 procps; do
  [[ ", $depends," == *", $pkg "* || ", $depends," == *", $pkg,"* ]] || fail "Depends lacks $pkg: $depends"
done

expected=(
  /etc/levee/levee.toml.example
  /lib/systemd/system/levee@.service
  /usr/sbin/levee
  /usr/share/bash-completion/completions/levee
  /usr/share/doc/levee/changelog.Debian.gz
  /usr/share/doc/levee/copyright
  /usr/share/doc/levee/examples/grafana/levee.json
  /usr/share/doc/levee/docs/CLI.md
  /usr/share/doc/levee/docs/JSON.md
  /usr/share/doc/levee/docs/CONFIG.md
  /usr/share/doc/levee/docs/OPERATING.md
  /usr/share/doc/levee/docs/LIMITS.md
  /usr/share/doc/levee/examples/levee.toml
  /usr/share/man/man8/levee.8.gz
)
# dpkg-deb -c: mode owner size date time ./path. Every file root's, the binary 0755,
# the rest 0644.
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sed 's/^\.//' | sort >"$tmp/files"
diff <(printf '%s\n' "${expected[@]}" | sort) "$tmp/files" >&2 ||
  fail "package files (>) differ from the expected (<); no man page: apt-get install help2man and build again"
bad=$(dpkg-deb -c "$deb" | awk '$2 != "root/root" ||
  ($1 !~ /^d/ && $6 != "./usr/sbin/levee" && $1 != "-rw-r--r--") ||
  ($6 == "./usr/sbin/levee" && $1 != "-rwxr-xr-x")')
[[ -z $bad ]] || fail "wrong owner or mode: $bad"

dpkg-deb -e "$deb" "$tmp/control"
[[ $(cat "$tmp/control/conffiles") == /etc/levee/levee.toml.example ]] ||
  fail "conffiles: '$(cat "$tmp/control/conffiles")', expected /etc/levee/levee.toml.example"
for script in postinst prerm postrm; do
  [[ -x $tmp/control/$script ]] || fail "no executable $script in the package"
  sh -n "$tmp/control/$script" || fail "$script: syntax"
done

# Stand-ins for the two commands the scripts may call: they only record their arguments.
mkdir "$tmp/bin"
for cmd in systemctl deb-systemd-invoke; do
  printf '#!/bin/sh\necho "%s $*" >>"%s"\n' "$cmd" "$tmp/calls" >"$tmp/bin/$cmd"
  chmod +x "$tmp/bin/$cmd"
done
calls() { cat "$tmp/calls" 2>/dev/null; rm -f "$tmp/calls"; }

# The scripts' systemd branch, run directly, as on a system where systemd runs and on one
# where it does not: copies whose test for /run/systemd/system looks at a directory here
# that exists or not. Only where it runs, never on upgrade, never for another root
# (DPKG_ROOT).
mkdir "$tmp/systemd-running"
for script in postinst prerm postrm; do
  grep -q /run/systemd/system "$tmp/control/$script" || fail "$script: no test for a running systemd"
  for where in running absent; do
    sed "s|/run/systemd/system|$tmp/systemd-$where|g" "$tmp/control/$script" >"$tmp/$script.$where"
  done
done
script_calls() { (cd "$tmp" && PATH=$tmp/bin:$PATH sh "$@" >/dev/null) || fail "$*: exit status $?"; calls; }
reload='systemctl --system daemon-reload' stop='deb-systemd-invoke stop levee@*.service'
for check in "postinst configure|$reload" "prerm remove|$stop" "prerm upgrade 0.1.0-2|" "postrm remove|$reload" \
  "postrm purge|$reload"; do
  # shellcheck disable=SC2086 # the script's name and its arguments, split at spaces
  set -- ${check%|*}
  script=$1 want=${check#*|}
  shift
  got=$(DPKG_ROOT='' script_calls "$tmp/$script.running" "$@") || exit 1
  [[ $got == "$want" ]] || fail "$script $* under systemd: called '$got', expected '${want:-nothing}'"
  got=$(DPKG_ROOT='' script_calls "$tmp/$script.absent" "$@") || exit 1
  [[ -z $got ]] || fail "$script $* without systemd: called '$got', expected nothing"
  got=$(DPKG_ROOT=$tmp/root script_calls "$tmp/$script.running" "$@") || exit 1
  [[ -z $got ]] || fail "$script $* with DPKG_ROOT set: called '$got', expected nothing"
done

# A scratch root with an empty dpkg database. --force-script-chrootless: the scripts run
# here, not chrooted into a root without a shell, with DPKG_ROOT set (so the stand-ins
# must not be called); --force-depends: the scratch database has none of the libraries.
root=$tmp/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
touch "$root/var/lib/dpkg/status"
pkg() {
  PATH=$tmp/bin:$PATH dpkg --root="$root" --log="$tmp/dpkg.log" --force-not-root --force-script-chrootless \
    --force-depends "$@" >>"$tmp/dpkg.out" 2>&1 || { cat "$tmp/dpkg.out" >&2; fail "dpkg $* failed"; }
  [[ -z $(calls) ]] || fail "dpkg $*: a maintainer script called systemd for a scratch root"
}
status() { dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Status}' levee 2>/dev/null || true; }

pkg -i "$deb"
[[ $(status) == "install ok installed" ]] || fail "after install: status '$(status)' (postinst failed?)"
for f in "${expected[@]}"; do
  [[ -f $root$f ]] || fail "installed: $f missing"
done
got=$("$root/usr/sbin/levee" --version) || fail "the installed levee --version failed"
[[ ${got%%$'\n'*} == "levee $version" ]] ||
  fail "the installed levee --version: '${got%%$'\n'*}', expected 'levee $version'"
zcat "$root/usr/share/man/man8/levee.8.gz" | grep -q '^\.SS "levee run"' || fail "levee(8) has no section for levee run"

# The operator's config and edit of the example: removal keeps both, purge only the
# package's conffile.
echo '# the operator edited this' >>"$root/etc/levee/levee.toml.example"
echo '[interface]' >"$root/etc/levee/eth0.toml"
pkg -r levee
[[ $(status) == "deinstall ok config-files" ]] || fail "after remove: status '$(status)'"
[[ ! -e $root/usr/sbin/levee && ! -e $root/lib/systemd/system/levee@.service ]] || fail "remove left the binary or the unit"
grep -q 'the operator edited this' "$root/etc/levee/levee.toml.example" ||
  fail "remove did not keep the edited conffile /etc/levee/levee.toml.example"
pkg -P levee
[[ -z $(status) || $(status) == "unknown ok not-installed" ]] || fail "after purge: status '$(status)'"
[[ ! -e $root/etc/levee/levee.toml.example ]] || fail "purge left the conffile"
[[ -f $root/etc/levee/eth0.toml ]] || fail "purge removed the operator's /etc/levee/eth0.toml"
left=$(cd "$root" && find . -path ./var/lib/dpkg -prune -o ! -type d -print | grep -v '^./etc/levee/eth0.toml$' || true)
[[ -z $left ]] || fail "purge left files behind: $left"

# --fail-on error: warnings are accepted (the ones left are listed in DEVELOPING.md).
if ! lintian --fail-on error "$deb" >"$tmp/lintian.log" 2>&1; then
  cat "$tmp/lintian.log" >&2
  fail "lintian found errors in $(basename "$deb")"
fi
grep -v '^running with root privileges' "$tmp/lintian.log" || true
echo "package_test: $(basename "$deb") ($(stat -c %s "$deb") bytes): fields, ${#expected[@]} files, scripts, install, remove, purge, lintian checked"
