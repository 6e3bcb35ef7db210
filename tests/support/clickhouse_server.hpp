#pragma once
// A private ClickHouse for one test: clickhouse-server with a configuration
// of its own in a temporary directory, its HTTP and native ports on
// 127.0.0.1, a user `weir` with a password (in a 0600 file) beside the
// password-less `default` the test queries as; stopped and removed
// afterwards.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "support/server_process.hpp"

namespace weir::test {

class clickhouse_server {
 public:
  clickhouse_server();
  ~clickhouse_server();
  clickhouse_server(const clickhouse_server&) = delete;
  clickhouse_server& operator=(const clickhouse_server&) = delete;

  std::uint16_t http_port() const { return http_port_; }
  /// weir-server arguments for sink.type=clickhouse as user `weir`.
  std::vector<std::string> sink_args() const;
  /// Runs `sql` as `default`; returns the answer (TabSeparated for a
  /// SELECT), throws with the server's error.
  std::string query(const std::string& sql) const;
  void stop();
  void start();

 private:
  std::filesystem::path dir_;
  std::uint16_t http_port_ = 0, tcp_port_ = 0;
  server_process process_;
};

}  // namespace weir::test
