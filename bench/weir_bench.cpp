// weir-bench: scripted load against weir-server, side by side with the
// physical reference measured in the same run.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/mysql_baselines.hpp"
#include "bench/run_once.hpp"
#include "bench/report.hpp"
#include "bench/scenario.hpp"
#include "bench/watchdog.hpp"
#include "observability/version.hpp"

namespace {

constexpr const char* usage = R"(Usage:
  weir-bench run SCENARIO.yaml [--socket PATH] [--workdir DIR] [--seconds S] [--warmup S] [--repeat N]
                               [--postgres CONNINFO] [--mysql SETTINGS] [--http URL] [--deadline S]
  weir-bench report [FILE...]

run      Starts weir-server (next to this binary) in a fresh directory under
         --workdir (default var/bench; put it on the filesystem you want to
         measure), drives the scenario's producers, and measures the
         scenario's physical reference in the same directory: baseline and
         scenario alternate, N rounds each (order flipped every round), and
         the result is the median with its range. Prints one "BENCH: {json}"
         line per result and a summary; progress on stderr. With --socket it
         targets a running daemon instead (the scenario's daemon settings are
         then not applied).
report   Reads BENCH lines (files, or standard input) and prints a Markdown table.

Options:
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
                (default: $WEIR_BENCH_HTTP)
  --deadline S  give up after S seconds in all: say which step the run was
                in, show the end of each running daemon's log, kill those
                daemons and exit 1 (default: no deadline)
  -h, --help    print this help;  --version  print the version

JSON fields (medians over the rounds, with _min/_max): records_per_s (acked
records per second; with "measure: delivery", per second from the first push
until the sink holds every acked record), catch_up_s (delivery: time after
the last ack until then), acked_per_s (delivery: records acked per second
while the load ran), records_per_fsync (Durable records each WAB fdatasync
released, from the daemon's metrics; baseline_records_per_fsync: the
minimal server's), records_per_commit (delivery: records
each sink commit stored), p50_us/p99_us/p999_us (send to reply, per
frame), baseline_records_per_s and baseline_p50_us (fsync: one write of a
frame's records plus fdatasync, append or overwrite; socket: one round trip;
minimal_server: the same load against bench/minimal_server; sqlite_insert:
one INSERT committed on its own), ratio (per round, the scenario over the
baseline measured next to it).
)";

std::string self_dir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "." : p.parent_path().string();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}
double lowest(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }
double highest(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

void progress(const std::string& what) {
  std::cerr << "weir-bench: " << what << "\n";
  weir::bench::note_step(what);
}

int run(const std::vector<std::string>& args) {
  std::string scenario_path, socket, workdir = "var/bench";
  double seconds = 0, warmup = -1, deadline = 0;
  std::string postgres, mysql, http;
  int repeats = 3;
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto value = [&](const char* flag) {
      if (i + 1 >= args.size()) throw std::runtime_error(std::string(flag) + " needs a value");
      return args[++i];
    };
    if (args[i] == "--socket") socket = value("--socket");
    else if (args[i] == "--workdir") workdir = value("--workdir");
    else if (args[i] == "--seconds") seconds = std::stod(value("--seconds"));
    else if (args[i] == "--warmup") warmup = std::stod(value("--warmup"));
    else if (args[i] == "--postgres") postgres = value("--postgres");
    else if (args[i] == "--mysql") mysql = value("--mysql");
    else if (args[i] == "--http") http = value("--http");
    else if (args[i] == "--deadline") deadline = std::stod(value("--deadline"));
    else if (args[i] == "--repeat") repeats = std::stoi(value("--repeat"));
    else if (scenario_path.empty()) scenario_path = args[i];
    else throw std::runtime_error("unexpected argument " + args[i]);
  }
  if (scenario_path.empty()) throw std::runtime_error("run needs a scenario file");
  if (repeats < 1 || repeats > 100) throw std::runtime_error("--repeat must be 1 to 100");
  weir::bench::arm_deadline(deadline);
  auto sc = weir::bench::load_scenario(scenario_path);
  if (seconds > 0) sc.load.seconds = seconds;
  if (warmup >= 0) sc.load.warmup_seconds = warmup;
  if (postgres.empty())
    if (const char* env = std::getenv("WEIR_BENCH_POSTGRES")) postgres = env;
  const bool needs_postgres = sc.sinks_to_postgres() || sc.baseline == weir::bench::baseline_kind::postgres_insert ||
                              sc.baseline == weir::bench::baseline_kind::postgres_copy;
  if (needs_postgres && postgres.empty())
    throw std::runtime_error(sc.name + " needs a PostgreSQL server: --postgres CONNINFO (or WEIR_BENCH_POSTGRES)");
  sc.postgres = postgres;
  if (sc.sinks_to_postgres()) sc.daemon_settings["sink.postgres.conninfo"] = postgres;
  if (mysql.empty())
    if (const char* env = std::getenv("WEIR_BENCH_MYSQL")) mysql = env;
  if ((sc.sinks_to_mysql() || sc.baseline == weir::bench::baseline_kind::mysql_load) && mysql.empty())
    throw std::runtime_error(sc.name + " needs a MariaDB/MySQL server: --mysql SETTINGS (or WEIR_BENCH_MYSQL)");
  if (!mysql.empty()) sc.mysql = weir::bench::parse_mysql_settings(mysql);
  if (sc.sinks_to_mysql())
    for (const auto& [key, value] : sc.mysql) sc.daemon_settings["sink.mysql." + key] = value;
  if (http.empty())
    if (const char* env = std::getenv("WEIR_BENCH_HTTP")) http = env;
  // A scenario may name its own endpoint (recovery's, where nothing listens).
  const bool names_endpoint = sc.daemon_settings.count("sink.http.url") > 0;
  if (((sc.sinks_to_http() && !names_endpoint) || sc.baseline == weir::bench::baseline_kind::http_post) &&
      http.empty())
    throw std::runtime_error(sc.name + " needs an HTTP endpoint: --http URL (or WEIR_BENCH_HTTP)");
  sc.http = http;
  if (sc.sinks_to_http() && !http.empty()) sc.daemon_settings["sink.http.url"] = http;

  std::filesystem::create_directories(workdir);
  std::string dir_template = workdir + "/run-XXXXXX";
  if (!::mkdtemp(dir_template.data())) throw std::runtime_error("cannot create a directory under " + workdir);
  const std::string dir = std::filesystem::absolute(dir_template).string();

  std::cerr << "weir-bench: " << sc.name << " — " << sc.description << "\n";
  for (auto payload : sc.payload_sizes)
    for (auto batch : sc.batches) {
      auto spec = sc.load;
      spec.payload_bytes = payload;
      spec.batch = batch;
      // Baseline and scenario alternate, and the order flips each round, so
      // that a machine drifting over minutes moves both alike.
      std::vector<weir::bench::sample> runs, bases;
      for (int r = 0; r < repeats; ++r) {
        const std::string round_dir =
            dir + "/p" + std::to_string(payload) + "-b" + std::to_string(batch) + "-r" + std::to_string(r);
        std::filesystem::create_directories(round_dir);
        const std::string round = "payload " + std::to_string(payload) + " B, batch " + std::to_string(batch) +
                                  ", round " + std::to_string(r + 1) + "/" + std::to_string(repeats);
        for (int step = 0; step < 2; ++step) {
          if ((step == 0) == (r % 2 == 0)) {
            progress(round + ": baseline (" + weir::bench::name_of(sc.baseline) + ")");
            bases.push_back(weir::bench::run_baseline_once(sc, spec, round_dir, self_dir() + "/weir-server"));
          } else {
            std::ostringstream what;
            what << round << ": scenario, " << spec.seconds << " s";
            progress(what.str());
            runs.push_back(weir::bench::run_scenario_once(sc, spec, round_dir, self_dir() + "/weir-server", socket));
          }
        }
        std::filesystem::remove_all(round_dir);
      }
      auto field = [](const std::vector<weir::bench::sample>& v, double weir::bench::sample::*f) {
        std::vector<double> out;
        for (const auto& s : v) out.push_back(s.*f);
        return out;
      };
      using weir::bench::sample;
      const auto rate = field(runs, &sample::records_per_s), base_rate = field(bases, &sample::records_per_s);
      std::vector<double> ratios;  // per round: the scenario over the baseline measured next to it
      for (std::size_t r = 0; r < runs.size(); ++r)
        if (base_rate[r] > 0) ratios.push_back(rate[r] / base_rate[r]);
      std::vector<double> backlog;
      for (const auto& s : runs) backlog.push_back(static_cast<double>(s.backlog_bytes));
      std::uint64_t records = 0, refused = 0;
      for (const auto& s : runs) {
        records += s.records;
        refused += s.refused;
      }
      nlohmann::json j{{"scenario", sc.name},
                       {"durability", spec.replicated ? "replicated" : spec.durable ? "durable" : "buffered"},
                       {"cluster_nodes", sc.cluster_nodes},
                       {"producers", spec.producers},
                       {"pipeline", spec.pipeline},
                       {"batch", batch},
                       {"payload_bytes", payload},
                       {"seconds", spec.seconds},
                       {"repeats", repeats},
                       {"records", records},
                       {"refused", refused},
                       {"records_per_s", median(rate)},
                       {"records_per_s_min", lowest(rate)},
                       {"records_per_s_max", highest(rate)},
                       {"p50_us", median(field(runs, &sample::p50_us))},
                       {"p99_us", median(field(runs, &sample::p99_us))},
                       {"p999_us", median(field(runs, &sample::p999_us))},
                       {"measure", weir::bench::name_of(sc.measure)},
                       {"catch_up_s", median(field(runs, &sample::catch_up_s))},
                       {"acked_per_s", median(field(runs, &sample::acked_per_s))},
                       {"records_per_fsync", median(field(runs, &sample::records_per_fsync))},
                       {"records_per_commit", median(field(runs, &sample::records_per_commit))},
                       {"startup_s", median(field(runs, &sample::startup_s))},
                       {"startup_s_min", lowest(field(runs, &sample::startup_s))},
                       {"startup_s_max", highest(field(runs, &sample::startup_s))},
                       {"backlog_bytes", median(backlog)},
                       {"baseline", weir::bench::name_of(sc.baseline)},
                       {"baseline_records_per_s", median(base_rate)},
                       {"baseline_records_per_s_min", lowest(base_rate)},
                       {"baseline_records_per_s_max", highest(base_rate)},
                       {"baseline_p50_us", median(field(bases, &sample::p50_us))},
                       {"baseline_records_per_fsync", median(field(bases, &sample::records_per_fsync))},
                       {"ratio", median(ratios)},
                       {"ratio_min", lowest(ratios)},
                       {"ratio_max", highest(ratios)}};
      std::cout << "BENCH: " << j.dump() << "\n";
      std::printf("%s: %.0f records/s (p50 %.1f us, p99 %.1f us), %s baseline %.0f records/s (p50 %.1f us), "
                  "ratio %.2f (%.2f to %.2f over %d rounds)\n",
                  sc.name.c_str(), median(rate), j["p50_us"].get<double>(), j["p99_us"].get<double>(),
                  j["baseline"].get<std::string>().c_str(), median(base_rate), j["baseline_p50_us"].get<double>(),
                  median(ratios), lowest(ratios), highest(ratios), repeats);
      if (sc.measure == weir::bench::measure_kind::delivery)
        std::printf("%s: acked %.0f records/s while the load ran (%.2f of the baseline), then %.2f s to catch up; "
                    "%.0f records per sink commit\n",
                    sc.name.c_str(), j["acked_per_s"].get<double>(),
                    median(base_rate) > 0 ? j["acked_per_s"].get<double>() / median(base_rate) : 0.0,
                    j["catch_up_s"].get<double>(), j["records_per_commit"].get<double>());
      if (const double per_sync = j["records_per_fsync"], base_per_sync = j["baseline_records_per_fsync"];
          per_sync > 0 && base_per_sync > 0)
        std::printf("%s: %.1f Durable records per WAB fdatasync (%.1f in the baseline)\n", sc.name.c_str(), per_sync,
                    base_per_sync);
      else if (per_sync > 0)
        std::printf("%s: %.1f Durable records per WAB fdatasync\n", sc.name.c_str(), per_sync);
      if (sc.measure == weir::bench::measure_kind::recovery)
        std::printf("%s: restart after kill -9 on %.0f MiB of backlog: %.3f s (%.3f to %.3f), %.2f s per GiB\n",
                    sc.name.c_str(), median(backlog) / (1 << 20), j["startup_s"].get<double>(),
                    j["startup_s_min"].get<double>(), j["startup_s_max"].get<double>(),
                    median(backlog) > 0 ? j["startup_s"].get<double>() / (median(backlog) / (1 << 30)) : 0.0);
      std::fflush(stdout);
      if (refused > 0) std::cerr << "weir-bench: warning: " << refused << " records were not acked\n";
    }
  std::filesystem::remove_all(dir);
  return 0;
}

int report(const std::vector<std::string>& files) {
  int rows = 0;
  if (files.empty()) {
    rows = weir::bench::write_report(std::cin, std::cout);
  } else {
    std::stringstream all;
    for (const auto& f : files) {
      std::ifstream in(f);
      if (!in) throw std::runtime_error("cannot read " + f);
      all << in.rdbuf() << "\n";
    }
    rows = weir::bench::write_report(all, std::cout);
  }
  return rows > 0 ? 0 : 1;
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
  if (args[0] == "-h" || args[0] == "--help") {
    std::fputs(usage, stdout);
    return 0;
  }
  if (args[0] == "--version") {
    std::printf("weir-bench %s\n", std::string(weir::version_string).c_str());
    return 0;
  }
  try {
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "run") return run(rest);
    if (args[0] == "report") return report(rest);
    std::fprintf(stderr, "weir-bench: unknown command %s (see --help)\n", args[0].c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weir-bench: %s\n", e.what());
    return 1;
  }
}
