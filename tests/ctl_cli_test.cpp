// weir-ctl as an operator types it: per-command help, errors that name the
// bad flag or subcommand, hints when nothing answers or the data dir is
// wrong, and push reading one record per line of standard input.
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>

#include <cstdio>
#include <future>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/daemon_process.hpp"
#include "support/http_get.hpp"
#include "support/http_test_server.hpp"
#include "support/sink_contents.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "weir/client.hpp"

using namespace weir::test;

namespace {

run_result ctl(const temp_dir& dir, const std::vector<std::string>& args) {
  return run_binary(binary("weir-ctl"), args, dir.path());
}

std::vector<std::string> lines_of(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// The payload of one record as weir-ctl prints it in JSON.
std::string payload_of(const nlohmann::json& record) {
  const std::string hex = record.at("payload_hex");
  std::string p;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) p += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return p;
}

/// weir-ctl tail with `args` in the background, its output into `out`. exec:
/// when the test gives up on it, the kill reaches weir-ctl itself.
std::future<run_result> tail_into(const temp_dir& dir, const std::string& args, const std::filesystem::path& out) {
  const std::string cmd = "exec " + binary("weir-ctl").string() + " --data-dir " + (dir / "var").string() + " tail " +
                          args + " > " + out.string();
  return std::async(std::launch::async, [cmd, at = dir.path()] { return run_binary("/bin/sh", {"-c", cmd}, at); });
}

}  // namespace

TEST_CASE("weir-ctl: every command has its own help with examples", "[cli][ctl]") {
  temp_dir dir;
  int checked = 0;
  for (const char* command : {"health", "push", "status", "cluster", "top", "metrics", "wab", "segments", "dump",
                              "tail", "quarantine", "dl", "drain"}) {
    INFO(command);
    const auto r = ctl(dir, {command, "--help"});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find(std::string("Usage: weir-ctl ") + command) == 0);
    CHECK(r.out.find("Example") != std::string::npos);
    CHECK(ctl(dir, {"help", command}).out == r.out);
    ++checked;
  }
  CHECK(checked == 13);
}

TEST_CASE("weir-ctl: usage errors name the bad flag or subcommand and exit 2", "[cli][ctl]") {
  temp_dir dir;
  struct bad {
    std::vector<std::string> args;
    std::string expect;
  };
  int checked = 0;
  for (const bad& b : {bad{{"push", "--durabilty", "x"}, "weir-ctl push: unknown option --durabilty"},
                       bad{{"push", "--durability", "fast", "x"}, "--durability fast: expected durable, buffered or replicated"},
                       bad{{"push", "a", "b"}, "one PAYLOAD only, got a second: b"},
                       bad{{"dl", "foo"}, "weir-ctl dl: unknown subcommand foo"},
                       bad{{"dl"}, "weir-ctl dl: needs a subcommand"},
                       bad{{"status", "now"}, "weir-ctl status: takes no arguments, got now"},
                       bad{{"frobnicate"}, "unknown command frobnicate"}}) {
    INFO(b.expect);
    const auto r = ctl(dir, b.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(b.expect) != std::string::npos);
    ++checked;
  }
  CHECK(checked == 7);
}

TEST_CASE("weir-ctl and --check-config say permission denied where this user may not go", "[cli][ctl]") {
  REQUIRE(::geteuid() == 0);  // to be nobody
  temp_dir dir;
  std::filesystem::create_directories(dir / "var/wab");
  ::chmod((dir / "var").c_str(), 0700);  // the daemon's user's, root here
  ::chmod(dir.path().c_str(), 0755);
  const auto as_nobody = [&](const std::string& bin, const std::vector<std::string>& args) {
    std::vector<std::string> all{"--reuid=nobody", "--regid=nogroup", "--clear-groups", binary(bin).string()};
    all.insert(all.end(), args.begin(), args.end());
    return run_binary("/usr/bin/setpriv", all, dir.path());
  };
  const auto wab = as_nobody("weir-ctl", {"--data-dir", (dir / "var").string(), "wab"});
  CHECK(wab.exit_code == 2);
  CHECK(wab.err.find("cannot read the data directory " + (dir / "var").string() +
                     ": Permission denied (it belongs to root; run weir-ctl as root)") != std::string::npos);
  const auto check = as_nobody("weir-server", {"--check-config", "--set", "admin.listen=", "--set",
                                               "data_dir=" + (dir / "var/new").string()});
  CHECK(check.exit_code == 2);
  CHECK(check.err.find("data_dir = " + (dir / "var/new").string() + ": " + (dir / "var").string() +
                       " is not writable by this user") != std::string::npos);
}

TEST_CASE("weir-ctl push: a payload over the daemon's limit is told with the limit", "[live][cli][ctl]") {
  temp_dir dir;
  std::ofstream(dir / "weir.yaml") << "limits:\n  max_payload_bytes: 1KiB\n  frame_memory_bytes: 1MiB\n";
  daemon_process d(dir.path(), {"--config", (dir / "weir.yaml").string()});
  REQUIRE(d.wait_ready());
  const auto r = run_binary("/bin/sh", {"-c", "head -c 2000 /dev/zero | tr '\\0' x | " + binary("weir-ctl").string() +
                                                  " --config weir.yaml push"},
                            dir.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("Nack(PayloadTooLarge) (the record is 2000 bytes; the daemon takes at most "
                   "limits.max_payload_bytes = 1024 (weir.yaml))") != std::string::npos);
  CHECK(d.stop() == 0);
}

TEST_CASE("weir-ctl: hints when no daemon answers (exit 2) and when the data dir is not one", "[cli][ctl]") {
  temp_dir dir;
  const auto health = ctl(dir, {"--socket", (dir / "none.sock").string(), "health"});
  CHECK(health.exit_code == 2);
  CHECK(health.err.find("cannot connect") != std::string::npos);
  CHECK(health.err.find("is weir-server running?") != std::string::npos);
  CHECK(health.err.find("--socket") != std::string::npos);

  const auto status = ctl(dir, {"--admin", "127.0.0.1:" + std::to_string(free_tcp_port()), "status"});
  CHECK(status.exit_code == 2);
  const auto tcp = ctl(dir, {"--tcp", "127.0.0.1:" + std::to_string(free_tcp_port()), "--ca", "none.pem", "health"});
  CHECK(tcp.exit_code == 2);
  CHECK(tcp.err.find("is listen.tcp set on the daemon?") != std::string::npos);
  CHECK(status.err.find("--admin HOST:PORT") != std::string::npos);
  // Every command that reads the admin server says 2 when it cannot reach it.
  const std::string no_admin = "127.0.0.1:" + std::to_string(free_tcp_port());
  int unreachable = 0;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--admin", no_admin, "top"}, {"--admin", no_admin, "--json", "top"},
        {"--admin", no_admin, "metrics"}, {"--admin", no_admin, "--json", "metrics"},
        {"--admin", no_admin, "cluster", "status"}}) {
    INFO(args.back());
    CHECK(ctl(dir, args).exit_code == 2);
    ++unreachable;
  }
  CHECK(unreachable == 5);

  // No data directory is a usage problem (2), for every command that reads one.
  int checked = 0;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"dl", "list"}, {"wab"}, {"dl", "requeue"}, {"dl", "drop"}, {"segments"},
        {"quarantine", "list"}, {"tail"}}) {
    INFO(args.front());
    const auto r = ctl(dir, args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("var is not a weir data directory") != std::string::npos);
    CHECK(r.out.find("no dead letters") == std::string::npos);
    ++checked;
  }
  CHECK(checked == 7);
}

TEST_CASE("weir-ctl dl requeue --yes exits 2 when no daemon answers and keeps the files", "[cli][ctl]") {
  temp_dir dir;
  std::filesystem::create_directories(dir / "var/wab");
  std::filesystem::create_directories(dir / "var/dead_letter");
  const auto r = ctl(dir, {"--socket", (dir / "none.sock").string(), "dl", "requeue", "--yes"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("is weir-server running?") != std::string::npos);
  const auto dry = ctl(dir, {"--json", "dl", "requeue"});
  CHECK(dry.exit_code == 0);
  CHECK(nlohmann::json::parse(dry.out) == nlohmann::json{{"dry_run", true}, {"files", 0}, {"records", 0}});
  const auto drop = ctl(dir, {"--json", "dl", "drop"});
  CHECK(drop.exit_code == 0);
  const auto dropped = nlohmann::json::parse(drop.out);
  CHECK(dropped["dry_run"] == true);
  CHECK(dropped["files"].empty());
}

TEST_CASE("weir-ctl push: one record per line of standard input without its line end and --raw for one",
          "[live][cli][ctl]") {
  temp_dir dir;
  daemon_process d(dir.path(), {"--set", "drain.linger_ms=0"});
  REQUIRE(d.wait_ready());
  const std::string ctl_cmd = binary("weir-ctl").string() + " --socket " + d.socket_path() + " push";
  std::string out;
  REQUIRE(run_with_input(ctl_cmd, "{\"a\":1}\n{\"b\":2}\r\n\nlast line without end", out) == 0);
  CHECK(out.find("acked 3 records") != std::string::npos);
  CHECK(out.find("skipped 1 empty lines") != std::string::npos);
  REQUIRE(run_with_input(ctl_cmd + " --raw", "one\nrecord\n", out) == 0);
  CHECK(out.find("acked") != std::string::npos);
  REQUIRE(run_with_input(ctl_cmd + " --tracked", "single line\n", out) == 0);
  CHECK(out.find("record_id=") != std::string::npos);

  std::vector<sink_row> rows;
  REQUIRE(eventually([&] {
    rows = sqlite_rows(dir / "var/sink.db");
    return rows.size() >= 5;
  }));
  std::multiset<std::string> payloads;  // each push is its own connection, so maybe its own shard
  for (const auto& r : rows) payloads.insert(r.payload);
  CHECK(payloads == std::multiset<std::string>{"{\"a\":1}", "{\"b\":2}", "last line without end", "one\nrecord\n",
                                               "single line"});

  // A node without a cluster refuses Replicated pushes: the refusal says why.
  const auto replicated = ctl(dir, {"--socket", d.socket_path(), "push", "--tier", "replicated", "x"});
  CHECK(replicated.exit_code == 1);
  CHECK(replicated.err.find("Nack(InternalError) (a node without a cluster refuses every Replicated push") !=
        std::string::npos);
  CHECK(d.stop() == 0);
}

TEST_CASE("weir-ctl status and top show the dashboard's fields in human units", "[live][cli][ctl][top]") {
  temp_dir dir;
  const auto admin = free_tcp_port();
  const std::string admin_address = "127.0.0.1:" + std::to_string(admin);
  daemon_process d(dir.path(), {"--set", "admin.listen=" + admin_address});
  REQUIRE(d.wait_ready());
  std::string out;
  REQUIRE(run_with_input(binary("weir-ctl").string() + " --socket " + d.socket_path() + " push", "a\nb\nc\n", out) == 0);
  int checked = 0;
  for (const std::vector<std::string> args :
       {std::vector<std::string>{"--admin", admin_address, "status"}, {"--admin", admin_address, "top"},
        {"--admin", admin_address, "top", "--once"}}) {
    const auto r = ctl(dir, args);  // stdout is a pipe: top prints one snapshot
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    for (const char* field : {"ingest", "acked", "delivered", "ack latency", "p99", "per fsync", "WAB", "8.0 GiB",
                              "sink", "oldest waiting", "last commit", "connections", "dead letters", "shard"})
      CHECK(r.out.find(field) != std::string::npos);
    CHECK(r.out.find("8589934592") == std::string::npos);
    CHECK(r.out.find("\x1b[") == std::string::npos);  // no terminal control codes into a pipe
    ++checked;
  }
  CHECK(checked == 3);
  CHECK(ctl(dir, {"top", "--interval", "5"}).exit_code == 2);

  // --json: top gives the status document, metrics its samples as objects.
  const auto top = ctl(dir, {"--admin", admin_address, "--json", "top"});
  CHECK(top.exit_code == 0);
  CHECK(nlohmann::json::parse(top.out).contains("shards"));
  const auto metrics = ctl(dir, {"--admin", admin_address, "--json", "metrics"});
  REQUIRE(metrics.exit_code == 0);
  const auto samples = nlohmann::json::parse(metrics.out);
  double durable_acked = -1;
  for (const auto& s : samples)
    if (s["name"] == "weir_records_ack_total" && s["labels"].value("tier", "") == "durable") durable_acked = s["value"];
  CHECK(durable_acked == 3);  // the three lines pushed above
  CHECK(d.stop() == 0);
}

TEST_CASE("weir-ctl push: lines are pushed as they arrive and a daemon's lower batch limit is honoured",
          "[live][cli][ctl]") {
  temp_dir dir;
  daemon_process d(dir.path(), {"--set", "drain.linger_ms=0", "--set", "limits.max_batch_records=2"});
  REQUIRE(d.wait_ready());
  const std::string ctl_cmd = binary("weir-ctl").string() + " --socket " + d.socket_path() + " push > " +
                              (dir / "push.out").string() + " 2>&1";
  FILE* producer = ::popen(ctl_cmd.c_str(), "w");
  REQUIRE(producer != nullptr);
  // The input stays open (as with tail -f): what came so far is delivered anyway.
  std::fputs("first\nsecond\nthird\n", producer);
  std::fflush(producer);
  CHECK(eventually([&] { return sqlite_rows(dir / "var/sink.db").size() == 3; }));
  std::fputs("fourth\n", producer);
  std::fflush(producer);
  CHECK(eventually([&] { return sqlite_rows(dir / "var/sink.db").size() == 4; }));
  CHECK(::pclose(producer) == 0);
  std::ifstream out(dir / "push.out");
  const std::string said((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  CHECK(said.find("acked 4 records") != std::string::npos);
  CHECK(d.stop() == 0);
}

TEST_CASE("weir-ctl push: a daemon killed mid-input is said with how many records were acked before it",
          "[live][cli][ctl]") {
  temp_dir dir;
  auto d = std::make_unique<daemon_process>(dir.path(), std::vector<std::string>{"--set", "drain.linger_ms=0"});
  REQUIRE(d->wait_ready());
  const std::string ctl_cmd = binary("weir-ctl").string() + " --socket " + d->socket_path() + " push > " +
                              (dir / "push.out").string() + " 2>&1; echo \"rc=$?\" >> " + (dir / "push.out").string();
  FILE* producer = ::popen(ctl_cmd.c_str(), "w");
  REQUIRE(producer != nullptr);
  for (int i = 1; i <= 3; ++i) std::fprintf(producer, "line %d\n", i);
  std::fflush(producer);
  REQUIRE(eventually([&] { return sqlite_rows(dir / "var/sink.db").size() == 3; }));
  ::kill(d->pid(), SIGKILL);
  d->wait_exit();
  d.reset();
  std::fputs("line 4\n", producer);
  std::fflush(producer);
  ::pclose(producer);
  std::ifstream out(dir / "push.out");
  const std::string said((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  INFO(said);
  CHECK(said.find("3 records acked before it (up to line 3); from line 4 on, not known to be acked") != std::string::npos);
  CHECK(said.find("rc=1") != std::string::npos);
}

TEST_CASE("weir-ctl top on a terminal quits on q and gives the terminal back as it was", "[live][cli][ctl]") {
  temp_dir dir;
  const auto admin = free_tcp_port();
  daemon_process d(dir.path(), {"--set", "admin.listen=127.0.0.1:" + std::to_string(admin)});
  REQUIRE(d.wait_ready());
  int terminal = -1;
  const pid_t top = ::forkpty(&terminal, nullptr, nullptr, nullptr);
  REQUIRE(top >= 0);
  if (top == 0) {
    const std::string bin = binary("weir-ctl").string(), where = "127.0.0.1:" + std::to_string(admin);
    ::execl(bin.c_str(), bin.c_str(), "--admin", where.c_str(), "top", "--interval", "200", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string seen;
  auto read_some = [&] {
    pollfd in{terminal, POLLIN, 0};
    if (::poll(&in, 1, 100) <= 0) return;
    char buf[4096];
    const ssize_t n = ::read(terminal, buf, sizeof buf);
    if (n > 0) seen.append(buf, static_cast<std::size_t>(n));
  };
  REQUIRE(eventually([&] {
    read_some();
    return seen.find("q quits") != std::string::npos && seen.find("shard") != std::string::npos;
  }));
  termios during{};
  REQUIRE(::tcgetattr(terminal, &during) == 0);
  CHECK((during.c_lflag & ICANON) == 0);  // keys one at a time while it runs
  REQUIRE(::write(terminal, "q", 1) == 1);
  int status = -1;
  const bool ended = eventually([&] {
    read_some();
    return ::waitpid(top, &status, WNOHANG) == top;
  });
  if (!ended) ::kill(top, SIGKILL);
  REQUIRE(ended);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  termios after{};
  REQUIRE(::tcgetattr(terminal, &after) == 0);
  CHECK((after.c_lflag & ICANON) != 0);
  CHECK((after.c_lflag & ECHO) != 0);
  ::close(terminal);
  CHECK(d.stop() == 0);
}

TEST_CASE("weir-ctl status and top refuse an admin address that does not answer weir's status", "[live][cli][ctl]") {
  temp_dir dir;
  http_test_server not_weir;  // answers 200 with an empty body to anything
  int checked = 0;
  for (const char* command : {"status", "top"}) {
    const auto r = ctl(dir, {"--admin", "127.0.0.1:" + std::to_string(not_weir.port()), command});
    INFO(command << ": " << r.err);
    CHECK(r.exit_code == 1);
    CHECK((r.err.find("did not answer a weir status document") != std::string::npos ||
           r.err.find("did not parse") != std::string::npos));
    ++checked;
  }
  CHECK(checked == 2);
}

TEST_CASE("weir-ctl push --file with --batch and --tier and tail following the records as they are appended",
          "[live][cli][ctl]") {
  temp_dir dir;
  daemon_process d(dir.path(), {"--set", "drain.linger_ms=0", "--set", "ingest.shards=1"});
  REQUIRE(d.wait_ready());
  {
    std::ofstream events(dir / "events.txt");
    for (int i = 1; i <= 50; ++i) events << "event-" << i << "\n";
  }
  // tail from the start of the WAB, its output in a file we can watch.
  auto tail = tail_into(dir, "--from-start --count 61 --format json", dir / "tail.out");
  // One record first, shown before the rest is pushed: tail then holds its
  // segment open. Otherwise a tail slow to start (seen under AddressSanitizer)
  // could make its first look after the drain had delivered and deleted the
  // segment holding all 50, and begin past them: --from-start begins at the
  // oldest segment still in the WAB.
  {
    std::ofstream first(dir / "first.txt");
    first << "first\n";
  }
  REQUIRE(ctl(dir, {"--socket", d.socket_path(), "push", "--file", "first.txt"}).exit_code == 0);
  REQUIRE(eventually([&] { return lines_of(dir / "tail.out").size() == 1; }));

  const auto pushed = ctl(dir, {"--socket", d.socket_path(), "push", "--file", "events.txt", "--batch", "7", "--tier",
                                "buffered"});
  INFO(pushed.err);
  CHECK(pushed.exit_code == 0);
  CHECK(pushed.out.find("acked 50 records") != std::string::npos);
  // tail has shown the 50 before the next ten exist: it follows.
  REQUIRE(eventually([&] { return lines_of(dir / "tail.out").size() == 51; }));
  {
    std::ofstream more(dir / "more.txt");
    for (int i = 1; i <= 10; ++i) more << "more-" << i << "\n";
  }
  const auto singles = ctl(dir, {"--socket", d.socket_path(), "push", "--file", "more.txt", "--batch", "1"});
  CHECK(singles.exit_code == 0);
  const auto ended = tail.get();
  INFO(ended.err);
  CHECK(ended.exit_code == 0);
  const auto shown = lines_of(dir / "tail.out");
  REQUIRE(shown.size() == 61);
  std::set<std::string> payloads;
  for (const auto& l : shown) {
    const auto j = nlohmann::json::parse(l);
    payloads.insert(payload_of(j));
    CHECK(j.at("record_id").get<std::string>().size() == 64);
  }
  CHECK(payloads.size() == 61);
  CHECK(payloads.count("event-1") == 1);
  CHECK(payloads.count("more-10") == 1);
  CHECK(eventually([&] { return sqlite_rows(dir / "var/sink.db").size() == 61; }));

  const auto bad = ctl(dir, {"--socket", d.socket_path(), "push", "--file", "events.txt", "--batch", "70000"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--batch 70000: expected a number from 1 to 65535") != std::string::npos);
  const auto missing = ctl(dir, {"--socket", d.socket_path(), "push", "--file", "absent.txt"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("--file absent.txt: cannot read it") != std::string::npos);
  CHECK(d.stop() == 0);
}

TEST_CASE("weir-ctl tail starts at the end of the WAB and follows it into the next segments", "[live][cli][ctl]") {
  temp_dir dir;
  // 64 KiB segments and 4 KiB records: a new segment every 15 records or so.
  // The sink cannot be reached, so no segment is delivered and deleted
  // before tail reads it.
  daemon_process d(dir.path(), {"--set", "ingest.shards=1", "--set", "wab.segment_max_bytes=64KiB", "--set",
                                "sink.type=http", "--set", "sink.http.url=http://127.0.0.1:1/"});
  REQUIRE(d.wait_ready());
  auto conn = weir::client::connection::connect_unix(d.socket_path());
  auto push = [&](const std::string& name) {
    REQUIRE(conn.push(as_bytes(name + std::string(4096, '.')), weir::client::durability::buffered).acked);
  };
  for (int i = 0; i < 40; ++i) push("old-" + std::to_string(i));  // before tail: never shown

  auto tail = tail_into(dir, "--count 45 --format json --interval 50", dir / "tail.out");
  // tail takes each shard's end at its first look: push until it shows one.
  int next = 0;
  REQUIRE(eventually([&] {
    push("new-" + std::to_string(next++));
    return !lines_of(dir / "tail.out").empty();
  }));
  for (int i = 0; i < 60; ++i) push("new-" + std::to_string(next++));
  const auto ended = tail.get();
  INFO(ended.err);
  REQUIRE(ended.exit_code == 0);

  const auto shown = lines_of(dir / "tail.out");
  REQUIRE(shown.size() == 45);
  std::set<std::string> segments;
  int expected = -1;
  for (const auto& l : shown) {
    const auto j = nlohmann::json::parse(l);
    const std::string p = payload_of(j);
    INFO(p.substr(0, 12));
    REQUIRE(p.rfind("new-", 0) == 0);
    const int n = std::stoi(p.substr(4));
    if (expected >= 0) CHECK(n == expected);  // in order, none skipped at a rotation
    expected = n + 1;
    segments.insert(j.at("segment").get<std::string>());
  }
  CHECK(segments.size() >= 3);
  CHECK(ended.err.find("were gone before tail could read them") == std::string::npos);
  CHECK(d.stop() == 0);
}

TEST_CASE("weir-ctl --config takes the socket and the admin address and the data dir from the daemon's config",
          "[live][ctl]") {
  temp_dir dir, elsewhere;
  const auto port = free_tcp_port();
  const std::string admin = "127.0.0.1:" + std::to_string(port);
  const auto config = dir / "weir.yaml";
  std::ofstream(config) << "data_dir: " << (dir / "var").string() << "\nlisten:\n  unix: "
                        << (dir / "var/run/weir.sock").string() << "\nadmin:\n  listen: \"" << admin << "\"\n";
  daemon_process d(dir.path(), {"--config", config.string(), "--set", "admin.listen=" + admin});
  REQUIRE(d.wait_ready());
  // From another directory, where weir-ctl's own defaults find nothing.
  const auto without = ctl(elsewhere, {"health"});
  CHECK(without.exit_code == 2);
  int checked = 0;
  for (const std::vector<std::string>& cmd : {std::vector<std::string>{"health"}, {"status"}, {"wab"}, {"push", "hi"}}) {
    std::vector<std::string> args{"--config", config.string()};
    args.insert(args.end(), cmd.begin(), cmd.end());
    const auto r = ctl(elsewhere, args);
    INFO(cmd[0] << ": " << r.out << r.err);
    CHECK(r.exit_code == 0);
    ++checked;
  }
  CHECK(checked == 4);
  // WEIR_CTL_CONFIG names the default file; a flag still wins over it.
  const auto by_env = run_binary(binary("weir-ctl"), {"status"}, elsewhere.path(), {"WEIR_CTL_CONFIG=" + config.string()});
  CHECK(by_env.exit_code == 0);
  const auto flag_wins = ctl(elsewhere, {"--config", config.string(), "--socket", "/nonexistent/weir.sock", "health"});
  CHECK(flag_wins.exit_code == 2);
  CHECK(flag_wins.err.find("/nonexistent/weir.sock") != std::string::npos);
  // --set as the daemon takes it: the admin server turned off is said as such.
  const auto off = ctl(elsewhere, {"--config", config.string(), "--set", "admin.listen=", "status"});
  CHECK(off.exit_code == 2);
  CHECK(off.err.find("admin server is off") != std::string::npos);
  // A configuration the daemon would refuse: its one line, exit 2.
  const auto bad = ctl(elsewhere, {"--config", config.string(), "--set", "ingest.shards=0", "wab"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("ingest.shards") != std::string::npos);
  CHECK(d.stop() == 0);
}
