// weir-ctl quarantine: the files recovery and the drain copied aside
// (damaged segments, or a reused file a crash left under a segment's name),
// each read and checked as a segment; `inspect` prints one's records.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "tools/ctl_commands.hpp"
#include "tools/ctl_segment_scan.hpp"
#include "wab/dry_run_file_io.hpp"

namespace weir::ctl {

namespace {

namespace fs = std::filesystem;

std::string age_of(const fs::path& file) {
  std::error_code ec;
  const auto t = fs::last_write_time(file, ec);
  if (ec) return "?";
  const auto age = std::chrono::duration_cast<std::chrono::minutes>(fs::file_time_type::clock::now() - t).count();
  if (age < 60) return std::to_string(age) + " min ago";
  if (age < 48 * 60) return std::to_string(age / 60) + " h ago";
  return std::to_string(age / (24 * 60)) + " days ago";
}

}  // namespace

int quarantine_list(const std::string& data_dir, bool json) {
  const fs::path dir = fs::path(data_dir) / "quarantine";
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::error_code type_ec;
    if (e.is_regular_file(type_ec)) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  wab::dry_run_file_io io;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : files) {
    const auto s = scan_segment(io, f.string());
    std::error_code size_ec;
    const auto bytes = fs::file_size(f, size_ec);
    nlohmann::json row{{"file", f.filename().string()}, {"bytes", size_ec ? 0 : bytes}, {"age", age_of(f)},
                       {"records", s.records},          {"damaged", s.damaged},         {"lost", s.lost}};
    if (s.header) row["segment"] = wab::shard_dir_name(s.header->shard) + "/" + wab::segment_file_name(s.header->sequence);
    if (!s.problem.empty()) row["problem"] = s.problem;
    out.push_back(std::move(row));
  }
  if (json) {
    std::cout << out.dump() << "\n";
    return 0;
  }
  if (out.empty()) std::printf("quarantine is empty (%s)\n", dir.c_str());
  for (const auto& r : out)
    std::printf("%s  %llu bytes  copied %s  %llu records that check, %llu damaged, %llu lost%s\n",
                r["file"].get<std::string>().c_str(), r["bytes"].get<unsigned long long>(), r["age"].get<std::string>().c_str(),
                r["records"].get<unsigned long long>(), r["damaged"].get<unsigned long long>(),
                r["lost"].get<unsigned long long>(),
                r.contains("problem") ? ("  (" + r["problem"].get<std::string>() + ")").c_str() : "");
  return 0;
}

}  // namespace weir::ctl
