// weir-ctl push: one record from the command line, or records read from
// standard input or a file — one per line (the line end is not part of the
// record), or the whole input as one record with --raw.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "wire/frame.hpp"
#include "tools/ctl_commands.hpp"
#include "weir/client.hpp"

namespace weir::ctl {

namespace {

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

/// "Nack(Reason)", and for a Replicated push refused as InternalError the
/// two reasons a daemon has for it (docs/wire_protocol.md).
/// What a Nack means for the record of `bytes` that got it.
std::string refusal(std::uint8_t nack, client::durability tier, std::size_t bytes, const options& o) {
  std::string text = "Nack(" + client::nack_name(nack) + ")";
  if (nack == static_cast<std::uint8_t>(wire::nack_reason::payload_too_large))
    text += " (the record is " + std::to_string(bytes) + " bytes; the daemon takes at most limits.max_payload_bytes" +
            (o.max_payload_bytes > 0 ? " = " + std::to_string(o.max_payload_bytes) + " (" + o.config_file + ")"
                                     : ", 16 MiB unless its configuration says otherwise") +
            ")";
  if (tier == client::durability::replicated && nack == static_cast<std::uint8_t>(wire::nack_reason::internal_error))
    text += " (a node without a cluster refuses every Replicated push; in a cluster, too few peers may have "
            "confirmed it in time; or the node could not store it: see weir-ctl status)";
  else if (nack == static_cast<std::uint8_t>(wire::nack_reason::internal_error))
    text += " (the daemon could not take it: its WAB at limits.wab_max_bytes, a shard that cannot make a segment, "
            "or a failed write; weir-ctl status says which, and a push later may go through)";
  return text;
}

/// The lines of `in`, each without its "\n" or "\r\n"; empty lines skipped (weir stores no empty record).
std::vector<std::string> read_lines(std::istream& in, std::size_t& skipped) {
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) ++skipped;
    else out.push_back(std::move(line));
  }
  return out;
}

/// Records per PushBatch frame by default: well under the daemon's default
/// limits.max_batch_records and frame size; a daemon configured below them
/// refuses the batch, and its records then go one by one.
constexpr std::size_t default_batch_records = 256;
constexpr std::size_t batch_bytes = 1 << 20;

/// Pushes an input (standard input, a file) one record per line as it
/// arrives: whatever has come is sent when the input pauses or a batch is
/// full, so `tail -f app.log | weir-ctl push` delivers line by line, in
/// bounded memory. A batch of 1 sends single Push frames.
class line_pusher {
 public:
  line_pusher(const options& o, client::durability tier, int fd, std::size_t batch)
      : o_(o), tier_(tier), fd_(fd), batch_records_(batch) {}

  /// 0, or 1 after saying which line was not acked. A connection that
  /// breaks off (the daemon stopped or crashed) is said with what was acked
  /// before it: the records from the batch it cut on may or may not be in
  /// the WAB (pushed again, they are delivered twice, never lost).
  int run() {
    try {
      return read_and_push();
    } catch (const client::client_error& e) {
      std::fprintf(stderr,
                   "weir-ctl push: %s; %zu records acked before it (up to line %zu); from line %zu on, not known to "
                   "be acked\n",
                   e.what(), acked_, last_acked_line_, last_acked_line_ + 1);
      return e.kind() == client::error_kind::unreachable && acked_ == 0 ? 2 : 1;
    }
  }

  std::size_t acked() const { return acked_; }
  std::size_t skipped() const { return skipped_; }

 private:
  void acked(std::size_t k) {
    ++acked_;
    last_acked_line_ = lines_[k];
  }

  int read_and_push() {
    std::string buffer;
    char chunk[65536];
    for (;;) {
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        std::fprintf(stderr, "weir-ctl: cannot read the input: %s\n", std::strerror(errno));
        return 1;
      }
      if (n == 0) {  // the end: a last line without its line end counts
        if (!buffer.empty() && !take(std::move(buffer))) return 1;
        return flush() ? 0 : 1;
      }
      buffer.append(chunk, static_cast<std::size_t>(n));
      std::size_t from = 0;
      for (auto nl = buffer.find('\n'); nl != std::string::npos; from = nl + 1, nl = buffer.find('\n', from))
        if (!take(buffer.substr(from, nl - from))) return 1;
      buffer.erase(0, from);
      pollfd in{fd_, POLLIN, 0};
      if (::poll(&in, 1, 0) == 0 && !flush()) return 1;  // the input paused: send what came
    }
  }

  bool take(std::string line) {
    ++line_no_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      ++skipped_;
      return true;
    }
    if (!records_.empty() && (records_.size() >= batch_records_ || bytes_ + line.size() > batch_bytes) && !flush())
      return false;
    bytes_ += line.size();
    records_.push_back(std::move(line));
    lines_.push_back(line_no_);
    return true;
  }

  bool flush() {
    if (records_.empty()) return true;
    if (batch_records_ == 1) {
      const bool ok = singly();
      records_.clear();
      lines_.clear();
      bytes_ = 0;
      return ok;
    }
    std::vector<std::span<const std::uint8_t>> spans;
    for (const auto& r : records_) spans.push_back(bytes_of(r));
    const auto r = connection().push_batch(spans, tier_);
    bool ok = true;
    if (r.nack && *r.nack != static_cast<std::uint8_t>(wire::nack_reason::internal_error)) {
      ok = one_by_one();  // a daemon whose limits are below this batch
    } else if (r.nack) {
      ok = refused(0, *r.nack);
    } else {
      for (std::size_t k = 0; k < r.accepted.size() && ok; ++k) {
        if (!r.accepted[k]) ok = refused(k, static_cast<std::uint8_t>(wire::nack_reason::internal_error));
        else acked(k);
      }
    }
    records_.clear();
    lines_.clear();
    bytes_ = 0;
    return ok;
  }

  bool one_by_one() {
    c_.reset();  // the daemon closes a connection after refusing a frame
    return singly();
  }

  bool singly() {
    for (std::size_t k = 0; k < records_.size(); ++k) {
      const auto r = connection().push(bytes_of(records_[k]), tier_);
      if (!r.acked) return refused(k, r.nack);
      acked(k);
    }
    return true;
  }

  bool refused(std::size_t k, std::uint8_t nack) {
    std::fprintf(stderr, "weir-ctl: the record of line %zu was not acked: %s; %zu records acked before it\n",
                 lines_[k], refusal(nack, tier_, records_[k].size(), o_).c_str(), acked_);
    return false;
  }

  client::connection& connection() {
    if (!c_) c_.emplace(connect(o_));
    return *c_;
  }

  const options& o_;
  std::optional<client::connection> c_;
  client::durability tier_;
  int fd_;
  std::size_t batch_records_;
  std::vector<std::string> records_;
  std::vector<std::size_t> lines_;  // the input line of each record
  std::size_t bytes_ = 0, line_no_ = 0, acked_ = 0, skipped_ = 0;
  std::size_t last_acked_line_ = 0;  // the input line of the last record acked
};

}  // namespace

const char* const push_help = R"(Usage: weir-ctl push [--tier T] [--tracked] [--raw] [--file PATH] [--batch N] [--] [PAYLOAD]

Pushes PAYLOAD as one record. Without PAYLOAD, reads standard input (or
--file PATH): each line is one record (its "\n" or "\r\n" is not stored;
empty lines are skipped), sent in batches; with --raw, the whole input is
one record, bytes as they are.

Options:
  --tier T         durable (default: acked after fdatasync), buffered (acked
                   after the write) or replicated; --durability T is the same
  --tracked        print the record's segment, index and id (one record only)
  --raw            the input is one record, newlines included
  --file PATH      read the records from PATH instead of standard input
  --batch N        records per PushBatch frame, 1 to 65535 (default 256);
                   1 sends one Push frame per record
  --               what follows is the payload, even if it starts with --

Examples:
  weir-ctl push 'hello'
  weir-ctl push --durability buffered --tracked '{"order": 17}'
  tail -f app.log | weir-ctl push          # one record per line
  weir-ctl push --file events.ndjson --batch 1000 --tier buffered
  weir-ctl push --raw --file image.png     # one record
)";

int push_command(const options& o, const std::vector<std::string>& args) {
  auto tier = client::durability::durable;
  bool tracked = false, raw = false, have_payload = false, payload_only = false;
  std::string payload, file;
  std::size_t batch = default_batch_records;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!payload_only && a == "--") {
      payload_only = true;
    } else if (!payload_only && (a == "--durability" || a == "--tier")) {
      if (++i >= args.size()) return usage_error("push", a + " needs a value: durable, buffered or replicated");
      if (args[i] == "durable") tier = client::durability::durable;
      else if (args[i] == "buffered") tier = client::durability::buffered;
      else if (args[i] == "replicated") tier = client::durability::replicated;
      else return usage_error("push", a + " " + args[i] + ": expected durable, buffered or replicated");
    } else if (!payload_only && a == "--file") {
      if (++i >= args.size()) return usage_error("push", "--file needs a path");
      file = args[i];
    } else if (!payload_only && a == "--batch") {
      if (++i >= args.size()) return usage_error("push", "--batch needs a number from 1 to 65535");
      std::size_t n = 0;
      const auto& v = args[i];
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc{} || end != v.data() + v.size() || n < 1 || n > 65535)
        return usage_error("push", "--batch " + v + ": expected a number from 1 to 65535");
      batch = n;
    } else if (!payload_only && a == "--tracked") {
      tracked = true;
    } else if (!payload_only && a == "--raw") {
      raw = true;
    } else if (!payload_only && a.size() > 1 && a[0] == '-') {
      return usage_error("push", "unknown option " + a + " (a payload that starts with - goes after --)");
    } else if (!have_payload) {
      payload = a;
      have_payload = true;
    } else {
      return usage_error("push", "one PAYLOAD only, got a second: " + a + " (quote a payload with spaces)");
    }
  }
  if (have_payload && raw) return usage_error("push", "--raw reads the input; give no PAYLOAD with it");
  if (have_payload && !file.empty()) return usage_error("push", "--file is the input; give no PAYLOAD with it");

  std::ifstream from_file;
  if (!file.empty()) {
    from_file.open(file, std::ios::binary);
    if (!from_file) return usage_error("push", "--file " + file + ": cannot read it: " + std::strerror(errno));
  }
  std::istream& input = file.empty() ? std::cin : from_file;
  std::vector<std::string> records;
  if (have_payload) {
    records.push_back(std::move(payload));
  } else if (raw) {
    records.emplace_back(std::istreambuf_iterator<char>(input), std::istreambuf_iterator<char>());
  } else if (tracked) {
    // One record, so the whole input is read first (it must be one line).
    std::size_t skipped = 0;
    records = read_lines(input, skipped);
    if (records.size() > 1)
      return usage_error("push", "--tracked pushes one record; standard input had " + std::to_string(records.size()) +
                                     " lines (use --raw for one record)");
  } else {
    const int fd = file.empty() ? STDIN_FILENO : ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return usage_error("push", "--file " + file + ": cannot read it: " + std::strerror(errno));
    line_pusher pusher(o, tier, fd, batch);
    const int rc = pusher.run();
    if (fd != STDIN_FILENO) ::close(fd);
    if (pusher.skipped() > 0) std::fprintf(stderr, "weir-ctl: skipped %zu empty lines\n", pusher.skipped());
    if (rc != 0) return rc;
    if (pusher.acked() == 0) return usage_error("push", "nothing to push (weir stores no empty record)");
    if (o.json) std::printf("{\"acked\":true,\"records\":%zu}\n", pusher.acked());
    else std::printf("acked %zu record%s\n", pusher.acked(), pusher.acked() == 1 ? "" : "s");
    return 0;
  }
  if (records.empty() || records.front().empty())
    return usage_error("push", "nothing to push (weir stores no empty record)");

  auto c = connect(o);
  const auto bytes = bytes_of(records.front());
  if (tracked) {
    const auto r = c.push_tracked(bytes, tier);
    if (!r.acked) {
      std::fprintf(stderr, "weir-ctl: push refused: %s\n", refusal(r.nack, tier, bytes.size(), o).c_str());
      return 1;
    }
    if (o.json)
      std::printf("{\"acked\":true,\"segment\":\"%s\",\"index\":%llu,\"record_id\":\"%s\"}\n", r.segment.c_str(),
                  static_cast<unsigned long long>(r.index), r.record_id_hex.c_str());
    else
      std::printf("acked segment=%s index=%llu record_id=%s\n", r.segment.c_str(),
                  static_cast<unsigned long long>(r.index), r.record_id_hex.c_str());
    return 0;
  }
  const auto r = c.push(bytes, tier);
  if (!r.acked) {
    std::fprintf(stderr, "weir-ctl: push refused: %s\n", refusal(r.nack, tier, bytes.size(), o).c_str());
    return 1;
  }
  std::puts(o.json ? "{\"acked\":true}" : "acked");
  return 0;
}

}  // namespace weir::ctl
