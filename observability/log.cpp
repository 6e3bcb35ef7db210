#include "observability/log.hpp"

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace weir::log {

namespace {

std::atomic<log_level> min_level{log_level::info};
std::atomic<log_format> current_format{log_format::text};
std::mutex write_mutex;

const char* level_name(log_level l) {
  switch (l) {
    case log_level::trace: return "trace";
    case log_level::debug: return "debug";
    case log_level::info: return "info";
    case log_level::warn: return "warn";
    case log_level::error: return "error";
  }
  return "?";
}

std::string timestamp() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t secs = system_clock::to_time_t(now);
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

bool needs_quotes(std::string_view v) {
  return v.empty() || v.find_first_of(" \"=\t\n") != std::string_view::npos;
}

}  // namespace

void configure(log_level level, log_format format) {
  min_level = level;
  current_format = format;
}

bool enabled(log_level level) { return level >= min_level.load(std::memory_order_relaxed); }

namespace {

/// A JSON number as RFC 8259 writes it: such a field value goes out as a
/// number, so log processors can compare and sum it.
bool is_json_number(std::string_view v) {
  std::size_t i = 0;
  if (i < v.size() && v[i] == '-') ++i;
  if (i >= v.size() || !std::isdigit(static_cast<unsigned char>(v[i]))) return false;
  if (v[i] == '0' && i + 1 < v.size() && std::isdigit(static_cast<unsigned char>(v[i + 1]))) return false;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
  if (i < v.size() && v[i] == '.') {
    if (++i >= v.size() || !std::isdigit(static_cast<unsigned char>(v[i]))) return false;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
  }
  if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) {
    if (++i < v.size() && (v[i] == '+' || v[i] == '-')) ++i;
    if (i >= v.size() || !std::isdigit(static_cast<unsigned char>(v[i]))) return false;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
  }
  return i == v.size();
}

template <class Fields>
void write_line(log_level level, std::string_view message, const Fields& fields) {
  std::string line;
  if (current_format.load() == log_format::json) {
    line = "{\"ts\":\"" + timestamp() + "\",\"level\":\"" + level_name(level) + "\",\"msg\":";
    append_json_string(line, message);
    for (auto& [k, v] : fields) {
      line += ',';
      append_json_string(line, k);
      line += ':';
      if (is_json_number(v)) line += v;
      else append_json_string(line, v);
    }
    line += "}\n";
  } else {
    line = timestamp() + " " + level_name(level) + " " + std::string(message);
    for (auto& [k, v] : fields) {
      line += ' ';
      line += k;
      line += '=';
      if (needs_quotes(v)) {
        append_json_string(line, v);
      } else {
        line += v;
      }
    }
    line += '\n';
  }
  std::lock_guard<std::mutex> guard(write_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

void write(log_level level, std::string_view message, std::initializer_list<field> fields) {
  if (enabled(level)) write_line(level, message, fields);
}

void write(log_level level, std::string_view message, const std::vector<std::pair<std::string, std::string>>& fields) {
  if (enabled(level)) write_line(level, message, fields);
}

}  // namespace weir::log
