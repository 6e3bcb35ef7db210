#include "observability/cluster_metrics.hpp"

namespace weir {

const char* name_of(peer_state_label s) {
  switch (s) {
    case peer_state_label::up: return "up";
    case peer_state_label::suspect: return "suspect";
    case peer_state_label::down: return "down";
  }
  return "down";
}

cluster_metrics::cluster_metrics(std::uint16_t node, std::uint32_t replicas) : node_(node), replicas_(replicas) {}

void cluster_metrics::set_peer(const std::string& address, std::uint16_t node, peer_state_label state,
                               double last_heard_s) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto& p = peers_[address];
  p.address = address;
  if (node != 0) p.node = node;
  p.state = state;
  p.last_heard_s = last_heard_s;
}

void cluster_metrics::set_lag(std::uint16_t peer, std::uint64_t bytes, std::uint64_t records, std::uint16_t shard) {
  std::lock_guard<std::mutex> guard(mutex_);
  lag_[{peer, shard}] = {bytes, records};
}

void cluster_metrics::replication_ack(bool ok, std::uint64_t records) {
  std::lock_guard<std::mutex> guard(mutex_);
  (ok ? acked_ : refused_) += records;
}

void cluster_metrics::replicated_chunk() {
  std::lock_guard<std::mutex> guard(mutex_);
  ++chunks_;
}

void cluster_metrics::set_failover(std::uint16_t origin, bool active) {
  std::lock_guard<std::mutex> guard(mutex_);
  failover_[origin] = active;
}

cluster_metrics::snapshot cluster_metrics::read() const {
  std::lock_guard<std::mutex> guard(mutex_);
  snapshot out;
  out.node = node_;
  out.replicas = replicas_;
  for (const auto& [address, p] : peers_) {
    auto view = p;
    view.lag_bytes = view.lag_records = 0;
    for (const auto& [key, lag] : lag_)
      if (key.first == p.node && p.node != 0) {
        view.lag_bytes += lag.first;
        view.lag_records += lag.second;
      }
    out.peers.push_back(view);
  }
  out.acked = acked_;
  out.refused = refused_;
  out.chunks = chunks_;
  for (const auto& [origin, active] : failover_) {
    out.failover_known.push_back(origin);
    if (active) out.failover.push_back(origin);
  }
  return out;
}

}  // namespace weir
