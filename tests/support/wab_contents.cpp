#include "support/wab_contents.hpp"

#include <algorithm>

#include "wab/file_io.hpp"
#include "wab/segment_format.hpp"
#include "wab/segment_reader.hpp"

namespace weir::test {

segment_contents read_segment_file(const std::filesystem::path& file) {
  auto io = wab::default_file_io();
  segment_contents out;
  const int fd = io->open_existing(file.string());
  if (fd < 0) return {{}, "unopenable"};
  if (const auto header = wab::read_segment_header(*io, fd)) {
    wab::segment_reader r(*io, fd, header.value(),
                          wab::records_end(header.value(), static_cast<std::uint64_t>(io->size(fd))));
    while (auto rec = r.next()) out.payloads.emplace_back(rec->payload.begin(), rec->payload.end());
    out.stop = wab::name_of(r.stop());
  } else {
    out.stop = "bad header";
  }
  io->close(fd);
  return out;
}

std::vector<wab_record> shard_records(const std::filesystem::path& shard_dir) {
  auto io = wab::default_file_io();
  std::vector<std::pair<std::uint64_t, std::filesystem::path>> segments;
  for (const auto& e : std::filesystem::directory_iterator(shard_dir))
    if (auto seq = wab::parse_segment_file_name(e.path().filename().string())) segments.emplace_back(*seq, e.path());
  std::sort(segments.begin(), segments.end());
  std::vector<wab_record> out;
  for (const auto& [seq, path] : segments) {
    const int fd = io->open_existing(path.string());
    if (fd < 0) continue;
    const std::string name = shard_dir.filename().string() + "/" + path.filename().string();
    const auto header = wab::read_segment_header(*io, fd);
    if (!header) {
      io->close(fd);
      continue;
    }
    wab::segment_reader reader(*io, fd, header.value(),
                               wab::records_end(header.value(), static_cast<std::uint64_t>(io->size(fd))));
    while (auto r = reader.next()) out.push_back({name, r->index, std::string(r->payload.begin(), r->payload.end())});
    io->close(fd);
  }
  return out;
}

std::vector<std::vector<wab_record>> all_shard_records(const std::filesystem::path& data_dir) {
  std::vector<std::filesystem::path> dirs;
  for (const auto& e : std::filesystem::directory_iterator(data_dir / "wab"))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  std::vector<std::vector<wab_record>> out;
  for (const auto& d : dirs) out.push_back(shard_records(d));
  return out;
}

}  // namespace weir::test
