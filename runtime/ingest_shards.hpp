#pragma once
// The ingest side of every shard: one shard_writer and one fsync_group each.
// Connections are pinned round-robin to a shard for their whole life, which
// keeps each connection's records in order in one shard's WAB.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "config/config.hpp"
#include "runtime/wab/file_io.hpp"
#include "runtime/wab/wab_usage.hpp"
#include "runtime/wab_startup.hpp"

namespace weir {

class ingest_shards {
 public:
  ingest_shards(caf::actor_system& sys, const config& cfg, const wab_startup& recovered,
                std::shared_ptr<wab::file_io> io, std::shared_ptr<wab::wab_usage> usage);

  /// The writer the next connection is pinned to.
  caf::actor writer_for_new_connection();

  /// Writes and syncs everything queued, seals the open segments and stops
  /// the writers. Returns false when that took longer than `timeout`.
  bool shut_down(std::chrono::milliseconds timeout);

 private:
  caf::actor_system& sys_;
  std::vector<caf::actor> writers_;
  std::atomic<std::uint64_t> next_{0};
};

}  // namespace weir
