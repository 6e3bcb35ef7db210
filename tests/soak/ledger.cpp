#include "soak/ledger.hpp"

namespace weir::soak {

std::uint64_t ledger::begin(tier t, push_kind k, std::uint32_t cycle) {
  entries_.push_back({outcome::unknown, t, k, cycle});
  sent.fetch_add(1, std::memory_order_relaxed);
  return entries_.size() - 1;
}

void ledger::settle(std::uint64_t seq, outcome o, std::uint32_t cycle) {
  auto& e = entries_.at(seq);
  e.result = o;
  e.cycle = cycle;
  if (o == outcome::acked) acked.fetch_add(1, std::memory_order_relaxed);
  if (o == outcome::nacked) nacked.fetch_add(1, std::memory_order_relaxed);
}

void ledger::note_tracked(std::uint64_t seq, tracked_ack where) { tracked_[seq] = std::move(where); }

void ledger::note_connection_lost(bool timed_out) {
  connections_lost.fetch_add(1, std::memory_order_relaxed);
  if (timed_out) timeouts.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace weir::soak
