#pragma once
// Which life of its node this data directory is (wab/incarnation_file.hpp),
// and where a new life numbers its segments. A cluster node whose WAB holds
// nothing (no segment, no cursor: a new machine, or a wiped disk under an
// old cluster.node_id) begins a new life. Its peers may hold copies of an
// earlier life, whose records reached, or will reach, the sink under ids
// computed from their segment numbers; so a shard that holds nothing numbers
// its first segment from the clock (milliseconds since 1970), past any
// segment an earlier life could have made unless it made a thousand a
// second on average, or the new machine's clock is behind the old one's
// first start. A shard that holds anything goes on with its numbering.
#include <cstdint>

#include "config/config.hpp"
#include "runtime/wab_startup.hpp"

namespace weir {

/// The first segment number of a new life begun now.
std::uint64_t new_life_first_sequence();

/// Each of `shards` shards that holds nothing (no segment, no cursor) numbers
/// its next segment from `first`; whether the whole WAB holds nothing.
bool number_empty_shards(wab_startup& recovered, std::int64_t shards, std::uint64_t first);

/// In a cluster: reads or begins this node's life, sets
/// `recovered.incarnation`, and for a new life numbers each shard's first
/// segment after any earlier life's. Throws startup_error when the life
/// cannot be recorded. Outside a cluster it does nothing.
void begin_or_continue_life(const config& cfg, wab_startup& recovered);

/// The start's WAB step: recovers every shard (recover_wab), refuses a WAB
/// whose undelivered records carry another node's ids, begins or continues
/// this node's life, and records the node id for the offline tools. Throws
/// startup_error.
wab_startup open_wab_of_this_node(const config& cfg);

}  // namespace weir
