#pragma once
// One commit slot's client of ClickHouse's HTTP interface: a query in the
// URL, its data (if any) as the body, the user and password in ClickHouse's
// own headers (never in the URL, which servers log), over a keep-alive
// connection (sinks/http_connection.hpp).
#include <memory>
#include <string>
#include <vector>

#include "sinks/http_connection.hpp"
#include "sinks/secret.hpp"

namespace weir {

struct clickhouse_settings {
  http_url url;
  std::string database, user;
  std::shared_ptr<reloadable_secret> password;
  std::shared_ptr<boost::asio::ssl::context> tls;  // https://
  int timeout_ms = 10000;
};

class clickhouse_client {
 public:
  explicit clickhouse_client(std::shared_ptr<const clickhouse_settings> s)
      : s_(std::move(s)), conn_(s_->url, s_->tls, s_->timeout_ms) {}

  struct answer {
    bool ok = false;
    bool reached = false;  // the server answered (an error of its own), rather than not being reached
    int code = 0;          // ClickHouse's error code, when it gave one
    std::string error;     // one line
  };
  /// Runs `query` with `data` as its input (an INSERT's rows); `data` is
  /// lent to the request and given back.
  answer run(const std::string& query, std::string& data);
  /// A SELECT's rows (asked in TabSeparated), each value unescaped.
  answer select(const std::string& query, std::vector<std::vector<std::string>>& rows);

  const std::string& database() const { return s_->database; }

 private:
  std::shared_ptr<const clickhouse_settings> s_;
  http_connection conn_;
  std::string last_body_;  // the last successful answer's body
};

}  // namespace weir
