#include "config/http_url.hpp"

#include "config/credentials.hpp"

namespace weir {

std::optional<http_url> parse_http_url(const std::string& url, std::string& why) {
  http_url u;
  u.tls = url.rfind("https://", 0) == 0;
  const std::string scheme = u.tls ? "https://" : "http://";
  if (url.rfind(scheme, 0) != 0) {
    why = "expected a URL starting with http:// or https://";
    return std::nullopt;
  }
  if (u.tls) u.port = "443";
  for (const unsigned char c : url)
    if (c <= 0x20 || c == 0x7f) {
      why = "spaces and control characters are not allowed in the URL (percent-encode them)";
      return std::nullopt;
    }
  const std::string rest = url.substr(scheme.size());
  const auto slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) u.target = rest.substr(slash);
  if (has_url_credentials(url)) {
    why = "credentials in the URL are not allowed; put a token in sink.http.bearer_token_file";
    return std::nullopt;
  }
  const auto colon = authority.rfind(':');
  u.host = authority.substr(0, colon);
  if (colon != std::string::npos) u.port = authority.substr(colon + 1);
  if (u.host.empty() || u.port.empty() || u.port.find_first_not_of("0123456789") != std::string::npos) {
    why = "expected " + scheme + "host[:port][/path]";
    return std::nullopt;
  }
  return u;
}

}  // namespace weir
