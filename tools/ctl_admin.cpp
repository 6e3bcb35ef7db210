#include <cstdio>
#include <iostream>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "tools/ctl_commands.hpp"

namespace weir::ctl {

namespace {

namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

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
  if (s.contains("sink"))
    std::printf("sink %s: %s, drain %s%s\n", s["sink"].value("type", "?").c_str(), s["sink"].value("health", "?").c_str(),
                s["drain"].value("state", "?").c_str(),
                s["drain"].value("last_error", std::string()).empty()
                    ? ""
                    : (" (" + s["drain"].value("last_error", std::string()) + ")").c_str());
  for (const auto& sh : s["shards"])
    std::printf("shard %d: appended %llu, confirmed %llu, lag %llu%s\n", sh.value("shard", 0),
                sh.value("appended", 0ull), sh.value("confirmed", 0ull), sh.value("lag_records", 0ull),
                sh.value("offline", false) ? ", OFFLINE" : "");
}

}  // namespace

int admin_get(const std::string& admin, const std::string& path, bool summarize_status, bool json) {
  const auto colon = admin.rfind(':');
  try {
    boost::asio::io_context io;
    tcp::resolver resolver(io);
    tcp::socket socket(io);
    boost::asio::connect(socket, resolver.resolve(admin.substr(0, colon), admin.substr(colon + 1)));
    http::request<http::string_body> req{http::verb::get, path, 11};
    req.set(http::field::host, admin);
    req.keep_alive(false);
    http::write(socket, req);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    if (res.result_int() != 200) {
      std::fprintf(stderr, "weir-ctl: %s answered %u: %s", path.c_str(), res.result_int(), res.body().c_str());
      return 1;
    }
    if (summarize_status && !json) print_summary(nlohmann::json::parse(res.body()));
    else std::cout << res.body() << (res.body().empty() || res.body().back() == '\n' ? "" : "\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weir-ctl: cannot reach the admin server at %s: %s\n", admin.c_str(), e.what());
    return 1;
  }
}

}  // namespace weir::ctl
