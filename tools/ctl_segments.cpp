// weir-ctl segments: every segment of every shard (and of every replica this
// node holds), each record's CRC checked, and what recovery would do with
// each directory, from recovery itself run on a file layer that changes
// nothing. Offline and read-only: safe beside a running daemon.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "tools/ctl_commands.hpp"
#include "tools/ctl_segment_scan.hpp"
#include "wab/confirm_cursor.hpp"
#include "wab/cursor_trust.hpp"
#include "wab/dry_run_file_io.hpp"
#include "wab/recovery.hpp"
#include "wab/segment_format.hpp"

namespace weir::ctl {

namespace {

namespace fs = std::filesystem;

nlohmann::json segment_row(const fs::path& file, const segment_scan& s) {
  nlohmann::json row{{"file", file.filename().string()}, {"records", s.records},
                     {"records_end", s.records_end},      {"sealed", s.sealed},
                     {"cut", s.cut},                      {"damaged", s.damaged},
                     {"recovered", s.recovered},          {"lost", s.lost},
                     {"seal_damaged", s.seal_damaged},    {"first_damage", nullptr}};
  std::error_code ec;
  const auto bytes = fs::file_size(file, ec);
  row["file_bytes"] = ec ? 0 : bytes;
  if (s.first_damage) row["first_damage"] = {{"index", s.first_damage->index}, {"offset", s.first_damage->offset}};
  if (!s.problem.empty()) row["problem"] = s.problem;
  return row;
}

nlohmann::json event_json(const wab::recovery_event& e) {
  nlohmann::json fields = nlohmann::json::object();
  for (const auto& [k, v] : e.fields) fields[k] = v;
  return {{"level", e.level == wab::recovery_event::severity::error ? "error" : "warning"},
          {"what", e.what},
          {"fields", fields}};
}

/// The shard's segment files as the next start will find them after
/// recovery (the dry run's renames followed): sequence -> the real file.
std::map<std::uint64_t, std::string> segments_after_recovery(wab::dry_run_file_io& io, const fs::path& shard_dir) {
  std::map<std::uint64_t, std::string> out;
  std::vector<std::string> names;
  if (io.list_directory(shard_dir.string(), names) < 0) return out;
  for (const auto& n : names)
    if (const auto seq = wab::parse_segment_file_name(n)) out[*seq] = io.real_path((shard_dir / n).string());
  return out;
}

/// The confirm cursor's verdict as the drain will give it at the next
/// start (wab/cursor_trust.hpp): a repair at error level when it is not
/// trusted.
std::optional<nlohmann::json> cursor_repair(wab::dry_run_file_io& io, const fs::path& shard_dir,
                                            const std::map<std::uint64_t, std::uint64_t>& records_end,
                                            const std::string& sink) {
  bool damaged = false;
  const auto cursor = wab::load_cursor(io, shard_dir.string(), &damaged, sink);
  if (damaged)
    return nlohmann::json{{"level", "error"},
                          {"what", "confirm cursor unreadable; the shard is delivered from its first segment "
                                   "(duplicates possible)"},
                          {"fields", {{"sink", sink}}}};
  if (!cursor) return std::nullopt;
  const auto verdict = wab::judge_cursor(io, shard_dir.string(), *cursor, records_end);
  if (verdict == wab::cursor_verdict::trusted) {
    // Believed: what it has passed was delivered, and goes. Said, so that a
    // cursor copied from elsewhere or edited is seen before it deletes.
    std::uint64_t passed = 0;
    for (const auto& [seq, end] : records_end) passed += seq < cursor->sequence;
    if (passed == 0) return std::nullopt;
    return nlohmann::json{{"level", "warning"},
                          {"what", "the confirm cursor has passed segments: they are deleted once every sink's cursor has passed them"},
                          {"fields", {{"sink", sink},
                                      {"segments", std::to_string(passed)},
                                      {"cursor_segment", std::to_string(cursor->sequence)},
                                      {"cursor_index", std::to_string(cursor->index)}}}};
  }
  return nlohmann::json{{"level", "error"},
                        {"what", wab::why_untrusted(verdict) + "; it is not trusted: nothing is deleted and the shard "
                                                                "is delivered from its oldest segment (duplicates possible)"},
                        {"fields", {{"sink", sink},
                                    {"cursor_segment", std::to_string(cursor->sequence)},
                                    {"cursor_offset", std::to_string(cursor->offset)},
                                    {"cursor_index", std::to_string(cursor->index)}}}};
}

/// What the next start does with a shard directory, run on `io` (a dry run):
/// recovery's repairs, and (`judge_cursor`) the drain's verdict on the
/// confirm cursor, against the segments as recovery leaves them.
struct next_start_repairs {
  nlohmann::json repairs = nlohmann::json::array();
  std::uint64_t sealed_now = 0;
};

next_start_repairs dry_run_next_start(wab::dry_run_file_io& io, const fs::path& shard_dir,
                                      const std::string& quarantine_dir, bool judge_cursor) {
  next_start_repairs out;
  try {
    const auto r = wab::recover_shard(io, shard_dir.string(), quarantine_dir);
    for (const auto& e : r.events) out.repairs.push_back(event_json(e));
    out.sealed_now = r.sealed_segments;
    std::map<std::uint64_t, std::uint64_t> records_end;
    for (const auto& seg : r.segments) records_end[seg.sequence] = seg.valid_bytes;
    if (judge_cursor)
      for (const auto& sink : wab::cursor_sinks(io, shard_dir.string()))
        if (auto c = cursor_repair(io, shard_dir, records_end, sink)) out.repairs.push_back(std::move(*c));
  } catch (const wab::recovery_error& e) {
    for (const auto& ev : e.events) out.repairs.push_back(event_json(ev));
    out.repairs.push_back({{"level", "error"},
                           {"what", std::string("recovery would fail: ") + e.what()},
                           {"fields", nlohmann::json::object()}});
  }
  return out;
}

/// `when`: "next_start" for the node's own shards (startup recovers them),
/// "failover" for a replica (recovered when this node comes to deliver it).
nlohmann::json check_shard(const fs::path& shard_dir, const std::string& quarantine_dir, const std::string& when) {
  wab::dry_run_file_io io;
  wab::posix_file_io disk;  // the files as they are now, read-only
  const auto files = segment_files(shard_dir);
  const auto next = dry_run_next_start(io, shard_dir, quarantine_dir, when == "next_start");
  const auto& repairs = next.repairs;
  // A header that does not check is damage, unless recovery calls it routine
  // (a segment whose creation a crash interrupted: it never held a record).
  auto routine = [&](const fs::path& file) {
    for (const auto& e : repairs)
      if (e["fields"].value("segment", "") == file.string()) return e["level"] == "warning";
    return false;
  };
  // What each file will be named after the next start's renames ("" when
  // it is moved aside).
  std::map<std::string, std::string> next_name;
  for (const auto& [seq, real] : segments_after_recovery(io, shard_dir)) next_name[real] = wab::segment_file_name(seq);
  nlohmann::json segments = nlohmann::json::array();
  for (const auto& [seq, path] : files) {
    auto row = segment_row(path, scan_segment(disk, path.string()));
    if (row.contains("problem") && routine(path)) {
      row["note"] = row["problem"];
      row.erase("problem");
    }
    const auto named = next_name.find(path.string());
    row["next_start_name"] = named == next_name.end() ? "" : named->second;
    segments.push_back(std::move(row));
  }
  return {{"dir", shard_dir.string()}, {"when", when}, {"segments", segments},
          {"repairs", repairs}, {"sealed_where_records_end", next.sealed_now}};
}

/// The shard directories under `dir` the daemon would use ("shard_<n>", n
/// at most 65535, a directory and not a link that leads nowhere), in order.
/// A directory that cannot be listed is no "0 segments, every record
/// checks": it throws, and the command says why.
std::vector<fs::path> shards_in(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::error_code type_ec;
    if (e.is_directory(type_ec) && wab::parse_shard_dir_name(e.path().filename().string())) found.push_back(e.path());
  }
  if (ec && ec != std::errc::no_such_file_or_directory) throw fs::filesystem_error("cannot list", dir, ec);
  std::sort(found.begin(), found.end());
  return found;
}

bool is_problem(const nlohmann::json& seg) {
  return seg.contains("problem") || seg["damaged"].get<std::uint64_t>() > 0 || seg["lost"].get<std::uint64_t>() > 0 ||
         seg["seal_damaged"].get<bool>();
}

/// What the next start does with the file's name, when it changes it.
std::string renaming_of(const nlohmann::json& s) {
  const auto next = s["next_start_name"].get<std::string>();
  if (next.empty()) return " (moved aside at the next start)";
  if (next != s["file"].get<std::string>()) return " (holds segment " + next + ": renamed to it at the next start)";
  return "";
}

std::string fields_text(const nlohmann::json& fields) {
  std::string s;
  for (const auto& [k, v] : fields.items()) s += " " + k + "=" + v.get<std::string>();
  return s;
}

std::string verdict_of(const nlohmann::json& s) {
  if (s.contains("problem")) return "DAMAGED: " + s["problem"].get<std::string>();
  if (s.contains("note")) return "not a segment yet (" + s["note"].get<std::string>() + ")";
  if (!is_problem(s)) return "ok";
  const auto n = [&](const char* k) { return std::to_string(s[k].get<std::uint64_t>()); };
  std::string v = "DAMAGED: ";
  if (s["seal_damaged"].get<bool>() && s["damaged"].get<std::uint64_t>() == 0)
    return v + "its seal was not written by weir (a record count its records do not reach or its extent cannot "
               "hold, or records after its end); every one of the " + std::to_string(s["records"].get<std::uint64_t>()) +
           " record(s) that check is delivered, none is lost";
  if (s["cut"].get<bool>()) v += "the file ends before its seal says; ";
  v += "record " + std::to_string(s["first_damage"]["index"].get<std::uint64_t>()) + " (offset " +
       std::to_string(s["first_damage"]["offset"].get<std::uint64_t>()) + ") does not check; " + n("damaged") +
       " damaged record(s) read past, " + n("recovered") + " recovered, " + n("lost") + " lost";
  if (s["sealed"].get<bool>())
    v += " (sealed: startup keeps it unread; the drain delivers every record that checks and copies the file to "
         "quarantine)";
  return v;
}

}  // namespace

std::string repair_text(const nlohmann::json& e) { return e["what"].get<std::string>() + fields_text(e["fields"]); }

next_start_report next_start_of(const std::string& shard_dir, const std::string& quarantine_dir) {
  next_start_report out;
  wab::dry_run_file_io io;
  out.repairs = dry_run_next_start(io, shard_dir, quarantine_dir, true).repairs;
  for (const auto& e : out.repairs) out.errors = out.errors || e["level"] == "error";
  return out;
}

namespace {

void print_text(const nlohmann::json& shards, const fs::path& data_dir) {
  for (const auto& sh : shards) {
    const bool replica = sh["when"] == "failover";
    std::printf("%s\n", fs::path(sh["dir"].get<std::string>()).lexically_relative(data_dir).c_str());
    if (sh["segments"].empty()) std::printf("  no segments\n");
    for (const auto& s : sh["segments"]) {
      const char* state = s.contains("problem") || s.contains("note") ? "?" : s["sealed"].get<bool>() ? "sealed" : "open";
      std::printf("  %s  %-6s  %llu records, ending at byte %llu  %s%s\n", s["file"].get<std::string>().c_str(), state,
                  s["records"].get<unsigned long long>(), s["records_end"].get<unsigned long long>(),
                  verdict_of(s).c_str(), renaming_of(s).c_str());
    }
    const char* when = replica ? "when this node delivers the replica" : "at the next start";
    for (const auto& e : sh["repairs"])
      std::printf("  %s (%s): %s\n", when, e["level"].get<std::string>().c_str(), repair_text(e).c_str());
    if (const auto n = sh["sealed_where_records_end"].get<std::uint64_t>(); n > 0)
      std::printf("  %s: %llu unsealed segment(s) sealed where their records end (the one being written, or one "
                  "whose seal does not check)\n", when, static_cast<unsigned long long>(n));
  }
}

}  // namespace

int segments_check(const std::string& data_dir, bool json) {
  const fs::path root(data_dir);
  const std::string quarantine = (root / "quarantine").string();
  std::vector<std::pair<fs::path, const char*>> dirs;
  for (const auto& d : shards_in(root / "wab")) dirs.emplace_back(d, "next_start");
  std::vector<fs::path> origins;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root / "replica", ec)) {
    std::error_code type_ec;
    if (e.is_directory(type_ec) && e.path().filename().string().rfind("node_", 0) == 0) origins.push_back(e.path());
  }
  std::sort(origins.begin(), origins.end());
  for (const auto& o : origins)
    for (const auto& d : shards_in(o)) dirs.emplace_back(d, "failover");

  nlohmann::json out = nlohmann::json::array();
  std::size_t damaged = 0, errors = 0, segments = 0;
  for (const auto& [dir, when] : dirs) {
    auto sh = check_shard(dir, quarantine, when);
    for (const auto& s : sh["segments"]) {
      ++segments;
      damaged += is_problem(s);
    }
    for (const auto& e : sh["repairs"]) errors += e["level"] == "error";
    out.push_back(std::move(sh));
  }
  if (json) std::cout << out.dump() << "\n";
  else print_text(out, root);
  if (damaged == 0 && errors == 0) {
    if (!json) std::printf("%zu segment(s) in %zu shard(s), every record checks\n", segments, out.size());
    return 0;
  }
  std::fprintf(stderr, "weir-ctl segments: %zu damaged segment(s), %zu repair(s) recovery would report as errors\n",
               damaged, errors);
  return 1;
}

}  // namespace weir::ctl
