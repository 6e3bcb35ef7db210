#pragma once
// Dead letters: records a sink refused for good, kept so an operator can
// inspect and requeue them. `<data_dir>/dead_letter/dl_SSSSSSSS.wab` files in
// the WAB segment format (shard 0xFFFF), each record's payload an envelope:
//
//   version u8 (1) | shard u16 | index u64 | ingest_ts_ns i64 |
//   segment_len u16 | segment | reason_len u16 | reason | original payload
//
// A dead letter is synced before its batch is confirmed. Past
// drain.dead_letter_max_bytes nothing more is stored: delivery stops (the
// batch is retried) until space frees. Letters are appended only under the
// file's lock (wab/file_lock.hpp), which weir-ctl takes to requeue or delete.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "wab/file_io.hpp"
#include "wab/file_lock.hpp"
#include "wire/sink_record.hpp"

namespace weir {

namespace wab {
class segment_writer;
}

struct dead_letter {
  const sink_record* record;
  std::string reason;
};

/// A dead letter as read back from its file.
struct stored_dead_letter {
  std::uint16_t shard = 0;
  std::uint64_t index = 0;  // in its original segment
  std::string segment, reason;
  byte_buffer payload;
};

/// 3 for "dl_00000003.wab"; nullopt for any other name.
std::optional<std::uint64_t> dead_letter_sequence(const std::string& file_name);

class dead_letter_store {
 public:
  enum class result { stored, full, failed };

  /// Scans `dir` for the bytes already held. The directory is the caller's
  /// to create (the daemon makes it 0700 at startup).
  dead_letter_store(std::shared_ptr<wab::file_io> io, std::string dir, std::uint64_t max_bytes);
  ~dead_letter_store();

  /// Appends and syncs the letters; thread-safe.
  result store(const std::vector<dead_letter>& letters, std::string& error);

  std::uint64_t bytes() const;
  std::uint64_t max_bytes() const { return max_bytes_; }
  /// Re-reads the directory size (after an operator removed files).
  void rescan();

  static byte_buffer envelope(const sink_record& r, const std::string& reason);
  /// The inverse of envelope(); nullopt for bytes that are not one.
  static std::optional<stored_dead_letter> decode_envelope(byte_span bytes);

 private:
  std::uint64_t scan_locked();
  /// Locks the file being appended to, or starts a new one; false (with
  /// `error`) if no file can be had.
  bool lock_active(std::int64_t now, std::string& error);
  bool start_file(std::int64_t now, std::string& error);
  /// Appends no more to the current file (it stays, letters and all).
  void leave_active();

  std::shared_ptr<wab::file_io> io_;
  std::string dir_;
  std::uint64_t max_bytes_;
  mutable std::mutex mutex_;
  std::uint64_t bytes_ = 0;
  std::uint64_t next_sequence_ = 1;
  std::shared_ptr<wab::segment_writer> active_;
  wab::file_lock active_lock_;  // on active_'s file; held only while storing
};

}  // namespace weir
