#include "sim/ledger.hpp"

namespace weir::sim {

const char* name_of(record_status s) {
  switch (s) {
    case record_status::pending: return "pending";
    case record_status::acked: return "acked";
    case record_status::refused: return "refused";
    case record_status::unknown: return "unknown";
    case record_status::lost_in_crash: return "lost-in-crash";
  }
  return "?";
}

std::size_t ledger::add_record(record_info r) {
  const std::size_t i = records_.size();
  by_payload_.emplace(r.payload, i);
  records_.push_back(std::move(r));
  return i;
}

std::size_t ledger::add_request(request_info r) {
  const auto key = std::make_pair(r.producer, r.tag);
  requests_[key] = std::move(r);
  return requests_.size();
}

std::optional<std::size_t> ledger::find(const std::string& payload) const {
  auto it = by_payload_.find(payload);
  if (it == by_payload_.end()) return std::nullopt;
  return it->second;
}

request_info* ledger::pending_request(std::size_t producer, std::uint64_t tag) {
  auto it = requests_.find({producer, tag});
  if (it == requests_.end() || it->second.answered) return nullptr;
  return &it->second;
}

bool ledger::known_request(std::size_t producer, std::uint64_t tag) const {
  return requests_.count({producer, tag}) > 0;
}

std::size_t ledger::forget_pending() {
  std::size_t n = 0;
  for (auto& [key, req] : requests_) {
    if (req.answered) continue;
    req.answered = true;
    for (auto i : req.records)
      if (records_[i].status == record_status::pending) records_[i].status = record_status::unknown;
    ++n;
  }
  return n;
}

std::size_t ledger::pending_requests() const {
  std::size_t n = 0;
  for (const auto& [key, req] : requests_) n += req.answered ? 0 : 1;
  return n;
}

std::string ledger::history_of(std::size_t record) const {
  std::string out;
  for (const auto& e : history_) {
    if (e.record != record) continue;
    if (!out.empty()) out += ", ";
    out += (e.acked ? "acked at step " : "refused at step ") + std::to_string(e.step) + " (life " +
           std::to_string(e.life) + ")";
  }
  return out.empty() ? "never answered" : out;
}

}  // namespace weir::sim
