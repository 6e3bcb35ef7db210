// weir-bench: scripted load against weir-server, side by side with the
// physical reference measured in the same run.
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

#include "bench/baselines.hpp"
#include "bench/daemon_runner.hpp"
#include "bench/load_driver.hpp"
#include "bench/report.hpp"
#include "bench/scenario.hpp"
#include "observability/version.hpp"

namespace {

constexpr const char* usage = R"(Usage:
  weir-bench run SCENARIO.yaml [--socket PATH] [--workdir DIR] [--seconds S]
  weir-bench report [FILE...]

run      Starts weir-server (next to this binary) in a fresh directory under
         --workdir (default var/bench; put it on the filesystem you want to
         measure), drives the scenario's producers, and measures the
         scenario's physical reference in the same directory. Prints one
         "BENCH: {json}" line per result and a summary; progress on stderr.
         With --socket it targets a running daemon instead (the scenario's
         daemon settings are then not applied).
report   Reads BENCH lines (files, or standard input) and prints a Markdown table.

Options:
  --seconds S   override the scenario's duration per result
  -h, --help    print this help;  --version  print the version

JSON fields: records_per_s (acked records per second; with "measure:
delivery", per second from the first push until the SQLite sink holds every
acked record), catch_up_s (delivery: time after the last ack until then),
p50_us/p99_us/p999_us (send to reply, per frame), baseline_ops_per_s and
baseline_p50_us (fsync: one write of a frame's records plus fdatasync;
socket: one round trip; sqlite_insert: one INSERT committed on its own),
ratio (records_per_s over the baseline's records per second).
)";

std::string self_dir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "." : p.parent_path().string();
}

int run(const std::vector<std::string>& args) {
  std::string scenario_path, socket, workdir = "var/bench";
  double seconds = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto value = [&](const char* flag) {
      if (i + 1 >= args.size()) throw std::runtime_error(std::string(flag) + " needs a value");
      return args[++i];
    };
    if (args[i] == "--socket") socket = value("--socket");
    else if (args[i] == "--workdir") workdir = value("--workdir");
    else if (args[i] == "--seconds") seconds = std::stod(value("--seconds"));
    else if (scenario_path.empty()) scenario_path = args[i];
    else throw std::runtime_error("unexpected argument " + args[i]);
  }
  if (scenario_path.empty()) throw std::runtime_error("run needs a scenario file");
  auto sc = weir::bench::load_scenario(scenario_path);
  if (seconds > 0) sc.load.seconds = seconds;

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
      const std::uint64_t per_frame = batch == 0 ? 1 : batch;
      std::cerr << "weir-bench: payload " << payload << " B, batch " << batch << ": load for " << spec.seconds
                << " s\n";
      std::unique_ptr<weir::bench::daemon_runner> daemon;
      const std::string run_dir = dir + "/p" + std::to_string(payload) + "-b" + std::to_string(batch);
      std::filesystem::create_directories(run_dir);
      if (socket.empty())
        daemon = std::make_unique<weir::bench::daemon_runner>(self_dir() + "/weir-server", run_dir, sc.daemon_settings);
      const auto load_started = std::chrono::steady_clock::now();
      auto load = weir::bench::run_load(socket.empty() ? daemon->socket_path() : socket, spec);
      double delivered_s = 0, catch_up_s = 0;
      if (sc.measure_delivery) {
        if (!daemon) throw std::runtime_error("measure: delivery needs the daemon weir-bench starts (no --socket)");
        const auto load_ended = std::chrono::steady_clock::now();
        const std::string db = run_dir + "/var/sink.db";
        while (weir::bench::sqlite_row_count(db) < load.records) {
          if (std::chrono::steady_clock::now() - load_ended > std::chrono::minutes(5))
            throw std::runtime_error("the sink did not receive every acked record within 5 minutes");
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        const auto done = std::chrono::steady_clock::now();
        delivered_s = std::chrono::duration<double>(done - load_started).count();
        catch_up_s = std::chrono::duration<double>(done - load_ended).count();
      }
      if (daemon) daemon->stop();

      std::cerr << "weir-bench: baseline (" << weir::bench::name_of(sc.baseline) << ")\n";
      const double base_seconds = std::min(spec.seconds, 3.0);
      weir::bench::baseline_result base;
      std::uint64_t base_records_per_op = per_frame;
      switch (sc.baseline) {
        case weir::bench::baseline_kind::fsync:
          base = weir::bench::measure_fsync(run_dir, per_frame * (payload + 16), base_seconds);
          break;
        case weir::bench::baseline_kind::socket:
          base = weir::bench::measure_socket_round_trip(per_frame * (payload + 4) + 24, base_seconds);
          break;
        case weir::bench::baseline_kind::sqlite_insert:
          base = weir::bench::measure_sqlite_insert(run_dir, payload, base_seconds);
          base_records_per_op = 1;
          break;
      }
      // Delivery scenarios count records per second until the sink holds them all.
      const double records_per_s =
          static_cast<double>(load.records) / (sc.measure_delivery ? delivered_s : load.seconds);
      nlohmann::json j{{"scenario", sc.name},
                       {"durability", spec.durable ? "durable" : "buffered"},
                       {"producers", spec.producers},
                       {"pipeline", spec.pipeline},
                       {"batch", batch},
                       {"payload_bytes", payload},
                       {"seconds", load.seconds},
                       {"records", load.records},
                       {"refused", load.refused},
                       {"records_per_s", records_per_s},
                       {"p50_us", weir::bench::quantile(load.latency_us, 0.5)},
                       {"p99_us", weir::bench::quantile(load.latency_us, 0.99)},
                       {"p999_us", weir::bench::quantile(load.latency_us, 0.999)},
                       {"measure", sc.measure_delivery ? "delivery" : "ingest"},
                       {"catch_up_s", catch_up_s},
                       {"baseline", weir::bench::name_of(sc.baseline)},
                       {"baseline_ops_per_s", base.ops_per_s},
                       {"baseline_p50_us", base.p50_us},
                       {"ratio", records_per_s / (base.ops_per_s * static_cast<double>(base_records_per_op))}};
      std::cout << "BENCH: " << j.dump() << "\n";
      std::printf("%s: %.0f records/s (p50 %.1f us, p99 %.1f us), %s baseline %.0f ops/s (p50 %.1f us), ratio %.2f\n",
                  sc.name.c_str(), records_per_s, j["p50_us"].get<double>(), j["p99_us"].get<double>(),
                  j["baseline"].get<std::string>().c_str(), base.ops_per_s, base.p50_us, j["ratio"].get<double>());
      std::fflush(stdout);
      if (load.refused > 0) std::cerr << "weir-bench: warning: " << load.refused << " records were not acked\n";
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
