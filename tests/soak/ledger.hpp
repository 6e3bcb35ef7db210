#pragma once
// What one producer knows about each record it tried to push. Only the
// producer's own thread writes it while load runs; the soak reads the entries
// after joining that thread, and only the atomic counters meanwhile.
#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "soak/payload.hpp"

namespace weir::soak {

enum class outcome : std::uint8_t {
  unknown,  // sent (or about to be) and no reply came: maybe stored, maybe not
  acked,    // Ack, AckTracked, or its bit set in an AckBatch
  nacked,   // Nack, or its bit clear in an AckBatch
};

struct ledger_entry {
  outcome result = outcome::unknown;
  tier durability = tier::durable;
  push_kind kind = push_kind::push;
  std::uint32_t cycle = 0;  // the soak cycle in which the outcome was learnt
};

/// Where an AckTracked said the record went; the sink row must agree.
struct tracked_ack {
  std::string segment;
  std::uint64_t index = 0;
  std::string record_id_hex;
};

class ledger {
 public:
  explicit ledger(std::uint32_t producer) : producer_(producer) {}
  ledger(const ledger&) = delete;
  ledger& operator=(const ledger&) = delete;

  std::uint32_t producer() const { return producer_; }

  /// Takes the next sequence number and marks it unknown until a reply says
  /// otherwise, so a connection dying mid-push leaves exactly that state.
  std::uint64_t begin(tier t, push_kind k, std::uint32_t cycle);
  void settle(std::uint64_t seq, outcome o, std::uint32_t cycle);
  void note_tracked(std::uint64_t seq, tracked_ack where);
  void note_connection_lost(bool timed_out);

  const std::vector<ledger_entry>& entries() const { return entries_; }
  const std::unordered_map<std::uint64_t, tracked_ack>& tracked() const { return tracked_; }

  // Live figures for progress lines.
  std::atomic<std::uint64_t> acked{0}, nacked{0}, sent{0}, connections_lost{0}, timeouts{0};

 private:
  std::uint32_t producer_;
  std::vector<ledger_entry> entries_;  // indexed by sequence
  std::unordered_map<std::uint64_t, tracked_ack> tracked_;
};

}  // namespace weir::soak
