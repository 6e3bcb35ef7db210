// weir-server: the daemon's command line.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "config/loader.hpp"
#include "daemon/daemon.hpp"
#include "observability/log.hpp"
#include "daemon/startup_checks.hpp"
#include "runtime/startup_error.hpp"
#include "observability/version.hpp"

namespace {

constexpr const char* usage = R"(Usage: weir-server [options]

weir-server is a durable write-ahead buffer daemon: producers push records to
its Unix socket, it appends them to a CRC-checked write-ahead buffer on local
disk, acks them per durability tier, and drains them in batches to a sink.

Options:
  --config PATH       YAML configuration file (default: config/weir.yaml;
                      when that default is absent, built-in defaults apply)
  --set KEY=VALUE     override one key, e.g. --set ingest.shards=4 (repeatable)
  --check-config      run every check the daemon makes of its configuration
                      before it starts (values, listeners, the sink's URL
                      and secret files); print "config ok" or the one
                      problem, and exit 0 or 2
  --print-config      print the effective configuration as YAML and exit
  --describe-config   print a Markdown table of every key and exit
  --version           print the version and exit
  -h, --help          print this help and exit

Configuration precedence (lowest to highest): built-in defaults, the YAML
file, environment variables WEIR_<SECTION>__<KEY> (e.g. WEIR_LOG__LEVEL=debug),
then --set. Every key is described in docs/configuration.md.

Signals: SIGTERM and SIGINT stop it cleanly (replies owed are written, the
WAB synced and sealed). SIGHUP reads the configuration again from the same
file, environment and --set values: log.level and log.format change at once,
the sink's secret files (sink.postgres.password_file,
sink.mysql.password_file, sink.http.bearer_token_file) are read again for its next connection or
request, listen.tcp's TLS certificate, key and client CA are read again for
new connections (established ones keep going; files that do not load keep
the old ones), and any other changed key is logged as needing a restart. An
invalid configuration on SIGHUP changes nothing (logged).
SIGUSR1 retires the daemon: it stops taking pushes, delivers every record
it holds to every sink (what is left is logged every 10 s), then stops as on
SIGTERM; SIGTERM meanwhile stops it at once, the rest kept for the next
start. `weir-ctl drain` sends it and waits.

Exit status: 0 after a clean shutdown (SIGTERM, SIGINT or SIGUSR1) or a successful
check; 2 when the configuration is invalid or the daemon cannot start.

While it runs, admin.listen (default 127.0.0.1:9185) serves the dashboard at /,
Prometheus metrics at /metrics, /healthz, /readyz and /api/v1/status.
)";

struct cli {
  weir::config_sources sources;
  bool check = false;
  bool print = false;
};

int bad_usage(const std::string& message) {
  std::fprintf(stderr, "weir-server: %s (see --help)\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  cli args;
  args.sources.file = "config/weir.yaml";
  args.sources.file_required = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    // The value of "--flag VALUE" or "--flag=VALUE"; nullptr when missing.
    auto value = [&](std::size_t flag_len) -> const char* {
      if (a.size() > flag_len) return argv[i] + flag_len + 1;
      return i + 1 < argc ? argv[++i] : nullptr;
    };
    if (a == "-h" || a == "--help") {
      std::fputs(usage, stdout);
      return 0;
    } else if (a == "--version") {
      std::printf("weir-server %s\n", std::string(weir::version_string).c_str());
      return 0;
    } else if (a == "--describe-config") {
      std::fputs(weir::describe_config().c_str(), stdout);
      return 0;
    } else if (a == "--check-config") {
      args.check = true;
    } else if (a == "--print-config") {
      args.print = true;
    } else if (a == "--config" || a.rfind("--config=", 0) == 0) {
      const char* v = value(8);
      if (!v) return bad_usage("--config needs a path");
      args.sources.file = v;
      args.sources.file_required = true;
    } else if (a == "--set" || a.rfind("--set=", 0) == 0) {
      const char* v = value(5);
      if (!v) return bad_usage("--set needs KEY=VALUE");
      args.sources.overrides.emplace_back(v);
    } else {
      return bad_usage("unknown option " + a);
    }
  }
  args.sources.env = weir::process_environment();

  weir::config cfg;
  try {
    cfg = weir::load_config(args.sources);
  } catch (const weir::config_error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  if (args.print) {
    std::fputs(weir::render_config(cfg).c_str(), stdout);
    return 0;
  }
  if (args.check) {
    try {
      weir::check_startup_config(cfg);
    } catch (const weir::startup_error& e) {
      std::fprintf(stderr, "config error: %s\n", e.what());
      return 2;
    }
    for (const auto& d : cfg.deprecations) std::fprintf(stderr, "config warning: %s\n", d.c_str());
    std::printf("config ok\n");
    return 0;
  }

  weir::log::configure(cfg.log.level, cfg.log.format);
  for (const auto& d : cfg.deprecations) weir::log::warn("config: a key is read under its earlier name", {{"key", d}});
  try {
    return weir::run_daemon(cfg, [&args] { return weir::load_config(args.sources); });
  } catch (const weir::startup_error& e) {
    weir::log::error(std::string("cannot start: ") + e.what());
    return 2;
  }
}
