// weir-ctl segments: every segment of every shard (and of every replica this
// node holds), each record's CRC checked, and what startup recovery would do
// with the directory, from recovery itself run on a file_io that changes
// nothing. Offline and read-only: safe beside a running daemon.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "tools/ctl_commands.hpp"
#include "wab/dry_run_file_io.hpp"
#include "wab/recovery.hpp"
#include "wab/segment_format.hpp"
#include "wab/segment_reader.hpp"
#include "wab/wall_clock.hpp"

namespace weir::ctl {

namespace {

namespace fs = std::filesystem;

/// One segment file, every record read and checked.
nlohmann::json check_segment(wab::file_io& io, const fs::path& file, std::int64_t now_ns) {
  nlohmann::json out{{"file", file.filename().string()}, {"records", 0},     {"damaged", 0},
                     {"recovered", 0},                   {"lost", 0},        {"first_damage", nullptr},
                     {"sealed", false},                  {"record_bytes", 0}};
  const int fd = io.open_existing(file.string());
  if (fd < 0) {
    out["problem"] = std::string("cannot open: ") + std::strerror(-fd);
    return out;
  }
  const std::int64_t size = io.size(fd);
  out["file_bytes"] = size < 0 ? 0 : size;
  const auto decoded = wab::read_segment_header(io, fd);
  if (!decoded) {
    io.close(fd);
    out["problem"] = std::string("header unreadable: ") + std::string(wab::name_of(decoded.error()));
    return out;
  }
  const auto& header = decoded.value();
  const auto file_bytes = static_cast<std::uint64_t>(size < 0 ? 0 : size);
  const auto seal = wab::usable_seal(header, file_bytes);
  wab::segment_reader reader(io, fd, header, wab::records_end(header, file_bytes), 0, 1,
                             wab::resync_window_for(header, now_ns));
  std::uint64_t records = 0;
  for (;;) {
    const auto index = reader.next_index();
    const auto damaged_before = reader.damaged();
    const bool got = reader.advance();
    if (reader.damaged() > damaged_before && out["first_damage"].is_null())
      out["first_damage"] = {{"index", index}, {"offset", reader.first_damage().value_or(reader.valid_end())}};
    if (!got) break;
    ++records;
  }
  io.close(fd);
  out["records"] = records;
  out["record_bytes"] = reader.valid_end();
  out["sealed"] = seal.has_value();
  out["damaged"] = reader.damaged();
  out["recovered"] = reader.recovered();
  std::uint64_t lost = reader.damaged() - reader.recovered();
  if (reader.stop() == wab::scan_stop::io_error) out["problem"] = std::string("read failed: ") + std::strerror(-reader.error());
  // A sealed segment's records run to its seal: stopping short loses the rest.
  if (seal && reader.stop() != wab::scan_stop::end_of_file) {
    lost += seal->records > records ? seal->records - records : 0;
    if (out["first_damage"].is_null()) out["first_damage"] = {{"index", reader.next_index()}, {"offset", reader.valid_end()}};
  }
  out["lost"] = lost;
  return out;
}

nlohmann::json check_shard(const fs::path& shard_dir, const std::string& quarantine_dir) {
  wab::dry_run_file_io io;
  const auto now = wab::wall_clock_ns();
  std::vector<std::pair<std::uint64_t, fs::path>> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(shard_dir, ec))
    if (auto seq = wab::parse_segment_file_name(e.path().filename().string())) files.emplace_back(*seq, e.path());
  std::sort(files.begin(), files.end());
  nlohmann::json segments = nlohmann::json::array();
  for (const auto& [seq, path] : files) segments.push_back(check_segment(io, path, now));

  nlohmann::json at_start = nlohmann::json::array();
  auto report = [&](const std::vector<wab::recovery_event>& events) {
    for (const auto& e : events) {
      nlohmann::json fields = nlohmann::json::object();
      for (const auto& [k, v] : e.fields) fields[k] = v;
      at_start.push_back({{"level", e.level == wab::recovery_event::severity::error ? "error" : "warning"},
                          {"what", e.what},
                          {"fields", fields}});
    }
  };
  try {
    report(wab::recover_shard(io, shard_dir.string(), quarantine_dir, now).events);
  } catch (const wab::recovery_error& e) {
    report(e.events);
    at_start.push_back({{"level", "error"}, {"what", std::string("recovery would fail: ") + e.what()}, {"fields", {}}});
  }
  return {{"dir", shard_dir.string()}, {"segments", segments}, {"at_next_start", at_start}};
}

/// wab/shard_NN, then replica/node_N/shard_NN, in name order.
std::vector<fs::path> shard_dirs(const fs::path& data_dir) {
  std::vector<fs::path> out;
  auto shards_in = [&](const fs::path& dir) {
    std::vector<fs::path> found;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_directory() && e.path().filename().string().rfind("shard_", 0) == 0) found.push_back(e.path());
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  };
  shards_in(data_dir / "wab");
  std::vector<fs::path> origins;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(data_dir / "replica", ec))
    if (e.is_directory() && e.path().filename().string().rfind("node_", 0) == 0) origins.push_back(e.path());
  std::sort(origins.begin(), origins.end());
  for (const auto& o : origins) shards_in(o);
  return out;
}

bool is_problem(const nlohmann::json& seg) {
  return seg.contains("problem") || seg["damaged"].get<std::uint64_t>() > 0 || seg["lost"].get<std::uint64_t>() > 0;
}

std::string fields_text(const nlohmann::json& fields) {
  std::string s;
  for (const auto& [k, v] : fields.items()) s += " " + k + "=" + v.get<std::string>();
  return s;
}

void print_text(const nlohmann::json& shards, const fs::path& data_dir) {
  for (const auto& sh : shards) {
    std::printf("%s\n", fs::relative(sh["dir"].get<std::string>(), data_dir).c_str());
    if (sh["segments"].empty()) std::printf("  no segments\n");
    for (const auto& s : sh["segments"]) {
      std::string verdict = "ok";
      if (s.contains("problem")) verdict = "DAMAGED: " + s["problem"].get<std::string>();
      else if (is_problem(s))
        verdict = "DAMAGED: record " + std::to_string(s["first_damage"]["index"].get<std::uint64_t>()) +
                  " (offset " + std::to_string(s["first_damage"]["offset"].get<std::uint64_t>()) +
                  ") does not check; " + std::to_string(s["damaged"].get<std::uint64_t>()) + " damaged record(s) read past, " +
                  std::to_string(s["recovered"].get<std::uint64_t>()) + " recovered, " +
                  std::to_string(s["lost"].get<std::uint64_t>()) + " lost" +
                  (s["sealed"].get<bool>() ? " (sealed: the next start keeps it unread; the drain delivers every "
                                             "record that checks and copies the file to quarantine)"
                                           : "");
      std::printf("  %s  %-6s  %llu records  %llu bytes of records  %s\n", s["file"].get<std::string>().c_str(),
                  s["sealed"].get<bool>() ? "sealed" : "open", s["records"].get<unsigned long long>(),
                  s["record_bytes"].get<unsigned long long>(), verdict.c_str());
    }
    for (const auto& e : sh["at_next_start"])
      std::printf("  at the next start (%s): %s%s\n", e["level"].get<std::string>().c_str(),
                  e["what"].get<std::string>().c_str(), fields_text(e["fields"]).c_str());
  }
}

}  // namespace

int segments_check(const std::string& data_dir, bool json) {
  nlohmann::json out = nlohmann::json::array();
  std::size_t damaged = 0, errors = 0, segments = 0;
  for (const auto& dir : shard_dirs(data_dir)) {
    auto sh = check_shard(dir, (fs::path(data_dir) / "quarantine").string());
    for (const auto& s : sh["segments"]) {
      ++segments;
      damaged += is_problem(s);
    }
    for (const auto& e : sh["at_next_start"]) errors += e["level"] == "error";
    out.push_back(std::move(sh));
  }
  if (json) std::cout << out.dump() << "\n";
  else print_text(out, data_dir);
  if (damaged == 0 && errors == 0) {
    if (!json) std::printf("%zu segment(s) in %zu shard(s), every record checks\n", segments, out.size());
    return 0;
  }
  std::fprintf(stderr, "weir-ctl segments: %zu damaged segment(s), %zu repair(s) the next start would report as errors\n",
               damaged, errors);
  return 1;
}

}  // namespace weir::ctl
