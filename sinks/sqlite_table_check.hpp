#pragma once
// Whether an SQLite database has the table of the user's a mapping names:
// the table, every mapped column, and an id column that is unique (the
// primary key, or a unique index of that column alone), which is what makes
// a record delivered again skip instead of making a second row.
#include <string>

#include <sqlite3.h>

#include "sinks/row_mapping.hpp"

namespace weir {

/// "" when it has; else one line saying what is missing.
std::string check_sqlite_table(sqlite3* db, const row_mapping& m);

}  // namespace weir
