#pragma once
// replica_store: the copies this node keeps of its peers' WABs, on its own
// thread (it writes and syncs files). A copy is the origin's segments byte
// for byte after their header, in data_dir/replica/node_<origin>/shard_NN/,
// in the WAB's own format: the drain that delivers it after a failover, and
// the recovery that reads it, are the WAB's own.
//
// Interface:    replica_store_actor (messages/cluster_protocol.hpp)
// Messages in:  replica_chunk => replica_position   appended in order; answered once synced
//                                                   (a chunk out of order is not taken: the
//                                                   answer says where the copy ends)
//               (position_atom, origin, shard) => replica_position   where the synced copy ends
//               replica_trim                      delete the delivered segments
//               (held_atom) => positions          every copy's end (for heartbeats)
//               (release_atom, origin, shard, released) => done
//                                                 a failover drain takes the origin's copy
//                                                 (nothing is written to it meanwhile), or
//                                                 gives it back (its end is read again)
//               (retire_atom, origin, incarnation)  the origin lives as `incarnation`:
//                                                 a copy of another of its lives is retired
//               (flush_atom)                      sync what was written (self-sent)
//               (shutdown_atom) => done
// States per copy: idle -> written (a sync is due) -> synced; released
//
// Node lives: a copy is of one life of its origin (wab/incarnation_file.hpp).
// A chunk of another life, or word that the origin now lives as another,
// retires the copy: it moves to data_dir/replica/retired/node_<origin>-<life>/
// and this node delivers it (every holder does: duplicates carry the same
// ids, and none of that life's acked records is left behind); the next life
// starts a copy of its own. A retired copy whose segments are all delivered
// is removed.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <caf/fwd.hpp>

#include "actors/actor_thread.hpp"
#include "messages/cluster_protocol.hpp"
#include "wab/file_io.hpp"

namespace weir {

struct replica_store_settings {
  std::uint16_t node = 0;  // this node: a chunk claiming to come from it is refused
  std::string root;  // data_dir/replica
  std::shared_ptr<wab::file_io> io;
  std::string quarantine_dir;  // where recovery of a copy puts damaged segments
  actor_thread thread = actor_thread::own;
  /// A copy was retired to `dir` (repaired and sealed): deliver it. Also
  /// called at start for each retired copy an earlier run left undelivered.
  std::function<void(std::uint16_t origin, std::uint16_t shard, const std::string& dir)> retired;
  /// A retired copy is delivered and its directory removed: its drain may stop.
  std::function<void(const std::string& dir)> retired_done;
};

/// data_dir/replica/node_<origin>/shard_NN
std::string replica_shard_dir(const std::string& root, std::uint16_t origin, std::uint16_t shard);

replica_store_actor spawn_replica_store(caf::actor_system& sys, replica_store_settings settings);

}  // namespace weir
