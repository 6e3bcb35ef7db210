// kill -9 of the real daemon under load, twenty times over one data
// directory. Producers push Durable records (single and batched) and log
// every ack; the daemon is killed at a random moment — while it writes, syncs
// and delivers to its SQLite sink — and restarted (recovery runs over
// everything the earlier crashes left). Every acked record must be in the WAB
// or already in the sink, each producer's records in the order it pushed
// them; at the end, all of them in the sink, each exactly once.
#include <signal.h>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "support/daemon_process.hpp"
#include "support/test_helpers.hpp"
#include "support/test_paths.hpp"
#include "support/sink_contents.hpp"
#include "support/wab_contents.hpp"
#include "weir/client.hpp"

using namespace weir;
using namespace weir::test;

namespace {

struct producer_log {
  std::mutex mutex;
  std::vector<std::string> acked;  // payloads, in ack order
};

std::string payload_of(int round, int producer, int seq) {
  std::string s = "r";
  s += std::to_string(round);
  s += "-p";
  s += std::to_string(producer);
  s += "-";
  s += std::to_string(seq);
  s += std::string(static_cast<std::size_t>(seq % 97), 'x');  // varied sizes
  return s;
}

/// "r3-p1" and 42 from "r3-p1-42xxx".
std::pair<std::string, int> origin_of(const std::string& payload) {
  const auto dash = payload.find('-', payload.find("-p") + 1);
  return {payload.substr(0, dash), std::stoi(payload.substr(dash + 1))};
}

/// Pushes until the connection dies, logging every ack.
void produce(const std::string& socket, int round, int producer, std::uint32_t seed, producer_log& log) {
  std::mt19937 rng(seed);
  try {
    auto c = client::connection::connect_unix(socket);
    c.set_timeout(std::chrono::seconds(10));
    int seq = 0;
    while (true) {
      if (rng() % 3 == 0) {
        std::vector<std::string> batch;
        const int n = 1 + static_cast<int>(rng() % 8);
        for (int i = 0; i < n; ++i) batch.push_back(payload_of(round, producer, seq++));
        auto r = c.push_batch(spans_of(batch), client::durability::durable);
        std::lock_guard<std::mutex> guard(log.mutex);
        for (std::size_t i = 0; i < r.accepted.size(); ++i)
          if (r.accepted[i]) log.acked.push_back(batch[i]);
      } else {
        const std::string p = payload_of(round, producer, seq++);
        auto r = c.push(as_bytes(p), client::durability::durable);
        if (r.acked) {
          std::lock_guard<std::mutex> guard(log.mutex);
          log.acked.push_back(p);
        }
      }
    }
  } catch (const client::client_error&) {
    // the daemon died under us: expected
  }
}

}  // namespace

TEST_CASE("kill -9 under load loses no acked Durable record (20 rounds)", "[live][crash]") {
  temp_dir dir;
  const std::vector<std::string> args{"--set", "ingest.shards=2", "--set", "wab.segment_max_bytes=64KiB",
                                      "--set", "limits.wab_max_bytes=1GiB"};
  std::random_device rd;
  const std::uint32_t seed = rd();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  std::vector<std::string> all_acked;
  for (int round = 0; round < 20; ++round) {
    INFO("round " << round);
    daemon_process d(dir.path(), args);
    REQUIRE(d.wait_ready());
    constexpr int producers = 4;
    std::vector<producer_log> logs(producers);
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p)
      threads.emplace_back(produce, d.socket_path(), round, p, static_cast<std::uint32_t>(rng()), std::ref(logs[p]));
    // The kill lands at a random moment after the first ack (a slow build,
    // such as the sanitizer one, may take a while to get there).
    eventually([&] {
      for (auto& l : logs) {
        std::lock_guard<std::mutex> guard(l.mutex);
        if (!l.acked.empty()) return true;
      }
      return false;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 230));
    ::kill(d.pid(), SIGKILL);
    for (auto& t : threads) t.join();
    CHECK(d.wait_exit() == 128 + SIGKILL);
    std::size_t acked_this_round = 0;
    for (auto& l : logs) {
      all_acked.insert(all_acked.end(), l.acked.begin(), l.acked.end());
      acked_this_round += l.acked.size();
    }
    CHECK(acked_this_round > 0);

    // Restart: recovery repairs what the kill left; then read the files.
    daemon_process again(dir.path(), args);
    REQUIRE(again.wait_ready());
    REQUIRE(again.stop() == 0);
    // What was delivered, then what still waits in the WAB: by coordinate,
    // which orders each shard's records as they were written.
    std::map<std::pair<std::string, std::uint64_t>, std::string> stored;
    for (const auto& r : sqlite_rows(dir / "var/sink.db")) stored[{r.segment, r.index}] = r.payload;
    for (const auto& shard : all_shard_records(dir / "var"))
      for (const auto& r : shard) stored[{r.segment, r.index}] = r.payload;
    std::map<std::string, int> last_seq;  // "rN-pK" -> last seq seen
    std::set<std::string> present;
    bool in_order = true;
    for (const auto& [where, payload] : stored) {
      present.insert(payload);
      auto [who, seq] = origin_of(payload);
      auto it = last_seq.find(who);
      if (it != last_seq.end() && seq <= it->second) in_order = false;
      last_seq[who] = seq;
    }
    CHECK(in_order);
    std::size_t missing = 0;
    for (const auto& p : all_acked) missing += present.count(p) ? 0 : 1;
    CHECK(missing == 0);
  }
  INFO("acked in total " << all_acked.size());
  CHECK(all_acked.size() > 20);

  // Let the last run deliver everything: each acked record once in the sink.
  daemon_process last(dir.path(), args);
  REQUIRE(last.wait_ready());
  std::map<std::string, int> copies;
  for (int i = 0; i < 500; ++i) {
    copies.clear();
    for (const auto& r : sqlite_rows(dir / "var/sink.db")) ++copies[r.payload];
    std::size_t delivered = 0;
    for (const auto& p : all_acked) delivered += copies.count(p);
    if (delivered == all_acked.size()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(last.stop() == 0);
  std::size_t missing = 0, duplicated = 0;
  for (const auto& p : all_acked) {
    missing += copies.count(p) ? 0 : 1;
    duplicated += copies[p] > 1 ? 1 : 0;
  }
  CHECK(missing == 0);
  CHECK(duplicated == 0);
}
