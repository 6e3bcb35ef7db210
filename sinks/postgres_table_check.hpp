#pragma once
// Whether a PostgreSQL database has the table of the user's a mapping names,
// and how to write its names: the table and each column are found as
// written, or else as PostgreSQL folds an unquoted name (to lower case), so
// that `events`/`user_id` from `CREATE TABLE Events (User_Id ...)` are found.
// The id column must take a 64-character text and be unique on its own
// (a primary key or a non-partial, immediate unique index: what ON CONFLICT
// needs); a column that is NOT NULL without a default must be mapped, or
// every row would be refused; a GENERATED ALWAYS column (stored or identity)
// takes no value; a table with a rule ON INSERT is refused (PostgreSQL
// refuses ON CONFLICT on it, and COPY would not apply the rule).
#include <libpq-fe.h>

#include <string>
#include <vector>

#include "sinks/row_mapping.hpp"

namespace weir {

struct postgres_table {
  std::string table;                 // quoted, schema-qualified when it was
  std::vector<std::string> columns;  // quoted, in the order of row_mapping::columns()
};

/// "" and `out` filled when the table has what `m` needs; else one line
/// saying what is missing (or the query's error).
std::string check_postgres_table(PGconn* conn, const row_mapping& m, postgres_table& out);

}  // namespace weir
