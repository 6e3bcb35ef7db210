// weir-bench: scripted load against weir-server, side by side with the
// physical reference measured in the same run.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/chart.hpp"
#include "bench/clickhouse_baselines.hpp"
#include "bench/daemon_runner.hpp"
#include "bench/mysql_baselines.hpp"
#include "bench/report.hpp"
#include "bench/postgres_baselines.hpp"
#include "bench/scenario.hpp"
#include "bench/suite.hpp"
#include "bench/watchdog.hpp"
#include "observability/version.hpp"

#ifndef WEIR_SCENARIO_DIR
#define WEIR_SCENARIO_DIR "bench/scenarios"
#endif

namespace {

constexpr const char* usage = R"(Usage:
  weir-bench list [--scenarios DIR]
  weir-bench run SCENARIO... [--out FILE] [--seconds S] [--warmup S] [--repeat N] [--workdir DIR]
                 [--socket PATH] [--postgres CONNINFO] [--mysql SETTINGS] [--http URL]
                 [--clickhouse URL] [--deadline S]
                 [--scenarios DIR]
  weir-bench report [FILE...] [--md FILE] [--png FILE]

list     Names every scenario with its one-line description.
run      Runs each SCENARIO (a name from list, or a .yaml file) in turn.
         Starts weir-server (next to this binary) in a fresh directory under
         --workdir (default var/bench; put it on the filesystem you want to
         measure), drives the scenario's producers, and measures the
         scenario's physical reference in the same directory: baseline and
         scenario alternate, N rounds each (order flipped every round), and
         the result is the median with its range. Prints one "BENCH: {json}"
         line per result and a summary; progress on stderr. With --socket it
         targets a running daemon instead (the scenario's daemon settings are
         then not applied).
report   Reads results (BENCH lines or --out JSON lines, from files or
         standard input) and writes Markdown tables (stdout, or --md FILE)
         and, with --png FILE, a chart: ratio to baseline per result, and the
         time series of sustained runs (needs gnuplot).

Options:
  --out FILE    also append each result, one JSON object per line, to FILE
  --scenarios DIR
                where scenario names are looked up (default: the source
                tree's bench/scenarios)
  --seconds S   override the scenario's duration per round
  --warmup S    override the scenario's warm-up: load before measuring an
                ingest round (default 1 s), results dropped
  --repeat N    rounds of baseline and scenario (default 3)
  --postgres CONNINFO
                the PostgreSQL server (libpq connection string) of a scenario
                with sink.type postgres and of the postgres_* baselines
                (default: $WEIR_BENCH_POSTGRES); its weir_records table and
                the bench's own tables are dropped and made again
  --mysql SETTINGS
                the MariaDB/MySQL server of a scenario with sink.type mysql
                and of the mysql_load baseline, as "host=H port=P user=U
                database=D" (or socket=PATH; password_file=FILE, else
                $WEIR_SINK_MYSQL_PASSWORD; default: $WEIR_BENCH_MYSQL); its
                weir_records table and the bench's own are dropped and made again
  --http URL    the endpoint (http://) of a scenario with sink.type http and
                of the http_post baseline, e.g. nginx answering "return 200"
                (default: $WEIR_BENCH_HTTP); scenarios with an endpoint:
                section use weir-bench's own instead
  --clickhouse URL
                ClickHouse's HTTP interface (http://) of a scenario with
                sink.type clickhouse and of the clickhouse_insert baseline,
                as user default (default: $WEIR_BENCH_CLICKHOUSE); its
                weir_records or bench_events and the bench's own tables are
                dropped and made again
  --deadline S  give up after S seconds in all: say which step the run was
                in, show the end of each running daemon's log, kill those
                daemons and exit 1 (default: no deadline)
  -h, --help    print this help;  --version  print the version

JSON fields (medians over the rounds, with _min/_max): records_per_s (acked
records per second; with "measure: delivery", per second from the first push
until the sink holds every acked record; backlog: per second from the
restart's exec until then; outage: acked per second while the sink refused),
catch_up_s (delivery: time after the last ack until then; backlog: from the
restart's exec; outage: after the sink answers again), acked_per_s
(delivery: records acked per second while the load ran), records_per_fsync
(Durable records each WAB fdatasync released, from the daemon's metrics;
baseline_records_per_fsync: the minimal server's), records_per_commit
(delivery: records each sink commit stored), records_per_db_commit
(PostgreSQL: records over the server's own commit count),
daemon_cpu_us_per_record (ingest: the daemon's CPU time from the load's start
until its sink took every acked record, at most 10 s after, per record acked
in the load; from its process_cpu_seconds_total),
p50_us/p99_us/p999_us (send to reply, per frame),
delivery_p50_us/delivery_p99_us (latency: push to arrival at the sink),
startup_s (exec to accepting; recovery: on the backlog_bytes the crash left;
backlog: the restart's), idle_rss_mib, peak_rss_mib, series (sustained: per
interval t_s, records_per_s, fsync_ms, rss_mib, per round),
baseline_records_per_s and baseline_p50_us, ratio (per round, the scenario
over the baseline measured next to it; latency: the baseline's time over the
scenario's), machine (git_commit, cpu_model, cores, kernel, wab_filesystem,
wab_device, cpus_allowed, placement).
)";

/// `text` as a number in [low, high], or a refusal naming the option.
double number(const char* flag, const std::string& text, double low, double high, const char* expected) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !(v >= low && v <= high))
    throw std::runtime_error(std::string(flag) + ": expected " + expected + ", got " + text);
  return v;
}

int whole(const char* flag, const std::string& text, int low, int high) {
  const std::string expected = "a whole number from " + std::to_string(low) + " to " + std::to_string(high);
  const double v = number(flag, text, low, high, expected.c_str());
  if (v != static_cast<int>(v)) throw std::runtime_error(std::string(flag) + ": expected " + expected + ", got " + text);
  return static_cast<int>(v);
}

std::string self_dir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "." : p.parent_path().string();
}

struct catalog_entry {
  std::string name, description, path;
};

/// Every scenario file in `dir`, by name.
std::vector<catalog_entry> catalog(const std::string& dir) {
  std::vector<catalog_entry> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".yaml") {
      const auto sc = weir::bench::load_scenario(e.path().string());
      out.push_back({sc.name, sc.description, e.path().string()});
    }
  if (ec) throw std::runtime_error("cannot list scenarios in " + dir + ": " + ec.message());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

/// A path to a scenario file, or the name of one in `dir`.
std::string resolve(const std::string& scenario, const std::string& dir) {
  if (std::filesystem::is_regular_file(scenario)) return scenario;
  const auto named = std::filesystem::path(dir) / (scenario + ".yaml");
  if (std::filesystem::is_regular_file(named)) return named.string();
  throw std::runtime_error("no scenario " + scenario + " (weir-bench list names them)");
}

int list(const std::vector<std::string>& args) {
  std::string dir = WEIR_SCENARIO_DIR;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--scenarios" && i + 1 < args.size()) dir = args[++i];
    else throw std::runtime_error("unexpected argument " + args[i]);
  }
  const auto all = catalog(dir);
  std::size_t width = 0;
  for (const auto& e : all) width = std::max(width, e.name.size());
  for (const auto& e : all) std::printf("%-*s  %s\n", static_cast<int>(width), e.name.c_str(), e.description.c_str());
  return all.empty() ? 1 : 0;
}

/// The servers named by flags (each falls back on its WEIR_BENCH_* variable).
struct named_servers {
  std::string postgres, mysql, http, clickhouse;
};

/// The servers a scenario needs, from the flags or the environment; refuses
/// to start a scenario whose server was not named.
void attach_servers(weir::bench::scenario& sc, named_servers servers) {
  using weir::bench::baseline_kind;
  auto& [postgres, mysql, http, clickhouse] = servers;
  if (postgres.empty())
    if (const char* env = std::getenv("WEIR_BENCH_POSTGRES")) postgres = env;
  if ((sc.sinks_to_postgres() || sc.baseline_needs_postgres()) && postgres.empty())
    throw std::runtime_error(sc.name + " needs a PostgreSQL server: --postgres CONNINFO (or WEIR_BENCH_POSTGRES)");
  sc.postgres = postgres;
  if (sc.sinks_to_postgres()) sc.daemon_settings["sink.postgres.conninfo"] = postgres;
  if (mysql.empty())
    if (const char* env = std::getenv("WEIR_BENCH_MYSQL")) mysql = env;
  if ((sc.sinks_to_mysql() || sc.baseline == baseline_kind::mysql_load) && mysql.empty())
    throw std::runtime_error(sc.name + " needs a MariaDB/MySQL server: --mysql SETTINGS (or WEIR_BENCH_MYSQL)");
  if (!mysql.empty()) sc.mysql = weir::bench::parse_mysql_settings(mysql);
  if (sc.sinks_to_mysql())
    for (const auto& [key, value] : sc.mysql) sc.daemon_settings["sink.mysql." + key] = value;
  if (http.empty())
    if (const char* env = std::getenv("WEIR_BENCH_HTTP")) http = env;
  // A scenario may name its own endpoint (recovery's, where nothing listens),
  // or use weir-bench's.
  const bool has_endpoint = sc.own_endpoint || sc.daemon_settings.count("sink.http.url") > 0;
  if (((sc.sinks_to_http() && !has_endpoint) || (sc.baseline == baseline_kind::http_post && !sc.own_endpoint)) &&
      http.empty())
    throw std::runtime_error(sc.name + " needs an HTTP endpoint: --http URL (or WEIR_BENCH_HTTP)");
  sc.http = http;
  if (sc.sinks_to_http() && !has_endpoint) sc.daemon_settings["sink.http.url"] = http;
  if (clickhouse.empty())
    if (const char* env = std::getenv("WEIR_BENCH_CLICKHOUSE")) clickhouse = env;
  if ((sc.sinks_to_clickhouse() || sc.baseline == baseline_kind::clickhouse_insert) && clickhouse.empty())
    throw std::runtime_error(sc.name + " needs a ClickHouse server: --clickhouse URL (or WEIR_BENCH_CLICKHOUSE)");
  sc.clickhouse = clickhouse;
  if (sc.sinks_to_clickhouse()) sc.daemon_settings["sink.clickhouse.url"] = clickhouse;
}

int run(const std::vector<std::string>& args) {
  std::vector<std::string> names;
  std::string scenario_dir = WEIR_SCENARIO_DIR, out_path;
  named_servers servers;
  double seconds = 0, warmup = -1, deadline = 0;
  weir::bench::suite_options options;
  options.server_binary = self_dir() + "/weir-server";
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto value = [&](const char* flag) {
      if (i + 1 >= args.size()) throw std::runtime_error(std::string(flag) + " needs a value");
      return args[++i];
    };
    if (args[i] == "--socket") options.socket = value("--socket");
    else if (args[i] == "--workdir") options.workdir = value("--workdir");
    else if (args[i] == "--seconds") seconds = number("--seconds", value("--seconds"), 0.001, 1e6, "seconds, more than 0");
    else if (args[i] == "--warmup") warmup = number("--warmup", value("--warmup"), 0, 3600, "seconds, 0 or more");
    else if (args[i] == "--postgres") servers.postgres = value("--postgres");
    else if (args[i] == "--mysql") servers.mysql = value("--mysql");
    else if (args[i] == "--clickhouse") servers.clickhouse = value("--clickhouse");
    else if (args[i] == "--http") servers.http = value("--http");
    else if (args[i] == "--deadline") deadline = number("--deadline", value("--deadline"), 1, 1e7, "seconds, 1 or more");
    else if (args[i] == "--repeat") options.repeats = whole("--repeat", value("--repeat"), 1, 100);
    else if (args[i] == "--out") out_path = value("--out");
    else if (args[i] == "--scenarios") scenario_dir = value("--scenarios");
    else if (!args[i].empty() && args[i][0] == '-') throw std::runtime_error("unknown option " + args[i]);
    else names.push_back(args[i]);
  }
  if (names.empty()) throw std::runtime_error("run needs a scenario (weir-bench list names them)");
  // Every scenario is read and checked before the first one runs: a
  // mistake in the fifth should not surface after an hour of the first four.
  std::vector<weir::bench::scenario> scenarios;
  for (const auto& name : names) {
    auto sc = weir::bench::load_scenario(resolve(name, scenario_dir));
    if (seconds > 0) sc.load.seconds = seconds;
    if (warmup >= 0) sc.load.warmup_seconds = warmup;
    attach_servers(sc, servers);
    // The daemon's own check of the scenario's settings (a mistyped key, a
    // bad value): refused here, not after a baseline has run.
    if (options.socket.empty()) {
      // A table of the user's is there before the daemon starts, and checked by it.
      if (sc.sinks_to_postgres()) weir::bench::postgres_reset(sc.postgres, sc.sink_table());
      if (sc.sinks_to_clickhouse()) weir::bench::clickhouse_reset(sc.clickhouse, sc.sink_table());
      auto settings = sc.daemon_settings;
      // Each round's own endpoint gets its port only when the round starts.
      if (sc.own_endpoint) settings["sink.http.url"] = "http://127.0.0.1:9/";
      const auto refusal = weir::bench::refused_settings(options.server_binary, options.workdir, settings);
      if (!refusal.empty()) throw std::runtime_error(sc.name + ": daemon: " + refusal);
    }
    scenarios.push_back(std::move(sc));
  }
  std::ofstream out;
  if (!out_path.empty()) {
    out.open(out_path, std::ios::app);
    if (!out) throw std::runtime_error("cannot write " + out_path);
  }
  weir::bench::arm_deadline(deadline);
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    if (scenarios.size() > 1)
      std::cerr << "weir-bench: scenario " << i + 1 << " of " << scenarios.size() << "\n";
    weir::bench::run_scenario(scenarios[i], options, [&](const nlohmann::json& result) {
      std::cout << "BENCH: " << result.dump() << "\n" << weir::bench::summarise(result) << std::flush;
      if (out.is_open()) out << result.dump() << "\n" << std::flush;
    });
  }
  return 0;
}

int report(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  std::string md_path, png_path;
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto value = [&](const char* flag) {
      if (i + 1 >= args.size()) throw std::runtime_error(std::string(flag) + " needs a file");
      return args[++i];
    };
    if (args[i] == "--md") md_path = value("--md");
    else if (args[i] == "--png") png_path = value("--png");
    else if (!args[i].empty() && args[i][0] == '-') throw std::runtime_error("unknown option " + args[i]);
    else files.push_back(args[i]);
  }
  std::vector<nlohmann::json> results;
  if (files.empty()) {
    results = weir::bench::read_results(std::cin);
  } else {
    for (const auto& f : files) {
      std::ifstream in(f);
      if (!in) throw std::runtime_error("cannot read " + f + ": " + std::strerror(errno));
      auto more = weir::bench::read_results(in);
      results.insert(results.end(), more.begin(), more.end());
    }
  }
  if (results.empty()) throw std::runtime_error("no results (BENCH lines or JSON lines) to report");
  if (md_path.empty()) {
    weir::bench::write_report(results, std::cout);
  } else {
    std::ofstream md(md_path);
    if (!md) throw std::runtime_error("cannot write " + md_path);
    weir::bench::write_report(results, md);
  }
  if (!png_path.empty()) weir::bench::write_chart(results, png_path);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A producer or an answer whose peer went away must show as an error, not kill the run.
  ::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(usage, stderr);
    return 2;
  }
  if (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    std::fputs(usage, stdout);
    return 0;
  }
  if (args[0] == "--version") {
    std::printf("weir-bench %s\n", std::string(weir::version_string).c_str());
    return 0;
  }
  try {
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "list") return list(rest);
    if (args[0] == "run") return run(rest);
    if (args[0] == "report") return report(rest);
    std::fprintf(stderr, "weir-bench: unknown command %s (see --help)\n", args[0].c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weir-bench: %s\n", e.what());
    return 1;
  }
}
