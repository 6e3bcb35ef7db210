#pragma once
// A private PostgreSQL 15 for one test: initdb into a temporary directory,
// a server on a Unix socket in that directory (no TCP), stopped and removed
// afterwards. As root it runs as the `postgres` user (PostgreSQL refuses root).
#include <sys/types.h>

#include <filesystem>
#include <string>

namespace weir::test {

class postgres_server {
 public:
  /// Tests run it with fsync off (nothing they check needs the disk);
  /// `durable` keeps PostgreSQL's own fsync, as a benchmark must.
  explicit postgres_server(bool durable = false);
  ~postgres_server();
  postgres_server(const postgres_server&) = delete;
  postgres_server& operator=(const postgres_server&) = delete;

  /// libpq connection string for `database`.
  std::string conninfo(const std::string& database = "weir") const;
  /// Runs SQL through psql in `database`; returns its output (tuples only, unaligned), throws on failure.
  std::string psql(const std::string& sql, const std::string& database = "weir") const;
  void stop();
  void start();
  /// What the server wrote to its log so far (with log_statement = 'all': every statement).
  std::string server_log() const;

 private:
  std::string run_as_owner(const std::string& command) const;

  std::filesystem::path dir_;
  std::string bin_;
  bool durable_ = false;
  int port_ = 0;
  bool as_postgres_ = false;
};

}  // namespace weir::test
