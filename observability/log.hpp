#pragma once
// Structured logging to stderr: a message plus key=value fields, rendered as
// one text line or one JSON object per event. Not for the per-record path.
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.hpp"

namespace weir::log {

using field = std::pair<std::string_view, std::string>;

void configure(log_level level, log_format format);
bool enabled(log_level level);
void write(log_level level, std::string_view message, std::initializer_list<field> fields = {});
/// The same, with fields built at run time.
void write(log_level level, std::string_view message, const std::vector<std::pair<std::string, std::string>>& fields);

inline void debug(std::string_view m, std::initializer_list<field> f = {}) { write(log_level::debug, m, f); }
inline void info(std::string_view m, std::initializer_list<field> f = {}) { write(log_level::info, m, f); }
inline void warn(std::string_view m, std::initializer_list<field> f = {}) { write(log_level::warn, m, f); }
inline void error(std::string_view m, std::initializer_list<field> f = {}) { write(log_level::error, m, f); }

}  // namespace weir::log
