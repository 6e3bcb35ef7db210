#pragma once
// What the cluster actors report and a scrape or the status page reads: each
// peer's state, how far behind its copy of this node's WAB is, the
// Replicated acks given and refused, and which failed peers this node
// delivers for. Written by the membership and replicator actors, read from
// the admin server's thread: one mutex, nothing on a per-record path.
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "observability/listener_stats.hpp"

namespace weir {

/// The cluster's links (transport/cluster_gate.hpp): TLS handshakes both ways,
/// links open, and links closed for what the peer sent.
struct cluster_link_stats {
  tls_handshake_stats handshakes;
  std::atomic<std::int64_t> open{0};
  std::atomic<std::uint64_t> cut_too_large{0};  // a message over cluster.max_message_bytes announced
  std::atomic<std::uint64_t> cut_forbidden{0};  // traffic a node may not send on its own link
  std::atomic<std::uint64_t> cut_stranger{0};   // its node did not become a member in time
  std::atomic<std::uint64_t> cut_crowded{0};    // a node's oldest link, for a newer one past the cap
  std::atomic<std::uint64_t> accept_errors{0};
};

enum class peer_state_label : std::uint8_t { up, suspect, down };
const char* name_of(peer_state_label s);

struct cluster_metrics {
  struct peer_view {
    std::uint16_t node = 0;  // 0 until it answered
    std::string address;
    peer_state_label state = peer_state_label::down;
    double last_heard_s = -1;  // seconds since its last heartbeat; -1: never
    std::uint64_t lag_bytes = 0;    // this node's WAB bytes the peer has not synced, all shards
    std::uint64_t lag_records = 0;  // ... and the records they hold
  };
  struct snapshot {
    std::uint16_t node = 0;
    std::uint32_t replicas = 1;
    std::vector<peer_view> peers;
    std::uint64_t acked = 0, refused = 0;  // Replicated records, by how they were answered
    std::uint64_t chunks = 0;              // chunks peers synced
    std::vector<std::uint16_t> failover;   // failed peers whose replica this node delivers
    // Every origin this node has delivered for since it started, active or
    // not: the gauge goes back to 0 rather than vanishing. (A peer's node id
    // is unknown until it says hello, which a failed peer after this node's
    // restart never does, so the members alone cannot name it.)
    std::vector<std::uint16_t> failover_known;
  };

  cluster_metrics(std::uint16_t node, std::uint32_t replicas);

  void set_peer(const std::string& address, std::uint16_t node, peer_state_label state, double last_heard_s);
  /// Per shard; the view sums the shards.
  void set_lag(std::uint16_t peer, std::uint64_t bytes, std::uint64_t records, std::uint16_t shard);
  void replication_ack(bool ok, std::uint64_t records);
  void replicated_chunk();
  void set_failover(std::uint16_t origin, bool active);

  snapshot read() const;

  cluster_link_stats links;

 private:
  mutable std::mutex mutex_;
  std::uint16_t node_;
  std::uint32_t replicas_;
  std::map<std::string, peer_view> peers_;  // by address
  std::map<std::pair<std::uint16_t, std::uint16_t>, std::pair<std::uint64_t, std::uint64_t>> lag_;  // (peer, shard) -> bytes, records
  std::uint64_t acked_ = 0, refused_ = 0, chunks_ = 0;
  std::map<std::uint16_t, bool> failover_;
};

}  // namespace weir
