#pragma once
// Whether a ClickHouse table can take weir's rows exactly once by record id:
// it exists, has every column (none of them MATERIALIZED or ALIAS, which
// take no value), its id column holds a 64-character id (String or
// FixedString(64)), and its engine is a ReplacingMergeTree whose sorting key
// has the id column — ClickHouse has no unique keys; a ReplacingMergeTree
// folds rows of one sorting key into one when it merges, so a record
// delivered again is one row in every query with FINAL, and in all of them
// once merged. Names are matched as written (ClickHouse's are case-sensitive).
#include <string>
#include <vector>

#include "sinks/clickhouse_client.hpp"

namespace weir {

/// "" when `database`.`table` has `columns` (the id column first) as above;
/// else one line saying what is missing. `reached` says whether the server
/// answered at all.
std::string check_clickhouse_table(clickhouse_client& client, const std::string& database, const std::string& table,
                                   const std::vector<std::string>& columns, bool& reached);

}  // namespace weir
