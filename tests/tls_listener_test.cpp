// listen.tcp with mutual TLS, against the real daemon, with certificates
// made at test time by the openssl tool: a client whose certificate
// client_ca signed is served by the same pipeline as the Unix socket; no
// certificate, another CA's, an expired one, plaintext and a silent peer are
// refused and counted by reason, and so is a client that offers nothing
// newer than TLS 1.1; SIGHUP takes a new CA, and a new certificate and key,
// without dropping the connections already served; listen.max_connections
// covers both listeners.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "wire/frame.hpp"
#include "support/daemon_process.hpp"
#include "support/http_get.hpp"
#include "support/hung_file_system.hpp"
#include "support/raw_peer.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "support/test_pki.hpp"
#include "support/tls_probe.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// A CA for the daemon, one for its clients, and the daemon's certificate
/// for 127.0.0.1 and localhost.
struct tls_fixture {
  temp_dir dir;
  test_pki pki{dir / "pki"};
  std::uint16_t tcp_port = free_tcp_port();
  std::uint16_t admin_port = free_tcp_port();
  std::string client_ca_path = (dir / "pki" / "client-ca-in-use.pem").string();

  tls_fixture() {
    pki.make_ca("server-ca");
    pki.make_cert("server", "server-ca", {"DNS:localhost", "IP:127.0.0.1"});
    pki.make_ca("client-ca");
    pki.make_cert("client", "client-ca");
    std::filesystem::copy_file(pki.pem("client-ca"), client_ca_path);
  }

  std::vector<std::string> daemon_args(std::vector<std::string> more = {}) const {
    std::vector<std::string> args{"--set", "listen.tcp=127.0.0.1:" + std::to_string(tcp_port),
                                  "--set", "listen.tls.cert=" + pki.pem("server"),
                                  "--set", "listen.tls.key=" + pki.key("server"),
                                  "--set", "listen.tls.client_ca=" + client_ca_path,
                                  "--set", "admin.listen=127.0.0.1:" + std::to_string(admin_port)};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  client::tls_options as(const std::string& client) const {
    return {pki.pem("server-ca"), client.empty() ? "" : pki.pem(client), client.empty() ? "" : pki.key(client), ""};
  }

  client::connection connect(const std::string& client) const {
    auto c = client::connection::connect_tcp("127.0.0.1", tcp_port, as(client), 5s);
    c.set_timeout(10s);
    return c;
  }

  /// Whether the daemon served `client`: a HealthCheck answered. A refused
  /// certificate fails the handshake or (TLS 1.3) the first exchange.
  bool served(const std::string& client) const {
    try {
      auto c = connect(client);
      c.health_check();
      return true;
    } catch (const client::client_error&) {
      return false;
    }
  }

  std::string metrics() const { return http_request(admin_port, "/metrics").body; }

  /// The value of a sample line ("name{labels} value"), or -1 when absent.
  double sample(const std::string& line_start) const {
    const auto m = metrics();
    const auto at = m.find("\n" + line_start + " ");
    return at == std::string::npos ? -1 : std::stod(m.substr(at + line_start.size() + 2));
  }
  double failures(const char* reason) const {
    return sample(std::string("weir_tls_handshake_failures_total{reason=\"") + reason + "\"}");
  }

  /// A handshake by `client` offering at most `max_version` (0: any), the
  /// daemon's certificate checked against server-ca.
  tls_probe_result probe(const std::string& client, int max_version = 0) const {
    return probe_tls(tcp_port, {pki.pem("server-ca"), pki.pem(client), pki.key(client), max_version, ""});
  }
};

/// Replaces `to` with a copy of `from` by a rename, as an operator rotating
/// a file should, so that the daemon never reads half of one.
void replace_by_rename(const std::string& from, const std::string& to) {
  const std::string staged = to + ".new";
  std::filesystem::copy_file(from, staged, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::rename(staged, to);
}

/// A plain TCP connection to the TLS port (-1 when refused), its reads bounded.
int raw_tcp(std::uint16_t port) {
  const int fd = tcp_connect(port);
  timeval limit{10, 0};
  if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  return fd;
}

/// Reads until the daemon closes; the bytes it sent before that.
std::string read_until_closed(int fd) {
  std::string got;
  char buf[512];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

}  // namespace

TEST_CASE("listen.tcp: a client whose certificate client_ca signed pushes over mutual TLS like a Unix-socket producer",
          "[live][tls]") {
  tls_fixture f;
  daemon_process d(f.dir.path(), f.daemon_args({"--set", "drain.linger_ms=0"}));
  REQUIRE(d.wait_ready());
  CHECK(d.log().find(" tcp=127.0.0.1:" + std::to_string(f.tcp_port) + " ") != std::string::npos);

  auto c = f.connect("client");
  c.health_check();
  CHECK(c.push(as_bytes("over-tls"), client::durability::durable).acked);
  const auto tracked = c.push_tracked(as_bytes("tracked-over-tls"), client::durability::durable);
  CHECK(tracked.acked);
  CHECK(tracked.record_id_hex.size() == 64);
  const auto batch = c.push_batch(spans_of({"b1", "b2", "b3"}), client::durability::buffered);
  CHECK(batch.all_accepted());
  CHECK(batch.accepted.size() == 3);

  // Thousands of frames in flight through TLS: every one acked, in order.
  client::pipelined_producer p(c, 1024);
  std::size_t acked = 0, completions = 0;
  for (int i = 0; i < 5000; ++i)
    p.push(as_bytes("pipelined-" + std::to_string(i)), client::durability::durable,
           [&](const client::push_result& r) {
             ++completions;
             acked += r.acked;
           });
  p.flush();
  CHECK(completions == 5000);
  CHECK(acked == 5000);
  CHECK(p.peak_in_flight() > 100);

  // "localhost" is in the daemon's certificate too: name verification passes.
  auto by_name = client::connection::connect_tcp("localhost", f.tcp_port, f.as("client"), 5s);
  by_name.health_check();

  CHECK(f.sample("weir_tls_handshakes_total") >= 2);
  CHECK(f.failures("bad_cert") == 0);
  CHECK(f.sample("weir_tls_certificate_expiry_timestamp_seconds{file=\"cert\"}") > 0);
  std::string lint;
  CHECK(run_with_input("promtool check metrics", f.metrics(), lint) == 0);
  INFO(lint);
  CHECK(d.stop() == 0);
}

TEST_CASE("listen.tcp refuses a missing or foreign or expired certificate and plaintext and a silent peer and counts each by reason",
          "[live][tls]") {
  tls_fixture f;
  f.pki.make_ca("stranger-ca");
  f.pki.make_cert("stranger", "stranger-ca");
  f.pki.make_expired_cert("expired", "client-ca");
  daemon_process d(f.dir.path(), f.daemon_args({"--set", "listen.tls.handshake_timeout_ms=500"}));
  REQUIRE(d.wait_ready());

  // With TLS 1.3 the refusal comes after the client's side of the handshake.
  try {
    auto c = f.connect("");
    c.health_check();
    FAIL("served without a certificate");
  } catch (const client::client_error& e) {
    INFO(e.what());
    CHECK(e.kind() == client::error_kind::tls);
    CHECK_FALSE(e.retryable());  // a refusal, not a lost connection
    CHECK(std::string(e.what()).find("certificate required") != std::string::npos);
  }
  REQUIRE(eventually([&] { return f.failures("no_client_cert") == 1; }));
  CHECK_FALSE(f.served("stranger"));
  REQUIRE(eventually([&] { return f.failures("bad_cert") == 1; }));
  CHECK_FALSE(f.served("expired"));
  REQUIRE(eventually([&] { return f.failures("expired_cert") == 1; }));

  // A v1 HealthCheck in plaintext gets no answer, only a closed connection.
  const int plain = raw_tcp(f.tcp_port);
  REQUIRE(plain >= 0);
  const auto frame = wire::encode_frame(wire::message_type::health_check, wire::durability::durable, {});
  REQUIRE(::send(plain, frame.data(), frame.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(frame.size()));
  const std::string answer = read_until_closed(plain);
  ::close(plain);
  CHECK(answer.find("WEIR") == std::string::npos);
  REQUIRE(eventually([&] { return f.failures("protocol") == 1; }));

  // A peer that connects and says nothing is closed at the handshake timeout.
  const int silent = raw_tcp(f.tcp_port);
  REQUIRE(silent >= 0);
  CHECK(read_until_closed(silent).empty());
  ::close(silent);
  REQUIRE(eventually([&] { return f.failures("timeout") == 1; }));

  // Each refusal was logged with the peer's address and its reason (the
  // log keeps one line a second; the ones in between are counted into it).
  CHECK(d.log().find("TLS handshake failed; connection closed port=listen.tcp peer=127.0.0.1:") != std::string::npos);
  CHECK(d.log().find("reason=no_client_cert") != std::string::npos);
  CHECK(d.log().find("failures_since_last_log=1 by_reason=\"no_client_cert=1\"") != std::string::npos);
  CHECK(f.sample("weir_tls_handshakes_total") == 0);

  // The refusals took no producer slot: a real client is still served.
  CHECK(f.served("client"));
  // weir-ctl says a refused certificate is "not served" (2), as for a daemon that is not there.
  const auto ctl = run_binary(binary("weir-ctl"),
                              {"--tcp", "127.0.0.1:" + std::to_string(f.tcp_port), "--ca", f.pki.pem("server-ca"),
                               "--cert", f.pki.pem("stranger"), "--key", f.pki.key("stranger"), "health"},
                              f.dir.path());
  CHECK(ctl.exit_code == 2);
  CHECK(ctl.err.find("refused this client") != std::string::npos);
  CHECK(d.stop() == 0);
}

TEST_CASE("the client refuses a daemon whose certificate another CA signed or that names another host",
          "[live][tls]") {
  tls_fixture f;
  daemon_process d(f.dir.path(), f.daemon_args());
  REQUIRE(d.wait_ready());
  auto opts = f.as("client");
  opts.server_name = "other.example";
  try {
    client::connection::connect_tcp("127.0.0.1", f.tcp_port, opts, 5s);
    FAIL("a certificate for another host was accepted");
  } catch (const client::client_error& e) {
    CHECK(e.kind() == client::error_kind::tls);
    CHECK(std::string(e.what()).find("not trusted") != std::string::npos);
  }
  opts = f.as("client");
  opts.ca_file = f.pki.pem("client-ca");  // not the CA that signed the daemon's certificate
  try {
    client::connection::connect_tcp("127.0.0.1", f.tcp_port, opts, 5s);
    FAIL("a daemon certificate from an untrusted CA was accepted");
  } catch (const client::client_error& e) {
    CHECK(e.kind() == client::error_kind::tls);
  }
  // The daemon saw both clients end the handshake.
  REQUIRE(eventually([&] { return f.failures("aborted") == 2; }));
  try {
    client::connection::connect_tcp("127.0.0.1", free_tcp_port(), f.as("client"), 5s);
    FAIL("connected to a port nobody listens on");
  } catch (const client::client_error& e) {
    CHECK(e.kind() == client::error_kind::unreachable);
    CHECK_FALSE(e.retryable());
  }
  CHECK(d.stop() == 0);
}

TEST_CASE("weir-ctl and the client refuse a TLS file that is a FIFO or on a dead file system without blocking",
          "[live][tls][files]") {
  tls_fixture f;
  daemon_process d(f.dir.path(), f.daemon_args());
  REQUIRE(d.wait_ready());
  hung_file_system hung(f.dir / "nfs");
  INFO(hung.error());
  REQUIRE(hung.mounted());
  REQUIRE(::mkfifo((f.dir / "ca.fifo").c_str(), 0600) == 0);
  const std::string port = "127.0.0.1:" + std::to_string(f.tcp_port);
  auto ctl_with_ca = [&](const std::string& ca) {
    return run_binary(binary("weir-ctl"), {"--tcp", port, "--ca", ca, "--cert", f.pki.pem("client"), "--key",
                                           f.pki.key("client"), "health"},
                      f.dir.path());
  };
  const auto fifo = ctl_with_ca("ca.fifo");
  CHECK(fifo.exit_code == 2);
  CHECK(fifo.err.find("cannot load the CA file 'ca.fifo': not a regular file (a FIFO)") != std::string::npos);
  const auto dead = ctl_with_ca(hung.path("ca.pem").string());
  CHECK(dead.exit_code == 2);
  CHECK(dead.err.find("did not answer within 5 s") != std::string::npos);
  auto opts = f.as("client");
  opts.key_file = (f.dir / "ca.fifo").string();
  try {
    client::connection::connect_tcp("127.0.0.1", f.tcp_port, opts, 5s);
    FAIL("a FIFO was taken as a key");
  } catch (const client::client_error& e) {
    CHECK(e.kind() == client::error_kind::tls);
    CHECK(std::string(e.what()).find("cannot load the client key") != std::string::npos);
  }
  // The right files still work.
  CHECK(ctl_with_ca(f.pki.pem("server-ca")).exit_code == 0);
  CHECK(d.stop() == 0);
}

TEST_CASE("SIGHUP reloads listen.tls.client_ca without dropping established TLS connections and a bad file changes nothing",
          "[live][tls][signals]") {
  tls_fixture f;
  f.pki.make_ca("next-ca");
  f.pki.make_cert("next-client", "next-ca");
  daemon_process d(f.dir.path(), f.daemon_args());
  REQUIRE(d.wait_ready());
  auto established = f.connect("client");
  REQUIRE(established.push(as_bytes("before"), client::durability::durable).acked);
  CHECK_FALSE(f.served("next-client"));

  // The CA rotated in place, then SIGHUP.
  std::filesystem::copy_file(f.pki.pem("next-ca"), f.client_ca_path, std::filesystem::copy_options::overwrite_existing);
  REQUIRE(::kill(d.pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return f.sample("weir_tls_config_reloads_total{outcome=\"ok\"}") == 1; }));
  // The reload's log line comes after the count.
  CHECK(eventually([&] { return d.log().find("tls=reloaded") != std::string::npos; }));
  CHECK(f.served("next-client"));
  CHECK_FALSE(f.served("client"));  // new connections need the new CA
  CHECK(established.push(as_bytes("after"), client::durability::durable).acked);  // the old one stays

  // A CA file that is not PEM: the reload fails and the CA in use stays.
  std::ofstream(f.client_ca_path, std::ios::trunc) << "not a certificate\n";
  REQUIRE(::kill(d.pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return f.sample("weir_tls_config_reloads_total{outcome=\"failed\"}") == 1; }));
  CHECK(eventually([&] { return d.log().find("the previous certificate, key and CA stay in use") != std::string::npos; }));
  CHECK(d.log().find("listen.tls.client_ca = " + f.client_ca_path) != std::string::npos);
  CHECK(f.served("next-client"));
  CHECK(d.stop() == 0);
}

TEST_CASE("listen.tcp refuses a client that offers only TLS 1.1 or 1.0 and counts it as a protocol failure",
          "[live][tls]") {
  tls_fixture f;
  daemon_process d(f.dir.path(), f.daemon_args());
  REQUIRE(d.wait_ready());
  // A valid client certificate: the version is all that is wrong.
  const auto tls11 = f.probe("client", TLS1_1_VERSION);
  CHECK_FALSE(tls11.handshake_ok);
  INFO(tls11.error);
  CHECK(tls11.error.find("protocol version") != std::string::npos);  // the daemon's alert
  REQUIRE(eventually([&] { return f.failures("protocol") == 1; }));
  CHECK_FALSE(f.probe("client", TLS1_VERSION).handshake_ok);
  REQUIRE(eventually([&] { return f.failures("protocol") == 2; }));
  // The same client allowed TLS 1.2 is served with it.
  const auto tls12 = f.probe("client", TLS1_2_VERSION);
  CHECK(tls12.handshake_ok);
  CHECK(tls12.version == "TLSv1.2");
  CHECK(eventually([&] { return f.sample("weir_tls_handshakes_total") == 1; }));
  CHECK(f.failures("protocol") == 2);
  CHECK(d.stop() == 0);
}

TEST_CASE("SIGHUP rotates the daemon's certificate and key for new connections while an established one keeps working",
          "[live][tls][signals]") {
  tls_fixture f;
  f.pki.make_cert("server-next", "server-ca", {"DNS:localhost", "IP:127.0.0.1"});  // a new key too
  daemon_process d(f.dir.path(), f.daemon_args());
  REQUIRE(d.wait_ready());
  const auto before = f.probe("client");
  REQUIRE(before.handshake_ok);
  CHECK(before.server_subject == "/CN=server");
  auto established = f.connect("client");
  REQUIRE(established.push(as_bytes("before"), client::durability::durable).acked);

  // The key first, then the certificate (docs/tls.md), then SIGHUP.
  replace_by_rename(f.pki.key("server-next"), f.pki.key("server"));
  replace_by_rename(f.pki.pem("server-next"), f.pki.pem("server"));
  REQUIRE(::kill(d.pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return f.sample("weir_tls_config_reloads_total{outcome=\"ok\"}") == 1; }));

  const auto after = f.probe("client");
  REQUIRE(after.handshake_ok);
  CHECK(after.server_subject == "/CN=server-next");
  CHECK(after.server_serial != before.server_serial);
  CHECK(f.served("client"));  // libweir-client trusts it and finds its name in it
  // The connection made before the reload still runs on the old certificate's session.
  CHECK(established.push(as_bytes("after"), client::durability::durable).acked);
  established.health_check();
  CHECK(d.stop() == 0);
}

TEST_CASE("listen.max_connections covers the Unix socket and TCP together", "[live][tls][socket]") {
  tls_fixture f;
  daemon_process d(f.dir.path(), f.daemon_args({"--set", "listen.max_connections=2"}));
  REQUIRE(d.wait_ready());
  REQUIRE(eventually([&] { return f.sample("weir_connections_active") == 0; }));  // the readiness probe is gone
  auto first = f.connect("client");
  first.health_check();
  auto second = f.connect("client");
  second.health_check();
  REQUIRE(f.sample("weir_connections_active") == 2);
  // Both slots are idle TLS connections: a Unix-socket producer takes the
  // place of the one idle longest instead of being turned away.
  auto local = client::connection::connect_unix(d.socket_path());
  local.set_timeout(10s);
  local.health_check();
  CHECK(first.closed_by_peer(5s));
  CHECK(f.sample("weir_connections_evicted_total") == 1);
  CHECK(f.sample("weir_connections_active") == 2);
  second.health_check();
  CHECK(d.stop() == 0);
}

TEST_CASE("listen.tcp with TLS files that do not load exits 2 naming the key", "[live][tls]") {
  tls_fixture f;
  f.pki.make_cert("other", "server-ca");
  // A key that is not the certificate's.
  auto args = f.daemon_args({"--set", "listen.tls.key=" + f.pki.key("other")});
  auto r = run_binary(binary("weir-server"), args, f.dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("listen.tls.key = " + f.pki.key("other") + ": does not match the certificate") !=
        std::string::npos);
  args = f.daemon_args({"--set", "listen.tls.client_ca=" + (f.dir / "absent.pem").string()});
  r = run_binary(binary("weir-server"), {args.begin(), args.end()}, f.dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("listen.tls.client_ca = " + (f.dir / "absent.pem").string() + ": cannot read it") !=
        std::string::npos);
  args.push_back("--check-config");
  CHECK(run_binary(binary("weir-server"), args, f.dir.path()).exit_code == 2);
}

TEST_CASE("peers that connect and stall in the TLS handshake cannot keep a producer out", "[live][tls][hostile]") {
  tls_fixture f;
  // listen.max_connections 16: at most 16 handshakes in progress.
  daemon_process d(f.dir.path(), f.daemon_args({"--set", "listen.max_connections=16"}));
  REQUIRE(d.wait_ready());
  std::vector<int> stalled;
  for (int i = 0; i < 20; ++i) {
    stalled.push_back(raw_tcp(f.tcp_port));
    REQUIRE(stalled.back() >= 0);
  }
  // The oldest four made room for the newest, unfinished.
  REQUIRE(eventually([&] { return f.failures("crowded") == 4; }));
  CHECK(f.served("client"));
  CHECK(f.failures("crowded") == 5);
  CHECK(f.sample("weir_connections_rejected_total{reason=\"over_limit\"}") == 0);
  for (int fd : stalled) ::close(fd);
  CHECK(d.stop() == 0);
}

TEST_CASE("a SIGHUP whose new TLS key cannot be loaded names the key as not applied", "[live][tls][signals]") {
  tls_fixture f;
  const auto config_with_key = [&](const std::string& key) {
    return "listen:\n  tcp: 127.0.0.1:" + std::to_string(f.tcp_port) + "\n  tls:\n    cert: " + f.pki.pem("server") +
           "\n    key: " + key + "\n    client_ca: " + f.client_ca_path + "\nadmin:\n  listen: 127.0.0.1:" +
           std::to_string(f.admin_port) + "\n";
  };
  std::ofstream(f.dir / "weir.yaml") << config_with_key(f.pki.key("server"));
  daemon_process d(f.dir.path(), {"--config", "weir.yaml"});
  REQUIRE(d.wait_ready());
  std::ofstream(f.dir / "not-a-key.pem") << "not a key\n";
  std::ofstream(f.dir / "weir.yaml", std::ios::trunc) << config_with_key((f.dir / "not-a-key.pem").string());
  REQUIRE(::kill(d.pid(), SIGHUP) == 0);
  REQUIRE(eventually([&] { return d.log().find("configuration reloaded") != std::string::npos; }));
  CHECK(d.log().find(" applied=none") != std::string::npos);
  CHECK(d.log().find(" not_applied=listen.tls.key") != std::string::npos);
  CHECK(d.log().find("tls=failed") != std::string::npos);
  CHECK(f.served("client"));  // on the key in use
  CHECK(d.stop() == 0);
}
