// The binaries' command lines: help, version, config checking, and the
// one-line, exit-2 answer to every configuration mistake.
#include <sys/stat.h>

#include <fstream>

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include "support/daemon_process.hpp"
#include "support/hung_file_system.hpp"
#include "support/test_paths.hpp"

using namespace weir::test;

namespace {

std::size_t lines_in(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("every binary answers --help and --version", "[cli]") {
  temp_dir dir;
  for (const char* bin : {"weir-server", "weir-ctl"}) {
    INFO(bin);
    auto help = run_binary(binary(bin), {"--help"}, dir.path());
    CHECK(help.exit_code == 0);
    CHECK(help.out.find("Usage: ") != std::string::npos);
    auto version = run_binary(binary(bin), {"--version"}, dir.path());
    CHECK(version.exit_code == 0);
    CHECK(version.out.find(bin) == 0);
  }
}

TEST_CASE("weir-server --check-config accepts the shipped config and rejects a bad one", "[cli]") {
  temp_dir dir;
  auto ok = run_binary(binary("weir-server"),
                       {"--config", (source_dir() / "config/weir.yaml").string(), "--check-config"}, dir.path());
  CHECK(ok.exit_code == 0);
  CHECK(ok.out == "config ok\n");

  std::ofstream(dir / "bad.yaml") << "ingest:\n  shards: 999\n";
  auto bad = run_binary(binary("weir-server"), {"--config", (dir / "bad.yaml").string(), "--check-config"}, dir.path());
  CHECK(bad.exit_code == 2);
  CHECK(lines_in(bad.err) == 1);
  CHECK(bad.err.find("ingest.shards = \"999\"") != std::string::npos);
  CHECK(bad.err.find("line 2, column 11") != std::string::npos);
  CHECK(bad.err.find("from 1 to 256") != std::string::npos);
}

TEST_CASE("configuration errors from each source exit 2 with one line", "[cli]") {
  temp_dir dir;
  struct bad_case {
    std::vector<std::string> args;
    std::vector<std::string> env;
    std::string expect;
  };
  std::ofstream(dir / "syntax.yaml") << "listen:\n  unix: [unclosed\n";
  std::ofstream(dir / "unknown.yaml") << "listen:\n  unix_socket: /tmp/x.sock\n";
  const std::vector<bad_case> cases{
      {{"--set", "listen.read_timeout_ms=5"}, {}, "from 100 to 600000"},
      {{"--set", "nosuch.key=1"}, {}, "unknown key nosuch.key"},
      {{"--set", "justtext"}, {}, "expected section.key=value"},
      {{}, {"WEIR_INGEST__SHARDS=many"}, "WEIR_INGEST__SHARDS"},
      {{}, {"WEIR_NO__SUCH=1"}, "names no configuration key"},
      {{"--config", (dir / "syntax.yaml").string()}, {}, "YAML syntax error"},
      {{"--config", (dir / "unknown.yaml").string()}, {}, "unknown key listen.unix_socket"},
      {{"--config", (dir / "absent.yaml").string()}, {}, "cannot read config file"},
      {{"--bogus-flag"}, {}, "unknown option --bogus-flag"},
  };
  for (const auto& c : cases) {
    INFO(c.expect);
    auto r = run_binary(binary("weir-server"), c.args, dir.path(), c.env);
    CHECK(r.exit_code == 2);
    CHECK(lines_in(r.err) == 1);
    CHECK(r.err.find(c.expect) != std::string::npos);
  }
}

TEST_CASE("weir-server --print-config shows the effective values as YAML", "[cli]") {
  temp_dir dir;
  auto r = run_binary(binary("weir-server"), {"--print-config", "--set", "ingest.shards=6"}, dir.path(),
                      {"WEIR_LOG__FORMAT=json"});
  REQUIRE(r.exit_code == 0);
  auto y = YAML::Load(r.out);
  CHECK(y["ingest"]["shards"].as<int>() == 6);
  CHECK(y["log"]["format"].as<std::string>() == "json");
  CHECK(y["sink"]["type"].as<std::string>() == "sqlite");
}

TEST_CASE("weir-ctl reports an unreachable daemon with exit 2", "[cli]") {
  temp_dir dir;
  auto r = run_binary(binary("weir-ctl"), {"--socket", (dir / "none.sock").string(), "health"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cannot connect") != std::string::npos);
  auto usage = run_binary(binary("weir-ctl"), {"frobnicate"}, dir.path());
  CHECK(usage.exit_code == 2);
}

TEST_CASE("weir-server --check-config refuses exactly what the daemon refuses at start and never prints a secret",
          "[cli][config]") {
  temp_dir dir;
  struct refused {
    std::vector<std::string> args;
    std::string expect;  // in the one line both print
    std::string secret;  // must appear in neither answer ("" when none)
  };
  const std::vector<refused> cases{
      {{"--set", "cluster.node_id=1", "--set", "cluster.listen=127.0.0.1:7000", "--set", "cluster.replicas=1", "--set",
        "cluster.tls.cert=no-cert.pem", "--set", "cluster.tls.key=no-key.pem", "--set", "cluster.tls.ca=no-ca.pem"},
       "cluster.tls: cannot read no-cert.pem", ""},
      {{"--set", "sink.type=http", "--set", "sink.http.url=http://user:hunter2@example.com/in"},
       "sink.http.url = \"http://(redacted)@example.com/in\"", "hunter2"},
      {{"--set", "sink.type=http", "--set", "sink.http.url=http://example.com/in\r\nX-Injected: 1"},
       "sink.http.url", ""},
      {{"--set", "sink.type=http", "--set", "sink.http.url=http://example.com/a b"}, "sink.http.url", ""},
      {{"--set", "sink.type=postgres", "--set", "sink.postgres.conninfo=postgresql://weir:hunter2@db.example/weir"},
       "sink.postgres.conninfo: a password must not be written", "hunter2"},
      {{"--set", "sink.type=postgres", "--set", "sink.postgres.conninfo=host=db PASSWORD=hunter2"},
       "sink.postgres.conninfo: a password must not be written", "hunter2"},
      {{"--set", "sink.type=postgres", "--set", "sink.postgres.conninfo=dbname=weir", "--set",
        "sink.postgres.password_file=no-such-file"},
       "sink.postgres.password_file = no-such-file: cannot read it: No such file or directory", ""},
      // libpq decodes a URI's percent-encoding, keys included.
      {{"--set", "sink.type=postgres", "--set", "sink.postgres.conninfo=postgresql://db/weir?pass%77ord=hunter2"},
       "sink.postgres.conninfo: a password must not be written", "hunter2"},
      // A FIFO in a secret file's place is refused at once, never read.
      {{"--set", "sink.type=http", "--set", "sink.http.url=http://127.0.0.1:9/ingest", "--set",
        "sink.http.bearer_token_file=token.fifo"},
       "sink.http.bearer_token_file = token.fifo: not a regular file (a FIFO)", ""},
      // One on a file system that does not answer is given up on after the time limit.
      {{"--set", "sink.type=http", "--set", "sink.http.url=http://127.0.0.1:9/ingest", "--set",
        "sink.http.bearer_token_file=nfs/token"},
       "sink.http.bearer_token_file = nfs/token: did not answer within 5 s", ""},
      {{"--set", "sink.sqlite.path=notes.txt"}, "sink.sqlite.path = notes.txt: file is not a database", ""},
      {{"--set", "sink.sqlite.path=notes.txt/sink.db"}, "sink.sqlite.path = notes.txt/sink.db: notes.txt is not a directory", ""},
  };
  REQUIRE(::mkfifo((dir / "token.fifo").c_str(), 0600) == 0);
  hung_file_system hung(dir / "nfs");
  INFO(hung.error());
  REQUIRE(hung.mounted());
  std::ofstream(dir / "notes.txt") << "a text file, not an SQLite database, and long enough to have a header's worth of bytes: "
                                   << std::string(200, 'x') << "\n";
  int checked = 0;
  for (const auto& c : cases) {
    INFO(c.expect);
    auto check_args = c.args;
    check_args.push_back("--check-config");
    const auto check = run_binary(binary("weir-server"), check_args, dir.path());
    CHECK(check.exit_code == 2);
    CHECK(lines_in(check.err) == 1);
    CHECK(check.err.find(c.expect) != std::string::npos);
    CHECK(check.out.find("config ok") == std::string::npos);
    auto start_args = c.args;
    start_args.insert(start_args.end(), {"--set", "data_dir=var-" + std::to_string(checked)});
    const auto start = run_binary(binary("weir-server"), start_args, dir.path());
    CHECK(start.exit_code == 2);
    CHECK(start.err.find(c.expect) != std::string::npos);
    if (!c.secret.empty()) {
      CHECK(check.err.find(c.secret) == std::string::npos);
      CHECK(start.err.find(c.secret) == std::string::npos);
      auto print_args = c.args;
      print_args.push_back("--print-config");
      const auto printed = run_binary(binary("weir-server"), print_args, dir.path());
      CHECK(printed.exit_code == 2);
      CHECK((printed.out + printed.err).find(c.secret) == std::string::npos);
    }
    ++checked;
  }
  CHECK(checked == static_cast<int>(cases.size()));
}

TEST_CASE("weir-server --config must name a regular file of at most 1 MiB", "[cli][config]") {
  temp_dir dir;
  std::filesystem::create_directories(dir / "a-directory");
  REQUIRE(::mkfifo((dir / "a-fifo").c_str(), 0600) == 0);
  {
    std::ofstream big(dir / "big.yaml");
    big << "# " << std::string(2 << 20, 'x') << "\n";
  }
  struct refused {
    std::string path, expect;
  };
  int checked = 0;
  for (const refused& r : {refused{(dir / "a-directory").string(), "not a regular file ("},
                           refused{"/dev/zero", "not a regular file ("},
                           refused{(dir / "a-fifo").string(), "not a regular file ("},
                           refused{(dir / "big.yaml").string(), "expected a YAML file of at most 1 MiB"}}) {
    INFO(r.path);
    const auto check = run_binary(binary("weir-server"), {"--config", r.path, "--check-config"}, dir.path(), {},
                                  std::chrono::seconds(10));
    CHECK(check.exit_code == 2);
    CHECK(lines_in(check.err) == 1);
    CHECK(check.err.find("config file " + r.path + ": ") != std::string::npos);
    CHECK(check.err.find(r.expect) != std::string::npos);
    ++checked;
  }
  CHECK(checked == 4);
}

TEST_CASE("weir-server --check-config and the start say which key is read under its earlier name", "[cli][config]") {
  temp_dir dir;
  const auto check = run_binary(binary("weir-server"), {"--set", "drain.retry.max_ms=900", "--check-config"}, dir.path());
  CHECK(check.exit_code == 0);
  CHECK(check.out == "config ok\n");
  CHECK(check.err.find("config warning: drain.retry.max_ms is now sink.retry.max_ms (--set)") != std::string::npos);
  const auto printed = run_binary(binary("weir-server"), {"--set", "drain.retry.max_ms=900", "--print-config"}, dir.path());
  CHECK(printed.out.find("max_ms: 900") != std::string::npos);  // under sink.retry
  daemon_process d(dir.path(), {"--set", "drain.retry.max_ms=900"});
  REQUIRE(d.wait_ready());
  CHECK(d.log().find("config: a key is read under its earlier name key=\"drain.retry.max_ms is now sink.retry.max_ms") !=
        std::string::npos);
  CHECK(d.stop() == 0);
}

TEST_CASE("the three-node example configuration passes --check-config", "[cli][cluster]") {
  temp_dir dir;
  // Its certificates first, as its comment says.
  const auto certs = run_binary(binary("weir-ctl"), {"cluster", "certs", "--out", "var/cluster/certs", "--nodes", "1,2,3"},
                                dir.path());
  REQUIRE(certs.exit_code == 0);
  int checked = 0;
  for (int n = 1; n <= 3; ++n) {
    const auto file = source_dir() / "config/cluster" / ("node" + std::to_string(n) + ".yaml");
    const auto r = run_binary(binary("weir-server"), {"--config", file.string(), "--check-config"}, dir.path());
    INFO(file.string() << ": " << r.err);
    CHECK(r.exit_code == 0);
    ++checked;
  }
  CHECK(checked == 3);
}
