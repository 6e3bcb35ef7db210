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
//               (flush_atom)                      sync what was written (self-sent)
//               (shutdown_atom) => done
// States per copy: idle -> written (a sync is due) -> synced; released
#include <cstdint>
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
};

/// data_dir/replica/node_<origin>/shard_NN
std::string replica_shard_dir(const std::string& root, std::uint16_t origin, std::uint16_t shard);

replica_store_actor spawn_replica_store(caf::actor_system& sys, replica_store_settings settings);

}  // namespace weir
