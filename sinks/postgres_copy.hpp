#pragma once
// PostgreSQL's binary COPY format for weir_records rows: what the postgres
// sink streams after `copy_statement`. Kept apart from the connection
// handling so that the byte layout can be read (and tested) on its own.
#include <string>
#include <vector>

#include "wire/sink_record.hpp"

namespace weir {

/// The columns, in the order encode_copy_rows writes them (node keeps its default).
inline constexpr const char* copy_statement =
    "COPY weir_records(node, shard, seq, idx, id, segment, ts, payload) FROM STDIN (FORMAT binary)";

/// Replaces `out` with the whole COPY stream for `batch`: signature and
/// header, one tuple per record, trailer.
void encode_copy_rows(const std::vector<sink_record>& batch, std::string& out);

}  // namespace weir
