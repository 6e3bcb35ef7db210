#include "actors/drain/record_recycler.hpp"

#include <algorithm>

namespace weir::drain_parts {

sink_record& record_recycler::next(std::vector<sink_record>& pending) {
  if (reusable_.empty()) return pending.emplace_back();
  pending.push_back(std::move(reusable_.back()));
  reusable_.pop_back();
  reusable_bytes_ -= pending.back().payload.capacity();
  return pending.back();
}

void record_recycler::keep(spent_batch& spent, std::vector<sink_record>& pending, std::uint64_t max_records,
                           std::uint64_t max_bytes) {
  if (!spent.records || spent.records.use_count() != 1) return;
  auto& records = *spent.records;
  const std::uint64_t bytes_max = std::min<std::uint64_t>(max_bytes, reuse_bytes_max_);
  for (auto& r : records) {
    if (reusable_.size() >= max_records) break;
    if (reusable_bytes_ + r.payload.capacity() > bytes_max) byte_buffer().swap(r.payload);
    reusable_bytes_ += r.payload.capacity();
    reusable_.push_back(std::move(r));
  }
  if (pending.empty() && pending.capacity() < records.capacity()) {
    records.clear();
    pending.swap(records);  // and the next batch is cut into this one's array
  }
  spent.records.reset();  // what is not kept is freed here, on the drain's thread
}

}  // namespace weir::drain_parts
