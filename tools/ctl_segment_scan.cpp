#include "tools/ctl_segment_scan.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "wab/wall_clock.hpp"

namespace weir::ctl {

namespace {

/// Why `path` is not a segment file to read: a directory, a FIFO, a device.
std::string not_a_file(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::string("cannot stat: ") + std::strerror(errno);
  if (S_ISREG(st.st_mode)) return {};
  if (S_ISDIR(st.st_mode)) return "a directory, not a segment file";
  if (S_ISLNK(st.st_mode)) return "a symbolic link (weir never follows one to a segment)";
  return "not a regular file";
}

}  // namespace

segment_scan scan_segment(wab::file_io& io, const std::string& path,
                          const std::function<void(const wab::stored_record&)>& each,
                          const std::function<void(const wab::segment_header&)>& on_header) {
  segment_scan out;
  if (out.problem = not_a_file(path); !out.problem.empty()) return out;
  const int fd = io.open_existing(path);
  if (fd < 0) {
    out.problem = std::string("cannot open: ") + std::strerror(-fd);
    return out;
  }
  const std::int64_t signed_size = io.size(fd);
  const auto size = static_cast<std::uint64_t>(signed_size < 0 ? 0 : signed_size);
  const auto decoded = wab::read_segment_header(io, fd);
  if (!decoded) {
    io.close(fd);
    out.problem = std::string("header unreadable: ") + std::string(wab::name_of(decoded.error()));
    return out;
  }
  out.header = decoded.value();
  const auto& header = *out.header;
  if (on_header) on_header(header);
  const auto seal = wab::believable_seal(io, fd, header, size);
  out.sealed = seal.has_value();
  // As recovery judges it: a seal not believed though the file is long
  // enough for it is the seal's own damage, not a cut file.
  out.seal_damaged = header.seal && !seal &&
                     (!wab::seal_count_possible(header, *header.seal) || header.seal->data_end <= size);
  // Reads every record up to `end`, showing `each` those from offset
  // `show_from` on; the counts start afresh each time.
  const auto read_up_to = [&](std::uint64_t end, std::uint64_t show_from) {
    auto reader = std::make_unique<wab::segment_reader>(io, fd, header, end, 0, 1,
                                                        wab::resync_window_for(header, wab::wall_clock_ns()));
    out.records = 0;
    out.first_damage.reset();
    for (;;) {
      const auto index = reader->next_index();
      const auto damaged_before = reader->damaged();
      auto r = reader->next();
      if (reader->damaged() > damaged_before && !out.first_damage)
        out.first_damage = segment_scan::damage{index, reader->first_damage().value_or(reader->valid_end())};
      if (!r) break;
      ++out.records;
      if (each && r->offset >= show_from) each(*r);
    }
    return reader;
  };
  auto reader_ptr = read_up_to(seal ? seal->data_end : size, 0);
  const auto stop = reader_ptr->stop();
  if (seal && stop != wab::scan_stop::none && stop != wab::scan_stop::end_of_file && stop != wab::scan_stop::io_error &&
      size > seal->data_end) {
    // Records that stop checking before the seal's end: the drain then
    // reads on to the file's end (a seal weir never wrote may end inside a
    // record), and so does this; what it showed already is not shown again.
    const std::uint64_t shown_to = reader_ptr->valid_end();
    const auto records = out.records;
    const auto first_damage = out.first_damage;
    auto further = read_up_to(size, shown_to);
    if (further->valid_end() > seal->data_end) {
      out.seal_damaged = true;
      reader_ptr = std::move(further);
    } else {  // nothing past the seal: the first read's counts stand
      out.records = records;
      out.first_damage = first_damage;
    }
  }
  auto& reader = *reader_ptr;
  // Every record to the seal's end checked, one after another, yet fewer
  // than it counts: the count is what lies, as the drain says (no loss).
  if (seal && !out.seal_damaged && reader.stop() == wab::scan_stop::end_of_file && reader.damaged() == 0 &&
      seal->records > out.records)
    out.seal_damaged = true;
  io.close(fd);
  out.records_end = reader.valid_end();
  out.damaged = reader.damaged();
  out.recovered = reader.recovered();
  out.lost = out.damaged - out.recovered;
  if (reader.stop() == wab::scan_stop::io_error)
    out.problem = std::string("read failed: ") + std::strerror(-reader.error());
  // What a seal counts is synced, so possibly acked: records it counts that
  // are not there (records stopping short of it, or a file cut after it) are lost.
  const std::optional<wab::segment_seal> claimed = seal ? seal : out.seal_damaged ? std::nullopt : header.seal;
  out.cut = header.seal && !seal && !out.seal_damaged;
  if (claimed && (out.cut || reader.stop() != wab::scan_stop::end_of_file)) {
    // (Records recovered whole past damage are among out.records.)
    out.lost += claimed->records > out.records ? claimed->records - out.records : 0;
    if (!out.first_damage) out.first_damage = segment_scan::damage{reader.next_index(), reader.valid_end()};
  }
  return out;
}

std::vector<std::pair<std::uint64_t, std::filesystem::path>> segment_files(const std::filesystem::path& shard_dir) {
  std::vector<std::pair<std::uint64_t, std::filesystem::path>> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(shard_dir, ec))
    if (auto seq = wab::parse_segment_file_name(e.path().filename().string())) files.emplace_back(*seq, e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace weir::ctl
