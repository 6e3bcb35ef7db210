#include "runtime/node_life.hpp"

#include <chrono>
#include <cstring>

#include "config/value_parsing.hpp"
#include "runtime/actor_settings.hpp"
#include "runtime/startup_error.hpp"
#include "observability/log.hpp"
#include "wab/incarnation_file.hpp"
#include "wab/node_id_file.hpp"

namespace weir {

std::uint64_t new_life_first_sequence() {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  return static_cast<std::uint64_t>(ms.count());
}

bool number_empty_shards(wab_startup& recovered, std::int64_t shards, std::uint64_t first) {
  bool empty = recovered.segments == 0;
  for (std::int64_t s = 0; s < shards; ++s) {
    auto& next = recovered.next_sequence[static_cast<std::uint16_t>(s)];
    if (next > 1) {
      empty = false;
      continue;
    }
    next = first;
  }
  return empty;
}

void begin_or_continue_life(const config& cfg, wab_startup& recovered) {
  if (cluster_node(cfg) == 0) return;
  // A shard that holds nothing numbers from the clock whether or not its
  // life is recorded, and whatever the other shards hold: a first start
  // that ended before it wrote a segment, or a shard whose segments were
  // all delivered and whose cursor is gone, must not number from 1 again.
  const std::uint64_t first = new_life_first_sequence();
  const bool empty = number_empty_shards(recovered, cfg.ingest.shards, first);
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

wab_startup open_wab_of_this_node(const config& cfg) {
  const std::uint16_t recorded_node = wab::read_node_id(cfg.data_dir);
  wab_startup recovered = recover_wab(cfg);
  // Record ids carry the node: records a WAB holds under another node id
  // would reach the sink under ids other than those acked. A WAB written
  // outside a cluster has no node file, and its records' ids carry no node.
  // (An empty WAB, or one whose records are all delivered, may change ids.)
  if (recorded_node != cluster_node(cfg) && recovered.undelivered > 0) {
    const std::string owner = recorded_node == 0 ? std::string("no node (written outside a cluster)")
                                                 : "node " + std::to_string(recorded_node);
    const std::string start_as = recorded_node == 0 ? std::string("without cluster.listen")
                                                    : "with cluster.node_id " + std::to_string(recorded_node);
    throw startup_error("cluster.node_id = " + std::to_string(cluster_node(cfg)) + ", but data_dir " + cfg.data_dir +
                        " holds " + std::to_string(recovered.undelivered) + " undelivered records of " + owner + " (" +
                        wab::node_id_file_name + "): their ids would change; start it " + start_as +
                        " until they are delivered (weir-ctl status shows the backlog)");
  }
  begin_or_continue_life(cfg, recovered);
  // For the offline tools: the ids they show carry this node (wab/node_id_file.hpp).
  if (int rc = wab::write_node_id(cfg.data_dir, cluster_node(cfg)); rc < 0)
    log::warn("cannot record the cluster node id in the data dir; weir-ctl dump and tail then need --node",
              {{"data_dir", cfg.data_dir}, {"error", std::strerror(-rc)}});
  return recovered;
}

}  // namespace weir
