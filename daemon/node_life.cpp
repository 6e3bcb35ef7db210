#include "daemon/node_life.hpp"

#include <chrono>
#include <cstring>

#include "config/value_parsing.hpp"
#include "daemon/actor_settings.hpp"
#include "daemon/startup_error.hpp"
#include "observability/log.hpp"
#include "wab/incarnation_file.hpp"

namespace weir {

std::uint64_t new_life_first_sequence() {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  return static_cast<std::uint64_t>(ms.count());
}

void begin_or_continue_life(const config& cfg, wab_startup& recovered) {
  if (cluster_node(cfg) == 0) return;
  bool empty = recovered.segments == 0;
  for (const auto& [shard, next] : recovered.next_sequence) empty = empty && next <= 1;
  // A WAB that holds nothing numbers from the clock whether or not its life
  // is recorded: a first start that ended before it wrote a segment must not
  // leave the next one numbering from 1.
  std::uint64_t first = 0;
  if (empty) {
    first = new_life_first_sequence();
    for (std::int64_t shard = 0; shard < cfg.ingest.shards; ++shard)
      recovered.next_sequence[static_cast<std::uint16_t>(shard)] = first;
  }
  if (const auto known = wab::read_incarnation(cfg.data_dir)) {
    recovered.incarnation = *known;
    return;
  }
  recovered.incarnation = wab::new_incarnation();
  if (int rc = wab::write_incarnation(cfg.data_dir, recovered.incarnation); rc < 0)
    throw startup_error("data_dir = " + cfg.data_dir + ": cannot record this node's life (" +
                        wab::incarnation_file_name + "): " + std::strerror(-rc));
  if (empty)
    log::warn("a new life of this node begins: its WAB holds nothing; peers deliver what they hold of its earlier "
              "lives, and its segments are numbered after them",
              {{"node", std::to_string(cluster_node(cfg))},
               {"life", wab::incarnation_text(recovered.incarnation)},
               {"first_segment", std::to_string(first)}});
  else
    log::info("this node's life is recorded", {{"node", std::to_string(cluster_node(cfg))},
                                               {"life", wab::incarnation_text(recovered.incarnation)}});
}

}  // namespace weir
