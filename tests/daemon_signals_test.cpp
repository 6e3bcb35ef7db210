// Signals as an operator sends them: SIGHUP reloads what can change live and
// names what needs a restart, an invalid file on SIGHUP changes nothing,
// SIGPIPE is ignored, and SIGTERM still stops cleanly after all of it.
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "support/daemon_process.hpp"
#include "support/http_test_server.hpp"
#include "support/hung_file_system.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::trunc);
  out << text;
}

std::string config_text(const std::string& url, const std::string& level, int shards) {
  return "log:\n  level: " + level + "\ningest:\n  shards: " + std::to_string(shards) +
         "\nsink:\n  type: http\n  http:\n    url: " + url + "\n    bearer_token_file: token\n";
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("SIGHUP reloads the log level and the sink's token and names what needs a restart", "[live][signals]") {
  http_test_server server;
  temp_dir dir;
  write_file(dir / "token", "first-token\n");
  write_file(dir / "weir.yaml", config_text(server.url(), "info", 1));
  daemon_process d(dir.path(), {"--config", "weir.yaml"});
  REQUIRE(d.wait_ready());
  auto c = client::connection::connect_unix(d.socket_path());
  REQUIRE(c.push(as_bytes("one"), client::durability::durable).acked);
  REQUIRE(eventually([&] { return server.accepted().size() == 1; }));
  CHECK(server.accepted()[0].headers.at("authorization") == "Bearer first-token");

  // A rotated token, a finer log level and a key that cannot change live.
  write_file(dir / "token", "second-token\n");
  write_file(dir / "weir.yaml", config_text(server.url(), "debug", 2));
  REQUIRE(::kill(d.pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return d.log().find("configuration reloaded") != std::string::npos; }));
  CHECK(d.log().find("applied=log.level") != std::string::npos);
  CHECK(d.log().find("secret_files_read=sink.http.bearer_token_file") != std::string::npos);
  CHECK(d.log().find("needs_restart=ingest.shards") != std::string::npos);
  CHECK(d.log().find("changed keys take effect only after a restart keys=ingest.shards") != std::string::npos);
  CHECK(d.log().find("debug connection accepted") == std::string::npos);
  auto c2 = client::connection::connect_unix(d.socket_path());  // at debug level, a new connection is logged
  REQUIRE(c2.push(as_bytes("two"), client::durability::durable).acked);
  REQUIRE(eventually([&] { return server.accepted().size() == 2; }));
  CHECK(server.accepted()[1].headers.at("authorization") == "Bearer second-token");
  CHECK(d.log().find("debug connection accepted") != std::string::npos);

  // A file that no longer validates: refused, nothing changes, still serving.
  write_file(dir / "weir.yaml", "ingest:\n  shards: lots\n");
  REQUIRE(::kill(d.pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return d.log().find("reload refused") != std::string::npos; }));
  CHECK(d.log().find("ingest.shards") != std::string::npos);
  CHECK(count_of(d.log(), "configuration reloaded") == 1);
  REQUIRE(c.push(as_bytes("three"), client::durability::durable).acked);
  REQUIRE(eventually([&] { return server.accepted().size() == 3; }));

  CHECK(d.stop(SIGTERM) == 0);
  CHECK(d.log().find("signal=SIGTERM") != std::string::npos);
  CHECK(!std::filesystem::exists(d.socket_path()));
}

TEST_CASE("a token file turned into a FIFO or a link to a non-token cannot freeze or leak on SIGHUP",
          "[live][signals][secrets]") {
  http_test_server server;
  temp_dir dir;
  write_file(dir / "token", "first-token\n");
  write_file(dir / "weir.yaml", config_text(server.url(), "info", 1));
  daemon_process d(dir.path(), {"--config", "weir.yaml"});
  REQUIRE(d.wait_ready());
  // A FIFO in the token's place: the reload refuses it at once, says so, keeps the token.
  std::filesystem::remove(dir / "token");
  REQUIRE(::mkfifo((dir / "token").c_str(), 0600) == 0);
  REQUIRE(::kill(d.pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return d.log().find("configuration reloaded") != std::string::npos; }));
  CHECK(d.log().find("not a regular file (a FIFO)") != std::string::npos);
  // A token file linked to a file that is no token (/etc/passwd): refused, never sent, never logged.
  std::filesystem::remove(dir / "token");
  std::filesystem::create_symlink("/etc/passwd", dir / "token");
  REQUIRE(::kill(d.pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return count_of(d.log(), "configuration reloaded") == 2; }));
  CHECK(d.log().find("not a bearer token") != std::string::npos);
  CHECK(d.log().find("root:") == std::string::npos);
  auto c = client::connection::connect_unix(d.socket_path());
  REQUIRE(c.push(as_bytes("one"), client::durability::durable).acked);
  REQUIRE(eventually([&] { return server.accepted().size() == 1; }));
  CHECK(server.accepted()[0].headers.at("authorization") == "Bearer first-token");
  // A valid rotation after both still works, and SIGTERM still stops it.
  std::filesystem::remove(dir / "token");
  write_file(dir / "token", "second-token\n");
  REQUIRE(::kill(d.pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return count_of(d.log(), "configuration reloaded") == 3; }));
  REQUIRE(c.push(as_bytes("two"), client::durability::durable).acked);
  REQUIRE(eventually([&] { return server.accepted().size() == 2; }));
  CHECK(server.accepted()[1].headers.at("authorization") == "Bearer second-token");
  CHECK(d.stop(SIGTERM) == 0);
}

TEST_CASE("a token on a file system that stops answering neither stalls reloads nor delays SIGTERM",
          "[live][signals][secrets]") {
  http_test_server server;
  temp_dir dir;
  hung_file_system hung(dir / "nfs");
  INFO(hung.error());
  REQUIRE(hung.mounted());
  write_file(dir / "token", "first-token\n");
  write_file(dir / "weir.yaml", config_text(server.url(), "info", 1));
  daemon_process d(dir.path(), {"--config", "weir.yaml"});
  REQUIRE(d.wait_ready());
  // The token is rotated as Kubernetes does, by a symlink: now into a dead mount.
  std::filesystem::remove(dir / "token");
  std::filesystem::create_symlink(hung.path("token"), dir / "token");
  REQUIRE(::kill(d.pid(), SIGHUP) == 0);
  // Given up on after the time limit; the previous token stays; the daemon serves on.
  REQUIRE(eventually([&] { return d.log().find("configuration reloaded") != std::string::npos; }));
  CHECK(d.log().find("sink.http.bearer_token_file = token: did not answer within 5 s") != std::string::npos);
  CHECK(d.log().find("the previous secret stays in use") != std::string::npos);
  auto c = client::connection::connect_unix(d.socket_path());
  REQUIRE(c.push(as_bytes("one"), client::durability::durable).acked);
  REQUIRE(eventually([&] { return server.accepted().size() == 1; }));
  CHECK(server.accepted()[0].headers.at("authorization") == "Bearer first-token");
  // A reload reading the dead file when SIGTERM comes: the stop does not wait
  // for it (with the reload on the signal thread, its time limit would pass
  // first and say so a second time).
  REQUIRE(::kill(d.pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return count_of(d.log(), "reloading the configuration") == 2; }));
  CHECK(d.stop(SIGTERM) == 0);
  CHECK(count_of(d.log(), "did not answer within") == 1);
  const auto stopping = d.log().find("shutting down");
  REQUIRE(stopping != std::string::npos);
  CHECK(d.log().find("stopped", stopping) != std::string::npos);
  CHECK(hung.mounted());  // it stopped while the file system was still dead
}

TEST_CASE("SIGPIPE is ignored and SIGHUP without changes keeps serving", "[live][signals]") {
  temp_dir dir;
  daemon_process d(dir.path());
  REQUIRE(d.wait_ready());
  REQUIRE(::kill(d.pid(), SIGPIPE) == 0);
  REQUIRE(::kill(d.pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return d.log().find("configuration reloaded") != std::string::npos; }));
  CHECK(d.log().find("applied=none") != std::string::npos);
  CHECK(d.log().find("needs_restart=none") != std::string::npos);
  CHECK(d.running());
  auto c = client::connection::connect_unix(d.socket_path());
  CHECK(c.push(as_bytes("still here"), client::durability::durable).acked);
  CHECK(d.stop(SIGINT) == 0);
}

TEST_CASE("SIGHUP names each sink of a sinks list added or taken out or changed as needing a restart",
          "[live][signals][sinks]") {
  temp_dir dir;
  auto with_sinks = [&](const std::string& sinks) {
    write_file(dir / "weir.yaml", "sinks:\n" + sinks);
  };
  with_sinks("  - {name: a, type: file, file: {path: a.ndjson}}\n  - {name: b, type: file, file: {path: b.ndjson}}\n");
  daemon_process d(dir.path(), {"--config", "weir.yaml"});
  REQUIRE(d.wait_ready());
  // b renamed c, a's path changed.
  with_sinks("  - {name: a, type: file, file: {path: a2.ndjson}}\n  - {name: c, type: file, file: {path: b.ndjson}}\n");
  REQUIRE(::kill(d.pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return d.log().find("configuration reloaded") != std::string::npos; }));
  INFO(d.log());
  CHECK(d.log().find("changed keys take effect only after a restart keys=sinks[b],sinks[a].sink.file.path,sinks[c]") !=
        std::string::npos);
  CHECK(d.stop() == 0);
}
