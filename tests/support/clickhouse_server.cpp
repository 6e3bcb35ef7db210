#include "support/clickhouse_server.hpp"

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "support/http_get.hpp"

namespace weir::test {

namespace {

constexpr const char* password = "weir-test-password";

}  // namespace

clickhouse_server::clickhouse_server() {
  char pattern[] = "/tmp/weir-ch-XXXXXX";
  if (!::mkdtemp(pattern)) throw std::runtime_error("clickhouse: cannot make a temporary directory");
  dir_ = pattern;
  http_port_ = free_tcp_port();
  tcp_port_ = free_tcp_port();
  const std::string d = dir_.string();
  std::ofstream(dir_ / "config.xml")
      << "<?xml version=\"1.0\"?>\n<yandex>\n"
      << "  <logger><level>warning</level><log>" << d << "/server.log</log><errorlog>" << d
      << "/error.log</errorlog></logger>\n"
      << "  <http_port>" << http_port_ << "</http_port>\n  <tcp_port>" << tcp_port_ << "</tcp_port>\n"
      << "  <listen_host>127.0.0.1</listen_host>\n"
      << "  <path>" << d << "/data/</path>\n  <tmp_path>" << d << "/data/tmp/</tmp_path>\n"
      << "  <user_files_path>" << d << "/data/user_files/</user_files_path>\n"
      << "  <format_schema_path>" << d << "/data/format_schemas/</format_schema_path>\n"
      << "  <users_config>" << d << "/users.xml</users_config>\n"
      << "  <default_profile>default</default_profile>\n  <default_database>default</default_database>\n"
      << "  <mark_cache_size>5368709</mark_cache_size>\n</yandex>\n";
  std::ofstream(dir_ / "users.xml")
      << "<?xml version=\"1.0\"?>\n<yandex>\n  <profiles><default></default></profiles>\n  <users>\n"
      << "    <default><password></password><networks><ip>127.0.0.1</ip></networks>"
      << "<profile>default</profile><quota>default</quota></default>\n"
      << "    <weir><password>" << password << "</password><networks><ip>127.0.0.1</ip></networks>"
      << "<profile>default</profile><quota>default</quota></weir>\n"
      << "  </users>\n  <quotas><default></default></quotas>\n</yandex>\n";
  {
    std::ofstream f(dir_ / "weir.password");
    f << password << '\n';
  }
  std::filesystem::permissions(dir_ / "weir.password",
                               std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  start();
}

clickhouse_server::~clickhouse_server() {
  stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::vector<std::string> clickhouse_server::sink_args() const {
  return {"--set", "sink.type=clickhouse",
          "--set", "sink.clickhouse.url=http://127.0.0.1:" + std::to_string(http_port_) + "/",
          "--set", "sink.clickhouse.user=weir",
          "--set", "sink.clickhouse.password_file=" + (dir_ / "weir.password").string()};
}

std::string clickhouse_server::query(const std::string& sql) const {
  const auto reply = http_request(http_port_, "/", "POST", sql);
  if (reply.status != 200)
    throw std::runtime_error("clickhouse: " + sql + ": HTTP " + std::to_string(reply.status) + ": " + reply.body);
  return reply.body;
}

void clickhouse_server::start() {
  process_.start("clickhouse-server", {"--config-file=" + (dir_ / "config.xml").string()}, dir_ / "console.log",
                 "scripts/install-deps.sh installs clickhouse-server");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (process_.exited()) throw std::runtime_error("clickhouse-server exited at start; see " + dir_.string());
    if (http_request(http_port_, "/ping").body == "Ok.\n") return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error("clickhouse-server did not answer within 60 s");
}

void clickhouse_server::stop() { process_.stop(); }

}  // namespace weir::test
