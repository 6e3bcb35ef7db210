#pragma once
// A private MariaDB for one test: mariadb-install-db into a temporary
// directory, mariadbd on 127.0.0.1 at a free port (and a Unix socket in that
// directory), a database `weir` and a user `weir` with a password, stopped
// and removed afterwards. The test talks to it through libmariadb as root
// over the socket.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "support/server_process.hpp"

struct st_mysql;  // libmariadb's MYSQL

namespace weir::test {

class mariadb_server {
 public:
  mariadb_server();
  ~mariadb_server();
  mariadb_server(const mariadb_server&) = delete;
  mariadb_server& operator=(const mariadb_server&) = delete;

  std::uint16_t port() const { return port_; }
  /// A file (mode 0600) holding the password of user `weir`.
  std::filesystem::path password_file() const { return dir_ / "weir.password"; }
  /// weir-server arguments for sink.type=mysql into database `weir` over TCP, as user `weir`.
  std::vector<std::string> sink_args() const;

  /// Runs statements in database `weir`; throws with the server's error.
  void execute(const std::string& sql) const;
  /// The rows of a query, every value as its bytes ("" for NULL).
  std::vector<std::vector<std::string>> rows(const std::string& sql) const;
  /// The first value of the first row ("" when there is none).
  std::string scalar(const std::string& sql) const;

  /// A connection of its own, as root in database `weir`, for statements
  /// that must hold something (a transaction's locks) between calls.
  class session {
   public:
    explicit session(const mariadb_server& server);
    ~session();
    session(const session&) = delete;
    session& operator=(const session&) = delete;
    std::vector<std::vector<std::string>> rows(const std::string& sql);

   private:
    ::st_mysql* conn_ = nullptr;
  };

  /// SIGTERM, and waits for a clean exit.
  void stop();
  /// SIGKILL: the server dies as in a crash (InnoDB recovers at the next start).
  void kill();
  /// Starts it again on the same data, address and port.
  void start();
  std::string server_log() const;

 private:
  void wait_ready();

  std::filesystem::path dir_;
  std::uint16_t port_ = 0;
  server_process process_;
};

}  // namespace weir::test
