#pragma once
// append_notice: how far a shard's writer has written, shared by the writer
// and the shard's drain, so that a write wakes the drain with an `appended`
// message only when the drain waits for records (new segments are always
// told by message). While it lingers over a batch it needs no message for
// each write (a lone producer paid a thread switch per record for one, on
// the CPU that runs the producer's next request): it reads what the notice
// says when the linger ends, or when the writes since it last looked could
// fill the batch.
//
// The writer publishes after every write and each new segment, and retires
// the segment it seals before it tells the drain so; from then on the notice
// never names that segment again, and the drain can delete it once
// delivered without a stale notice bringing it back.
#include <cstdint>
#include <mutex>

namespace weir {

class append_notice {
 public:
  struct written_end {
    std::uint64_t sequence = 0;  // 0: nothing written since the last segment was retired
    std::uint64_t end = 0;       // bytes readable in it, at a record boundary
  };

  /// Writer: `sequence` is readable up to `end`, `records` more records
  /// since the last publish. True when the drain asked to be told: send it
  /// the message (the request is used up).
  bool publish(std::uint64_t sequence, std::uint64_t end, std::uint64_t records) {
    std::lock_guard<std::mutex> guard(mutex_);
    written_ = {sequence, end};
    records_since_taken_ += records;
    if (!wanted_ || !due()) return false;
    wanted_ = false;
    return true;
  }

  /// Writer: `sequence` is sealed. Called before the drain is told.
  void retire(std::uint64_t sequence) {
    std::lock_guard<std::mutex> guard(mutex_);
    if (written_.sequence == sequence) written_ = {};
  }

  /// Drain: where the written data ends now. Growth is counted from here,
  /// and a wish for a message is dropped: the drain asks again for what it
  /// needs after it read this.
  written_end take() {
    std::lock_guard<std::mutex> guard(mutex_);
    taken_ = written_;
    records_since_taken_ = 0;
    wanted_ = false;
    return written_;
  }

  /// Drain: asks for a message at the first publish that brings `bytes` or
  /// `records` more than the last take (either 0: at the next publish), or
  /// a new segment. True instead when that has already happened: take()
  /// now rather than wait.
  bool wake_after(std::uint64_t bytes, std::uint64_t records) {
    std::lock_guard<std::mutex> guard(mutex_);
    want_bytes_ = bytes;
    want_records_ = records;
    wanted_ = !due();
    return !wanted_;
  }

 private:
  bool due() const {
    if (written_.sequence != taken_.sequence) return true;
    if (written_.end == taken_.end) return false;
    if (want_bytes_ == 0 || want_records_ == 0) return true;
    return written_.end - taken_.end >= want_bytes_ || records_since_taken_ >= want_records_;
  }

  std::mutex mutex_;
  written_end written_;
  written_end taken_;
  std::uint64_t records_since_taken_ = 0;
  bool wanted_ = false;
  std::uint64_t want_bytes_ = 0;
  std::uint64_t want_records_ = 0;
};

}  // namespace weir
