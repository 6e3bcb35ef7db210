// A disk that really fills: the data_dir is a small tmpfs. Pushes are
// refused, never falsely acked; the daemon stays up, healthy but not ready;
// once the sink is back, delivering frees the space with no byte free — also
// across a restart on the full disk — and readiness returns by itself, with
// no producer needed to notice. Every acked record is delivered.
#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "support/daemon_process.hpp"
#include "support/http_get.hpp"
#include "support/http_test_server.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "support/tmpfs_mount.hpp"
#include "config/schema.hpp"
#include "sinks/sink_types.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t disk_bytes = 4 * 1024 * 1024;

/// Whether the test can go on; where mounting is not permitted it is skipped
/// with the reason, except in CI, where the suite runs as root and must check.
bool have_disk(const tmpfs_mount& disk) {
  if (disk.mounted()) return true;
  if (std::getenv("CI")) FAIL("cannot mount a tmpfs for the disk-full test: " << disk.error());
  WARN("SKIPPED: mounting a tmpfs is not permitted here (" << disk.error() << "); the disk-full test needs root");
  return false;
}

/// `min_free` 0: segments are started as long as one fits, so writes run
/// into the full disk for real.
std::vector<std::string> daemon_args(const http_test_server& sink, std::uint16_t admin,
                                     const std::string& min_free = "0") {
  return {"--set", "wab.min_free_bytes=" + min_free, "--set", "sink.type=http", "--set", "sink.http.url=" + sink.url(), "--set", "sink.http.format=raw",
          "--set", "wab.segment_retry_ms=50", "--set", "sink.retry.initial_ms=50", "--set", "sink.retry.max_ms=200", "--set", "sink.timeout_ms=500",
          "--set", "ingest.shards=1", "--set", "wab.segment_max_bytes=64KiB",
          "--set", "admin.listen=127.0.0.1:" + std::to_string(admin)};
}

std::set<std::string> delivered(const http_test_server& s) {
  std::set<std::string> out;
  for (const auto& r : s.accepted()) out.insert(r.body);
  return out;
}

int readyz(std::uint16_t admin) { return http_request(admin, "/readyz").status; }

/// Below a page free, not even a new segment's header fits.
constexpr std::uint64_t page_bytes = 4096;

/// Pushes distinct 8 KiB Durable records until the daemon refuses a run of
/// them with less than a page free; returns the payloads it acked. A run of
/// refusals alone is not a full disk: a spare the preparer was writing when
/// the writer's last create failed gives its space back as it fails, and
/// the writer's retry (wab.segment_retry_ms) takes it again.
std::vector<std::string> push_until_full(const std::string& socket, const tmpfs_mount& disk, const std::string& tag) {
  auto c = client::connection::connect_unix(socket);
  std::vector<std::string> acked;
  int refused_in_a_row = 0;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  for (int i = 0; std::chrono::steady_clock::now() < deadline; ++i) {
    if (refused_in_a_row >= 20 && disk.free_bytes() < page_bytes) break;
    std::string payload = tag + " " + std::to_string(i) + " " + std::string(8 * 1024, 'f');
    const auto r = c.push(as_bytes(payload), client::durability::durable);
    if (r.acked) {
      acked.push_back(std::move(payload));
      refused_in_a_row = 0;
    } else {
      CHECK(r.retryable());  // the disk is full: Nack(InternalError), try again later
      ++refused_in_a_row;
      if (refused_in_a_row >= 20) std::this_thread::sleep_for(10ms);  // room is back: the retry will take it
    }
  }
  return acked;
}

}  // namespace

TEST_CASE("a full disk refuses pushes and recovers without a human once the sink drains it",
          "[live][disk-full]") {
  temp_dir dir;
  tmpfs_mount disk(dir / "var", disk_bytes);
  if (!have_disk(disk)) return;
  http_test_server sink;
  sink.stop();  // nothing drains: the WAB fills the disk
  const auto admin = free_tcp_port();
  std::vector<std::string> acked;
  {
    daemon_process d(dir.path(), daemon_args(sink, admin));
    REQUIRE(d.wait_ready());
    acked = push_until_full(d.socket_path(), disk, "before-restart");
    REQUIRE(acked.size() > 10);
    REQUIRE(disk.free_bytes() < page_bytes);
    CHECK(d.running());
    CHECK(http_request(admin, "/healthz").status == 200);
    CHECK(readyz(admin) == 503);
    // A restart on the full disk: recovery, the cursor and the shutdown all
    // work with no byte free.
    CHECK(d.stop() == 0);
  }
  // A spare left from before goes on taking records (its blocks are written
  // already); without one, and with not a page free, the restarted shard
  // cannot start a segment.
  bool spare_left = false;
  for (const auto& e : std::filesystem::directory_iterator(dir / "var/wab/shard_00"))
    spare_left = spare_left || e.path().filename().string().rfind("spare_", 0) == 0;
  daemon_process d(dir.path(), daemon_args(sink, admin));
  REQUIRE(d.wait_ready());
  INFO("free bytes after the restart: " << disk.free_bytes() << "\n" << d.log());
  if (!spare_left) CHECK(readyz(admin) == 503);
  sink.start();
  // Delivery confirms, deletes segments and frees space; the shard comes
  // back and readiness with it, while no producer pushes.
  REQUIRE(eventually([&] { return readyz(admin) == 200; }, 30s));
  REQUIRE(eventually([&] {
    const auto got = delivered(sink);
    return std::all_of(acked.begin(), acked.end(), [&](const std::string& p) { return got.count(p) == 1; });
  }, 30s));
  auto c = client::connection::connect_unix(d.socket_path());
  const bool acked_after = c.push(as_bytes("after the disk was full"), client::durability::durable).acked;
  INFO(d.log());
  REQUIRE(acked_after);
  REQUIRE(eventually([&] { return delivered(sink).count("after the disk was full") == 1; }));
  CHECK(d.stop() == 0);
}

TEST_CASE("space freed by someone else brings the shard back with no push", "[live][disk-full]") {
  temp_dir dir;
  tmpfs_mount disk(dir / "var", disk_bytes);
  if (!have_disk(disk)) return;
  http_test_server sink;
  const auto admin = free_tcp_port();
  daemon_process d(dir.path(), daemon_args(sink, admin, "1MiB"));
  REQUIRE(d.wait_ready());
  {
    // Another program fills the disk.
    std::ofstream ballast(dir / "var/ballast", std::ios::binary);
    const std::string block(64 * 1024, 'b');
    while (disk.free_bytes() > 0 && ballast.write(block.data(), static_cast<std::streamsize>(block.size()))) {
    }
  }
  auto c = client::connection::connect_unix(d.socket_path());
  // The active segment and the spare kept ready take what fits, then the
  // shard cannot go on: refused, and not ready.
  client::push_result r;
  bool stopped = false;
  for (int i = 0; i < 1000 && !stopped; ++i) {
    r = c.push(as_bytes(std::string(4096, 'x')), client::durability::durable);
    stopped = !r.acked && readyz(admin) == 503;
  }
  REQUIRE(stopped);
  CHECK(r.retryable());
  std::filesystem::remove(dir / "var/ballast");
  REQUIRE(eventually([&] { return readyz(admin) == 200; }, 10s));
  CHECK(c.push(as_bytes("space is back"), client::durability::durable).acked);
  CHECK(d.stop() == 0);
}

TEST_CASE("the file sink on a full disk says the failure is its own so the backoff is waited out",
          "[sink][disk-full]") {
  // A probe of a local file says nothing new: were the failure taken for an
  // unreachable sink, every probe would cut the backoff short.
  temp_dir dir;
  tmpfs_mount disk(dir / "out", 64 * 1024);
  if (!have_disk(disk)) return;
  auto cfg = default_config();
  cfg.sink.file.path = (dir / "out/records.ndjson").string();
  auto sink = make_file_sink_factory(cfg)->make();
  {
    std::ofstream ballast(dir / "out/ballast", std::ios::binary);
    const std::string block(4096, 'b');
    while (disk.free_bytes() > 0 && ballast.write(block.data(), static_cast<std::streamsize>(block.size()))) {
    }
  }
  sink_record r;
  r.id = std::string(64, 'a');
  r.segment = "shard_00/seg_00000001.wab";
  r.payload.assign(16 * 1024, 'x');
  const auto result = sink->commit({r});
  CHECK(result.kind == commit_result::outcome::transient);
  CHECK(result.answered);
}
