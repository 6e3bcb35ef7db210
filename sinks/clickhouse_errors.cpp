#include "sinks/clickhouse_errors.hpp"

#include <algorithm>
#include <cstdlib>

namespace weir {

int clickhouse_error_code(const std::string& body) {
  const auto at = body.find("Code: ");
  if (at == std::string::npos) return 0;
  return std::atoi(body.c_str() + at + 6);
}

bool clickhouse_row_error(int code, const std::string& message) {
  // Older servers (18.x) report a value an Enum does not list as a logical
  // error, 49, whose other uses are the server's own faults.
  if (code == 49) return message.find("Unknown element") != std::string::npos;
  static constexpr int row_codes[] = {
      6,    // CANNOT_PARSE_TEXT
      25,   // CANNOT_PARSE_ESCAPE_SEQUENCE
      26,   // CANNOT_PARSE_QUOTED_STRING
      27,   // CANNOT_PARSE_INPUT_ASSERTION_FAILED (a value that is not its column's type)
      38,   // CANNOT_PARSE_DATE
      41,   // CANNOT_PARSE_DATETIME
      69,   // ARGUMENT_OUT_OF_BOUND
      70,   // CANNOT_CONVERT_TYPE
      72,   // CANNOT_PARSE_NUMBER
      117,  // INCORRECT_DATA
      130,  // CANNOT_READ_ARRAY_FROM_TEXT
      131,  // TOO_LARGE_STRING_SIZE (a FixedString value too long)
      321,  // VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE
      349,  // CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN
      376,  // CANNOT_PARSE_UUID
      469,  // VIOLATED_CONSTRAINT (a CHECK constraint, newer servers)
      691,  // UNKNOWN_ELEMENT_OF_ENUM (newer servers)
  };
  return std::find(std::begin(row_codes), std::end(row_codes), code) != std::end(row_codes);
}

}  // namespace weir
