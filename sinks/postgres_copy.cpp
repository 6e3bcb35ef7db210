#include "sinks/postgres_copy.hpp"

#include <cstdint>

namespace weir {

namespace {

// Every integer in the format is big-endian ("network order").
void put_be(std::string& out, std::uint64_t v, int bytes) {
  for (int shift = 8 * (bytes - 1); shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}

void put_field(std::string& out, const void* data, std::size_t size) {
  put_be(out, size, 4);
  out.append(static_cast<const char*>(data), size);
}

void put_int_field(std::string& out, std::uint64_t v, int bytes) {
  put_be(out, static_cast<std::uint64_t>(bytes), 4);
  put_be(out, v, bytes);
}

}  // namespace

void encode_copy_rows(const std::vector<sink_record>& batch, std::string& out) {
  static constexpr char signature[] = "PGCOPY\n\377\r\n";  // 11 bytes with its NUL
  constexpr int columns = 8;
  out.clear();
  out.append(signature, sizeof signature);
  put_be(out, 0, 4);  // flags: no OIDs
  put_be(out, 0, 4);  // header extension: none
  for (const auto& r : batch) {
    put_be(out, columns, 2);
    put_int_field(out, r.node, 4);  // INTEGER
    put_int_field(out, r.shard, 4);
    put_int_field(out, r.sequence, 8);
    put_int_field(out, r.index, 8);
    put_field(out, r.id.data(), r.id.size());
    put_field(out, r.segment.data(), r.segment.size());
    put_int_field(out, static_cast<std::uint64_t>(r.ts_ns), 8);
    put_field(out, r.payload.data(), r.payload.size());
  }
  put_be(out, 0xffff, 2);  // trailer: a field count of -1
}

}  // namespace weir
