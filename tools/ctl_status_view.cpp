#include "tools/ctl_status_view.hpp"

#include <cmath>
#include <cstdio>

namespace weir::ctl {

namespace {

std::string format(const char* fmt, double v, const char* unit = "") {
  char out[48];
  std::snprintf(out, sizeof out, fmt, v, unit);
  return out;
}

double number(const nlohmann::json& j, const char* key) { return j.contains(key) ? j[key].get<double>() : 0.0; }

std::string line(const std::string& label, const std::string& value) {
  std::string out = label;
  out.resize(std::max<std::size_t>(label.size() + 1, 18), ' ');
  return out + value + "\n";
}

}  // namespace

std::string human_bytes(double bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? format("%.0f %s", bytes, units[u]) : format("%.1f %s", bytes, units[u]);
}

std::string human_duration(double seconds) {
  if (seconds < 10) return format("%.1fs", seconds);
  const auto s = static_cast<long long>(std::llround(seconds));
  char out[48];
  if (s < 60) std::snprintf(out, sizeof out, "%llds", s);
  else if (s < 3600) std::snprintf(out, sizeof out, "%lldm %llds", s / 60, s % 60);
  else if (s < 86400) std::snprintf(out, sizeof out, "%lldh %lldm", s / 3600, s % 3600 / 60);
  else std::snprintf(out, sizeof out, "%lldd %lldh", s / 86400, s % 86400 / 3600);
  return out;
}

std::string human_count(double n) {
  if (n >= 1e9) return format("%.2fG", n / 1e9);
  if (n >= 1e6) return format("%.2fM", n / 1e6);
  if (n >= 1e4) return format("%.1fk", n / 1e3);
  return n == std::floor(n) ? format("%.0f", n) : format("%.1f", n);
}

std::string render_status(const nlohmann::json& s) {
  std::string out = "weir " + s.value("version", std::string("?")) + ", up " + human_duration(number(s, "uptime_s")) +
                    ", " + (s.value("ready", false) ? "ready" : "NOT READY: " + s.value("not_ready_reason", std::string())) +
                    "\n\n";
  const auto& r = s["rates"];
  auto rate = [&](const char* what) {
    return human_count(number(r[what], "1s")) + "/s  (10 s: " + human_count(number(r[what], "10s")) +
           "/s, 60 s: " + human_count(number(r[what], "60s")) + "/s)";
  };
  out += line("ingest", rate("ingest"));
  out += line("acked", rate("acked"));
  out += line("delivered", rate("delivered"));
  const auto& latency = s["ack_latency_ms"]["10s"];
  out += line("ack latency", format("p50 %.2f ms", number(latency, "p50")) + format(", p99 %.2f ms", number(latency, "p99")) +
                                 "  (last 10 s)");
  out += line("per fsync", format("%.1f records", number(s["records_per_fsync"], "10s")) + "  (last 10 s)");
  if (s.contains("wab"))
    out += line("WAB", human_bytes(number(s["wab"], "bytes")) + " of " + human_bytes(number(s["wab"], "max_bytes")) +
                           (s["wab"].value("over_cap", false) ? "  OVER CAP: pushes refused" : "") + ", " +
                           human_count(number(s["wab"], "cap_rejections")) + " refused at the cap");
  if (s.contains("sink")) {
    const auto& sink = s["sink"];
    const auto& drain = s["drain"];
    const std::string health = sink.value("health", std::string("?"));
    out += line("sink", sink.value("type", std::string("?")) + ", " + (health == "healthy" ? health : "** " + health + " **") +
                            ", drain " + drain.value("state", std::string("?")));
    const auto error = drain.value("last_error", std::string());
    if (!error.empty())
      out += line("  last error", error + format(" (retry in %.0f ms)", number(drain, "backoff_ms")));
    const double oldest = number(drain, "oldest_undelivered_age_s");
    out += line("  oldest waiting", oldest > 0 ? human_duration(oldest) + " old" : "none");
    out += line("  last commit", human_duration(number(sink, "seconds_since_last_commit")) + " ago, " +
                                     human_count(number(sink, "committed_records")) + " records committed");
  }
  if (s.contains("connections"))
    out += line("connections", human_count(number(s["connections"], "active")) + " open, " +
                                   human_count(number(s["connections"], "accepted")) + " accepted");
  const double dead_letters = number(s, "dead_letter_bytes");
  const double dead_lettered = s.contains("sink") ? number(s["sink"], "dead_lettered") : 0;
  out += line("dead letters", dead_letters > 0 ? "** " + human_bytes(dead_letters) + " held, " +
                                                     human_count(dead_lettered) + " records this run **"
                                               : "none");
  out += "\nshard  appended    confirmed   lag         oldest waiting  state\n";
  for (const auto& sh : s["shards"]) {
    char row[160];
    const double age = number(sh, "oldest_undelivered_age_s");
    std::snprintf(row, sizeof row, "%-6d %-11s %-11s %-11s %-15s %s\n", sh.value("shard", 0),
                  human_count(number(sh, "appended")).c_str(), human_count(number(sh, "confirmed")).c_str(),
                  human_count(number(sh, "lag_records")).c_str(), age > 0 ? human_duration(age).c_str() : "-",
                  sh.value("offline", false) ? "OFFLINE" : "ok");
    out += row;
  }
  return out;
}

}  // namespace weir::ctl
