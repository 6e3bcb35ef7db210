#!/usr/bin/env bash
# libweir-client as another project consumes it: installed with
# `cmake --install`, examples/ configured and built against the installed
# package alone (find_package(weir CONFIG)), then run against a live
# weir-server. Usage: client_package_test.sh BUILD_DIR SOURCE_DIR [SANITIZER_FLAGS]
# (a sanitizer build's libraries need the same -fsanitize flags in the program).
set -euo pipefail
build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
sanitize=${3:-}
work=$(mktemp -d /tmp/weir-client-package-XXXXXX)
daemon=""
trap '[ -n "$daemon" ] && kill "$daemon" 2>/dev/null; rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" --component client >/dev/null
test -f "$work/prefix/include/weir/client.hpp"
test -f "$work/prefix/lib/cmake/weir/weirConfig.cmake" || test -f "$work/prefix/lib/x86_64-linux-gnu/cmake/weir/weirConfig.cmake"
# The examples see the installed files only: not this source tree's headers.
if ! { cmake -S "$source_dir/examples" -B "$work/examples" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
          -DCMAKE_CXX_FLAGS="$sanitize" -DCMAKE_EXE_LINKER_FLAGS="$sanitize" &&
        cmake --build "$work/examples"; } >"$work/build.log" 2>&1; then
  cat "$work/build.log"
  exit 1
fi

mkdir -p "$work/daemon"
cd "$work/daemon"
"$build_dir/bin/weir-server" --set sink.type=noop --set ingest.ack_mode=ordered >daemon.log 2>&1 &
daemon=$!
for _ in $(seq 1 400); do
  "$build_dir/bin/weir-ctl" health >/dev/null 2>&1 && break
  kill -0 "$daemon" 2>/dev/null || { cat daemon.log; exit 1; }
  sleep 0.05
done
"$work/examples/minimal_producer" var/run/weir.sock one two | tee minimal.out
grep -qx "acked: two" minimal.out
printf 'a\nb\n\nc\n' | "$work/examples/batch_producer" var/run/weir.sock | tee batch.out
grep -qx "acked 3, refused 0" batch.out
"$work/examples/pipelined_producer" var/run/weir.sock 5000 512 | tee pipelined.out
grep -q "^acked 5000, refused 0, " pipelined.out
echo "client package: installed, examples built and acked"
