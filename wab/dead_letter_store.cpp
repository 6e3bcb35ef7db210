#include "wab/dead_letter_store.hpp"

#include "wab/wall_clock.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "wab/segment_format.hpp"
#include "wab/segment_writer.hpp"

namespace weir {

namespace {

constexpr std::uint16_t dead_letter_shard = 0xFFFF;
constexpr std::uint64_t dead_letter_segment_bytes = 64ull * 1024 * 1024;

std::string dead_letter_file_name(std::uint64_t seq) { return "dl_" + wab::segment_file_name(seq).substr(4); }

}  // namespace

std::optional<std::uint64_t> dead_letter_sequence(const std::string& name) {
  if (name.rfind("dl_", 0) != 0) return std::nullopt;
  return wab::parse_segment_file_name("seg_" + name.substr(3));
}

dead_letter_store::dead_letter_store(std::shared_ptr<wab::file_io> io, std::string dir, std::uint64_t max_bytes)
    : io_(std::move(io)), dir_(std::move(dir)), max_bytes_(max_bytes) {
  std::lock_guard<std::mutex> guard(mutex_);
  bytes_ = scan_locked();
}

dead_letter_store::~dead_letter_store() = default;

std::uint64_t dead_letter_store::scan_locked() {
  std::uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
    const auto seq = dead_letter_sequence(e.path().filename().string());
    if (!seq) continue;
    next_sequence_ = std::max(next_sequence_, *seq + 1);
    total += e.file_size(ec);
  }
  return total;
}

void dead_letter_store::rescan() {
  std::lock_guard<std::mutex> guard(mutex_);
  bytes_ = scan_locked();
}

std::uint64_t dead_letter_store::bytes() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return bytes_;
}

byte_buffer dead_letter_store::envelope(const sink_record& r, const std::string& reason) {
  byte_buffer out;
  out.push_back(1);
  append_le16(out, r.shard);
  append_le64(out, r.index);
  append_le64(out, static_cast<std::uint64_t>(r.ts_ns));
  const auto seg = r.segment.substr(0, 0xFFFF);
  append_le16(out, static_cast<std::uint16_t>(seg.size()));
  out.insert(out.end(), seg.begin(), seg.end());
  const auto why = reason.substr(0, 0xFFFF);
  append_le16(out, static_cast<std::uint16_t>(why.size()));
  out.insert(out.end(), why.begin(), why.end());
  out.insert(out.end(), r.payload.begin(), r.payload.end());
  return out;
}

std::optional<stored_dead_letter> dead_letter_store::decode_envelope(byte_span p) {
  // version(1) shard(2) index(8) ts(8) = 19 bytes before the segment name
  std::size_t at = 19;
  if (p.size() < at + 2 || p[0] != 1) return std::nullopt;
  stored_dead_letter d;
  d.shard = load_le16(p.data() + 1);
  d.index = load_le64(p.data() + 3);
  auto text = [&](std::string& out) {
    if (at + 2 > p.size()) return false;
    const std::size_t n = load_le16(p.data() + at);
    at += 2;
    if (at + n > p.size()) return false;
    out.assign(reinterpret_cast<const char*>(p.data() + at), n);
    at += n;
    return true;
  };
  if (!text(d.segment) || !text(d.reason)) return std::nullopt;
  d.payload.assign(p.begin() + static_cast<std::ptrdiff_t>(at), p.end());
  return d;
}

dead_letter_store::result dead_letter_store::store(const std::vector<dead_letter>& letters, std::string& error) {
  if (letters.empty()) return result::stored;
  std::vector<byte_buffer> envelopes;
  std::uint64_t need = 0;
  for (const auto& l : letters) {
    envelopes.push_back(envelope(*l.record, l.reason));
    need += envelopes.back().size() + wab::record_header_size;
  }
  std::lock_guard<std::mutex> guard(mutex_);
  // A batch whose letters alone exceed the whole space is taken into an empty
  // store: refusing it would stop delivery for good, whatever the operator frees.
  if (bytes_ > 0 && bytes_ + need + wab::segment_header_size > max_bytes_) return result::full;
  const auto now = wab::wall_clock_ns();
  if (!lock_active(now, error)) return result::failed;
  std::vector<byte_span> spans(envelopes.begin(), envelopes.end());
  const auto before = active_->size();
  const auto r = active_->append(spans, now);
  bytes_ += active_->size() - before;
  const bool synced = r.error == 0 && r.landed == spans.size() && active_->sync() == 0;
  active_lock_.unlock();
  if (!synced) {
    error = "writing dead letters to " + dir_ + " failed";
    active_.reset();
    return result::failed;
  }
  return result::stored;
}

bool dead_letter_store::lock_active(std::int64_t now, std::string& error) {
  // weir-ctl holds a file it requeues or deletes, and may have removed it:
  // letters appended then would be lost with it. Such a file is left for good.
  if (active_ && active_lock_.lock(false) && active_lock_.still_named() && !active_->append_closed() &&
      active_->size() < dead_letter_segment_bytes)
    return true;
  leave_active();
  // A new file can be taken by weir-ctl before the store locks it (it then
  // holds no letter): try the next.
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (!start_file(now, error)) return false;
    wab::file_lock l(active_->path());
    if (!l.valid()) {
      const int e = errno;
      error = "cannot open " + active_->path() + " to lock it: " + std::strerror(e);
      leave_active();
      return false;
    }
    if (l.lock(false) && l.still_named()) {
      active_lock_ = std::move(l);
      return true;
    }
    leave_active();
  }
  error = "cannot lock a new dead-letter file in " + dir_ + ": another process holds each one";
  return false;
}

void dead_letter_store::leave_active() {
  active_lock_ = {};
  if (active_) active_->close_for_append();
  active_.reset();
}

bool dead_letter_store::start_file(std::int64_t now, std::string& error) {
  const std::uint64_t seq = next_sequence_++;
  auto created = wab::segment_writer::create(io_, dir_, dead_letter_shard, seq, now, dead_letter_file_name(seq));
  if (!created) {
    error = "cannot create a dead-letter file in " + dir_ + ": " + std::strerror(-created.error());
    return false;
  }
  active_ = std::move(created).value();
  bytes_ += wab::segment_header_size;
  return true;
}

}  // namespace weir
