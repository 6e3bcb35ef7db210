#pragma once
// What a MariaDB/MySQL error number means for a batch: retry it later, or
// look for the rows the server refuses. Kept apart from the sink so that the
// classification can be checked number by number without a server.
namespace weir {

enum class mysql_error_class {
  transient,  // the connection, a lock, the server's state or its configuration: retry the batch
  row_data,   // a value of some row is refused: find those rows and dead-letter them only
};

/// Client errors (2000-2999: no connection, lost connection, timeout) and
/// every server error not known to be about a row's data are transient, so
/// an error nobody foresaw delays delivery instead of dropping records.
mysql_error_class classify_mysql_error(unsigned number);

}  // namespace weir
