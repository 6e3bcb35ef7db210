#pragma once
// The cluster simulation's invariants, checked where things happen:
//
//   replicated-ack-is-replicated  when a Replicated ack leaves, the record is
//                                 durable in its origin's WAB and in the
//                                 replica directories of cluster.replicas - 1
//                                 other nodes' disks (so a partitioned
//                                 minority, which can reach no peer, refuses);
//   durable-ack-is-durable        when a Durable ack leaves, the record is durable
//                                 in its origin's WAB;
//   one-place-one-payload         no place (node, segment, index) and no record
//                                 id ever reaches the sink with two payloads: a
//                                 node's new life never numbers over an old one;
//   delivered-was-written         the sink gets only records producers sent;
//   one-reply-per-request         each request is answered at most once;
//   every-acked-delivered         (at the end) every acked record reached the
//                                 sink unless every disk that held it when it was
//                                 acked was lost (its origin's, and for a
//                                 Replicated one its peers' copies).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/cluster_node.hpp"
#include "sim/durable_view.hpp"
#include "sim/ledger.hpp"
#include "sim/sim_sink.hpp"

namespace weir::sim {

struct cluster_failure {
  unsigned step = 0;
  std::string invariant, details;
};

/// What the checker knows of each record beyond the ledger.
struct cluster_record {
  std::uint16_t node = 0;
  bool replicated = false;
  bool cut_off = false;  // its origin could reach no peer when it was sent
  /// The disks that held it durably when it was acked, (node, disk): a
  /// Replicated record is owed to the sink while one of them is not lost.
  std::vector<std::pair<std::uint16_t, unsigned>> holders;
};

class cluster_checker final : public delivery_observer {
 public:
  cluster_checker(std::uint32_t replicas, const std::vector<std::unique_ptr<node_disk>>& disks)
      : replicas_(replicas), disks_(disks) {}

  ledger book;
  std::vector<cluster_record> extra;  // by ledger index
  unsigned step = 0;
  std::optional<cluster_failure> failed;

  void fail(std::string invariant, std::string details) {
    if (!failed) failed = cluster_failure{step, std::move(invariant), std::move(details)};
  }

  /// A reply to producer `p` of node `node`'s life `life`; ignored unless
  /// that life is the node's current one and it is up (after the crash
  /// instant nothing is sent any more).
  void on_reply(std::uint16_t node, unsigned life, std::size_t p, const ingest_reply& reply);
  void set_life(std::uint16_t node, unsigned life, bool up);
  bool life_up(std::uint16_t node, unsigned life) const {
    const auto it = lives_.find(node);
    return it != lives_.end() && it->second == std::make_pair(life, true);
  }
  /// The disk a node's durable state is read from changed (lost and replaced).
  void disk_replaced(std::uint16_t node) { views_.erase(node); }

  bool accepting() const override { return true; }  // each life's own observer says whether it still lives
  void on_committed(const std::vector<sink_record>& batch, const std::vector<std::size_t>& rejected) override;

  /// Acked records not delivered yet that must be.
  std::size_t owed() const;
  void at_end();

  std::uint64_t replicated_acked = 0, durable_acked = 0, refused = 0, refused_cut_off = 0;
  std::uint64_t deliveries = 0, first_deliveries = 0;
  /// Acked, never delivered, and every disk that held it lost (counted at the end).
  std::uint64_t lost_with_every_holder = 0;

  std::string describe(std::size_t record) const;

 private:
  bool must_deliver(std::size_t i) const;
  durable_view& view(std::uint16_t node);
  /// Whether node `holder`'s disk durably holds `payload` in a copy of `origin`'s `shard`.
  bool copy_holds(std::uint16_t holder, std::uint16_t origin, std::uint16_t shard, const std::string& payload);
  bool wab_holds(std::uint16_t node, std::uint16_t shard, const std::string& payload);
  std::string wab_place(std::uint16_t node, std::uint16_t shard, const std::string& payload);
  /// Where peers' page caches hold `payload` in a copy of `origin`'s shard (for a failure's details).
  std::string cached_copies(std::uint16_t origin, std::uint16_t shard, const std::string& payload);

  std::uint32_t replicas_;
  const std::vector<std::unique_ptr<node_disk>>& disks_;  // by node - 1
  std::map<std::uint16_t, std::pair<unsigned, bool>> lives_;  // node -> (life, up)
  std::map<std::uint16_t, std::unique_ptr<durable_view>> views_;
  std::map<std::string, std::string> by_place_, by_id_;  // -> payload
};

/// Hands a life's replies and commits to the checker with the node and life
/// they belong to: once the life has crashed, nothing it sends was sent,
/// and nothing it commits was committed (the sink refuses it).
class life_observer final : public reply_observer, public delivery_observer {
 public:
  life_observer(cluster_checker& c, std::uint16_t node, unsigned life) : c_(c), node_(node), life_(life) {}
  void on_reply(std::size_t producer, const ingest_reply& reply, std::string_view) override {
    c_.on_reply(node_, life_, producer, reply);
  }
  bool accepting() const override { return c_.life_up(node_, life_); }
  void on_committed(const std::vector<sink_record>& batch, const std::vector<std::size_t>& rejected) override {
    c_.on_committed(batch, rejected);
  }

 private:
  cluster_checker& c_;
  std::uint16_t node_;
  unsigned life_;
};

}  // namespace weir::sim
