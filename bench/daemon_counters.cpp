#include "bench/daemon_counters.hpp"

#include <cstdlib>
#include <stdexcept>

#include "weir/admin_http.hpp"

namespace weir::bench {

double metric_total(std::string_view exposition, std::string_view name) {
  double total = 0;
  std::size_t at = 0;
  while (at < exposition.size()) {
    auto end = exposition.find('\n', at);
    if (end == std::string_view::npos) end = exposition.size();
    const auto line = exposition.substr(at, end - at);
    at = end + 1;
    // "name 12" or "name{label=...} 12"; not "name_suffix ..." and not "# HELP name".
    if (line.substr(0, name.size()) != name || line.size() == name.size()) continue;
    const char next = line[name.size()];
    // "name{label=\"x\"" (left open) also sums the series that have more labels.
    const bool open_labels = name.back() != '}' && name.find('{') != std::string_view::npos;
    if (next != ' ' && next != '{' && !(open_labels && (next == ',' || next == '}'))) continue;
    const auto value = line.rfind(' ');
    total += std::strtod(std::string(line.substr(value + 1)).c_str(), nullptr);
  }
  return total;
}

daemon_counters read_daemon_counters(const std::string& admin) {
  const auto reply = client::admin_get(admin, "/metrics");
  if (reply.status != 200) throw std::runtime_error("weir-server /metrics answered " + std::to_string(reply.status));
  const std::string_view text = reply.body;
  daemon_counters c;
  c.synced_records = metric_total(text, "weir_wab_group_commit_records_sum");
  c.fsyncs = metric_total(text, "weir_wab_group_commit_records_count");
  // Only the committed outcome: the counter also counts retried and dead-lettered records.
  const std::string committed = "weir_sink_commit_records_total{outcome=\"committed\"";
  c.committed_records = metric_total(text, committed);
  c.sink_commits = metric_total(text, "weir_sink_commit_duration_seconds_count");
  c.acked_records = metric_total(text, "weir_records_ack_total");
  c.fsync_seconds = metric_total(text, "weir_wab_fsync_duration_seconds_sum");
  c.fsync_count = metric_total(text, "weir_wab_fsync_duration_seconds_count");
  c.cpu_seconds = metric_total(text, "process_cpu_seconds_total");
  return c;
}

}  // namespace weir::bench
