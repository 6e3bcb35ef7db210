#include "support/postgres_server.hpp"

#include "support/http_get.hpp"

#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace weir::test {

namespace {

std::string run(const std::string& command, int* status = nullptr) {
  std::string out;
  const int rc = run_with_input(command, "", out);
  if (status) *status = rc;
  else if (rc != 0) throw std::runtime_error("failed (" + std::to_string(rc) + "): " + command + "\n" + out);
  return out;
}

std::string find_bin() {
  for (const char* v : {"17", "16", "15"}) {
    const std::string dir = std::string("/usr/lib/postgresql/") + v + "/bin";
    if (std::filesystem::exists(dir + "/initdb")) return dir;
  }
  throw std::runtime_error("PostgreSQL server binaries not found (scripts/install-deps.sh installs postgresql-15)");
}

}  // namespace

postgres_server::postgres_server(bool durable) : bin_(find_bin()), durable_(durable) {
  as_postgres_ = ::geteuid() == 0;
  char tmpl[] = "/tmp/weir-pg-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  std::filesystem::permissions(dir_, std::filesystem::perms::owner_all);
  if (as_postgres_) run("chown postgres: " + dir_.string());
  std::mt19937 rng(std::random_device{}());
  port_ = 20000 + static_cast<int>(rng() % 20000);  // names the socket file only: no TCP
  run_as_owner(bin_ + "/initdb -D " + dir_.string() + "/data -A trust -U postgres --no-sync >/dev/null");
  start();
  run_as_owner(bin_ + "/psql -X -h " + dir_.string() + " -p " + std::to_string(port_) +
               " -U postgres -d postgres -qc \"CREATE DATABASE weir\"");
}

postgres_server::~postgres_server() {
  try {
    stop();
  } catch (...) {
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string postgres_server::server_log() const {
  std::ifstream in(dir_ / "server.log");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string postgres_server::run_as_owner(const std::string& command) const {
  return run(as_postgres_ ? "runuser -u postgres -- sh -c '" + command + "'" : command);
}

void postgres_server::start() {
  run_as_owner(bin_ + "/pg_ctl -D " + dir_.string() + "/data -w -s -l " + dir_.string() +
               "/server.log -o \"-k " + dir_.string() + " -p " + std::to_string(port_) +
               " -c listen_addresses=" + (durable_ ? "" : " -c fsync=off") + "\" start");
}

void postgres_server::stop() {
  int status = 0;
  run((as_postgres_ ? "runuser -u postgres -- " : "") + bin_ + "/pg_ctl -D " + dir_.string() + "/data -w -s -m fast stop",
      &status);
}

std::string postgres_server::conninfo(const std::string& database) const {
  return "host=" + dir_.string() + " port=" + std::to_string(port_) + " dbname=" + database + " user=postgres";
}

std::string postgres_server::psql(const std::string& sql, const std::string& database) const {
  // In single quotes, so that the shell leaves "Names" and $$ bodies alone.
  std::string quoted = "'";
  for (char c : sql) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return run(bin_ + "/psql -X -At -h " + dir_.string() + " -p " + std::to_string(port_) + " -U postgres -d " + database + " -c " +
             quoted + "'");
}

}  // namespace weir::test
