#pragma once
// Whether a MariaDB/MySQL database has the table of the user's a mapping
// names, and how to write its names. The table is found as written, else
// whatever its case when only one matches; columns whatever their case (as
// the server compares them). The id column must hold a 64-character record
// id, be NOT NULL (a clash on another unique key of the table sets it to NULL
// so that strict mode refuses the row instead of dropping a record) and be
// unique on its own over its whole length; a NOT NULL column without a
// default must be mapped, or every row would be refused.
#include <string>
#include <vector>

#include "sinks/mysql_session.hpp"
#include "sinks/row_mapping.hpp"

namespace weir {

struct mysql_table {
  std::string table;                 // `schema`.`table`
  std::vector<std::string> columns;  // `quoted`, in the order of row_mapping::columns()
};

/// "" and `out` filled when the table has what `m` needs; else one line
/// saying what is missing (or the query's error).
std::string check_mysql_table(mysql_session& s, const row_mapping& m, mysql_table& out);

}  // namespace weir
