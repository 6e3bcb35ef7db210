#include "bench/report.hpp"

#include <iomanip>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace weir::bench {

namespace {

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

}  // namespace

/// A per-fsync or per-commit figure; "–" where the run has none (older lines, no daemon).
std::string counted(double v) { return v > 0 ? fixed(v, 1) : "–"; }

int write_report(std::istream& in, std::ostream& out) {
  out << "| scenario | measure | tier | producers | pipeline | batch | payload B | records/s | p50 µs | p99 µs | "
         "baseline | baseline records/s | baseline p50 µs | ratio (range) | rounds | records per fsync (baseline) | "
         "records per sink commit |\n"
      << "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n";
  int rows = 0;
  std::string line;
  while (std::getline(in, line)) {
    const auto at = line.find("BENCH: ");
    if (at == std::string::npos) continue;
    const auto j = nlohmann::json::parse(line.substr(at + 7), nullptr, false);
    if (j.is_discarded()) continue;
    const double ratio = j.value("ratio", 0.0);
    out << "| " << j.value("scenario", "?") << " | " << j.value("measure", "ingest") << " | "
        << j.value("durability", "?") << " | "
        << j.value("producers", 0) << " | " << j.value("pipeline", 0) << " | " << j.value("batch", 0) << " | "
        << j.value("payload_bytes", 0) << " | " << fixed(j.value("records_per_s", 0.0), 0) << " | "
        << fixed(j.value("p50_us", 0.0), 1) << " | " << fixed(j.value("p99_us", 0.0), 1) << " | "
        << j.value("baseline", "?") << " | " << fixed(j.value("baseline_records_per_s", 0.0), 0) << " | "
        << fixed(j.value("baseline_p50_us", 0.0), 1) << " | " << fixed(ratio, 2) << " ("
        << fixed(j.value("ratio_min", ratio), 2) << "–" << fixed(j.value("ratio_max", ratio), 2) << ") | "
        << j.value("repeats", 1) << " | " << counted(j.value("records_per_fsync", 0.0))
        << (j.value("baseline_records_per_fsync", 0.0) > 0 ? " (" + fixed(j.value("baseline_records_per_fsync", 0.0), 1) + ")" : "")
        << " | " << counted(j.value("records_per_commit", 0.0)) << " |\n";
    ++rows;
  }
  return rows;
}

}  // namespace weir::bench
