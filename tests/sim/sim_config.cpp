#include "sim/sim_config.hpp"

#include "sim/sim_rng.hpp"

namespace weir::sim {

const char* name_of(sabotage s) {
  switch (s) {
    case sabotage::none: return "none";
    case sabotage::lying_fdatasync: return "lying-fdatasync";
    case sabotage::lying_dir_fsync: return "lying-dir-fsync";
    case sabotage::buffered_as_durable: return "buffered-as-durable";
    case sabotage::sink_drops: return "sink-drops";
    case sabotage::sink_reverses: return "sink-reverses";
  }
  return "?";
}

bool parse_sabotage(const std::string& name, sabotage& out) {
  for (auto s : {sabotage::none, sabotage::lying_fdatasync, sabotage::lying_dir_fsync, sabotage::buffered_as_durable,
                 sabotage::sink_drops, sabotage::sink_reverses})
    if (name == name_of(s)) {
      out = s;
      return true;
    }
  return false;
}

sim_config make_config(std::uint64_t seed, unsigned steps, sabotage broken, sync_wiring wiring) {
  // Its own stream: the shape must not depend on anything drawn later.
  sim_rng r = sim_rng(seed).fork(1);
  sim_config c;
  c.seed = seed;
  c.steps = steps;
  c.broken = broken;
  c.shards = static_cast<std::uint16_t>(r.between(1, 2));
  c.producers = static_cast<unsigned>(r.between(1, 4));
  // Half the runs deliver one batch at a time, where per-shard order is promised.
  c.sink_concurrency = r.percent(50) ? 1 : static_cast<std::uint32_t>(r.between(2, 3));
  c.segment_max_bytes = r.between(256, 4096);
  c.max_group_records = static_cast<std::uint32_t>(r.percent(30) ? r.between(1, 3) : r.between(4, 64));
  c.policy = r.percent(50) ? commit_policy::adaptive : commit_policy::deadline;
  c.fsync_max_delay_us = static_cast<std::uint32_t>(r.between(100, 5000));
  c.fsync_max_records = static_cast<std::uint32_t>(r.between(1, 16));
  c.batch_max_records = static_cast<std::uint32_t>(r.between(1, 12));
  c.linger_ms = static_cast<std::uint32_t>(r.between(0, 10));
  // A tight cap now and then: refusals over it, resumption under 90 % of it.
  // 90 % of the cap stays above shards x segment size, as config validation demands.
  if (r.percent(20)) c.wab_cap_bytes = c.shards * c.segment_max_bytes * r.between(2, 4) + 8192;
  c.retry_initial_ms = static_cast<std::uint32_t>(r.between(1, 50));
  c.retry_max_ms = static_cast<std::uint32_t>(r.between(c.retry_initial_ms, 500));
  c.fault_percent = static_cast<unsigned>(r.between(0, 15));
  c.crash_percent = static_cast<unsigned>(r.between(0, 4));
  c.max_crashes = static_cast<unsigned>(r.between(1, 4));
  c.poison_percent = r.percent(50) ? 0 : static_cast<unsigned>(r.between(1, 8));
  c.writeback_percent = static_cast<unsigned>(r.between(0, 100));
  c.max_payload = static_cast<unsigned>(r.percent(20) ? r.between(200, 900) : r.between(8, 120));
  // From a stream of its own: the seeds of the separate wiring keep their shape.
  c.wiring = wiring;
  if (wiring == sync_wiring::daemon) {
    if (c.policy == commit_policy::adaptive) c.quiet_at_once = sim_rng(seed).fork(7).percent(50);
    c.spare_segments = static_cast<std::uint32_t>(sim_rng(seed).fork(8).between(1, 2));
  }
  return c;
}

std::string describe(const sim_config& c) {
  auto n = [](auto v) { return std::to_string(v); };
  return "shards=" + n(c.shards) + " producers=" + n(c.producers) + " concurrency=" + n(c.sink_concurrency) +
         " segment=" + n(c.segment_max_bytes) + " group=" + n(c.max_group_records) +
         " policy=" + (c.policy == commit_policy::adaptive ? "adaptive" : "deadline") +
         " fsync_delay_us=" + n(c.fsync_max_delay_us) + " fsync_records=" + n(c.fsync_max_records) +
         " batch=" + n(c.batch_max_records) + " linger_ms=" + n(c.linger_ms) + " cap=" + n(c.wab_cap_bytes) +
         " retry_ms=" + n(c.retry_initial_ms) + ".." + n(c.retry_max_ms) + " fault%=" + n(c.fault_percent) +
         " crash%=" + n(c.crash_percent) + " max_crashes=" + n(c.max_crashes) + " poison%=" + n(c.poison_percent) +
         " writeback%=" + n(c.writeback_percent) + " max_payload=" + n(c.max_payload) +
         (c.wiring == sync_wiring::daemon ? " wiring=daemon spares=" + n(c.spare_segments) : std::string()) +
         (c.wiring == sync_wiring::daemon && c.policy == commit_policy::adaptive
              ? std::string(" quiet=") + (c.quiet_at_once ? "0" : "never")
              : std::string()) +
         (c.broken != sabotage::none ? std::string(" SABOTAGE=") + name_of(c.broken) : std::string());
}

}  // namespace weir::sim
