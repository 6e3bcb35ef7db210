#include "soak/options.hpp"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "support/test_paths.hpp"

namespace weir::soak {

namespace {

constexpr const char* usage = R"(Usage: weir-soak [options]

Crash soak of the real weir-server: producers push Durable and Buffered
records (Push, PushTracked, PushBatch) while the daemon is killed with
SIGKILL at random moments, frozen with SIGSTOP, and killed again during its
own recovery. At the end every acked record must be in the SQLite sink, in
each producer's order per shard.

Options:
  --server PATH       weir-server binary (default: the build's bin/weir-server)
  --dir DIR           work directory, must not exist or be empty (default: a
                      fresh /tmp/weir-soak-XXXXXX, removed after a clean run)
  --keep              keep the work directory after a clean run
  --cycles N          kill cycles (default 1000)
  --seed N            seed for every random choice (default: random, printed)
  --producers N       producer threads (default 4)
  --shards N          ingest.shards (default 4)
  --segment-bytes S   wab.segment_max_bytes (default 64KiB)
  --set KEY=VALUE     extra daemon setting (repeatable)
  --min-load-ms N     shortest load phase per cycle (default 50)
  --max-load-ms N     longest load phase per cycle (default 400)
  --timeout-ms N      producers' reply timeout (default 1000)
  -h, --help          this help

Output: progress on stderr, then one line on stdout:
  soak: cycles=N acked=N lost=N duplicates=N order_violations=N
Exit status: 0 clean; 1 lost or misordered records, a wrong AckTracked, or a
daemon that did not come back or stop; 2 bad usage.
)";

[[noreturn]] void bad_usage(const std::string& message) {
  std::fprintf(stderr, "weir-soak: %s (see --help)\n", message.c_str());
  std::exit(2);
}

std::uint64_t number(const std::string& flag, const char* text) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (!*text || *end) bad_usage(flag + " needs a number, not \"" + text + "\"");
  return v;
}

}  // namespace

options parse_options(int argc, char** argv) {
  options o;
  o.server = weir::test::binary("weir-server");
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) bad_usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(usage, stdout);
      std::exit(0);
    } else if (a == "--server") {
      o.server = value();
    } else if (a == "--dir") {
      o.dir = value();
    } else if (a == "--keep") {
      o.keep = true;
    } else if (a == "--cycles") {
      o.cycles = static_cast<std::uint32_t>(number(a, value()));
    } else if (a == "--seed") {
      o.seed = number(a, value());
      o.seed_given = true;
    } else if (a == "--producers") {
      o.producers = static_cast<std::uint32_t>(number(a, value()));
    } else if (a == "--shards") {
      o.shards = static_cast<std::uint32_t>(number(a, value()));
    } else if (a == "--segment-bytes") {
      o.segment_bytes = value();
    } else if (a == "--set") {
      o.extra_settings.emplace_back(value());
    } else if (a == "--min-load-ms") {
      o.min_load = std::chrono::milliseconds(number(a, value()));
    } else if (a == "--max-load-ms") {
      o.max_load = std::chrono::milliseconds(number(a, value()));
    } else if (a == "--timeout-ms") {
      o.reply_timeout = std::chrono::milliseconds(number(a, value()));
    } else {
      bad_usage("unknown option " + a);
    }
  }
  if (o.producers == 0) bad_usage("--producers must be at least 1");
  if (o.shards == 0) bad_usage("--shards must be at least 1");
  if (o.max_load < o.min_load) bad_usage("--max-load-ms is below --min-load-ms");
  if (!o.seed_given) o.seed = std::random_device{}();
  return o;
}

}  // namespace weir::soak
