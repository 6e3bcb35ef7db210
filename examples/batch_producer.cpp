// Pushes its standard input, one record per line, in PushBatch frames of up
// to 256 records: one fsync can then cover a whole batch. Each record gets
// its own verdict. Usage: batch_producer SOCKET < lines
#include <cstdio>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include <weir/client.hpp>

namespace {

/// Pushes `lines` as one batch; the number of records not accepted.
std::size_t push_batch(weir::client::connection& conn, const std::vector<std::string>& lines) {
  std::vector<std::span<const std::uint8_t>> records;
  for (const auto& l : lines) records.emplace_back(reinterpret_cast<const std::uint8_t*>(l.data()), l.size());
  const auto r = conn.push_batch(records, weir::client::durability::durable);
  if (r.nack) {
    std::fprintf(stderr, "batch refused (nack 0x%02x)\n", *r.nack);
    return lines.size();
  }
  std::size_t refused = 0;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (!r.accepted[i]) {
      std::fprintf(stderr, "not accepted: %s\n", lines[i].c_str());
      ++refused;
    }
  return refused;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SOCKET < lines\n", argv[0]);
    return 2;
  }
  try {
    auto conn = weir::client::connection::connect_unix(argv[1]);
    std::vector<std::string> batch;
    std::size_t acked = 0, refused = 0;
    auto flush = [&] {
      if (batch.empty()) return;
      const auto bad = push_batch(conn, batch);
      refused += bad;
      acked += batch.size() - bad;
      batch.clear();
    };
    for (std::string line; std::getline(std::cin, line);) {
      if (line.empty()) continue;  // weir stores no empty record
      batch.push_back(line);
      if (batch.size() == 256) flush();
    }
    flush();
    std::printf("acked %zu, refused %zu\n", acked, refused);
    return refused == 0 ? 0 : 1;
  } catch (const weir::client::client_error& e) {
    std::fprintf(stderr, "weir: %s\n", e.what());
    return 1;
  }
}
