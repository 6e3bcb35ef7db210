#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "tools/ctl_commands.hpp"
#include "weir/admin_http.hpp"
#include "weir/client.hpp"

namespace weir::ctl {

namespace {

void print_summary(const nlohmann::json& s) {
  std::printf("weir %s, up %.0f s, %s\n", s.value("version", "?").c_str(), s.value("uptime_s", 0.0),
              s.value("ready", false) ? "ready" : ("NOT READY: " + s.value("not_ready_reason", std::string())).c_str());
  const auto& r = s["rates"];
  std::printf("ingest %.1f/s (10 s: %.1f/s)  delivered %.1f/s (10 s: %.1f/s)\n", r["ingest"].value("1s", 0.0),
              r["ingest"].value("10s", 0.0), r["delivered"].value("1s", 0.0), r["delivered"].value("10s", 0.0));
  if (s.contains("wab"))
    std::printf("WAB %llu of %llu bytes%s, %llu cap rejections\n", s["wab"].value("bytes", 0ull),
                s["wab"].value("max_bytes", 0ull), s["wab"].value("over_cap", false) ? " (OVER CAP)" : "",
                s["wab"].value("cap_rejections", 0ull));
  if (s.contains("sink")) {
    const auto error = s["drain"].value("last_error", std::string());
    std::printf("sink %s: %s, drain %s%s\n", s["sink"].value("type", "?").c_str(), s["sink"].value("health", "?").c_str(),
                s["drain"].value("state", "?").c_str(), error.empty() ? "" : (" (" + error + ")").c_str());
    std::printf("oldest undelivered record %.1f s old, last sink commit %.1f s ago\n",
                s["drain"].value("oldest_undelivered_age_s", 0.0), s["sink"].value("seconds_since_last_commit", 0.0));
  }
  for (const auto& sh : s["shards"])
    std::printf("shard %d: appended %llu, confirmed %llu, lag %llu%s\n", sh.value("shard", 0),
                sh.value("appended", 0ull), sh.value("confirmed", 0ull), sh.value("lag_records", 0ull),
                sh.value("offline", false) ? ", OFFLINE" : "");
}

}  // namespace

int admin_get(const std::string& admin, const std::string& path, bool summarize_status, bool json) {
  try {
    const auto res = client::admin_get(admin, path);
    if (res.status != 200) {
      std::fprintf(stderr, "weir-ctl: %s answered %u: %s", path.c_str(), res.status, res.body.c_str());
      return 1;
    }
    if (summarize_status && !json) print_summary(nlohmann::json::parse(res.body));
    else std::cout << res.body << (res.body.empty() || res.body.back() == '\n' ? "" : "\n");
    return 0;
  } catch (const client::client_error& e) {
    std::fprintf(stderr,
                 "weir-ctl: cannot reach the admin server at %s: %s (is weir-server running with admin.listen "
                 "there? pass --admin HOST:PORT)\n",
                 admin.c_str(), e.what());
    return 1;
  }
}

}  // namespace weir::ctl
