#include "config/credentials.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include <libpq-fe.h>

namespace weir {

namespace {

/// The position of the '@' that ends the user-info of the URL whose
/// authority starts at `start`, the authority ending at the next '/' (as
/// libpq reads it: a '?' or '#' there is part of a password); npos when none.
std::size_t userinfo_end(const std::string& text, std::size_t start) {
  const auto authority_end = text.find('/', start);
  const auto at = text.rfind('@', authority_end == std::string::npos ? std::string::npos : authority_end);
  return at != std::string::npos && at >= start ? at : std::string::npos;
}

}  // namespace

bool has_url_credentials(const std::string& url) {
  const auto scheme = url.find("://");
  return scheme != std::string::npos && userinfo_end(url, scheme + 3) != std::string::npos;
}

bool conninfo_has_password(const std::string& conninfo) {
  // libpq's own reading first: it decodes a URI's percent-encoding
  // ("?pass%77ord=x" is password=x to it) and knows every spelling it takes.
  char* error = nullptr;
  if (PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error)) {
    bool found = false;
    for (const PQconninfoOption* o = options; o->keyword; ++o)
      if (std::strcmp(o->keyword, "password") == 0 && o->val && *o->val) found = true;
    PQconninfoFree(options);
    if (found) return true;
  }
  PQfreemem(error);
  // And the text itself: a string libpq cannot read (refused when the sink
  // connects) must not pass with a password in it either.
  std::string lower = conninfo;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.find("password") != std::string::npos) return true;
  if (lower.rfind("postgresql://", 0) != 0 && lower.rfind("postgres://", 0) != 0) return false;
  const auto start = lower.find("://") + 3;
  const auto at = userinfo_end(lower, start);
  return at != std::string::npos && lower.substr(start, at - start).find(':') != std::string::npos;
}

bool conninfo_readable(const std::string& conninfo) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  PQfreemem(error);
  if (!options) return false;
  PQconninfoFree(options);
  return true;
}

std::string redact_credentials(const std::string& text) {
  // In an error message it errs on the side of hiding: everything from the
  // scheme to the last '@' of the same word goes, wherever the URL's own
  // rules would end its user-info.
  std::string out = text;
  for (auto scheme = out.find("://"); scheme != std::string::npos; scheme = out.find("://", scheme + 3)) {
    const auto start = scheme + 3;
    auto word_end = out.find_first_of(" \t\"'", start);
    if (word_end == std::string::npos) word_end = out.size();
    const auto at = out.rfind('@', word_end - 1);
    if (at != std::string::npos && at >= start && at < word_end) out.replace(start, at - start, "(redacted)");
  }
  return out;
}

}  // namespace weir
