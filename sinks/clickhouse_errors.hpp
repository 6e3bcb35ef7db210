#pragma once
// What a ClickHouse error means for a batch: retry it later, or look for the
// rows the server refuses. ClickHouse answers a failed query with
// "Code: <n>, e.displayText() = DB::Exception: …" in the body; the codes of
// a value it cannot read as its column's type are a row's fault, every other
// (no table, no column, too many parts, memory, authentication, an error
// nobody foresaw) is retried, so it delays delivery and drops nothing.
#include <string>

namespace weir {

/// The error code in a ClickHouse error body; 0 when there is none.
int clickhouse_error_code(const std::string& body);
/// Whether the error with this code and message is about a row's value.
bool clickhouse_row_error(int code, const std::string& message);

}  // namespace weir
