// The real daemon's socket and lifecycle: safe bind, permissions, the lock,
// connection limits, idle timeout, peer uid check and clean shutdown.
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

#include <catch2/catch.hpp>

#include "wire/frame.hpp"
#include "wab/segment_format.hpp"
#include "support/v1_segment.hpp"
#include "support/daemon_process.hpp"
#include "support/http_get.hpp"
#include "support/raw_peer.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "support/wire_peer.hpp"
#include "weir/client.hpp"

using namespace weir::test;
namespace w = weir::wire;
using namespace std::chrono_literals;

namespace {

std::vector<std::uint8_t> health_frame() {
  return w::encode_frame(w::message_type::health_check, w::durability::durable, {});
}

bool answers_health(const std::string& socket) {
  wire_peer p(socket);
  if (!p.connected() || !p.send(health_frame())) return false;
  auto out = p.collect_frames(1);
  return out.replies.size() == 1 && reply_type(out.replies[0]) == 0x05;
}

mode_t mode_of(const std::filesystem::path& p) {
  struct stat st {};
  ::lstat(p.c_str(), &st);
  return st.st_mode & 07777;
}

/// Leaves a socket file behind with nobody listening, as a killed daemon does.
void make_stale_socket(const std::filesystem::path& path) {
  std::filesystem::create_directories(path.parent_path());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  ::close(fd);
}

std::size_t lines_in(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

/// Log lines at level error: a failed start explains itself in exactly one.
std::size_t error_lines_in(const std::string& log) {
  std::size_t n = 0;
  for (std::size_t at = log.find(" error "); at != std::string::npos; at = log.find(" error ", at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("daemon starts private with 0700 directories and a 0600 socket and a lock file", "[live][socket]") {
  temp_dir dir;
  daemon_process d(dir.path());
  REQUIRE(d.wait_ready());
  CHECK(mode_of(dir / "var") == 0700);
  CHECK(mode_of(dir / "var/run") == 0700);
  CHECK(mode_of(dir / "var/run/weir.sock") == 0600);
  CHECK(S_ISSOCK([&] { struct stat st{}; ::lstat((dir / "var/run/weir.sock").c_str(), &st); return st.st_mode; }()));
  std::ifstream lock(dir / "var/weir.lock");
  pid_t pid = 0;
  lock >> pid;
  CHECK(pid == d.pid());
  CHECK(d.stop() == 0);
}

TEST_CASE("SIGTERM and SIGINT stop the daemon with status 0 and remove the socket", "[live][socket]") {
  for (int sig : {SIGTERM, SIGINT}) {
    temp_dir dir;
    daemon_process d(dir.path());
    REQUIRE(d.wait_ready());
    // An open idle connection must not hold the shutdown up.
    wire_peer idle(d.socket_path());
    REQUIRE(idle.connected());
    CHECK(d.stop(sig, 10s) == 0);
    CHECK_FALSE(std::filesystem::exists(dir / "var/run/weir.sock"));
    CHECK(idle.collect(2s).closed);
    CHECK(d.log().find("stopped") != std::string::npos);
  }
}

TEST_CASE("a stale socket from a dead daemon is replaced", "[live][socket]") {
  temp_dir dir;
  make_stale_socket(dir / "var/run/weir.sock");
  daemon_process d(dir.path());
  REQUIRE(d.wait_ready());
  CHECK(d.log().find("removed stale socket") != std::string::npos);
  CHECK(d.stop() == 0);
}

TEST_CASE("a file that is not a socket at the socket path is refused and kept", "[live][socket]") {
  temp_dir dir;
  std::filesystem::create_directories(dir / "var/run");
  std::ofstream(dir / "var/run/weir.sock") << "precious";
  daemon_process d(dir.path());
  CHECK(d.wait_exit() == 2);
  CHECK(error_lines_in(d.log()) == 1);
  CHECK(d.log().find("not a socket") != std::string::npos);
  std::ifstream kept(dir / "var/run/weir.sock");
  std::string content;
  kept >> content;
  CHECK(content == "precious");
}

TEST_CASE("a live daemon on the socket path or the data dir is not displaced", "[live][socket]") {
  temp_dir dir;
  daemon_process first(dir.path());
  REQUIRE(first.wait_ready());

  SECTION("same data dir") {
    daemon_process second(dir.path(), {"--set", "listen.unix=other.sock"});
    REQUIRE(second.wait_exit() == 2);
    CHECK(lines_in(second.log()) == 1);
    CHECK(second.log().find("in use by another weir-server (pid " + std::to_string(first.pid())) != std::string::npos);
  }
  SECTION("same socket, other data dir") {
    daemon_process second(dir.path(), {"--set", "data_dir=var2"});
    REQUIRE(second.wait_exit() == 2);
    CHECK(second.log().find("another daemon is already listening") != std::string::npos);
  }
  CHECK(answers_health(first.socket_path()));
  CHECK(first.stop() == 0);
}

TEST_CASE("a data dir that cannot be created exits 2 naming it", "[live][socket]") {
  temp_dir dir;
  std::ofstream(dir / "afile") << "x";
  daemon_process d(dir.path(), {"--set", "data_dir=afile/sub"});
  CHECK(d.wait_exit() == 2);
  CHECK(lines_in(d.log()) == 1);
  CHECK(d.log().find("data_dir = afile/sub") != std::string::npos);
}

TEST_CASE("a data dir holding another cluster node's records is refused naming both ids", "[live][socket]") {
  temp_dir dir;
  const std::vector<std::string> refusing_sink{"--set", "sink.type=http", "--set", "sink.http.url=http://127.0.0.1:1/"};
  std::filesystem::create_directories(dir / "var");
  std::ofstream(dir / "var" / "cluster_node_id") << "3\n";  // left by a cluster node 3
  {
    // Its WAB holds nothing: the id may change.
    daemon_process empty(dir.path(), refusing_sink);
    REQUIRE(empty.wait_ready());
    auto c = weir::client::connection::connect_unix(empty.socket_path());
    REQUIRE(c.push(as_bytes("undelivered"), weir::client::durability::durable).acked);
    CHECK(empty.stop() == 0);
  }
  CHECK_FALSE(std::filesystem::exists(dir / "var" / "cluster_node_id"));  // none outside a cluster
  std::ofstream(dir / "var" / "cluster_node_id") << "3\n";
  daemon_process d(dir.path(), refusing_sink);
  CHECK(d.wait_exit() == 2);
  INFO(d.log());
  CHECK(d.log().find("cluster.node_id = 0, but data_dir") != std::string::npos);
  CHECK(d.log().find("holds 1 undelivered records of node 3") != std::string::npos);
  CHECK(std::filesystem::exists(dir / "var" / "cluster_node_id"));  // kept for the node it belongs to
}

TEST_CASE("a socket path over the sun_path limit exits 2 naming it", "[live][socket]") {
  temp_dir dir;
  auto r = run_binary(binary("weir-server"), {"--set", "listen.unix=" + std::string(110, 'p') + ".sock"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("listen.unix") != std::string::npos);
  CHECK(r.err.find("must be under 108 bytes") != std::string::npos);
}

TEST_CASE("past listen.max_connections a new connection replaces the one idle longest", "[live][socket]") {
  temp_dir dir;
  daemon_process d(dir.path(), {"--set", "listen.max_connections=2"});
  REQUIRE(d.wait_ready());
  // The readiness probe's connection may still be closing: retry until served.
  auto served_peer = [&] {
    for (int i = 0; i < 100; ++i) {
      auto p = std::make_unique<wire_peer>(d.socket_path());
      if (p->send(health_frame()) && p->collect_frames(1).replies.size() == 1) return p;
      std::this_thread::sleep_for(20ms);
    }
    return std::unique_ptr<wire_peer>();
  };
  auto a = served_peer();
  std::this_thread::sleep_for(50ms);
  auto b = served_peer();
  REQUIRE(a);
  REQUIRE(b);

  // Full: the newcomer is served, and `a`, idle the longest, makes room.
  wire_peer c(d.socket_path());
  REQUIRE(c.send(health_frame()));
  CHECK(c.collect_frames(1).replies.size() == 1);
  CHECK(a->collect(3s).closed);
  REQUIRE(b->send(health_frame()));
  CHECK(b->collect_frames(1).replies.size() == 1);
  CHECK(d.stop() == 0);
}

TEST_CASE("a peer stalled mid-frame is closed silently after listen.read_timeout_ms", "[live][socket]") {
  temp_dir dir;
  daemon_process d(dir.path(), {"--set", "listen.read_timeout_ms=300"});
  REQUIRE(d.wait_ready());

  wire_peer idle_between_frames(d.socket_path());
  wire_peer stalled(d.socket_path());
  auto frame = health_frame();
  REQUIRE(stalled.send(std::vector<std::uint8_t>(frame.begin(), frame.begin() + 5)));
  auto out = stalled.collect(5s);
  CHECK(out.closed);
  CHECK(out.replies.empty());

  // Idle between frames is not a timeout: that connection still works.
  REQUIRE(idle_between_frames.send(health_frame()));
  CHECK(idle_between_frames.collect_frames(1).replies.size() == 1);
  CHECK(d.stop() == 0);
}

TEST_CASE("garbage on one connection never disturbs another", "[live][socket]") {
  temp_dir dir;
  daemon_process d(dir.path());
  REQUIRE(d.wait_ready());
  wire_peer good(d.socket_path());
  std::mt19937 rng(20261130);
  std::vector<std::unique_ptr<wire_peer>> noisy;
  for (int i = 0; i < 64; ++i) {
    noisy.push_back(std::make_unique<wire_peer>(d.socket_path()));
    std::vector<std::uint8_t> junk(1 + rng() % 4096);
    for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
    if (i % 2) std::copy_n("WEIR\x01", 5, junk.begin());  // some get past the magic
    noisy.back()->send(junk);
  }
  for (int i = 0; i < 5; ++i) {
    REQUIRE(good.send(health_frame()));
    auto r = good.collect_frames(1);
    REQUIRE(r.replies.size() == 1);
    CHECK(reply_type(r.replies[0]) == 0x05);
  }
  noisy.clear();
  CHECK(d.running());
  CHECK(d.stop() == 0);
}

TEST_CASE("listen.peer_uid_check refuses other users", "[live][socket]") {
  if (::geteuid() != 0) {
    WARN("SKIPPED: needs root to connect as another uid");
    return;
  }
  const passwd* nobody = ::getpwnam("nobody");
  REQUIRE(nobody != nullptr);
  for (bool check : {true, false}) {
    temp_dir dir;
    daemon_process d(dir.path(), {"--set", std::string("listen.peer_uid_check=") + (check ? "true" : "false")});
    REQUIRE(d.wait_ready());
    // Open the path to everyone so that only the uid check can refuse.
    ::chmod(dir.path().c_str(), 0755);
    ::chmod((dir / "var").c_str(), 0755);
    ::chmod((dir / "var/run").c_str(), 0755);
    ::chmod(d.socket_path().c_str(), 0666);
    const pid_t child = ::fork();
    if (child == 0) {
      if (::setgid(nobody->pw_gid) != 0 || ::setuid(nobody->pw_uid) != 0) _exit(3);
      _exit(answers_health(d.socket_path()) ? 0 : 1);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == (check ? 1 : 0));
    CHECK(d.stop() == 0);
  }
}

namespace {

/// Whether a process of `uid` (primary group `gid`, supplementary `groups`)
/// gets a HealthCheck answered on `socket`: forked, so the test keeps root.
bool answers_as(const std::string& socket, uid_t uid, gid_t gid, const std::vector<gid_t>& groups) {
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgroups(groups.size(), groups.data()) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) _exit(3);
    _exit(answers_health(socket) ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

TEST_CASE("listen.socket_group and listen.allowed_uids let an application user push", "[live][socket][access]") {
  REQUIRE(::geteuid() == 0);  // CI runs as root; another uid is needed to be someone else
  const passwd* nobody = ::getpwnam("nobody");
  REQUIRE(nobody != nullptr);
  const gid_t producers = 4242;  // a group only numbers name: no system change needed
  temp_dir dir;
  // The path to the socket must let other users through (operations.md).
  std::filesystem::create_directories(dir / "run");
  ::chmod(dir.path().c_str(), 0711);
  ::chmod((dir / "run").c_str(), 0711);
  const std::string socket = (dir / "run/weir.sock").string();
  {
    daemon_process d(dir.path(), {"--set", "listen.unix=" + socket, "--set", "listen.socket_mode=0660", "--set",
                                  "listen.socket_group=" + std::to_string(producers)});
    REQUIRE(eventually([&] { return answers_health(socket); }));  // not the default socket path
    struct stat st {};
    REQUIRE(::stat(socket.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0660);
    CHECK(st.st_gid == producers);
    // A member of the group (a supplementary group, as an application user has it) pushes.
    CHECK(answers_as(socket, nobody->pw_uid, nobody->pw_gid, {producers}));
    // Not a member: refused.
    CHECK_FALSE(answers_as(socket, nobody->pw_uid, nobody->pw_gid, {}));
    CHECK(d.stop() == 0);
  }
  {
    // Everyone may open the socket; only nobody is allowed in besides the daemon's user.
    daemon_process d(dir.path(), {"--set", "listen.unix=" + socket, "--set", "listen.socket_mode=0666", "--set",
                                  "listen.allowed_uids=[nobody]"});
    REQUIRE(eventually([&] { return answers_health(socket); }));  // not the default socket path
    CHECK((mode_of(socket) & 0777) == 0666);
    CHECK(answers_as(socket, nobody->pw_uid, nobody->pw_gid, {}));
    CHECK_FALSE(answers_as(socket, 4243, 4243, {}));
    CHECK(d.log().find("connection refused: the peer is not the daemon's user") != std::string::npos);
    CHECK(d.log().find("peer_uid=4243") != std::string::npos);
    CHECK(d.stop() == 0);
  }
  {
    // A group allowed by listen.allowed_gids is let in through its primary group too.
    daemon_process d(dir.path(), {"--set", "listen.unix=" + socket, "--set", "listen.socket_mode=0666", "--set",
                                  "listen.allowed_gids=[4244]"});
    REQUIRE(eventually([&] { return answers_health(socket); }));  // not the default socket path
    CHECK(answers_as(socket, 4245, 4244, {}));
    CHECK_FALSE(answers_as(socket, 4245, 4246, {}));
    CHECK(d.stop() == 0);
  }
}

TEST_CASE("listen.socket_group the daemon's user is not in is refused with the fix named", "[live][socket][access]") {
  REQUIRE(::geteuid() == 0);  // to start the daemon as nobody
  const passwd* nobody = ::getpwnam("nobody");
  REQUIRE(nobody != nullptr);
  temp_dir dir;
  REQUIRE(::chown(dir.path().c_str(), nobody->pw_uid, nobody->pw_gid) == 0);
  const auto r = run_binary("/usr/bin/setpriv",
                            {"--reuid=nobody", "--regid=" + std::to_string(nobody->pw_gid), "--clear-groups",
                             binary("weir-server").string(), "--set", "admin.listen=", "--set",
                             "data_dir=" + (dir / "var").string(), "--set", "listen.unix=" + (dir / "weir.sock").string(),
                             "--set", "listen.socket_mode=0660", "--set", "listen.socket_group=4242"},
                            dir.path());
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cannot give the socket file to listen.socket_group 4242 (chown: Operation not permitted); the "
                   "daemon's user nobody must be a member of that group: usermod -aG 4242 nobody") != std::string::npos);
}

TEST_CASE("a flood of refused peers or of timed-out frames is a log line per burst", "[live][socket][hostile]") {
  REQUIRE(::geteuid() == 0);  // another uid is needed to be refused
  temp_dir dir;
  std::filesystem::create_directories(dir / "run");
  ::chmod(dir.path().c_str(), 0711);
  ::chmod((dir / "run").c_str(), 0711);
  const std::string socket = (dir / "run/weir.sock").string();
  const auto admin = free_tcp_port();
  daemon_process d(dir.path(), {"--set", "listen.unix=" + socket, "--set", "listen.socket_mode=0666", "--set",
                                "listen.read_timeout_ms=300", "--set", "admin.listen=127.0.0.1:" + std::to_string(admin),
                                "--set", "log.level=debug"});
  REQUIRE(eventually([&] { return answers_health(socket); }));
  // Another user connects 2,000 times as fast as it can.
  constexpr int refused = 2000;
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(4243) != 0 || ::setuid(4243) != 0) _exit(3);
    int made = 0;
    for (int i = 0; i < refused; ++i) {
      const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_un a{};
      a.sun_family = AF_UNIX;
      std::strncpy(a.sun_path, socket.c_str(), sizeof(a.sun_path) - 1);
      if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) ++made;
      if (fd >= 0) ::close(fd);
    }
    _exit(made == refused ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  // And 200 connections (of the 256 served at once) each send three bytes of a frame and nothing more.
  std::vector<raw_peer> loris;
  const auto frame = health_frame();
  for (int i = 0; i < 200; ++i) {
    loris.emplace_back(socket);
    REQUIRE(loris.back().send_some(frame.data(), 3) == 3);
  }
  const auto series = [&](const std::string& name) {
    const auto body = http_request(admin, "/metrics").body;
    const auto at = body.find("\n" + name + " ");  // the sample, not its # HELP line
    return at == std::string::npos ? -1.0 : std::stod(body.substr(at + name.size() + 2));
  };
  REQUIRE(eventually([&] { return series("weir_connections_rejected_total{reason=\"peer_uid\"}") == refused; }));
  REQUIRE(eventually([&] { return series("weir_connection_idle_timeout_total") >= 200; }));
  const auto log = d.log();
  const auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (auto at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
    return n;
  };
  // The first of each at once, then at most a line every 10 s with a count.
  CHECK(count("connection refused: the peer is not the daemon's user") >= 1);
  CHECK(count("connection refused: the peer is not the daemon's user") <= 2);
  CHECK(count("refused_since_last_line=") >= 1);
  CHECK(count("connection closed: a frame did not arrive whole within listen.read_timeout_ms") >= 1);
  CHECK(count("connection closed: a frame did not arrive whole within listen.read_timeout_ms") <= 2);
  // At debug level, the 200 accepted connections too.
  CHECK(count("connection accepted") >= 1);
  CHECK(count("connection accepted") <= 2);
  loris.clear();
  CHECK(d.stop() == 0);
}

TEST_CASE("a socket group or allowed user that does not exist is refused at start and by --check-config",
          "[cli][socket][access]") {
  temp_dir dir;
  for (const std::string& bad : {std::string("listen.socket_group=no-such-group-weir"),
                                 std::string("listen.allowed_uids=[no-such-user-weir]")}) {
    INFO(bad);
    const auto check = run_binary(binary("weir-server"), {"--set", bad, "--check-config"}, dir.path());
    CHECK(check.exit_code == 2);
    CHECK(check.err.find(bad.substr(0, bad.find('='))) != std::string::npos);
    CHECK(check.err.find("no such") != std::string::npos);
  }
}

TEST_CASE("the daemon repairs the WAB before it accepts connections", "[live][recovery]") {
  temp_dir dir;
  const auto shard = dir / "var/wab/shard_00";
  std::filesystem::create_directories(shard);
  // A version-1 segment (an upgrade in place) ending in a torn write.
  weir::byte_buffer image = weir::test::v1_segment_header(0, 3, 1);
  const std::string kept = "acked before the crash";
  weir::wab::append_record(image, 0, 1, weir::byte_span(reinterpret_cast<const std::uint8_t*>(kept.data()), kept.size()));
  const auto valid_size = image.size();
  image.insert(image.end(), {9, 0, 0, 0, 1, 2});  // a torn final write
  std::ofstream(shard / "seg_00000003.wab", std::ios::binary)
      .write(reinterpret_cast<const char*>(image.data()), static_cast<std::streamsize>(image.size()));

  // A sink that is down: delivery would otherwise confirm and delete the repaired segment.
  daemon_process d(dir.path(), {"--set", "sink.type=http", "--set", "sink.http.url=http://127.0.0.1:1/"});
  REQUIRE(d.wait_ready());
  CHECK(std::filesystem::file_size(shard / "seg_00000003.wab") == valid_size);
  CHECK(d.log().find("WAB recovered shards=2 segments=1 records=1 bytes=" + std::to_string(valid_size) +
                     " truncated_segments=1") != std::string::npos);
  // The shard continues after the highest sequence it found, never reusing
  // one. (Segment 4 may already be sealed empty and gone: the writer moves
  // onto a spare, segment 5, as soon as one is ready.)
  // (A listing taken while 4 is deleted and the spare becomes 5 may see
  // neither, hence the retry.)
  std::uint64_t lowest_new = 0;
  CHECK(eventually([&] {
    lowest_new = 0;
    for (const auto& e : std::filesystem::directory_iterator(shard))
      if (auto seq = weir::wab::parse_segment_file_name(e.path().filename().string()); seq && *seq != 3)
        lowest_new = lowest_new == 0 ? *seq : std::min(lowest_new, *seq);
    return lowest_new != 0;
  }));
  CHECK((lowest_new == 4 || lowest_new == 5));
  CHECK(mode_of(dir / "var/wab/shard_01") == 0700);
  CHECK(mode_of(dir / "var/quarantine") == 0700);
  CHECK(d.stop() == 0);
}

TEST_CASE("existing directories keep their mode and missing ones are made 0700", "[live][socket]") {
  temp_dir dir;
  // A shared socket directory like /tmp (1777) and a data_dir that already
  // holds other things (0755): neither is the daemon's to change.
  std::filesystem::create_directories(dir / "shared");
  std::filesystem::create_directories(dir / "data");
  REQUIRE(::chmod((dir / "shared").c_str(), 01777) == 0);
  REQUIRE(::chmod((dir / "data").c_str(), 0755) == 0);
  std::ofstream(dir / "data/other-file") << "not weir's";
  daemon_process d(dir.path(), {"--set", "listen.unix=shared/weir.sock", "--set", "data_dir=data"});
  REQUIRE(eventually([&] { return d.log().find("weir-server ready") != std::string::npos; }));
  CHECK(mode_of(dir / "shared") == 01777);
  CHECK(mode_of(dir / "data") == 0755);
  CHECK(mode_of(dir / "data/wab") == 0700);
  CHECK(mode_of(dir / "data/wab/shard_00") == 0700);
  CHECK(std::filesystem::exists(dir / "data/other-file"));
  CHECK(d.log().find("writable by other users") == std::string::npos);  // 1777 has the sticky bit
  CHECK(d.stop() == 0);
}

TEST_CASE("a world-writable directory without the sticky bit is warned about and left alone", "[live][socket]") {
  temp_dir dir;
  std::filesystem::create_directories(dir / "open");
  REQUIRE(::chmod((dir / "open").c_str(), 0777) == 0);
  daemon_process d(dir.path(), {"--set", "listen.unix=open/weir.sock"});
  REQUIRE(eventually([&] { return d.log().find("weir-server ready") != std::string::npos; }));
  CHECK(mode_of(dir / "open") == 0777);
  CHECK(d.log().find("writable by other users and has no sticky bit") != std::string::npos);
  CHECK(d.stop() == 0);
}
