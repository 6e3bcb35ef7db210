#include "tools/ctl_status_view.hpp"

#include <cmath>
#include <cstdio>
#include <set>

namespace weir::ctl {

namespace {

std::string format(const char* fmt, double v, const char* unit = "") {
  char out[48];
  std::snprintf(out, sizeof out, fmt, v, unit);
  return out;
}

/// j[key], or null when j is not an object holding it (a const json must not be indexed blindly).
const nlohmann::json& field(const nlohmann::json& j, const char* key) {
  static const nlohmann::json none;
  if (!j.is_object()) return none;
  const auto it = j.find(key);
  return it == j.end() ? none : *it;
}

double number(const nlohmann::json& j, const char* key) {
  const auto& v = field(j, key);
  return v.is_number() ? v.get<double>() : 0.0;
}

std::string text(const nlohmann::json& j, const char* key, const char* otherwise = "?") {
  const auto& v = field(j, key);
  return v.is_string() ? v.get<std::string>() : otherwise;
}

bool flag(const nlohmann::json& j, const char* key) {
  const auto& v = field(j, key);
  return v.is_boolean() && v.get<bool>();
}

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

namespace {

/// One sink's lines; `named` (several sinks): its name in the title.
std::string render_sink(const nlohmann::json& sink, bool named) {
  std::string out;
  const std::string health = text(sink, "health");
  out += line(named ? "sink " + text(sink, "name") : "sink",
              text(sink, "type") + ", " + (health == "healthy" ? health : "** " + health + " **") + ", drain " +
                  text(sink, "state"));
  const auto error = text(sink, "last_error", "");
  if (!error.empty()) out += line("  last error", error + format(" (retry in %.0f ms)", number(sink, "backoff_ms")));
  const double oldest = number(sink, "oldest_undelivered_age_s");
  out += line("  oldest waiting", oldest > 0 ? human_duration(oldest) + " old, " +
                                                   human_count(number(sink, "lag_records")) + " records waiting"
                                             : "none");
  out += line("  last commit", flag(sink, "committed_yet")
                                   ? human_duration(number(sink, "seconds_since_last_commit")) + " ago, " +
                                         human_count(number(sink, "committed_records")) + " records committed"
                                   : "none yet");
  const double dead_letters = number(sink, "dead_letter_bytes");
  out += line("  dead letters", dead_letters > 0 ? "** " + human_bytes(dead_letters) + " held, " +
                                                       human_count(number(sink, "dead_lettered")) + " records this run **"
                                                 : "none");
  return out;
}

}  // namespace

std::string render_status(const nlohmann::json& s) {
  std::string out = "weir " + text(s, "version") + ", up " + human_duration(number(s, "uptime_s")) + ", " +
                    (flag(s, "ready") ? "ready" : "NOT READY: " + text(s, "not_ready_reason", "")) + "\n\n";
  const auto& r = field(s, "rates");
  auto rate = [&](const char* what) {
    const auto& w = field(r, what);
    return human_count(number(w, "1s")) + "/s  (10 s: " + human_count(number(w, "10s")) + "/s, 60 s: " +
           human_count(number(w, "60s")) + "/s)";
  };
  out += line("ingest", rate("ingest"));
  out += line("acked", rate("acked"));
  out += line("delivered", rate("delivered"));
  const auto& latency = field(field(s, "ack_latency_ms"), "10s");
  out += line("ack latency", format("p50 %.2f ms", number(latency, "p50")) + format(", p99 %.2f ms", number(latency, "p99")) +
                                 "  (last 10 s)");
  out += line("per fsync", format("%.1f records", number(field(s, "records_per_fsync"), "10s")) + "  (last 10 s)");
  if (const auto& wab = field(s, "wab"); wab.is_object())
    out += line("WAB", human_bytes(number(wab, "bytes")) + " of " + human_bytes(number(wab, "max_bytes")) +
                           (flag(wab, "over_cap") ? "  OVER CAP: pushes refused" : "") + ", " +
                           human_count(number(wab, "cap_rejections")) + " refused at the cap");
  const auto& sinks = field(s, "sinks");
  for (const auto& sink : sinks.is_array() ? sinks : nlohmann::json::array())
    out += render_sink(sink, sinks.size() > 1);
  if (const auto& conns = field(s, "connections"); conns.is_object())
    out += line("connections", human_count(number(conns, "active")) + " open, " + human_count(number(conns, "accepted")) +
                                   " accepted");
  out += "\nshard  appended    confirmed   lag         oldest waiting  state\n";
  const auto& shards = field(s, "shards");
  for (const auto& sh : shards.is_array() ? shards : nlohmann::json::array()) {
    char row[160];
    const double age = number(sh, "oldest_undelivered_age_s");
    std::snprintf(row, sizeof row, "%-6.0f %-11s %-11s %-11s %-15s %s\n", number(sh, "shard"),
                  human_count(number(sh, "appended")).c_str(), human_count(number(sh, "confirmed")).c_str(),
                  human_count(number(sh, "lag_records")).c_str(), age > 0 ? human_duration(age).c_str() : "-",
                  flag(sh, "offline") ? "OFFLINE" : "ok");
    out += row;
  }
  return out;
}

std::string render_cluster(const nlohmann::json& status) {
  const auto& c = status.value("cluster", nlohmann::json::object());
  if (!c.value("enabled", false)) return "not in a cluster (cluster.listen is not set)\n";
  std::string out = "node " + std::to_string(c.value("node", 0)) + ", " + std::to_string(c.value("replicas", 1)) +
                    " copies per Replicated record; Replicated acked " + human_count(c.value("replicated_acked", 0.0)) +
                    ", refused " + human_count(c.value("replicated_refused", 0.0)) + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-6s %-22s %-8s %-12s %-12s %s\n", "node", "address", "state", "last heard",
                "lag", "failover");
  out += line;
  std::set<unsigned> shown;
  for (const auto& m : c.value("members", nlohmann::json::array())) {
    const double heard = m.value("last_heard_s", -1.0);
    std::snprintf(line, sizeof line, "%-6s %-22s %-8s %-12s %-12s %s\n",
                  m.value("node", 0) ? std::to_string(m.value("node", 0)).c_str() : "?",
                  m.value("address", std::string()).c_str(), m.value("state", std::string()).c_str(),
                  heard < 0 ? "never" : (human_duration(heard) + " ago").c_str(),
                  (human_count(m.value("replication_lag_records", 0.0)) + " rec").c_str(),
                  m.value("failover", false) ? "this node delivers its replica" : "-");
    out += line;
    shown.insert(m.value("node", 0));
  }
  // A failed peer this node has not heard from since it started is a member
  // without a node id: its failover still deserves a line.
  for (const auto& origin : c.value("failover_origins", nlohmann::json::array()))
    if (origin.is_number_unsigned() && !shown.count(origin.get<unsigned>()))
      out += "this node delivers the replica of node " + std::to_string(origin.get<unsigned>()) + " (failover)\n";
  // The cluster port: links open, and what it refused since the start.
  const auto& links = c.value("links", nlohmann::json::object());
  auto listed = [](const nlohmann::json& counts) {
    std::string s;
    for (const auto& [reason, n] : counts.items())
      s += (s.empty() ? "" : ", ") + reason + " " + human_count(n.get<double>());
    return s.empty() ? std::string("none") : s;
  };
  out += "links: " + std::to_string(links.value("open", 0)) + " open; handshakes refused: " +
         listed(links.value("handshakes_refused", nlohmann::json::object())) +
         "; links closed for what they sent: " + listed(links.value("cut", nlohmann::json::object())) + "\n";
  return out;
}

}  // namespace weir::ctl
