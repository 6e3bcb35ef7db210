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
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
      std::chrono::system_clock::now().time_since_epoch());
  return static_cast<std::uint64_t>(seconds.count()) * 1000;
}

void begin_or_continue_life(const config& cfg, wab_startup& recovered) {
  if (cluster_node(cfg) == 0) return;
  if (const auto known = wab::read_incarnation(cfg.data_dir)) {
    recovered.incarnation = *known;
    return;
  }
  bool empty = recovered.segments == 0;
  for (const auto& [shard, next] : recovered.next_sequence) empty = empty && next <= 1;
  recovered.incarnation = wab::new_incarnation();
  std::uint64_t first = 0;
  if (empty) {
    first = new_life_first_sequence();
    for (std::int64_t shard = 0; shard < cfg.ingest.shards; ++shard)
      recovered.next_sequence[static_cast<std::uint16_t>(shard)] = first;
  }
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
