#include "sim/segment_scan.hpp"

#include <chrono>

#include "wab/segment_reader.hpp"

namespace weir::sim {

std::vector<std::pair<std::uint64_t, std::string>> scan_segment(wab::file_io& io, const std::string& path,
                                                                std::uint64_t offset, std::uint64_t index) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  const int fd = io.open_existing(path);
  if (fd < 0) return out;
  const std::int64_t size = io.size(fd);
  auto header = wab::read_segment_header(io, fd);
  if (header && size > 0) {
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
    wab::segment_reader reader(io, fd, header.value(), wab::records_end(header.value(), static_cast<std::uint64_t>(size)),
                               offset, index,
                               wab::resync_window_for(header.value(), now));
    while (auto rec = reader.next()) out.emplace_back(rec->index, std::string(rec->payload.begin(), rec->payload.end()));
  }
  io.close(fd);
  return out;
}

}  // namespace weir::sim
