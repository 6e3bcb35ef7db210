#!/usr/bin/env bash
# make bench: the quick suite (under 10 minutes on 2 cores) into
# bench/results/latest.jsonl, then its tables into docs/benchmarks.md
# (between the "make bench" markers) and its chart into docs/benchmarks.png.
# PostgreSQL (fsync on), MariaDB and nginx are private instances that
# bench-services starts and stops; redis-server is run by weir-bench itself.
# BENCH_SCENARIOS="a b" runs only those (quick settings) into
# bench/results/look.jsonl and look.md, leaving the docs alone.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
bin=$BUILD_DIR/bin
mkdir -p bench/results var/bench
if [ -n "${BENCH_SCENARIOS:-}" ]; then results=bench/results/look.jsonl; else results=bench/results/latest.jsonl; fi
partial=$results.partial
: > "$partial"
if [ "$(stat -f -c %T /tmp)" = tmpfs ]; then
  echo "bench: warning: /tmp is tmpfs: the PostgreSQL and MariaDB data (under /tmp) do not pay for their fsync" >&2
fi

coproc services { exec "$bin/bench-services"; }
services_pid=$services_PID
services_in=${services[1]}
# Whatever ends the run, the servers stop and a round's directory (a
# backlog can be 2 GiB) does not stay behind.
cleanup() {
  kill -TERM "$services_pid" 2>/dev/null || true
  wait "$services_pid" 2>/dev/null || true
  rm -rf var/bench/run-*
}
trap cleanup EXIT
while IFS= read -r line <&"${services[0]}"; do
  [ "$line" = ready ] && break
  export "${line?}"
done
[ -n "${WEIR_BENCH_POSTGRES:-}" ] || { echo "bench: bench-services did not start its servers" >&2; exit 1; }

# Each group: scenarios and the settings that keep the suite short; every
# result still has its baseline measured beside it, over 2 rounds.
run() {
  "$bin/weir-bench" run "$@" --workdir var/bench --out "$partial" --deadline 1500 >/dev/null
}
if [ -n "${BENCH_SCENARIOS:-}" ]; then
  # shellcheck disable=SC2086
  run $BENCH_SCENARIOS --seconds 1.5 --warmup 0.5 --repeat 2
else
  run durable-single durable-single-spread durable-single-ordered durable-single-overwrite durable-single-minimal \
      durable-single-awake \
      buffered-single buffered-single-spread buffered-single-ordered buffered-single-awake buffered-single-minimal \
      buffered-16 \
      durable-16 durable-64 durable-16-minimal durable-64-minimal durable-64-minimal-spread \
      durable-single-minimal-group-sync durable-16-minimal-group-sync durable-64-minimal-no-read-batching \
      buffered-single-no-spin \
      durable-64-minimal-awake pipelined \
      batch-sizes batch-sizes-buffered payload-sweep \
      durable-single-redis durable-16-redis pipelined-redis \
      deliver-sqlite deliver-sqlite-batched deliver-sqlite-bulk deliver-two-sinks deliver-sqlite-backlog \
      durable-16-postgres deliver-postgres-bulk deliver-postgres-copy deliver-postgres-table deliver-mysql-load \
      deliver-clickhouse deliver-clickhouse-table \
      deliver-http-raw deliver-http-ndjson deliver-http-slow deliver-http-slow-nagle \
      delivery-latency delivery-latency-no-linger replicated-3 recovery startup-idle \
      --seconds 1.5 --warmup 0.5 --repeat 2
  run sink-outage --seconds 12 --repeat 2            # the outage itself lasts 10 s
  run recovery-backlog --repeat 2                     # 100 MiB, 512 MiB, 2 GiB
  run sustained --seconds 45 --repeat 1               # 10 minutes without --seconds
fi
mv "$partial" "$results"
exec {services_in}>&-

report=${results%.jsonl}.md
if [ -n "${BENCH_SCENARIOS:-}" ]; then
  "$bin/weir-bench" report "$results" --md "$report"
  echo "bench: $(wc -l < "$results") results in $results, tables in $report"
  exit 0
fi
"$bin/weir-bench" report "$results" --md "$report" --png docs/benchmarks.png
"$bin/weir-bench" list > bench/results/scenarios.txt
# The tables go between the markers in docs/benchmarks.md; the rest of the
# page (what each scenario can and cannot say) is written by hand.
python3 - "$report" <<'PY'
import pathlib, sys
doc = pathlib.Path("docs/benchmarks.md")
text = doc.read_text()

def put(text, name, block):
    begin, end = f"<!-- {name}: begin -->", f"<!-- {name}: end -->"
    if begin not in text or end not in text:
        sys.exit(f"bench: docs/benchmarks.md has no {name} markers")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + "\n" + block + "\n" + end + tail

tables = pathlib.Path(sys.argv[1]).read_text()
command = "make bench  # scripts/bench.sh: the quick suite, 2 rounds each"
text = put(text, "make bench", f"\n```sh\n{command}\n```\n\n{tables}")
rows = ["| scenario | what it runs, and against what |", "|---|---|"]
for line in pathlib.Path("bench/results/scenarios.txt").read_text().splitlines():
    name, _, description = line.partition(" ")
    rows.append(f"| `{name}` | {description.strip()} |")
text = put(text, "scenarios", "\n" + "\n".join(rows) + "\n")
doc.write_text(text)
PY
echo "bench: $(wc -l < "$results") results in $results; tables in docs/benchmarks.md, chart in docs/benchmarks.png"
