// weir-ctl push: one record from the command line, or records read from
// standard input — one per line (the line end is not part of the record), or
// the whole input as one record with --raw.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "messages/wire/frame.hpp"
#include "tools/ctl_commands.hpp"
#include "weir/client.hpp"

namespace weir::ctl {

namespace {

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

std::string nack_name(std::uint8_t reason) {
  auto n = wire::name_of(static_cast<wire::nack_reason>(reason));
  return n == "?" ? "Unknown(" + std::to_string(reason) + ")" : std::string(n);
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

/// Records per PushBatch frame: well under the daemon's default limits.max_batch_records and frame size.
constexpr std::size_t batch_records = 256;
constexpr std::size_t batch_bytes = 1 << 20;

int push_lines(client::connection& c, const std::vector<std::string>& records, client::durability tier, bool json) {
  std::size_t acked = 0;
  for (std::size_t from = 0; from < records.size();) {
    std::vector<std::span<const std::uint8_t>> spans;
    std::size_t bytes = 0;
    for (std::size_t i = from; i < records.size() && spans.size() < batch_records; ++i) {
      if (!spans.empty() && bytes + records[i].size() > batch_bytes) break;
      spans.push_back(bytes_of(records[i]));
      bytes += records[i].size();
    }
    const auto r = c.push_batch(spans, tier);
    if (r.nack) {
      std::fprintf(stderr, "weir-ctl: push refused at line %zu: Nack(%s); %zu records acked before it\n", from + 1,
                   nack_name(*r.nack).c_str(), acked);
      return 1;
    }
    for (std::size_t k = 0; k < r.accepted.size(); ++k) {
      if (!r.accepted[k]) {
        std::fprintf(stderr, "weir-ctl: the record of line %zu was not acked; %zu records acked before it\n",
                     from + k + 1, acked);
        return 1;
      }
      ++acked;
    }
    from += spans.size();
  }
  if (json) std::printf("{\"acked\":true,\"records\":%zu}\n", acked);
  else std::printf("acked %zu records\n", acked);
  return 0;
}

}  // namespace

const char* const push_help = R"(Usage: weir-ctl push [--durability D] [--tracked] [--raw] [--] [PAYLOAD]

Pushes PAYLOAD as one record. Without PAYLOAD, reads standard input: each
line is one record (its "\n" or "\r\n" is not stored; empty lines are
skipped), sent in batches; with --raw, the whole input is one record, bytes
as they are.

Options:
  --durability D   durable (default: acked after fdatasync), buffered (acked
                   after the write) or replicated
  --tracked        print the record's segment, index and id (one record only)
  --raw            standard input is one record, newlines included
  --               what follows is the payload, even if it starts with --

Examples:
  weir-ctl push 'hello'
  weir-ctl push --durability buffered --tracked '{"order": 17}'
  tail -f app.log | weir-ctl push          # one record per line
  weir-ctl push --raw < image.png          # one record
)";

int push_command(const options& o, const std::vector<std::string>& args) {
  auto tier = client::durability::durable;
  bool tracked = false, raw = false, have_payload = false, payload_only = false;
  std::string payload;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!payload_only && a == "--") {
      payload_only = true;
    } else if (!payload_only && a == "--durability") {
      if (++i >= args.size()) return usage_error("push", "--durability needs a value: durable, buffered or replicated");
      if (args[i] == "durable") tier = client::durability::durable;
      else if (args[i] == "buffered") tier = client::durability::buffered;
      else if (args[i] == "replicated") tier = client::durability::replicated;
      else return usage_error("push", "--durability " + args[i] + ": expected durable, buffered or replicated");
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
  if (have_payload && raw) return usage_error("push", "--raw reads standard input; give no PAYLOAD with it");

  std::vector<std::string> records;
  std::size_t skipped = 0;
  if (have_payload) {
    records.push_back(std::move(payload));
  } else if (raw) {
    records.emplace_back(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    records = read_lines(std::cin, skipped);
  }
  if (records.empty() || records.front().empty())
    return usage_error("push", "nothing to push (weir stores no empty record)");
  if (tracked && records.size() > 1)
    return usage_error("push", "--tracked pushes one record; standard input had " + std::to_string(records.size()) +
                                   " lines (use --raw for one record)");
  if (skipped > 0) std::fprintf(stderr, "weir-ctl: skipped %zu empty lines\n", skipped);

  auto c = connect(o);
  if (records.size() > 1) return push_lines(c, records, tier, o.json);
  const auto bytes = bytes_of(records.front());
  if (tracked) {
    const auto r = c.push_tracked(bytes, tier);
    if (!r.acked) {
      std::fprintf(stderr, "weir-ctl: push refused: Nack(%s)\n", nack_name(r.nack).c_str());
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
    std::fprintf(stderr, "weir-ctl: push refused: Nack(%s)\n", nack_name(r.nack).c_str());
    return 1;
  }
  std::puts(o.json ? "{\"acked\":true}" : "acked");
  return 0;
}

}  // namespace weir::ctl
