#include "sinks/postgres_copy.hpp"

#include <cstdint>

namespace weir {

namespace {

/// Writes v at p as `bytes` big-endian bytes (every integer in the format is
/// in network order); returns the position after them.
char* put_be(char* p, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) {
    p[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  return p + bytes;
}

/// A fixed-size integer field: its length, then its value.
char* put_int_field(char* p, std::uint64_t v, int bytes) {
  return put_be(put_be(p, static_cast<std::uint64_t>(bytes), 4), v, bytes);
}

void put_field(std::string& out, const void* data, std::size_t size) {
  char length[4];
  put_be(length, size, 4);
  out.append(length, sizeof length);
  out.append(static_cast<const char*>(data), size);
}

}  // namespace

void encode_copy_rows(const std::vector<sink_record>& batch, std::string& out) {
  static constexpr char signature[] = "PGCOPY\n\377\r\n";  // 11 bytes with its NUL
  constexpr int columns = 8;
  out.clear();  // its capacity stays: the caller keeps `out` from batch to batch
  out.append(signature, sizeof signature);
  out.append(8, '\0');  // flags (no OIDs), then a header extension of none
  // The integer fields are gathered into one append per run of them: a
  // byte at a time, they were the larger part of encoding a batch.
  char fixed[2 + (4 + 4) * 2 + (4 + 8) * 2];
  for (const auto& r : batch) {
    char* p = put_be(fixed, columns, 2);
    p = put_int_field(p, r.node, 4);  // INTEGER
    p = put_int_field(p, r.shard, 4);
    p = put_int_field(p, r.sequence, 8);  // BIGINT
    p = put_int_field(p, r.index, 8);
    out.append(fixed, static_cast<std::size_t>(p - fixed));
    put_field(out, r.id.data(), r.id.size());
    put_field(out, r.segment.data(), r.segment.size());
    p = put_int_field(fixed, static_cast<std::uint64_t>(r.ts_ns), 8);
    out.append(fixed, static_cast<std::size_t>(p - fixed));
    put_field(out, r.payload.data(), r.payload.size());
  }
  out.append(2, '\xff');  // trailer: a field count of -1
}

}  // namespace weir
