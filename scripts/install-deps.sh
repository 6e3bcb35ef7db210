#!/usr/bin/env bash
# Installs the Debian packages weir needs: to build it and run the daemon
# (no argument), or also to test and benchmark it (--test).
# Idempotent: when everything is already present it prints nothing and exits 0.
set -euo pipefail

# What building weir and running the daemon need (`make run`, `make package`).
packages=(
  build-essential cmake ninja-build ccache pkg-config
  libcaf-dev libboost-dev libyaml-cpp-dev prometheus-cpp-dev catch2
  libssl-dev libsqlite3-dev libpq-dev libmariadb-dev zlib1g-dev
  nlohmann-json3-dev python3
)
# `install-deps.sh --test` (make test, make bench): the real servers and tools
# the test suite and weir-bench start themselves, on private ports and
# directories.
if [ "${1:-}" = "--test" ]; then
  packages+=(
    sqlite3 postgresql-15 mariadb-server-core nginx prometheus chromium fonts-dejavu-core
    # mariadb-install-db runs my_print_defaults, which is in the client package
    # (not a dependency of mariadb-server-core in every Debian 12 point release)
    mariadb-client-core
    # the ClickHouse sink's tests run a private clickhouse-server
    clickhouse-server
    # weir-bench: Redis (a peer, appendfsync always) and gnuplot (report --png)
    redis-server gnuplot-nox
    # openssl: the cluster TLS test makes its own CAs and node certificates
    openssl
    # make fuzz: clang, and the libFuzzer runtime (clang only recommends it; recommends are skipped)
    clang libclang-rt-14-dev
  )
fi
# Extra packages for the integration suites (real servers and tools).
packages+=(${WEIR_EXTRA_PACKAGES:-})

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Packaged servers (PostgreSQL, nginx) must not start system-wide instances:
# the tests run their own. policy-rc.d 101 = "do not start services".
policy=/usr/sbin/policy-rc.d
added_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  added_policy=1
fi
trap '[ -n "$added_policy" ] && $sudo rm -f "$policy"' EXIT
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
