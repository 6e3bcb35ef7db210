#include "bench/mysql_baselines.hpp"

#include <mysql.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "bench/load_driver.hpp"

namespace weir::bench {

namespace {

using clock = std::chrono::steady_clock;

std::string setting(const std::map<std::string, std::string>& s, const std::string& key, const std::string& fallback) {
  const auto it = s.find(key);
  return it == s.end() ? fallback : it->second;
}

std::string password_of(const std::map<std::string, std::string>& s) {
  const auto file = setting(s, "password_file", "");
  if (file.empty()) {
    const char* env = std::getenv("WEIR_SINK_MYSQL_PASSWORD");
    return env ? env : "";
  }
  std::ifstream in(file);
  if (!in) throw std::runtime_error("mysql baseline: cannot read password_file " + file);
  std::string p;
  std::getline(in, p);
  return p;
}

/// The bytes LOAD DATA LOCAL INFILE reads, handed over by libmariadb's local-infile callbacks.
struct infile_source {
  const std::string* data = nullptr;
  std::size_t at = 0;
};

struct connection {
  explicit connection(const std::map<std::string, std::string>& s) : conn(mysql_init(nullptr)) {
    const unsigned on = 1;
    mysql_options(conn, MYSQL_OPT_LOCAL_INFILE, &on);
    mysql_options(conn, MYSQL_SET_CHARSET_NAME, "binary");
    const std::string socket = setting(s, "socket", ""), host = setting(s, "host", "127.0.0.1");
    const std::string password = password_of(s);
    if (!mysql_real_connect(conn, socket.empty() ? host.c_str() : nullptr, setting(s, "user", "weir").c_str(),
                            password.empty() ? nullptr : password.c_str(), setting(s, "database", "").c_str(),
                            static_cast<unsigned>(std::stoul(setting(s, "port", "3306"))),
                            socket.empty() ? nullptr : socket.c_str(), 0)) {
      const std::string error = mysql_error(conn);
      mysql_close(conn);
      throw std::runtime_error("mysql baseline: cannot connect: " + error);
    }
  }
  ~connection() { mysql_close(conn); }
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  void exec(const std::string& sql) {
    if (mysql_real_query(conn, sql.data(), sql.size()) != 0)
      throw std::runtime_error("mysql baseline: " + sql.substr(0, 80) + ": " + mysql_error(conn));
    if (MYSQL_RES* r = mysql_store_result(conn)) mysql_free_result(r);
  }

  MYSQL* conn;
};

void use_memory_infile(MYSQL* conn, infile_source& source) {
  mysql_set_local_infile_handler(
      conn,
      [](void** ptr, const char*, void* userdata) {
        *ptr = userdata;
        return 0;
      },
      [](void* ptr, char* buf, unsigned int len) {
        auto* src = static_cast<infile_source*>(ptr);
        const std::size_t n = std::min<std::size_t>(len, src->data->size() - src->at);
        std::memcpy(buf, src->data->data() + src->at, n);
        src->at += n;
        return static_cast<int>(n);
      },
      [](void*) {},
      [](void*, char* msg, unsigned int len) {
        std::snprintf(msg, len, "in-memory infile");
        return 0;
      },
      &source);
}

}  // namespace

std::map<std::string, std::string> parse_mysql_settings(const std::string& text) {
  static const std::set<std::string> keys{"host", "port", "socket", "user", "database", "password_file"};
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    const auto eq = word.find('=');
    const std::string key = word.substr(0, eq);
    if (eq == std::string::npos || !keys.count(key))
      throw std::runtime_error("--mysql: '" + word + "': expected KEY=VALUE with KEY one of host, port, socket, user, "
                               "database, password_file");
    out[key] = word.substr(eq + 1);
  }
  if (out["database"].empty()) throw std::runtime_error("--mysql: database=NAME is required");
  return out;
}

baseline_result measure_mysql_load(const std::map<std::string, std::string>& settings, std::size_t payload_bytes,
                                   double seconds) {
  constexpr int rows_per_load = 10'000;
  connection db(settings);
  db.exec("DROP TABLE IF EXISTS weir_bench_load");
  db.exec("CREATE TABLE weir_bench_load(seq BIGINT UNSIGNED PRIMARY KEY, id CHAR(64) CHARACTER SET ascii, ts BIGINT, "
          "payload LONGBLOB) ENGINE=InnoDB");
  db.exec("SET SESSION autocommit = 0");
  const std::string payload(payload_bytes, 'p');
  infile_source source;
  std::string chunk;
  source.data = &chunk;
  use_memory_infile(db.conn, source);
  std::vector<double> lat;
  std::uint64_t rows = 0;
  const auto start = clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  while (clock::now() < deadline) {
    chunk.clear();
    for (int i = 0; i < rows_per_load; ++i, ++rows) {
      char line[96];
      std::snprintf(line, sizeof line, "%llu\t%064llx\t%llu\t", static_cast<unsigned long long>(rows),
                    static_cast<unsigned long long>((rows + 1) * 0x9E3779B97F4A7C15ull),
                    static_cast<unsigned long long>(rows));
      chunk += line;
      chunk += payload;
      chunk += '\n';
    }
    source.at = 0;
    const auto t0 = clock::now();
    db.exec("LOAD DATA LOCAL INFILE 'weir-bench' INTO TABLE weir_bench_load (seq, id, ts, payload)");
    db.exec("COMMIT");
    lat.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
  }
  const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
  db.exec("DROP TABLE weir_bench_load");
  return {static_cast<double>(rows) / elapsed, quantile(lat, 0.5)};
}

std::uint64_t mysql_row_count(const std::map<std::string, std::string>& settings) {
  connection db(settings);
  if (mysql_query(db.conn, "SELECT count(*) FROM weir_records") != 0) return 0;  // not created yet
  MYSQL_RES* r = mysql_store_result(db.conn);
  if (!r) return 0;
  MYSQL_ROW row = mysql_fetch_row(r);
  const std::uint64_t n = row && row[0] ? std::stoull(row[0]) : 0;
  mysql_free_result(r);
  return n;
}

void mysql_reset(const std::map<std::string, std::string>& settings) {
  connection(settings).exec("DROP TABLE IF EXISTS weir_records");
}

}  // namespace weir::bench
