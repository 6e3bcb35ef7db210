#include "wab/confirm_cursor.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace weir::wab {

namespace {

constexpr std::size_t slot_stride = 4096;
constexpr std::size_t file_size = 2 * slot_stride;
constexpr std::size_t slot_size = 44;
constexpr std::uint32_t slot_version = 2;
constexpr std::size_t v1_size = 36;

struct slot {
  std::uint64_t generation;
  confirm_cursor cursor;
};

std::array<std::uint8_t, slot_size> encode_slot(std::uint64_t generation, const confirm_cursor& c) {
  std::array<std::uint8_t, slot_size> b{};
  std::memcpy(b.data(), "WCUR", 4);
  store_le32(b.data() + 4, slot_version);
  store_le64(b.data() + 8, generation);
  store_le64(b.data() + 16, c.sequence);
  store_le64(b.data() + 24, c.offset);
  store_le64(b.data() + 32, c.index);
  store_le32(b.data() + 40, crc32_of(byte_span(b.data(), 40)));
  return b;
}

enum class slot_state { empty, valid, damaged };

slot_state decode_slot(const std::uint8_t* b, slot& out) {
  if (std::all_of(b, b + slot_size, [](std::uint8_t x) { return x == 0; })) return slot_state::empty;
  if (std::memcmp(b, "WCUR", 4) != 0 || load_le32(b + 4) != slot_version ||
      load_le32(b + 40) != crc32_of(byte_span(b, 40)))
    return slot_state::damaged;
  out = {load_le64(b + 8), {load_le64(b + 16), load_le64(b + 24), load_le64(b + 32)}};
  return slot_state::valid;
}

/// The single cursor of a version-1 file.
std::optional<confirm_cursor> decode_v1(const std::uint8_t* b) {
  if (std::memcmp(b, "WCUR", 4) != 0 || load_le32(b + 4) != 1 || load_le32(b + 32) != crc32_of(byte_span(b, 32)))
    return std::nullopt;
  return confirm_cursor{load_le64(b + 8), load_le64(b + 16), load_le64(b + 24)};
}

}  // namespace

std::string cursor_file_name_for(const std::string& sink) {
  return sink == default_sink_name ? cursor_file_name : std::string(cursor_file_name) + "-" + sink;
}

cursor_file::cursor_file(std::shared_ptr<file_io> io, std::string shard_dir, const std::string& sink)
    : io_(std::move(io)), dir_(std::move(shard_dir)), path_(dir_ + "/" + cursor_file_name_for(sink)) {}

cursor_file::~cursor_file() {
  if (fd_ >= 0) io_->close(fd_);
}

std::optional<confirm_cursor> cursor_file::load(bool* damaged) {
  if (damaged) *damaged = false;
  if (fd_ >= 0) io_->close(fd_);
  fd_ = -1;
  generation_ = 0;
  loaded_.reset();
  const int fd = io_->open_existing(path_);
  if (fd < 0) return std::nullopt;
  std::array<std::uint8_t, file_size + 1> b{};
  const ssize_t n = pread_full(*io_, fd, b.data(), b.size(), 0);
  if (n == static_cast<ssize_t>(v1_size)) {
    io_->close(fd);
    loaded_ = decode_v1(b.data());
    if (!loaded_ && damaged) *damaged = true;
    return loaded_;
  }
  if (n != static_cast<ssize_t>(file_size)) {
    io_->close(fd);
    if (damaged) *damaged = true;
    return std::nullopt;
  }
  slot best{};
  bool any_valid = false, any_damaged = false;
  for (std::size_t i = 0; i < 2; ++i) {
    slot s{};
    const auto state = decode_slot(b.data() + i * slot_stride, s);
    any_damaged |= state == slot_state::damaged;
    if (state == slot_state::valid && (!any_valid || s.generation > best.generation)) best = s;
    any_valid |= state == slot_state::valid;
  }
  // A damaged slot beside a valid one is a store torn by a crash: the other
  // slot is the cursor. Both unusable is damage.
  if (!any_valid && any_damaged && damaged) *damaged = true;
  fd_ = fd;  // the right shape: stores go in place from now on
  generation_ = any_valid ? best.generation : 0;
  if (any_valid) loaded_ = best.cursor;
  return loaded_;
}

int cursor_file::create(const std::optional<confirm_cursor>& c) {
  const std::string tmp = path_ + ".tmp";
  io_->unlink(tmp);  // left by a crash between create and rename
  const int fd = io_->create_exclusive(tmp);
  if (fd < 0) return fd;
  byte_buffer image(file_size, 0);
  if (c) {
    // Generation g lives in slot g % 2.
    const auto s = encode_slot(1, *c);
    std::copy(s.begin(), s.end(), image.begin() + slot_stride);
  }
  int rc = pwrite_all(*io_, fd, image, 0);
  if (rc == 0) rc = io_->fdatasync(fd);
  if (rc == 0) rc = io_->rename(tmp, path_);
  if (rc == 0) rc = io_->fsync_directory(dir_);
  if (rc < 0) {
    io_->close(fd);
    io_->unlink(tmp);
    return rc;
  }
  if (fd_ >= 0) io_->close(fd_);
  fd_ = fd;
  generation_ = c ? 1 : 0;
  loaded_ = c;
  return 0;
}

int cursor_file::reserve() {
  if (fd_ >= 0) return 0;
  return create(loaded_);
}

int cursor_file::store(const confirm_cursor& c) {
  if (fd_ < 0) return create(c);
  const std::uint64_t generation = generation_ + 1;
  const auto s = encode_slot(generation, c);
  int rc = pwrite_all(*io_, fd_, s, (generation % 2) * slot_stride);
  if (rc == 0) rc = io_->fdatasync(fd_);
  // On failure the slot may hold anything; the other one still holds the
  // last cursor made durable, and the next store goes to this slot again.
  if (rc < 0) return rc;
  generation_ = generation;
  loaded_ = c;
  return 0;
}

std::optional<confirm_cursor> load_cursor(file_io& io, const std::string& shard_dir, bool* damaged,
                                          const std::string& sink) {
  cursor_file f(std::shared_ptr<file_io>(&io, [](file_io*) {}), shard_dir, sink);
  return f.load(damaged);
}

int store_cursor(file_io& io, const std::string& shard_dir, const confirm_cursor& c, const std::string& sink) {
  cursor_file f(std::shared_ptr<file_io>(&io, [](file_io*) {}), shard_dir, sink);
  f.load();
  return f.store(c);
}

std::vector<std::string> cursor_sinks(file_io& io, const std::string& shard_dir) {
  std::vector<std::string> names, sinks;
  if (io.list_directory(shard_dir, names) < 0) return {default_sink_name};  // the default's, at least
  const std::string own = cursor_file_name, others = own + "-";
  for (const auto& name : names) {
    if (name == own) sinks.push_back(default_sink_name);
    else if (name.rfind(others, 0) == 0 && sink_name_ok(name.substr(others.size()))) sinks.push_back(name.substr(others.size()));
  }
  std::sort(sinks.begin(), sinks.end());
  return sinks;
}

std::map<std::string, confirm_cursor> load_every_cursor(file_io& io, const std::string& shard_dir) {
  std::map<std::string, confirm_cursor> out;
  for (const auto& sink : cursor_sinks(io, shard_dir))
    if (auto c = load_cursor(io, shard_dir, nullptr, sink)) out.emplace(sink, *c);
  return out;
}

cursor_span span_of(const std::map<std::string, confirm_cursor>& cursors) {
  cursor_span out;
  for (const auto& [sink, c] : cursors) {
    if (!out.oldest || c < *out.oldest) out.oldest = c;
    if (!out.newest || *out.newest < c) out.newest = c;
  }
  return out;
}

}  // namespace weir::wab
