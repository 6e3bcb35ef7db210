#!/usr/bin/env bash
# make fuzz: runs every libFuzzer target for N seconds and reports, one line
# per target, "fuzz: target=<name> seconds=<n> execs=<N> findings=<K>".
# Usage: run_fuzz.sh <seconds> [build-dir]   (the build dir is already built)
#
# Each target starts from seeds made fresh from the project's files
# (build-dir/corpus/seeds/<target>), its own corpus from earlier runs
# (build-dir/corpus/<target>; the build dir is never committed) and the
# saved crash inputs in tests/fuzz/regressions/<target>/, so a bug found once
# fails every later run until it is fixed. A new crash input is copied there.
# Exits 1 when any target has a finding.
set -uo pipefail

# Not "SECONDS": bash keeps its own counter under that name.
fuzz_seconds=${1:?usage: run_fuzz.sh <seconds> [build-dir]}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${2:-$repo/build-fuzz}" && pwd)
conformance=${WEIR_CONFORMANCE_DIR:-$repo/../shared/reference/conformance}

# The segment target writes and fsyncs files on every input: on a tmpfs that
# costs nothing. Each fuzzer still makes its own private directory inside.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi

seeds=$build/corpus/seeds
targets=$("$build/bin/fuzz_make_seeds" "$repo" "$conformance" "$seeds") || {
  echo "fuzz: cannot make the seed corpora" >&2
  exit 2
}

total_execs=0 total_findings=0 count=0
for target in $targets; do
  corpus=$build/corpus/$target artifacts=$build/artifacts/$target log=$build/logs/$target.log
  regressions=$repo/tests/fuzz/regressions/$target
  rm -rf "$artifacts"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  # The first directory is the one libFuzzer adds new inputs to.
  inputs=("$corpus" "$seeds/$target")
  [ -d "$regressions" ] && inputs+=("$regressions")
  extra=()
  # Recovery logs every repair to stderr; libFuzzer keeps its own reports.
  [ "$target" = segment ] && extra+=(-close_fd_mask=2)

  "$build/bin/fuzz_$target" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "${extra[@]}" "${inputs[@]}" >"$log" 2>&1
  status=$?

  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  findings=0
  for found in "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*; do
    [ -e "$found" ] || continue
    mkdir -p "$regressions"
    cp "$found" "$regressions/"
    echo "fuzz: $target: $(basename "$found") saved to tests/fuzz/regressions/$target/ (log: $log)" >&2
    findings=$((findings + 1))
  done
  # A fuzzer that died without leaving an input behind is a finding too.
  if [ "$status" -ne 0 ] && [ "$findings" -eq 0 ]; then
    echo "fuzz: $target exited with status $status and saved no input (log: $log)" >&2
    findings=1
  fi
  echo "fuzz: target=$target seconds=$fuzz_seconds execs=${execs:-0} findings=$findings"
  total_execs=$((total_execs + ${execs:-0}))
  total_findings=$((total_findings + findings))
  count=$((count + 1))
done

echo "fuzz: $( [ "$total_findings" -eq 0 ] && echo ok || echo FAILED ) targets=$count seconds=$fuzz_seconds execs=$total_execs findings=$total_findings"
[ "$total_findings" -eq 0 ]
