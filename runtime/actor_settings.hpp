#pragma once
// The one place where configuration becomes actor settings: each actor's
// settings struct says what it needs, and these functions fill it from the
// config keys (docs/architecture.md, "Configuration, by actor"). What is wired
// at runtime — the file I/O, the WAB usage, the next actor, metrics — is set
// by the pipeline and the daemon, not here.
#include <cstdint>
#include <memory>
#include <string>

#include "actors/connection.hpp"
#include "actors/drain.hpp"
#include "actors/fsync_group.hpp"
#include "actors/membership.hpp"
#include "actors/replica_store.hpp"
#include "actors/replicator.hpp"
#include "actors/shard_writer.hpp"
#include "actors/sink_runner.hpp"
#include "config/config.hpp"
#include "wab/spare_pool.hpp"

namespace weir {

class pipeline;

/// This node's number in its cluster; 0 outside one.
std::uint16_t cluster_node(const config& cfg);
/// What a node's record coordinates put before "shard_NN/seg_…": "node_<id>/"
/// in a cluster (record ids then never collide between nodes), else "".
std::string segment_prefix_of(std::uint16_t node);

/// The writer is chosen per connection; the frame budget is made here, once,
/// and shared by every connection.
connection_settings connection_settings_for(const config& cfg);
shard_writer_settings writer_settings_for(const config& cfg, std::uint16_t shard, const std::string& shard_dir,
                                          std::uint64_t first_sequence);
fsync_group_settings fsync_settings_for(const config& cfg, std::uint16_t shard);
drain_settings drain_settings_for(const config& cfg, std::uint16_t shard, const std::string& shard_dir,
                                  std::uint64_t first_sequence);
/// `one_writer`: the sink's factory says its commits cannot run side by side.
sink_runner_settings runner_settings_for(const config& cfg, bool one_writer);
/// A shard's replicator (a cluster node's).
replicator_settings replicator_settings_for(const config& cfg, std::uint16_t shard, const std::string& shard_dir);
/// The replica store's and membership's settings as a node makes them
/// (the cluster simulation makes its nodes with them too): copies kept in
/// data_dir/replica, failover and retired copies delivered by `shards`.
/// Membership's links (middleman, identity, members) are the caller's.
replica_store_settings replica_store_settings_for(const config& cfg, pipeline& shards,
                                                  std::shared_ptr<wab::file_io> io);
membership_settings membership_settings_for(const config& cfg, pipeline& shards, replica_store_actor store,
                                            std::uint64_t incarnation);
/// A shard's spare pool (wab.spare_segments files of wab.segment_max_bytes).
std::shared_ptr<wab::spare_pool> spare_pool_for(const config& cfg, const std::string& shard_dir,
                                                std::shared_ptr<wab::file_io> io);

}  // namespace weir
