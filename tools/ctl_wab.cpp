#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "files/regular_file.hpp"
#include "config/sink_list.hpp"
#include "wab/dead_letter_store.hpp"
#include "wab/confirm_cursor.hpp"
#include "wab/file_io.hpp"
#include "wab/file_lock.hpp"
#include "wab/segment_format.hpp"
#include "wab/segment_reader.hpp"
#include "wab/spare_pool.hpp"
#include "tools/ctl_commands.hpp"
#include "weir/client.hpp"

namespace weir::ctl {

namespace {

namespace fs = std::filesystem;

struct segment_summary {
  std::string file;
  std::uint64_t records = 0, bytes = 0;
  std::string stop;
  std::uint64_t damaged = 0, recovered = 0;  // records read past, and of them recovered whole
};

/// How reading a file ended.
struct read_outcome {
  std::string stop;
  std::uint64_t damaged = 0, recovered = 0;
  std::uint64_t record_bytes = 0;  // where the records end
  bool sealed = false;
};

/// Files in `dir` whose names `sequence_of` accepts, in sequence order.
template <class F>
std::vector<fs::path> ordered_files(const fs::path& dir, F sequence_of) {
  std::vector<std::pair<std::uint64_t, fs::path>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (auto seq = sequence_of(e.path().filename().string())) found.emplace_back(*seq, e.path());
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

/// Calls `each` for every record of `file`, reading past damage to the next
/// record that checks, as the drain does; says why reading stopped.
template <class F>
read_outcome read_records(const fs::path& file, F each) {
  auto io = wab::default_file_io();
  // A FIFO or a file on a file system that stops answering in its place
  // must not block the command (files/regular_file.hpp); then opened
  // without blocking, in case it was swapped meanwhile.
  if (const auto why = check_regular_file(file.string(), std::numeric_limits<std::size_t>::max()); !why.empty())
    return {"unreadable (" + why + ")"};
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {"unreadable"};
  const auto decoded = wab::read_segment_header(*io, fd);
  if (!decoded) {
    ::close(fd);
    return {std::string("header: ") + std::string(wab::name_of(decoded.error()))};
  }
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const auto& header = decoded.value();
  std::error_code size_ec;
  const auto file_bytes = static_cast<std::uint64_t>(fs::file_size(file, size_ec));
  if (size_ec) {
    ::close(fd);
    return {"unreadable (" + size_ec.message() + ")"};
  }
  wab::segment_reader reader(*io, fd, header, wab::records_end(header, file_bytes), 0, 1,
                             wab::resync_window_for(header, std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()));
  while (auto r = reader.next()) each(*r);
  ::close(fd);
  // An open version-2 segment ends where its records do: the bytes after
  // them (zeros of a preallocated file, an earlier life's) are not damage.
  const bool sealed = wab::usable_seal(header, file_bytes).has_value();
  std::string stop = wab::name_of(reader.stop());
  if (sealed && reader.stop() == wab::scan_stop::end_of_file) stop = "sealed";
  else if (sealed) stop = "sealed, but its records stop checking early: " + stop;
  else if (header.version == 2 && reader.damaged() == 0 && reader.stop() != wab::scan_stop::io_error) stop = "open";
  return {stop, reader.damaged(), reader.recovered(), reader.valid_end(), sealed};
}

struct dead_letter_entry {
  std::uint64_t index = 0;  // in the dead-letter file
  stored_dead_letter letter;
};

/// One dead-letter file as read: its letters, and what of it cannot be
/// read, with why (index 0: the file as a whole).
struct dead_letter_file {
  std::vector<dead_letter_entry> letters;
  std::vector<std::pair<std::uint64_t, std::string>> unreadable;
};

dead_letter_file read_dead_letter_file(const fs::path& file) {
  dead_letter_file out;
  const auto read = read_records(file, [&](const wab::stored_record& r) {
    if (auto d = dead_letter_store::decode_envelope(r.payload)) out.letters.push_back({r.index, std::move(*d)});
    else out.unreadable.push_back({r.index, "the record checks but holds no dead letter (its envelope does not decode)"});
  });
  if (read.stop.rfind("unreadable", 0) == 0 || read.stop.rfind("header: ", 0) == 0)
    out.unreadable.push_back({0, "the file cannot be read (" + read.stop + ")"});
  else if (read.damaged > 0)
    out.unreadable.push_back({0, std::to_string(read.damaged) + " damaged record(s) read past, " +
                                     std::to_string(read.recovered) + " of them recovered"});
  return out;
}

/// Every well-formed dead letter in one file.
std::vector<dead_letter_entry> read_dead_letters(const fs::path& file) { return read_dead_letter_file(file).letters; }

/// A dead-letter file held for requeueing or deleting: once locked, the
/// daemon appends nothing more to it (it starts a new file), so what is read
/// now is every letter it will ever hold. nullopt if it is gone (another
/// weir-ctl removed it); throws if it cannot be locked.
std::optional<wab::file_lock> hold_dead_letter_file(const fs::path& file) {
  if (const auto why = check_regular_file(file.string(), std::numeric_limits<std::size_t>::max());
      !why.empty() && !names_missing_file(why))
    throw std::runtime_error("cannot use " + file.string() + ": " + why);
  wab::file_lock l(file.string());
  if (!l.valid() && errno == ENOENT) return std::nullopt;
  if (!l.lock(true)) throw std::runtime_error("cannot lock " + file.string() + ": " + std::strerror(errno));
  if (!l.still_named()) return std::nullopt;
  return l;
}

}  // namespace

/// `text` with every control character written as \xNN: a reason or a
/// segment name in a dead-letter file may carry terminal escapes (a forged
/// file, or a sink's error text), which must not drive the operator's
/// terminal or forge a line of the listing.
std::string terminal_safe(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
      continue;
    }
    char esc[5];
    std::snprintf(esc, sizeof esc, "\\x%02x", c);
    out += esc;
  }
  return out;
}

std::string printable(const byte_buffer& p, std::size_t max) {
  std::string s;
  for (std::size_t i = 0; i < p.size() && i < max; ++i) s += (p[i] >= 0x20 && p[i] < 0x7f) ? static_cast<char>(p[i]) : '.';
  return p.size() > max ? s + "…" : s;
}

int wab_list(const std::string& data_dir, bool json) {
  const fs::path wab_dir = fs::path(data_dir) / "wab";
  if (!fs::is_directory(wab_dir)) {
    std::fprintf(stderr, "weir-ctl: %s is not a WAB directory (use --data-dir)\n", wab_dir.c_str());
    return 1;
  }
  nlohmann::json out = nlohmann::json::array();
  bool trouble = false;
  std::vector<fs::path> shards;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(wab_dir, ec))
    if (e.is_directory(ec) && wab::parse_shard_dir_name(e.path().filename().string())) shards.push_back(e.path());
  if (ec) {
    std::fprintf(stderr, "weir-ctl: cannot list %s: %s\n", wab_dir.c_str(), ec.message().c_str());
    return 2;
  }
  std::sort(shards.begin(), shards.end());
  for (const auto& shard : shards) {
    const auto cursors = wab::load_every_cursor(*wab::default_file_io(), shard.string());
    nlohmann::json segs = nlohmann::json::array();
    for (const auto& f : ordered_files(shard, [](const std::string& n) { return wab::parse_segment_file_name(n); })) {
      std::error_code size_ec;
      segment_summary s{f.filename().string(), 0, fs::file_size(f, size_ec), ""};
      const auto read = read_records(f, [&](const wab::stored_record&) { ++s.records; });
      s.stop = read.stop;
      s.damaged = read.damaged;
      s.recovered = read.recovered;
      trouble = trouble || read.damaged > 0;
      segs.push_back({{"file", s.file},
                      {"records", s.records},
                      {"bytes", s.bytes},
                      {"record_bytes", read.record_bytes},
                      {"sealed", read.sealed},
                      {"end", s.stop},
                      {"damaged", s.damaged},
                      {"recovered", s.recovered}});
    }
    // Each sink's cursor (a sinks: list); confirm_cursor: the default sink's, as before.
    nlohmann::json c = nullptr, every = nlohmann::json::object();
    for (const auto& [sink, at] : cursors) {
      every[sink] = {{"segment", at.sequence}, {"offset", at.offset}, {"index", at.index}};
      if (sink == default_sink_name) c = every[sink];
    }
    const auto spares = ordered_files(shard, [](const std::string& n) { return wab::parse_spare_file_name(n); }).size();
    // What the next start does with it, as `weir-ctl segments` says.
    const auto next = next_start_of(shard.string(), (fs::path(data_dir) / "quarantine").string());
    trouble = trouble || next.errors;
    out.push_back({{"shard", shard.filename().string()}, {"segments", segs}, {"confirm_cursor", c}, {"confirm_cursors", every}, {"spares", spares},
                   {"next_start", next.repairs}});
  }
  const int status = trouble ? 1 : 0;
  if (json) {
    std::cout << out.dump() << "\n";
    return status;
  }
  for (const auto& sh : out) {
    std::string said;
    for (const auto& [sink, at] : sh["confirm_cursors"].items())
      said += std::string(said.empty() ? "" : "; ") + (sink == default_sink_name ? "" : sink + " ") + "segment " +
              std::to_string(at["segment"].get<std::uint64_t>()) + " index " +
              std::to_string(at["index"].get<std::uint64_t>());
    std::printf("%s  spares: %zu  confirm cursor: %s\n", sh["shard"].get<std::string>().c_str(),
                sh["spares"].get<std::size_t>(), said.empty() ? "none (nothing confirmed yet)" : said.c_str());
    for (const auto& s : sh["segments"]) {
      std::string damage;
      if (s["damaged"].get<std::uint64_t>() > 0)
        damage = "; DAMAGED: " + std::to_string(s["damaged"].get<std::uint64_t>()) + " record(s) read past, " +
                 std::to_string(s["recovered"].get<std::uint64_t>()) + " of them recovered";
      std::printf("  %s  %llu records  %llu bytes of records in %llu  (%s%s)\n", s["file"].get<std::string>().c_str(),
                  s["records"].get<unsigned long long>(), s["record_bytes"].get<unsigned long long>(),
                  s["bytes"].get<unsigned long long>(), s["end"].get<std::string>().c_str(), damage.c_str());
    }
    for (const auto& e : sh["next_start"])
      std::printf("  at the next start (%s): %s\n", e["level"].get<std::string>().c_str(), repair_text(e).c_str());
  }
  if (trouble)
    std::fprintf(stderr, "weir-ctl wab: damage, or repairs the next start would report as errors "
                         "(weir-ctl segments checks every record)\n");
  return status;
}

/// Every letter, and every part of a dead-letter file that cannot be read
/// (listed with why, exit 1): what `dl drop` would delete is all shown.
int dead_letter_list(const std::string& letters_dir, bool json) {
  nlohmann::json out = nlohmann::json::array();
  bool unreadable = false;
  for (const auto& f : ordered_files(fs::path(letters_dir), dead_letter_sequence)) {
    const auto read = read_dead_letter_file(f);
    for (const auto& [index, d] : read.letters)
      out.push_back({{"file", f.filename().string()}, {"index", index}, {"shard", d.shard}, {"segment", d.segment},
                     {"idx", d.index}, {"reason", d.reason}, {"payload_bytes", d.payload.size()},
                     {"payload", printable(d.payload, json ? 4096 : 60)}});
    for (const auto& [index, why] : read.unreadable) {
      out.push_back({{"file", f.filename().string()}, {"index", index}, {"unreadable", why}});
      unreadable = true;
    }
  }
  const int status = unreadable ? 1 : 0;
  if (json) {
    std::cout << out.dump() << "\n";
    return status;
  }
  if (out.empty()) std::puts("no dead letters");
  for (const auto& d : out) {
    if (d.contains("unreadable")) {
      std::printf("%s#%llu  UNREADABLE: %s\n", d["file"].get<std::string>().c_str(),
                  d["index"].get<unsigned long long>(), d["unreadable"].get<std::string>().c_str());
      continue;
    }
    std::printf("%s#%llu  from %s #%llu  reason: %s  payload (%llu B): %s\n", d["file"].get<std::string>().c_str(),
                d["index"].get<unsigned long long>(), terminal_safe(d["segment"].get<std::string>()).c_str(),
                d["idx"].get<unsigned long long>(), terminal_safe(d["reason"].get<std::string>()).c_str(),
                d["payload_bytes"].get<unsigned long long>(), d["payload"].get<std::string>().c_str());
  }
  return status;
}

int dead_letter_drop(const std::string& letters_dir, const std::vector<std::string>& args, bool act, bool json) {
  const fs::path dir = fs::path(letters_dir);
  // A file may be named as dl_00000003.wab or by a path to it.
  std::vector<std::string> names;
  for (const auto& a : args) names.push_back(fs::path(a).filename().string());
  std::vector<fs::path> chosen;
  for (const auto& f : ordered_files(dir, dead_letter_sequence))
    if (names.empty() || std::find(names.begin(), names.end(), f.filename().string()) != names.end())
      chosen.push_back(f);
  for (std::size_t i = 0; i < names.size(); ++i)
    if (std::none_of(chosen.begin(), chosen.end(), [&](const fs::path& f) { return f.filename() == names[i]; })) {
      std::fprintf(stderr, "weir-ctl dl drop: %s is not a dead-letter file in %s (see weir-ctl dl list)\n",
                   args[i].c_str(), dir.c_str());
      return 2;
    }
  std::size_t records = 0;
  std::uintmax_t bytes = 0;
  nlohmann::json files = nlohmann::json::array();
  auto count = [&](const fs::path& f) {
    const std::size_t n = read_dead_letters(f).size();
    std::error_code ec;
    const auto file_size = fs::file_size(f, ec);
    const std::uintmax_t size = ec ? 0 : file_size;  // a FIFO or a device has none
    records += n;
    bytes += size;
    files.push_back({{"file", f.filename().string()}, {"records", n}, {"bytes", size}});
  };
  if (!act) {
    for (const auto& f : chosen) count(f);
    const nlohmann::json summary{{"dry_run", true}, {"files", files}, {"records", records}, {"bytes", bytes}};
    if (json) {
      std::cout << summary.dump() << "\n";
      return 0;
    }
    std::printf("would delete %zu dead-letter file%s (%zu records, %ju bytes) for good; run again with --yes\n",
                chosen.size(), chosen.size() == 1 ? "" : "s", records, bytes);
    for (const auto& f : files)
      std::printf("  %s  %zu records, %ju bytes\n", f["file"].get<std::string>().c_str(), f["records"].get<std::size_t>(),
                  f["bytes"].get<std::uintmax_t>());
    return 0;
  }
  // Counted under each file's lock, just before it goes: what is reported
  // is what was deleted (a file another weir-ctl removed first is not).
  for (const auto& f : chosen) {
    const auto held = hold_dead_letter_file(f);
    if (!held) continue;
    count(f);
    std::error_code ec;
    fs::remove(f, ec);
    if (ec) {
      std::fprintf(stderr, "weir-ctl dl drop: cannot delete %s: %s\n", f.c_str(), ec.message().c_str());
      return 1;
    }
  }
  const nlohmann::json summary{{"dry_run", false}, {"files", files}, {"records", records}, {"bytes", bytes}};
  if (json) std::cout << summary.dump() << "\n";
  else std::printf("deleted %zu dead-letter file%s (%zu records)\n", files.size(), files.size() == 1 ? "" : "s", records);
  return 0;
}

int dead_letter_requeue(const options& o, const std::string& letters_dir, bool act) {
  const std::string& socket = o.socket;
  std::vector<std::pair<fs::path, std::vector<dead_letter_entry>>> files;
  std::size_t total = 0;
  for (const auto& f : ordered_files(fs::path(letters_dir), dead_letter_sequence)) {
    files.emplace_back(f, read_dead_letters(f));
    total += files.back().second.size();
  }
  if (!act) {
    if (o.json)
      std::cout << nlohmann::json{{"dry_run", true}, {"files", files.size()}, {"records", total}}.dump() << "\n";
    else
      std::printf("would push %zu dead letters from %zu files back through %s and delete those files; "
                  "run again with --yes\n", total, files.size(), socket.c_str());
    return 0;
  }
  // A daemon that cannot be reached or breaks off ends the command through
  // main's handler (exit 2 or 1); the files of letters not yet acked stay.
  auto c = connect(o);
  std::size_t pushed = 0, copies = 0;
  // A record a sink refused again after a crash (its batch was sent again)
  // has two letters with the same origin: it goes back once.
  std::set<std::pair<std::string, std::uint64_t>> origins;
  // Only the files there now: letters refused again go into a new file,
  // which the daemon starts as soon as it finds one of these held.
  for (const auto& listed : files) {
    const fs::path& file = listed.first;
    const auto held = hold_dead_letter_file(file);
    if (!held) continue;
    bool all = true;
    const auto letters = read_dead_letters(file);  // under the lock: every letter it holds
    std::size_t sent = 0;
    for (const auto& e : letters) {
      if (!origins.emplace(e.letter.segment, e.letter.index).second) {
        ++copies;
        continue;
      }
      all = c.push(e.letter.payload, weir::client::durability::durable).acked && all;
      ++sent;
    }
    if (!all) {
      std::fprintf(stderr, "weir-ctl: some records of %s were not acked; the file is kept\n", file.c_str());
      return 1;
    }
    pushed += sent;
    fs::remove(file);
  }
  if (o.json) std::cout << nlohmann::json{{"dry_run", false}, {"records", pushed}, {"copies_skipped", copies}}.dump() << "\n";
  else if (copies == 0) std::printf("requeued %zu dead letters\n", pushed);
  else std::printf("requeued %zu dead letters (%zu more were copies of one of them, refused again after a restart)\n",
                   pushed, copies);
  return 0;
}

}  // namespace weir::ctl
