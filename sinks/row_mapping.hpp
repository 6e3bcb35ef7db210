#pragma once
// How a record becomes a row of a table of the user's: the record id into
// the id column, and each mapped column's value taken from the payload, a
// JSON object, by a JSON pointer. Every value goes as text (a string as
// itself, a number, boolean, object or array as the payload spells it, every
// digit kept) and the database casts it to the column's type; JSON null, or a missing field with
// `missing: null`, is SQL NULL. A payload that is not a JSON object, or
// lacks a field with `missing: error`, is refused for good with the reason:
// a dead letter.
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "wire/sink_record.hpp"

namespace weir {

class row_mapping {
 public:
  explicit row_mapping(const table_mapping& m);

  const std::string& table() const { return table_; }
  /// The id column first, then the mapped columns, in the order of values().
  const std::vector<std::string>& columns() const { return columns_; }

  /// The row of `r`, in the order of columns(); "" when it has one, else why
  /// not (for the dead letter).
  std::string values(const sink_record& r, std::vector<std::optional<std::string>>& out) const;

 private:
  std::string table_;
  std::vector<std::string> columns_;
  std::vector<std::string> pointers_;               // of columns_[1..], as configured
  std::vector<std::vector<std::string>> tokens_;     // the same, split once
  missing_field missing_;
};

/// `name` quoted as an SQL identifier ("a"."b" for schema.table).
std::string quoted_sql_name(const std::string& name);

}  // namespace weir
