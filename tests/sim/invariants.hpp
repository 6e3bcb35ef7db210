#pragma once
// The durability invariants, checked where they can first be seen:
//
//   no-ack-before-sync        a Durable ack is sent only when its record would
//                             survive a crash at that instant
//   acked-durable-stays       after every step: every acked Durable record not
//                             yet delivered would survive a crash now
//   acked-survives-crash      at a crash: every acked Durable record (and every
//   acked-survives-recovery   acked Buffered one whose bytes were durable) is,
//                             once recovery ran, readable in the WAB at or after
//                             the confirm cursor — or already delivered
//   delivered-was-written     every record the sink gets was sent by a producer
//   record-id-matches         ... with the id of its (segment, index, payload)
//   record-at-its-place       ... and its segment, read from the start, holds
//                             that payload at that index
//   coordinate-unique         no (segment, index) ever names two records
//   tracked-coordinate        an AckTracked names the record's real place
//   producer-order            with sink.concurrency 1, each producer's first
//                             deliveries come in the order it sent them (with
//                             more, each batch is still in order)
//   sequence-not-reused       recovery never numbers a new segment with the
//                             sequence of one whose records were acked or
//                             delivered (their ids would come again)
//   one-reply-per-request     every request is answered once, with the right frame
//   every-acked-delivered     at the end: every acked record reached the sink
//                             (or the dead letters, if the sink refused it)
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/producer_actor.hpp"
#include "sim/sim_sink.hpp"
#include "sim/sim_world.hpp"

namespace weir::sim {

class invariants final : public reply_observer, public delivery_observer {
 public:
  explicit invariants(sim_world& w);

  void on_reply(std::size_t producer, const ingest_reply& reply, std::string_view from) override;
  bool accepting() const override { return w_.accepting; }
  void on_committed(const std::vector<sink_record>& batch, const std::vector<std::size_t>& rejected) override;

  void after_step();
  /// The files now hold only what was durable at the crash.
  void after_crash();
  /// Recovery ran; no actor of the new life has run yet.
  void after_recovery(const std::vector<shard_start>& started);
  /// Acked records in neither the sink nor the dead letters.
  std::size_t undelivered();
  void at_end();

  std::uint64_t acked() const { return acked_; }
  /// Durable records whose ack was written in a step of the shard writer (a
  /// sync it ran itself) and of the fsync group.
  std::uint64_t durable_acked_by_writer() const { return durable_by_writer_; }
  std::uint64_t durable_acked_by_fsync_group() const { return durable_by_fsync_group_; }
  std::uint64_t first_deliveries() const { return first_deliveries_; }
  std::uint64_t deliveries() const { return deliveries_; }

 private:
  /// In a durable segment of its shard, or its dead letter is durable.
  bool survives_crash(const record_info& r, std::string* where = nullptr);
  bool dead_lettered(const record_info& r);
  std::string describe(std::size_t record) const;
  void check_reply(std::size_t producer, const ingest_reply& reply, std::string_view from);
  /// Notes that a record of `segment` ("shard_NN/seg_S.wab") was handed out.
  void note_used(std::uint16_t shard, const std::string& segment);

  sim_world& w_;
  std::vector<std::size_t> awaiting_;      // acked, durable, not yet delivered
  std::vector<std::size_t> must_survive_;  // decided at the last crash
  std::map<std::pair<std::string, std::uint64_t>, std::size_t> coordinates_;  // delivered (segment, index)
  std::vector<std::uint64_t> last_first_seq_;                                 // per producer
  std::map<std::uint16_t, std::uint64_t> used_sequence_;  // per shard: highest sequence with a record out
  std::uint64_t acked_ = 0, first_deliveries_ = 0, deliveries_ = 0;
  std::uint64_t durable_by_writer_ = 0, durable_by_fsync_group_ = 0;
};

}  // namespace weir::sim
