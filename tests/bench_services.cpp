// bench-services: the servers `make bench` measures against, the same
// private instances the tests start (support/), but with PostgreSQL's fsync
// on: a PostgreSQL on a Unix socket, a MariaDB, an nginx and a ClickHouse on
// loopback ports, each in its own temporary directory. Prints one NAME=VALUE line per
// server for weir-bench's environment, then "ready"; stops them all and
// removes their directories when its standard input closes (or on SIGINT or
// SIGTERM).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "support/clickhouse_server.hpp"
#include "support/mariadb_server.hpp"
#include "support/nginx_server.hpp"
#include "support/postgres_server.hpp"

namespace {

/// SIGINT or SIGTERM ends it as a closed input does: the servers' destructors
/// stop them and remove their directories.
void end_input(int) { ::close(0); }

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    std::fputs("Usage: bench-services\n"
               "Starts PostgreSQL (fsync on), MariaDB, nginx and ClickHouse for weir-bench,\n"
               "prints WEIR_BENCH_POSTGRES=, WEIR_BENCH_MYSQL=, WEIR_BENCH_HTTP= and\n"
               "WEIR_BENCH_CLICKHOUSE= lines and \"ready\",\n"
               "and stops them when standard input closes.\n",
               argc == 2 && std::string(argv[1]) == "--help" ? stdout : stderr);
    return argc == 2 && std::string(argv[1]) == "--help" ? 0 : 2;
  }
  struct sigaction on_signal {};
  on_signal.sa_handler = end_input;
  ::sigaction(SIGINT, &on_signal, nullptr);
  ::sigaction(SIGTERM, &on_signal, nullptr);
  try {
    weir::test::postgres_server postgres(true);
    weir::test::mariadb_server mariadb;
    weir::test::nginx_server nginx;
    weir::test::clickhouse_server clickhouse;
    std::cout << "WEIR_BENCH_POSTGRES=" << postgres.conninfo() << "\n"
              << "WEIR_BENCH_MYSQL=host=127.0.0.1 port=" << mariadb.port()
              << " user=weir database=weir password_file=" << mariadb.password_file().string() << "\n"
              << "WEIR_BENCH_HTTP=" << nginx.fast_url() << "\n"
              << "WEIR_BENCH_CLICKHOUSE=http://127.0.0.1:" << clickhouse.http_port() << "/\n"
              << "ready" << std::endl;
    std::string ignored;
    while (std::getline(std::cin, ignored)) {
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench-services: %s\n", e.what());
    return 1;
  }
  return 0;
}
