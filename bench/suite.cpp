#include "bench/suite.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <vector>

#include "bench/machine_info.hpp"
#include "bench/run_once.hpp"
#include "bench/watchdog.hpp"

namespace weir::bench {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}
double lowest(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }
double highest(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

std::vector<double> field(const std::vector<sample>& v, double sample::*f) {
  std::vector<double> out;
  for (const auto& s : v) out.push_back(s.*f);
  return out;
}

void progress(const std::string& what) {
  std::cerr << "weir-bench: " << what << "\n";
  note_step(what);
}

/// A load that stops at a backlog of `mib` MiB of WAB records instead of
/// at a time (recovery against backlog size).
load_spec sized_to_backlog(load_spec spec, std::uint32_t mib) {
  if (mib == 0) return spec;
  const std::uint64_t record_bytes = spec.payload_bytes + 16;  // WAB framing: length, CRC, time
  spec.max_records = (static_cast<std::uint64_t>(mib) << 20) / record_bytes;
  spec.seconds = std::max(spec.seconds, 1800.0);  // the size ends it, not the clock
  return spec;
}

nlohmann::json series_json(const std::vector<series_point>& points) {
  auto out = nlohmann::json::array();
  for (const auto& p : points)
    out.push_back({{"t_s", p.t_s}, {"records_per_s", p.records_per_s}, {"fsync_ms", p.fsync_ms}, {"rss_mib", p.rss_mib}});
  return out;
}

nlohmann::json result_of(const scenario& sc, const load_spec& spec, std::uint32_t backlog_mib, int repeats,
                         const std::vector<sample>& runs, const std::vector<sample>& bases, const std::string& dir) {
  const auto rate = field(runs, &sample::records_per_s), base_rate = field(bases, &sample::records_per_s);
  std::vector<double> ratios;
  for (std::size_t r = 0; r < runs.size() && r < bases.size(); ++r)
    if (const double q = round_ratio(sc, runs[r], bases[r]); q > 0) ratios.push_back(q);
  std::vector<double> backlog;
  std::uint64_t records = 0, refused = 0, refusals = 0;
  for (const auto& s : runs) {
    refusals += s.sink_refusals;
    backlog.push_back(static_cast<double>(s.backlog_bytes));
    records += s.records;
    refused += s.refused;
  }
  const auto startup = field(runs, &sample::startup_s);
  nlohmann::json j{{"scenario", sc.name},
                   {"description", sc.description},
                   {"durability", spec.replicated ? "replicated" : spec.durable ? "durable" : "buffered"},
                   {"cluster_nodes", sc.cluster_nodes},
                   {"producers", spec.producers},
                   {"pipeline", spec.pipeline},
                   {"batch", spec.batch},
                   {"payload_bytes", spec.payload_bytes},
                   {"seconds", spec.seconds},
                   {"rate", spec.rate},
                   {"repeats", repeats},
                   {"records", records},
                   {"refused", refused},
                   {"records_per_s", median(rate)},
                   {"records_per_s_min", lowest(rate)},
                   {"records_per_s_max", highest(rate)},
                   {"p50_us", median(field(runs, &sample::p50_us))},
                   {"p99_us", median(field(runs, &sample::p99_us))},
                   {"p999_us", median(field(runs, &sample::p999_us))},
                   {"measure", name_of(sc.measure)},
                   {"catch_up_s", median(field(runs, &sample::catch_up_s))},
                   {"acked_per_s", median(field(runs, &sample::acked_per_s))},
                   {"records_per_fsync", median(field(runs, &sample::records_per_fsync))},
                   {"daemon_cpu_us_per_record", median(field(runs, &sample::daemon_cpu_us_per_record))},
                   {"records_per_commit", median(field(runs, &sample::records_per_commit))},
                   {"records_per_db_commit", median(field(runs, &sample::records_per_db_commit))},
                   {"delivery_p50_us", median(field(runs, &sample::delivery_p50_us))},
                   {"delivery_p99_us", median(field(runs, &sample::delivery_p99_us))},
                   {"startup_s", median(startup)},
                   {"startup_s_min", lowest(startup)},
                   {"startup_s_max", highest(startup)},
                   {"idle_rss_mib", median(field(runs, &sample::idle_rss_mib))},
                   {"peak_rss_mib", median(field(runs, &sample::peak_rss_mib))},
                   {"sink_refusals", refusals},
                   {"backlog_mib_target", backlog_mib},
                   {"backlog_bytes", median(backlog)},
                   {"baseline", name_of(sc.baseline)},
                   {"baseline_records_per_s", median(base_rate)},
                   {"baseline_records_per_s_min", lowest(base_rate)},
                   {"baseline_records_per_s_max", highest(base_rate)},
                   {"baseline_p50_us", median(field(bases, &sample::p50_us))},
                   {"baseline_records_per_fsync", median(field(bases, &sample::records_per_fsync))},
                   {"ratio", median(ratios)},
                   {"ratio_min", lowest(ratios)},
                   {"ratio_max", highest(ratios)},
                   {"machine", describe_machine(dir)}};
  // A sustained run's series: the median round's would hide nothing the
  // rounds share, so each round's is kept.
  if (sc.measure == measure_kind::sustained) {
    auto all = nlohmann::json::array();
    for (const auto& s : runs) all.push_back(series_json(s.series));
    j["series"] = all;
  }
  return j;
}

}  // namespace

void run_scenario(const scenario& sc, const suite_options& options,
                  const std::function<void(const nlohmann::json&)>& emit) {
  std::filesystem::create_directories(options.workdir);
  std::string dir_template = options.workdir + "/run-XXXXXX";
  if (!::mkdtemp(dir_template.data())) throw std::runtime_error("cannot create a directory under " + options.workdir);
  const std::string dir = std::filesystem::absolute(dir_template).string();
  std::cerr << "weir-bench: " << sc.name << " — " << sc.description << "\n";
  for (auto payload : sc.payload_sizes)
    for (auto batch : sc.batches)
      for (auto backlog_mib : sc.backlogs_mib) {
        auto spec = sc.load;
        spec.payload_bytes = payload;
        spec.batch = batch;
        spec = sized_to_backlog(spec, backlog_mib);
        std::vector<sample> runs, bases;
        for (int r = 0; r < options.repeats; ++r) {
          const std::string round_dir = dir + "/p" + std::to_string(payload) + "-b" + std::to_string(batch) + "-m" +
                                        std::to_string(backlog_mib) + "-r" + std::to_string(r);
          std::filesystem::create_directories(round_dir);
          std::ostringstream round;
          round << sc.name << ": payload " << payload << " B, " << (batch ? "batch " + std::to_string(batch) : "single pushes");
          if (backlog_mib > 0) round << ", backlog " << backlog_mib << " MiB";
          round << ", round " << r + 1 << "/" << options.repeats;
          for (int step = 0; step < 2; ++step) {
            if ((step == 0) == (r % 2 == 0)) {
              progress(round.str() + ": baseline (" + name_of(sc.baseline) + ")");
              bases.push_back(run_baseline_once(sc, spec, round_dir, options.server_binary));
            } else {
              std::ostringstream what;
              what << round.str() << ": scenario";
              if (backlog_mib == 0 && sc.measure != measure_kind::startup) what << ", " << spec.seconds << " s";
              progress(what.str());
              runs.push_back(run_scenario_once(sc, spec, round_dir, options.server_binary, options.socket));
            }
          }
          std::filesystem::remove_all(round_dir);
        }
        const auto j = result_of(sc, spec, backlog_mib, options.repeats, runs, bases, dir);
        if (j["refused"].get<std::uint64_t>() > 0)
          std::cerr << "weir-bench: warning: " << j["refused"] << " records were not acked\n";
        emit(j);
      }
  std::filesystem::remove_all(dir);
}

std::string summarise(const nlohmann::json& j) {
  // A sweep's lines say which size each is.
  std::string name = j.value("scenario", "?");
  if (j.value("backlog_mib_target", 0) > 0) name += " [" + std::to_string(j.value("backlog_mib_target", 0)) + " MiB backlog]";
  else if (j.value("measure", "") != "startup")
    name += " [" + std::to_string(j.value("payload_bytes", 0)) + " B" +
            (j.value("batch", 0) > 0 ? ", batch " + std::to_string(j.value("batch", 0)) : "") + "]";
  const auto measure = j.value("measure", "ingest");
  const double rate = j.value("records_per_s", 0.0), base = j.value("baseline_records_per_s", 0.0);
  char line[512];
  std::string out;
  auto add = [&](int n) {
    if (n > 0) out.append(line, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof line - 1));
  };
  if (measure == "startup") {
    add(std::snprintf(line, sizeof line, "%s: exec to accepting in %.3f s (%.3f to %.3f); %.1f MiB resident when idle\n",
                      name.c_str(), j.value("startup_s", 0.0), j.value("startup_s_min", 0.0),
                      j.value("startup_s_max", 0.0), j.value("idle_rss_mib", 0.0)));
    return out;
  }
  if (measure == "latency") {
    add(std::snprintf(line, sizeof line,
                      "%s: %.0f records/s paced, push to sink p50 %.2f ms, p99 %.2f ms; %s floor %.2f ms, ratio %.2f "
                      "(%.2f to %.2f)\n",
                      name.c_str(), rate, j.value("delivery_p50_us", 0.0) / 1000, j.value("delivery_p99_us", 0.0) / 1000,
                      j.value("baseline", "?").c_str(), j.value("baseline_p50_us", 0.0) / 1000, j.value("ratio", 0.0),
                      j.value("ratio_min", 0.0), j.value("ratio_max", 0.0)));
    return out;
  }
  if (j.value("baseline", "?") == "none")
    add(std::snprintf(line, sizeof line, "%s: %.0f records/s (p50 %.1f us, p99 %.1f us), no baseline\n", name.c_str(),
                      rate, j.value("p50_us", 0.0), j.value("p99_us", 0.0)));
  else
  add(std::snprintf(line, sizeof line,
                    "%s: %.0f records/s (p50 %.1f us, p99 %.1f us), %s baseline %.0f records/s (p50 %.1f us), "
                    "ratio %.2f (%.2f to %.2f over %d round(s))\n",
                    name.c_str(), rate, j.value("p50_us", 0.0), j.value("p99_us", 0.0), j.value("baseline", "?").c_str(),
                    base, j.value("baseline_p50_us", 0.0), j.value("ratio", 0.0), j.value("ratio_min", 0.0),
                    j.value("ratio_max", 0.0), j.value("repeats", 1)));
  if (measure == "delivery")
    add(std::snprintf(line, sizeof line,
                      "%s: acked %.0f records/s while the load ran (%.2f of the baseline), then %.2f s to catch up; "
                      "%.0f records per sink commit\n",
                      name.c_str(), j.value("acked_per_s", 0.0), base > 0 ? j.value("acked_per_s", 0.0) / base : 0.0,
                      j.value("catch_up_s", 0.0), j.value("records_per_commit", 0.0)));
  if (measure == "backlog")
    add(std::snprintf(line, sizeof line,
                      "%s: a backlog of %.0f records a round delivered in %.2f s from the restart's exec (%.3f s of it "
                      "to accept again); %.0f records per sink commit\n",
                      name.c_str(), j.value("records", 0.0) / std::max(1, j.value("repeats", 1)), j.value("catch_up_s", 0.0),
                      j.value("startup_s", 0.0), j.value("records_per_commit", 0.0)));
  if (const double per_db = j.value("records_per_db_commit", 0.0); per_db > 0)
    add(std::snprintf(line, sizeof line, "%s: %.0f records per PostgreSQL commit (pg_stat_database)\n", name.c_str(),
                      per_db));
  if (measure == "outage")
    add(std::snprintf(line, sizeof line,
                      "%s: ingest went on at %.0f records/s through the outage (%llu requests refused); caught up "
                      "%.2f s after it\n",
                      name.c_str(), rate, static_cast<unsigned long long>(j.value("sink_refusals", 0ull)),
                      j.value("catch_up_s", 0.0)));
  if (const double per_sync = j.value("records_per_fsync", 0.0), base_sync = j.value("baseline_records_per_fsync", 0.0);
      per_sync > 0 && base_sync > 0)
    add(std::snprintf(line, sizeof line, "%s: %.1f Durable records per WAB fdatasync (%.1f in the baseline)\n",
                      name.c_str(), per_sync, base_sync));
  else if (per_sync > 0)
    add(std::snprintf(line, sizeof line, "%s: %.1f Durable records per WAB fdatasync\n", name.c_str(), per_sync));
  if (const double cpu = j.value("daemon_cpu_us_per_record", 0.0); cpu > 0)
    add(std::snprintf(line, sizeof line, "%s: the daemon used %.2f us of CPU per record (its delivery included)\n",
                      name.c_str(), cpu));
  if (measure == "sustained")
    add(std::snprintf(line, sizeof line, "%s: peak resident memory %.1f MiB over the run\n", name.c_str(),
                      j.value("peak_rss_mib", 0.0)));
  if (measure == "recovery") {
    const double backlog = j.value("backlog_bytes", 0.0), startup = j.value("startup_s", 0.0);
    add(std::snprintf(line, sizeof line, "%s: restart after kill -9 on %.0f MiB of backlog: %.3f s (%.3f to %.3f), %.2f s per GiB\n",
                      name.c_str(), backlog / (1 << 20), startup, j.value("startup_s_min", 0.0),
                      j.value("startup_s_max", 0.0), backlog > 0 ? startup / (backlog / (1 << 30)) : 0.0));
  }
  return out;
}

}  // namespace weir::bench
