// weir-ctl tail: new records as they are appended to the WAB, like tail -f,
// for watching what a producer sends. It reads the data directory (never
// writes, never talks to the daemon): each shard's newest segment from where
// it ended, on to the next segment when the writer rotates, and a poll at
// the interval. A record still being written is not whole yet and is shown
// at the next poll.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tools/ctl_commands.hpp"
#include "tools/ctl_record_view.hpp"
#include "tools/ctl_segment_scan.hpp"
#include "wab/dry_run_file_io.hpp"
#include "wab/node_id_file.hpp"
#include "wab/segment_format.hpp"
#include "wab/segment_reader.hpp"

namespace weir::ctl {

namespace {

namespace fs = std::filesystem;

struct tail_request {
  std::optional<std::uint16_t> shard;  // all shards when empty
  bool from_start = false;             // the oldest segment's first record, not the newest's end
  bool json = false, hex = false;
  std::chrono::milliseconds interval{200};
  std::uint64_t count = UINT64_MAX;  // stop after this many records
  std::uint16_t node = 0;
};

/// Where one shard's tail has read to. The segment stays open between
/// polls: once its records are delivered the daemon deletes it, and an open
/// descriptor still reads what was not shown yet.
struct position {
  std::uint64_t sequence = 0;  // 0: not begun
  std::uint64_t offset = 0;    // past the last record shown
  std::uint64_t index = 1;     // the next record's index
  int fd = -1;
  fs::path path;
};

class follower {
 public:
  explicit follower(const tail_request& req) : req_(req) {}
  ~follower() {
    for (auto& [dir, at] : positions_)
      if (at.fd >= 0) io_.close(at.fd);
  }
  follower(const follower&) = delete;
  follower& operator=(const follower&) = delete;

  /// Shows what `shard_dir` has gained since the last call; false once `count` records are shown.
  bool poll(const fs::path& shard_dir, bool first) {
    // Listed before reading: a newer segment means the writer moved on.
    const auto files = segment_files(shard_dir);
    position& at = positions_[shard_dir.string()];
    if (at.fd < 0) {
      if (files.empty()) return true;
      const bool from_end = first && !req_.from_start && at.sequence == 0;
      const auto next = std::find_if(files.begin(), files.end(), [&](const auto& f) { return f.first >= at.sequence; });
      if (next == files.end()) return true;
      open(at, from_end ? files.back() : *next);
      if (from_end) read_new(at, [](const std::string&, const wab::stored_record&) { return true; });
    }
    for (;;) {
      if (!show_new(at)) return false;
      const auto newer = std::find_if(files.begin(), files.end(), [&](const auto& f) { return f.first > at.sequence; });
      if (newer == files.end() || !complete(at)) return true;
      // Segments delivered and deleted between two looks were never seen:
      // say so rather than let the output look whole.
      if (newer->first > at.sequence + 1)
        std::fprintf(stderr,
                     "weir-ctl tail: %s: segments %llu to %llu were gone before tail could read them (delivered and "
                     "deleted, or never made); their records are not shown\n",
                     shard_dir.c_str(), static_cast<unsigned long long>(at.sequence + 1),
                     static_cast<unsigned long long>(newer->first - 1));
      open(at, *newer);
    }
  }

 private:
  void open(position& at, const std::pair<std::uint64_t, fs::path>& file) {
    if (at.fd >= 0) io_.close(at.fd);
    at = position{file.first, 0, 1, io_.open_existing(file.second.string()), file.second};
  }

  /// The writer is done with it: sealed, or delivered and deleted.
  bool complete(const position& at) {
    if (at.fd < 0) return true;
    struct stat st {};
    if (::fstat(at.fd, &st) == 0 && st.st_nlink == 0) return true;
    const auto header = wab::read_segment_header(io_, at.fd);
    const std::int64_t size = io_.size(at.fd);
    return header && wab::usable_seal(header.value(), static_cast<std::uint64_t>(std::max<std::int64_t>(size, 0)));
  }

  bool show_new(position& at) {
    return read_new(at, [&](const std::string& segment, const wab::stored_record& r) {
      if (req_.json) std::printf("%s\n", record_json(segment, r).dump().c_str());
      else print_record(segment, r, req_.hex);
      std::fflush(stdout);
      return ++shown_ < req_.count;
    });
  }

  /// Reads the open segment from `at`, calling `each` per whole record
  /// (false: stop); moves `at` past what was read. False once `each` said stop.
  template <class F>
  bool read_new(position& at, F each) {
    if (at.fd < 0) return true;  // gone before it could be opened
    const std::int64_t size = io_.size(at.fd);
    const auto header = wab::read_segment_header(io_, at.fd);
    if (!header) return true;  // being created: its header is not written yet
    const std::string segment = coordinate_segment(at.path, header.value(), req_.node);
    wab::segment_reader reader(io_, at.fd, header.value(),
                               wab::records_end(header.value(), static_cast<std::uint64_t>(std::max<std::int64_t>(size, 0))),
                               at.offset, at.index);
    for (;;) {
      auto r = reader.next();
      if (!r) return true;  // a record still being written is whole at a later poll
      const bool go_on = each(segment, *r);
      at.offset = reader.valid_end();
      at.index = reader.next_index();
      if (!go_on) return false;
    }
  }

  const tail_request& req_;
  wab::dry_run_file_io io_;  // read-only opens
  std::map<std::string, position> positions_;
  std::uint64_t shown_ = 0;
};

std::vector<fs::path> shard_dirs(const fs::path& wab_dir, std::optional<std::uint16_t> only) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(wab_dir, ec)) {
    const auto shard = wab::parse_shard_dir_name(e.path().filename().string());
    std::error_code type_ec;
    if (shard && e.is_directory(type_ec) && (!only || *only == *shard)) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

const char* const tail_help = R"(Usage: weir-ctl tail [--shard N] [--from-start] [--format text|hex|json] [--interval MS] [--count N]
                     [--node ID]

Shows records as they are appended to the WAB, like tail -f: each shard's
newest segment from its end, then every record written after it, on into
new segments. It reads the data directory (--data-dir) and never writes:
run it beside the daemon, as the daemon's user, to watch what a producer
sends. Ctrl-C stops it.

Options:
  --shard N        only shard N
  --from-start     begin at the oldest segment still in the WAB instead of the end
  --format F       text (default: one line per record with its coordinate,
                   ingest time, record id and printable payload), hex (the
                   payload in hex lines below), json (one object per line)
  --interval MS    how often to look for new records (default 200)
  --count N        stop after N records
  --node ID        the daemon's cluster.node_id (record ids carry it; by
                   default the one data_dir/cluster_node_id records)

Examples:
  weir-ctl --data-dir /var/lib/weir tail
  weir-ctl --data-dir /var/lib/weir tail --format json | jq .payload_hex
)";

int tail_command(const options& o, const std::vector<std::string>& args) {
  tail_request req;
  req.json = o.json;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto number = [&](std::uint64_t lo, std::uint64_t hi, std::uint64_t& out) {
      if (++i >= args.size()) return false;
      const auto& v = args[i];
      if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 19) return false;
      out = std::stoull(v);
      return out >= lo && out <= hi;
    };
    std::uint64_t n = 0;
    if (a == "--from-start") {
      req.from_start = true;
    } else if (a == "--shard") {
      if (!number(0, 65535, n)) return usage_error("tail", "--shard needs a shard number from 0 to 65535");
      req.shard = static_cast<std::uint16_t>(n);
    } else if (a == "--interval") {
      if (!number(10, 60000, n)) return usage_error("tail", "--interval needs milliseconds from 10 to 60000");
      req.interval = std::chrono::milliseconds(n);
    } else if (a == "--count") {
      if (!number(1, UINT64_MAX, n)) return usage_error("tail", "--count needs a number of records, at least 1");
      req.count = n;
    } else if (a == "--node") {
      if (!number(1, 65535, n)) return usage_error("tail", "--node needs a cluster.node_id from 1 to 65535");
      req.node = static_cast<std::uint16_t>(n);
    } else if (a == "--format") {
      if (++i >= args.size()) return usage_error("tail", "--format needs text, hex or json");
      if (args[i] == "json") req.json = true;
      else if (args[i] == "hex") req.hex = true;
      else if (args[i] != "text") return usage_error("tail", "--format " + args[i] + ": expected text, hex or json");
    } else {
      return usage_error("tail", "unknown argument " + a);
    }
  }
  if (!require_data_dir(o)) return 2;
  if (req.node == 0) req.node = wab::read_node_id(o.data_dir);
  const fs::path wab_dir = fs::path(o.data_dir) / "wab";
  follower f(req);
  for (bool first = true;; first = false) {
    const auto shards = shard_dirs(wab_dir, req.shard);
    if (first && shards.empty())
      std::fprintf(stderr, "weir-ctl tail: %s has no %s yet; waiting for records to appear\n", wab_dir.c_str(),
                   req.shard ? ("shard " + std::to_string(*req.shard)).c_str() : "shard");
    for (const auto& shard : shards)
      if (!f.poll(shard, first)) return 0;
    std::this_thread::sleep_for(req.interval);
  }
}

}  // namespace weir::ctl
