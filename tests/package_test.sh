#!/usr/bin/env bash
# The Debian package as an operator installs it: built with CPack, installed
# with dpkg -i on this machine, the unit's ExecStart run as its User= (with
# its RuntimeDirectory made as systemd makes it), a member of the socket
# group pushing, weir-ctl reading /etc/weir/weir.yaml to retire the daemon
# with everything delivered, then purged. Needs root; leaves the machine as
# it found it. Usage: package_test.sh BUILD_DIR
set -euo pipefail
build_dir=$(cd "$1" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "package_test: needs root (dpkg -i, users)" >&2; exit 1; }
if dpkg-query -W -f='${Status}' weir 2>/dev/null | grep -q installed; then
  echo "package_test: a weir package is installed on this machine already; not replacing it" >&2
  exit 1
fi
unset WEIR_CTL_CONFIG
work=$(mktemp -d /tmp/weir-package-XXXXXX)
app=weir-pkgtest-app
made_users=""
getent passwd weir >/dev/null || made_users=1
daemon=""
cleanup() {
  [ -n "$daemon" ] && kill -9 "$daemon" 2>/dev/null || true
  dpkg --purge weir >/dev/null 2>&1 || true
  userdel "$app" 2>/dev/null || true
  if [ -n "$made_users" ]; then
    userdel weir 2>/dev/null || true
    groupdel weir-producers 2>/dev/null || true
    groupdel weir 2>/dev/null || true
    rm -rf /var/lib/weir
  fi
  rm -rf /run/weir "$work"
}
trap cleanup EXIT
fail() { echo "package_test: $*" >&2; [ -f "$work/daemon.log" ] && cat "$work/daemon.log" >&2; exit 1; }

# make package
(cd "$build_dir" && rm -rf package && cpack -G DEB >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack failed"; }
deb=$(ls "$build_dir"/package/weir_*.deb)
dpkg-deb -f "$deb" Depends | grep -q 'libcaf-core' || fail "the dependencies were not computed from the binaries"
dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i failed"; }

# What it installed, and the maintainer scripts' work.
for f in /usr/bin/weir-server /usr/bin/weir-ctl /usr/bin/weir-bench; do [ -x "$f" ] || fail "$f missing"; done
unit=/usr/lib/systemd/system/weir.service
[ -f "$unit" ] || unit=/lib/systemd/system/weir.service
[ -f "$unit" ] || fail "no systemd unit"
for f in /usr/share/man/man8/weir-server.8 /usr/share/man/man1/weir-ctl.1 /usr/share/doc/weir/README.md \
         /usr/share/doc/weir/docs/operations.md; do [ -f "$f" ] || fail "$f missing"; done
[ "$(stat -c %U:%G:%a /etc/weir/weir.yaml)" = root:weir:640 ] || fail "/etc/weir/weir.yaml: $(stat -c %U:%G:%a /etc/weir/weir.yaml)"
[ "$(stat -c %U:%a /var/lib/weir)" = weir:700 ] || fail "/var/lib/weir: $(stat -c %U:%a /var/lib/weir)"
dpkg-query -W -f='${Conffiles}' weir | grep -q /etc/weir/weir.yaml || fail "/etc/weir/weir.yaml is not a conffile"
id -nG weir | grep -qw weir-producers || fail "the weir user is not in weir-producers"
/usr/bin/weir-server --check-config --config /etc/weir/weir.yaml >/dev/null || fail "the packaged config does not check"
# systemd's own check of the unit (its commands, its man pages), where systemd is installed.
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify "$unit" >"$work/verify.log" 2>&1 || { cat "$work/verify.log"; fail "systemd-analyze verify $unit"; }
fi

# The unit's ExecStart as its User= and Group=, in its RuntimeDirectory.
user=$(sed -n 's/^User=//p' "$unit")
group=$(sed -n 's/^Group=//p' "$unit")
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
runtime_mode=$(sed -n 's/^RuntimeDirectoryMode=//p' "$unit")
install -d -o "$user" -g "$group" -m "$runtime_mode" /run/weir
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
admin="--set admin.listen=127.0.0.1:$port"
# shellcheck disable=SC2086  # ExecStart is words, as systemd splits it
(cd /var/lib/weir && exec setpriv --reuid="$user" --regid="$group" --init-groups $exec_start $admin) >"$work/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 1 200); do [ -S /run/weir/weir.sock ] && break; sleep 0.1; done
[ -S /run/weir/weir.sock ] || fail "the daemon did not make /run/weir/weir.sock"

# An application user in weir-producers pushes; one outside it is refused.
useradd --system --no-create-home --shell /usr/sbin/nologin -G weir-producers "$app"
as_app() { setpriv --reuid="$app" --regid="$(id -g "$app")" --init-groups "$@"; }
# It may not read /etc/weir/weir.yaml: weir-ctl takes the package's socket by default.
seq 1 500 | as_app /usr/bin/weir-ctl push >"$work/push.out" 2>&1 || { cat "$work/push.out"; fail "the app user could not push"; }
grep -q "acked 500 records" "$work/push.out" || fail "push: $(cat "$work/push.out")"
# Root is let in too (sudo weir-ctl push).
/usr/bin/weir-ctl push "from root" >"$work/root.out" 2>&1 || { cat "$work/root.out"; fail "root could not push"; }
if setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/weir-ctl --socket /run/weir/weir.sock push x >/dev/null 2>&1; then
  fail "a user outside weir-producers could push"
fi

# weir-ctl from /etc/weir/weir.yaml (read by default): status, then retire.
/usr/bin/weir-ctl $admin status >"$work/status.out" || fail "weir-ctl status: $(cat "$work/status.out")"
/usr/bin/weir-ctl $admin drain --timeout 120 >"$work/drain.out" 2>&1 || { cat "$work/drain.out"; fail "weir-ctl drain failed"; }
grep -q "retired: weir-server (pid $daemon) stopped" "$work/drain.out" || fail "drain: $(cat "$work/drain.out")"
wait "$daemon" || fail "the daemon exited with $?"
daemon=""
rows=$(sqlite3 /var/lib/weir/sink.db 'select count(*) from weir_records')
[ "$rows" = 501 ] || fail "the sink holds $rows rows, expected 501"

# Purge: the programs and the configuration go.
dpkg --purge weir >"$work/purge.log" 2>&1 || { cat "$work/purge.log"; fail "dpkg --purge failed"; }
[ ! -e /usr/bin/weir-server ] || fail "/usr/bin/weir-server left after purge"
[ ! -e /etc/weir ] || fail "/etc/weir left after purge"
echo "package_test: built, installed, ran as $user, pushed as $app, retired and purged"
