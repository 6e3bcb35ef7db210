#pragma once
// data_dir/cluster_node_id: the cluster.node_id of the daemon that owns the
// data directory, as decimal text ("2\n"), written at every start of a
// cluster node and removed at a start outside a cluster. In a cluster a
// record's id is computed over "node_N/shard_NN/seg_….wab", and nothing in
// a segment file says N: offline tools (weir-ctl dump, tail, quarantine
// inspect) read it here so that the ids they show are the ones the daemon
// acked and the sink holds.
#include <cstdint>
#include <string>

namespace weir::wab {

inline constexpr const char* node_id_file_name = "cluster_node_id";

/// Records `node` (0: not in a cluster, the file is removed). Replaced
/// through a temporary file and a rename, so a reader sees the old id or the
/// new one. Returns 0 or -errno.
int write_node_id(const std::string& data_dir, std::uint16_t node);

/// The node id recorded in `data_dir`; 0 when there is none (or the file
/// does not hold a number from 1 to 65535).
std::uint16_t read_node_id(const std::string& data_dir);

}  // namespace weir::wab
