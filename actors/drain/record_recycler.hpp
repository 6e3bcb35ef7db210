#pragma once
// The drain refills delivered records instead of making new ones: a
// record's id, segment and payload buffers keep their capacity, so a steady
// stream of batches allocates almost nothing (decision 0013).
#include <cstdint>
#include <vector>

#include "messages/drain_protocol.hpp"
#include "wire/sink_record.hpp"

namespace weir::drain_parts {

class record_recycler {
 public:
  /// Of a delivered batch's records, keeps at most `max_records` (payload
  /// buffers of at most min(max_bytes, 1 MiB) in all; the others are
  /// freed: large payloads gain little from reuse, and an idle drain should
  /// not hold a burst's worth of them). Records something else still holds
  /// are left to it. An empty `pending` takes the batch's array.
  void keep(spent_batch& spent, std::vector<sink_record>& pending, std::uint64_t max_records, std::uint64_t max_bytes);

  /// A record appended to `pending`, a kept one when there is one (every
  /// field is to be refilled).
  sink_record& next(std::vector<sink_record>& pending);

 private:
  static constexpr std::uint64_t reuse_bytes_max_ = 1 << 20;
  std::vector<sink_record> reusable_;
  std::uint64_t reusable_bytes_ = 0;  // their payload buffers' capacity
};

}  // namespace weir::drain_parts
