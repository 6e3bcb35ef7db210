#include "support/mariadb_server.hpp"

#include <fcntl.h>
#include <mysql.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "support/http_get.hpp"

extern char** environ;

namespace weir::test {

namespace {

constexpr const char* password = "weir-test-password";

/// The same InnoDB sizes at install and at every start (a log file size
/// that differs is refused); small, so that a test's server is quick to make.
/// Its own tmpdir: a starting mariadbd deletes every #sql* file it finds in
/// its tmpdir as a crashed server's leftovers, so in the shared /tmp one
/// test's server took another's install-time temporary tables (CI saw
/// "Unknown table 'mysql.tmp_user_sys'" from mariadb-install-db).
std::vector<std::string> server_options(const std::filesystem::path& dir) {
  std::vector<std::string> opts{"--no-defaults",
                                "--datadir=" + (dir / "data").string(),
                                "--tmpdir=" + (dir / "tmp").string(),
                                "--innodb-log-file-size=8M",
                                "--innodb-buffer-pool-size=32M",
                                "--innodb-data-file-path=ibdata1:12M:autoextend",
                                "--skip-name-resolve"};
  if (::geteuid() == 0) opts.push_back("--user=root");  // mariadbd refuses root unless told
  return opts;
}

std::string quoted(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) out += " '" + a + "'";
  return out;
}

struct connection_closer {
  void operator()(MYSQL* c) const { mysql_close(c); }
};
using connection = std::unique_ptr<MYSQL, connection_closer>;

connection connect_root(const std::filesystem::path& dir, std::string& error) {
  connection c(mysql_init(nullptr));
  const unsigned timeout = 5;
  mysql_options(c.get(), MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  mysql_options(c.get(), MYSQL_OPT_READ_TIMEOUT, &timeout);
  mysql_options(c.get(), MYSQL_SET_CHARSET_NAME, "binary");
  const std::string socket = (dir / "mysqld.sock").string();
  if (!mysql_real_connect(c.get(), nullptr, "root", nullptr, nullptr, 0, socket.c_str(), CLIENT_MULTI_STATEMENTS)) {
    error = mysql_error(c.get());
    return nullptr;
  }
  return c;
}

/// Every row of every result of `sql` (one or more statements).
std::vector<std::vector<std::string>> query_rows(MYSQL* c, const std::string& sql) {
  if (mysql_real_query(c, sql.data(), sql.size()) != 0)
    throw std::runtime_error("mariadb: " + sql + ": " + mysql_error(c));
  std::vector<std::vector<std::string>> out;
  int more = 0;
  do {
    if (MYSQL_RES* res = mysql_store_result(c)) {
      const unsigned columns = mysql_num_fields(res);
      while (MYSQL_ROW row = mysql_fetch_row(res)) {
        const unsigned long* lengths = mysql_fetch_lengths(res);
        std::vector<std::string> values;
        for (unsigned i = 0; i < columns; ++i) values.emplace_back(row[i] ? std::string(row[i], lengths[i]) : "");
        out.push_back(std::move(values));
      }
      mysql_free_result(res);
    }
    more = mysql_next_result(c);
  } while (more == 0);
  if (more > 0) throw std::runtime_error("mariadb: " + sql + ": " + mysql_error(c));
  return out;
}

}  // namespace

mariadb_server::mariadb_server() {
  char tmpl[] = "/tmp/weir-mariadb-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  std::filesystem::create_directory(dir_ / "tmp");
  std::string out;
  const std::string install = "mariadb-install-db" + quoted(server_options(dir_)) +
                              " --auth-root-authentication-method=normal --skip-test-db";
  if (run_with_input(install, "", out) != 0)
    throw std::runtime_error("mariadb-install-db failed (scripts/install-deps.sh installs mariadb-server-core):\n" +
                             out);
  {
    std::ofstream f(password_file());
    f << password << '\n';
  }
  std::filesystem::permissions(password_file(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  port_ = free_tcp_port();
  start();
  std::string error;
  auto c = connect_root(dir_, error);
  if (!c) throw std::runtime_error("mariadb: cannot connect as root: " + error);
  const std::string setup = std::string("CREATE DATABASE weir;") +
                            "CREATE USER 'weir'@'127.0.0.1' IDENTIFIED BY '" + password + "';" +
                            "GRANT ALL ON weir.* TO 'weir'@'127.0.0.1'";
  query_rows(c.get(), setup);
}

mariadb_server::~mariadb_server() {
  try {
    stop();
  } catch (...) {
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::vector<std::string> mariadb_server::sink_args() const {
  return {"--set", "sink.type=mysql",
          "--set", "sink.mysql.host=127.0.0.1",
          "--set", "sink.mysql.port=" + std::to_string(port_),
          "--set", "sink.mysql.user=weir",
          "--set", "sink.mysql.database=weir",
          "--set", "sink.mysql.password_file=" + password_file().string()};
}

void mariadb_server::start() {
  auto args = server_options(dir_);
  args.insert(args.end(), {"--socket=" + (dir_ / "mysqld.sock").string(), "--port=" + std::to_string(port_),
                           "--bind-address=127.0.0.1", "--pid-file=" + (dir_ / "mysqld.pid").string(),
                           "--log-error=" + (dir_ / "server.log").string()});
  process_.start("mariadbd", args, dir_ / "console.log", "scripts/install-deps.sh installs mariadb-server-core");
  wait_ready();
}

void mariadb_server::wait_ready() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::string error;
  while (std::chrono::steady_clock::now() < deadline) {
    if (process_.exited()) throw std::runtime_error("mariadbd exited at start:\n" + server_log());
    if (connect_root(dir_, error)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error("mariadbd did not answer within 60 s: " + error + "\n" + server_log());
}

void mariadb_server::stop() { process_.stop(); }

void mariadb_server::kill() { process_.kill(); }

void mariadb_server::execute(const std::string& sql) const { rows(sql); }

std::vector<std::vector<std::string>> mariadb_server::rows(const std::string& sql) const {
  session s(*this);
  return s.rows(sql);
}

mariadb_server::session::session(const mariadb_server& server) {
  std::string error;
  auto c = connect_root(server.dir_, error);
  if (!c) throw std::runtime_error("mariadb: cannot connect as root: " + error);
  if (mysql_select_db(c.get(), "weir") != 0) throw std::runtime_error(std::string("mariadb: ") + mysql_error(c.get()));
  conn_ = c.release();
}

mariadb_server::session::~session() { mysql_close(conn_); }

std::vector<std::vector<std::string>> mariadb_server::session::rows(const std::string& sql) {
  return query_rows(conn_, sql);
}

std::string mariadb_server::scalar(const std::string& sql) const {
  const auto r = rows(sql);
  return r.empty() || r[0].empty() ? "" : r[0][0];
}

std::string mariadb_server::server_log() const {
  std::ifstream in(dir_ / "server.log");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace weir::test
