#include "sinks/mysql_errors.hpp"

#include <mysqld_error.h>

#include <algorithm>
#include <array>

namespace weir {

namespace {

/// MySQL's numbers for a failed CHECK constraint (MariaDB's is
/// ER_CONSTRAINT_FAILED) and for a value that is not valid JSON.
constexpr unsigned mysql_check_constraint_violated = 3819;
constexpr unsigned mysql_invalid_json_text = 3140;

/// Server errors about the values of one row: in strict SQL mode each fails
/// only the statement that carried the row, never the transaction.
constexpr std::array<unsigned, 20> row_data_errors{
    ER_BAD_NULL_ERROR,  // also the sink's answer to a clash on a unique key of the user's own
    ER_DUP_ENTRY,
    ER_NO_REFERENCED_ROW,
    ER_NO_REFERENCED_ROW_2,
    ER_WARN_NULL_TO_NOTNULL,
    ER_WARN_DATA_OUT_OF_RANGE,
    ER_DATA_OUT_OF_RANGE,
    WARN_DATA_TRUNCATED,
    ER_TRUNCATED_WRONG_VALUE,
    ER_TRUNCATED_WRONG_VALUE_FOR_FIELD,
    ER_INVALID_CHARACTER_STRING,
    ER_ILLEGAL_VALUE_FOR_TYPE,
    ER_WRONG_VALUE_FOR_TYPE,
    ER_DIVISION_BY_ZERO,  // in a generated column or a CHECK of the user's
    ER_CANNOT_CONVERT_CHARACTER,
    ER_DATA_TOO_LONG,
    ER_SIGNAL_EXCEPTION,  // a trigger of the user's refused the row
    ER_CONSTRAINT_FAILED,
    mysql_check_constraint_violated,
    mysql_invalid_json_text,
};

}  // namespace

mysql_error_class classify_mysql_error(unsigned number) {
  return std::find(row_data_errors.begin(), row_data_errors.end(), number) != row_data_errors.end()
             ? mysql_error_class::row_data
             : mysql_error_class::transient;
}

}  // namespace weir
