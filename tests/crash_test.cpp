// kill -9 of the real daemon under load, twenty times over one data
// directory. Producers push Durable records (single and batched) and log
// every ack; the daemon is killed at a random moment, restarted (recovery
// runs over everything the earlier crashes left), and the WAB must hold every
// acked record, each producer's records in the order it pushed them.
#include <signal.h>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <catch2/catch.hpp>

#include "support/daemon_process.hpp"
#include "support/test_paths.hpp"
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
        std::vector<std::span<const std::uint8_t>> spans;
        for (auto& b : batch) spans.emplace_back(reinterpret_cast<const std::uint8_t*>(b.data()), b.size());
        auto r = c.push_batch(spans, client::durability::durable);
        std::lock_guard<std::mutex> guard(log.mutex);
        for (std::size_t i = 0; i < r.accepted.size(); ++i)
          if (r.accepted[i]) log.acked.push_back(batch[i]);
      } else {
        const std::string p = payload_of(round, producer, seq++);
        auto r = c.push({reinterpret_cast<const std::uint8_t*>(p.data()), p.size()}, client::durability::durable);
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
    std::map<std::string, int> position;     // payload -> order of appearance
    std::map<std::string, int> last_seq;     // "rN-pK" -> last seq seen
    bool in_order = true;
    int at = 0;
    for (const auto& shard : all_shard_records(dir / "var"))
      for (const auto& r : shard) {
        position[r.payload] = at++;
        auto [who, seq] = origin_of(r.payload);
        auto it = last_seq.find(who);
        if (it != last_seq.end() && seq <= it->second) in_order = false;
        last_seq[who] = seq;
      }
    CHECK(in_order);
    std::size_t missing = 0;
    for (const auto& p : all_acked) missing += position.count(p) ? 0 : 1;
    CHECK(missing == 0);
  }
  INFO("acked in total " << all_acked.size());
  CHECK(all_acked.size() > 20);
}
