#include "bench/report.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <string>

namespace weir::bench {

namespace {

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

/// A per-fsync or per-commit figure; "–" where the run has none (older lines, no daemon).
std::string counted(double v, int digits = 1) { return v > 0 ? fixed(v, digits) : "–"; }

std::string range(const nlohmann::json& j, const char* key, int digits) {
  const double v = j.value(key, 0.0);
  return fixed(v, digits) + " (" + fixed(j.value(std::string(key) + "_min", v), digits) + "–" +
         fixed(j.value(std::string(key) + "_max", v), digits) + ")";
}

bool is(const nlohmann::json& j, const char* measure) { return j.value("measure", "ingest") == measure; }

/// A result with a sink at the end: its row goes in the delivery table.
bool delivers(const nlohmann::json& j) {
  return is(j, "delivery") || is(j, "backlog") || is(j, "outage") || is(j, "latency");
}

void main_table(const std::vector<nlohmann::json>& results, std::ostream& out) {
  out << "| scenario | measure | tier | producers | pipeline | batch | payload B | records/s | p50 µs | p99 µs | "
         "baseline | baseline records/s | baseline p50 µs | ratio (range) | rounds | records per fsync (baseline) | "
         "records per sink commit | daemon CPU µs per record |\n"
      << "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& j : results) {
    out << "| " << j.value("scenario", "?") << " | " << j.value("measure", "ingest") << " | "
        << j.value("durability", "?") << " | " << j.value("producers", 0) << " | " << j.value("pipeline", 0) << " | "
        << j.value("batch", 0) << " | " << j.value("payload_bytes", 0) << " | "
        << fixed(j.value("records_per_s", 0.0), 0) << " | " << fixed(j.value("p50_us", 0.0), 1) << " | "
        << fixed(j.value("p99_us", 0.0), 1) << " | " << j.value("baseline", "?") << " | "
        << fixed(j.value("baseline_records_per_s", 0.0), 0) << " | " << fixed(j.value("baseline_p50_us", 0.0), 1)
        << " | " << (j.value("baseline", "?") == "none" ? "–" : range(j, "ratio", 2)) << " | " << j.value("repeats", 1) << " | "
        << counted(j.value("records_per_fsync", 0.0))
        << (j.value("baseline_records_per_fsync", 0.0) > 0
                ? " (" + fixed(j.value("baseline_records_per_fsync", 0.0), 1) + ")"
                : "")
        << " | " << counted(j.value("records_per_commit", 0.0)) << " | "
        << counted(j.value("daemon_cpu_us_per_record", 0.0), 2) << " |\n";
  }
}

void delivery_table(const std::vector<nlohmann::json>& results, std::ostream& out) {
  if (std::none_of(results.begin(), results.end(), delivers))
    return;
  out << "\n| scenario | measure | acked records/s while loading | catch-up s | records per sink commit | "
         "records per PostgreSQL commit | push-to-sink p50 ms | p99 ms | floor p50 ms |\n"
      << "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& j : results) {
    if (!delivers(j)) continue;
    const bool latency = is(j, "latency");
    out << "| " << j.value("scenario", "?") << " | " << j.value("measure", "?") << " | "
        << fixed(latency ? j.value("records_per_s", 0.0) : j.value("acked_per_s", 0.0), 0) << " | "
        << (latency ? "–" : fixed(j.value("catch_up_s", 0.0), 2)) << " | "
        << counted(j.value("records_per_commit", 0.0)) << " | " << counted(j.value("records_per_db_commit", 0.0))
        << " | " << (latency ? fixed(j.value("delivery_p50_us", 0.0) / 1000, 2) : "–") << " | "
        << (latency ? fixed(j.value("delivery_p99_us", 0.0) / 1000, 2) : "–") << " | "
        << (latency ? fixed(j.value("baseline_p50_us", 0.0) / 1000, 2) : "–") << " |\n";
  }
}

void sustained_table(const std::vector<nlohmann::json>& results, std::ostream& out) {
  bool header = false;
  for (const auto& j : results) {
    if (!is(j, "sustained") || !j.contains("series")) continue;
    if (!header) {
      out << "\n| sustained scenario | round | seconds | 5 s intervals | records/s lowest | median | highest | "
             "fdatasync ms median | highest | RSS MiB first | last |\n"
          << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
      header = true;
    }
    int round = 0;
    for (const auto& series : j["series"]) {
      ++round;
      if (series.empty()) continue;
      std::vector<double> rate, fsync;
      for (const auto& p : series) {
        rate.push_back(p.value("records_per_s", 0.0));
        fsync.push_back(p.value("fsync_ms", 0.0));
      }
      std::sort(rate.begin(), rate.end());
      std::sort(fsync.begin(), fsync.end());
      out << "| " << j.value("scenario", "?") << " | " << round << " | " << fixed(j.value("seconds", 0.0), 0) << " | "
          << series.size() << " | " << fixed(rate.front(), 0) << " | " << fixed(rate[rate.size() / 2], 0) << " | "
          << fixed(rate.back(), 0) << " | " << fixed(fsync[fsync.size() / 2], 2) << " | " << fixed(fsync.back(), 2)
          << " | " << fixed(series.front().value("rss_mib", 0.0), 1) << " | "
          << fixed(series.back().value("rss_mib", 0.0), 1) << " |\n";
    }
  }
}

void restart_table(const std::vector<nlohmann::json>& results, std::ostream& out) {
  if (std::none_of(results.begin(), results.end(), [](const auto& j) { return is(j, "startup") || is(j, "recovery"); }))
    return;
  out << "\n| scenario | measure | backlog MiB | exec to accepting s (range) | s per GiB of backlog | idle RSS MiB |\n"
      << "|---|---|---:|---:|---:|---:|\n";
  for (const auto& j : results) {
    if (!is(j, "startup") && !is(j, "recovery")) continue;
    const double backlog = j.value("backlog_bytes", 0.0);
    out << "| " << j.value("scenario", "?") << " | " << j.value("measure", "?") << " | "
        << fixed(backlog / (1 << 20), 0) << " | " << range(j, "startup_s", 3) << " | "
        << (backlog > 0 ? fixed(j.value("startup_s", 0.0) / (backlog / (1 << 30)), 2) : "–") << " | "
        << (is(j, "startup") ? fixed(j.value("idle_rss_mib", 0.0), 1) : "–") << " |\n";
  }
}

}  // namespace

std::vector<nlohmann::json> read_results(std::istream& in) {
  std::vector<nlohmann::json> results;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const auto at = line.find("BENCH: ");
    const auto text = at != std::string::npos ? line.substr(at + 7) : line;
    if (text.empty() || text.front() != '{') continue;
    auto j = nlohmann::json::parse(text, nullptr, false);
    // A cut-off result is a damaged file, not a line to skip quietly.
    if (j.is_discarded() || !j.is_object() || !j.contains("scenario"))
      throw std::runtime_error("line " + std::to_string(number) + ": not a weir-bench result: " + text.substr(0, 80));
    results.push_back(std::move(j));
  }
  return results;
}

int write_report(const std::vector<nlohmann::json>& results, std::ostream& out) {
  // Where the numbers came from, as the first result recorded it.
  for (const auto& j : results)
    if (j.contains("machine") && j["machine"].is_object()) {
      const auto& m = j["machine"];
      out << "Measured on " << m.value("cpu_model", "?") << ", " << m.value("cores", 0) << " cores (CPUs "
          << m.value("cpus_allowed", "?") << "), " << m.value("kernel", "?") << "; WAB on "
          << m.value("wab_filesystem", "?") << " " << m.value("wab_device", "?") << "; weir " << m.value("git_commit", "?")
          << ".\n\n";
      break;
    }
  main_table(results, out);
  delivery_table(results, out);
  sustained_table(results, out);
  restart_table(results, out);
  return static_cast<int>(results.size());
}

}  // namespace weir::bench
