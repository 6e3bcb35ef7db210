#pragma once
// Everything the producers sent and every answer they got, across crashes:
// the ground truth the invariants are checked against. Payloads are unique
// ("p<producer>/s<seq>/<filler>", a leading '!' for a record the sink refuses
// for good), so a payload names its record wherever it turns up: in a
// segment, in the sink, in a dead letter.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "messages/ingest_protocol.hpp"
#include "wire/coordinate.hpp"

namespace weir::sim {

enum class record_status : std::uint8_t {
  pending,        // sent, not answered
  acked,          // acked at its tier
  refused,        // Nack or clear bit
  unknown,        // unanswered when the daemon crashed: either outcome is fine
  lost_in_crash,  // an acked Buffered record whose bytes were not durable at a crash
};

const char* name_of(record_status s);

struct record_info {
  std::size_t producer = 0;
  std::uint64_t seq = 0;  // its place in the producer's stream
  std::uint16_t shard = 0;
  bool durable = false;
  bool poison = false;  // the sink rejects it for good: it must end in the dead letters
  std::string payload;
  std::uint64_t tag = 0;
  record_status status = record_status::pending;
  unsigned acked_step = 0, acked_life = 0;
  std::optional<wire::record_coordinate> coordinate;  // from an AckTracked
  bool delivered = false;                              // committed by the sink at least once
};

struct request_info {
  std::size_t producer = 0;
  std::uint64_t tag = 0;
  ingest_kind kind = ingest_kind::push;
  bool durable = false;
  std::vector<std::size_t> records;  // indices into the ledger
  unsigned life = 0;
  bool answered = false;
};

/// One answer as it arrived, for the history a failure report prints.
struct ack_event {
  unsigned step = 0, life = 0;
  std::size_t record = 0;
  bool acked = false;
};

class ledger {
 public:
  /// Registers a new record and returns its index.
  std::size_t add_record(record_info r);
  std::size_t add_request(request_info r);

  record_info& record(std::size_t i) { return records_[i]; }
  const record_info& record(std::size_t i) const { return records_[i]; }
  const std::vector<record_info>& records() const { return records_; }
  std::vector<record_info>& records() { return records_; }

  /// The record with this payload, if a producer ever sent it.
  std::optional<std::size_t> find(const std::string& payload) const;
  /// The request `tag` of `producer`, if it is still owed an answer.
  request_info* pending_request(std::size_t producer, std::uint64_t tag);
  /// Whether `producer` ever sent a request with this tag.
  bool known_request(std::size_t producer, std::uint64_t tag) const;

  void answer(request_info& req) { req.answered = true; }
  /// Every request still owed an answer becomes "unknown" (the daemon died).
  std::size_t forget_pending();
  std::size_t pending_requests() const;

  void note(ack_event e) { history_.push_back(e); }
  const std::vector<ack_event>& history() const { return history_; }
  /// "acked at step 12 (life 1)", "refused at step 3 (life 0)" ... for one record.
  std::string history_of(std::size_t record) const;

 private:
  std::vector<record_info> records_;
  std::unordered_map<std::string, std::size_t> by_payload_;
  std::map<std::pair<std::size_t, std::uint64_t>, request_info> requests_;
  std::vector<ack_event> history_;
};

}  // namespace weir::sim
