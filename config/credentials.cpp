#include "config/credentials.hpp"

#include <algorithm>
#include <cctype>

namespace weir {

namespace {

/// Where the user-info of the URL starting at `scheme_end` ("://" just
/// before it) ends at its '@'; npos when it has none.
std::size_t userinfo_end(const std::string& text, std::size_t scheme_end) {
  const auto authority_end = text.find_first_of("/?#", scheme_end);
  const auto at = text.rfind('@', authority_end == std::string::npos ? std::string::npos : authority_end);
  return at != std::string::npos && at >= scheme_end && (authority_end == std::string::npos || at < authority_end)
             ? at
             : std::string::npos;
}

}  // namespace

bool has_url_credentials(const std::string& url) {
  const auto scheme = url.find("://");
  return scheme != std::string::npos && userinfo_end(url, scheme + 3) != std::string::npos;
}

bool conninfo_has_password(const std::string& conninfo) {
  std::string lower = conninfo;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.find("password") != std::string::npos) return true;
  if (lower.rfind("postgresql://", 0) != 0 && lower.rfind("postgres://", 0) != 0) return false;
  const auto start = lower.find("://") + 3;
  const auto at = userinfo_end(lower, start);
  return at != std::string::npos && lower.substr(start, at - start).find(':') != std::string::npos;
}

std::string redact_credentials(const std::string& text) {
  std::string out = text;
  for (auto scheme = out.find("://"); scheme != std::string::npos; scheme = out.find("://", scheme + 3)) {
    const auto at = userinfo_end(out, scheme + 3);
    if (at != std::string::npos) out.replace(scheme + 3, at - (scheme + 3), "(redacted)");
  }
  return out;
}

}  // namespace weir
