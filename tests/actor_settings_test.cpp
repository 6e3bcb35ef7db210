// Every protocol knob reaches the actor that reads it: a value set with --set
// comes out in that actor's settings (runtime/actor_settings.cpp is the only
// place that maps keys to settings), and the defaults are the documented ones.
#include <algorithm>
#include <thread>

#include <catch2/catch.hpp>

#include "config/loader.hpp"
#include "runtime/actor_settings.hpp"
#include "runtime/usable_cores.hpp"
#include "sinks/sink.hpp"

using namespace weir;

namespace {

config with(std::vector<std::string> overrides) {
  config_sources src;
  src.file_required = false;
  src.overrides = std::move(overrides);
  return load_config(src);
}

}  // namespace

TEST_CASE("protocol knobs have their documented defaults in the actors' settings", "[config][settings]") {
  const auto cfg = with({});
  CHECK(connection_settings_for(cfg).budget_retry_ms == 5);
  CHECK(connection_settings_for(cfg).budget_read_timeout_ms == 30000);
  CHECK(connection_settings_for(cfg).budget->capacity() == 256ull * 1024 * 1024);
  const auto w = writer_settings_for(cfg, 3, "d", 7);
  CHECK(w.segment_retry_ms == 1000);
  CHECK(w.max_group_bytes == 4ull * 1024 * 1024);
  CHECK(w.max_group_records == 4096);
  CHECK(w.shard == 3);
  CHECK(w.first_sequence == 7);
  CHECK(w.may_sync);  // adaptive: the writer syncs a group itself when it can
  CHECK(w.sync_durable_only_here);
  CHECK(drain_settings_for(cfg, 0, "d", 1).cursor_persist_ms == 200);
  CHECK(runner_settings_for(cfg, false).dead_letter_recheck_ms == 1000);
  CHECK(runner_settings_for(cfg, false).health_interval_ms == 5000);
}

TEST_CASE("every protocol knob set in the config reaches its actor", "[config][settings]") {
  const auto cfg = with({"limits.frame_memory_retry_ms=17", "limits.frame_memory_stall_ms=444", "limits.frame_memory_bytes=1MiB",
                         "listen.read_timeout_ms=4321",
                         "limits.max_payload_bytes=512KiB", "limits.max_batch_records=9", "ingest.ack_mode=strict",
                         "ingest.max_inflight=33", "wab.segment_retry_ms=250", "wab.segment_max_bytes=128KiB",
                         "wab.min_free_bytes=2MiB", "group_commit.max_bytes=64KiB", "group_commit.max_records=77",
                         "group_commit.policy=deadline", "group_commit.max_delay_us=450", "drain.cursor_persist_ms=35",
                         "drain.batch_max_records=12", "drain.batch_max_bytes=96KiB", "drain.linger_ms=8",
                         "drain.dead_letter_recheck_ms=321", "sink.retry.initial_ms=11", "sink.retry.multiplier=3",
                         "sink.retry.max_ms=999", "sink.retry.jitter=0.5", "sink.health_interval_ms=1234",
                         "sink.concurrency=6"});
  const auto c = connection_settings_for(cfg);
  CHECK(c.budget_retry_ms == 17);
  CHECK(c.budget_stall_ms == 444);
  CHECK(c.budget_read_timeout_ms == 4321);
  CHECK(c.budget->capacity() == 1024 * 1024);
  CHECK(c.payload_cap == 512 * 1024);
  CHECK(c.max_batch_records == 9);
  CHECK(c.mode == ack_mode::strict);
  CHECK(c.max_inflight == 33);

  const auto w = writer_settings_for(cfg, 0, "d", 1);
  CHECK(w.segment_retry_ms == 250);
  CHECK(w.segment_max_bytes == 128 * 1024);
  CHECK(w.min_free_bytes == 2 * 1024 * 1024);
  CHECK(w.max_group_bytes == 64 * 1024);
  CHECK(w.max_group_records == 77);
  CHECK(w.may_sync);  // deadline: a lone group still, never under load
  CHECK_FALSE(w.sync_durable_only_here);
  const auto one_path = writer_settings_for(with({"group_commit.policy=group"}), 0, "d", 1);
  CHECK_FALSE(one_path.may_sync);  // group: every sync is the fsync group's
  CHECK_FALSE(one_path.sync_durable_only_here);

  const auto f = fsync_settings_for(cfg, 0);
  CHECK(f.policy == commit_policy::deadline);
  CHECK(f.max_delay_us == 450);
  CHECK(f.max_records == 77);

  const auto d = drain_settings_for(cfg, 0, "d", 1);
  CHECK(d.cursor_persist_ms == 35);
  CHECK(d.batch_max_records == 12);
  CHECK(d.batch_max_bytes == 96 * 1024);
  CHECK(d.linger_ms == 8);
  CHECK(d.max_in_flight == 6);

  const auto r = runner_settings_for(cfg, false);
  CHECK(r.dead_letter_recheck_ms == 321);
  CHECK(r.retry_initial_ms == 11);
  CHECK(r.retry_multiplier == 3.0);
  CHECK(r.retry_max_ms == 999);
  CHECK(r.retry_jitter == 0.5);
  CHECK(r.health_interval_ms == 1234);
  CHECK(r.concurrency == 6);
  // A one-writer sink (SQLite) commits on one slot; its drains still keep
  // sink.concurrency batches ready behind it (d.max_in_flight above).
  CHECK(runner_settings_for(cfg, true).concurrency == 1);
}

TEST_CASE("the SQLite sink says it takes one writer and the others do not", "[config][settings][sink]") {
  CHECK(make_sink_factory(with({"sink.type=sqlite"}))->one_writer());
  CHECK_FALSE(make_sink_factory(with({"sink.type=noop"}))->one_writer());
  CHECK_FALSE(make_sink_factory(with({"sink.type=file"}))->one_writer());
}

TEST_CASE("protocol knobs out of range are refused naming the key", "[config][settings][errors]") {
  for (const char* bad : {"wab.segment_retry_ms=0", "drain.cursor_persist_ms=0", "drain.dead_letter_recheck_ms=1",
                          "group_commit.max_bytes=1KiB", "limits.frame_memory_retry_ms=0"}) {
    const std::string key = std::string(bad).substr(0, std::string(bad).find('='));
    INFO(bad);
    try {
      with({bad});
      FAIL("accepted");
    } catch (const config_error& e) {
      CHECK(std::string(e.what()).find(key) != std::string::npos);
    }
  }
}

TEST_CASE("a cgroup's cpu.max gives the cores a container may use", "[settings]") {
  CHECK_FALSE(weir::cores_of_cpu_max("max 100000"));  // no limit
  CHECK(weir::cores_of_cpu_max("200000 100000\n") == 2u);
  CHECK(weir::cores_of_cpu_max("150000 100000") == 2u);  // a part of a core counts as one
  CHECK(weir::cores_of_cpu_max("50000 100000") == 1u);
  CHECK_FALSE(weir::cores_of_cpu_max("200000 0"));
  CHECK_FALSE(weir::cores_of_cpu_max("two cores"));
  CHECK_FALSE(weir::cores_of_cpu_max(""));
  const unsigned cores = weir::usable_cores();
  CHECK(cores >= 1);
  CHECK(cores <= std::max(1u, std::thread::hardware_concurrency()));
}
