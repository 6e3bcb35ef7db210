#pragma once
// The parts of an http:// or https:// URL the HTTP sink needs. Credentials in the URL
// are refused (they would end up in logs and process listings), and so are
// spaces and control characters (a CR/LF would become extra header lines).
// Config validation and the sink parse with this one function, so the
// configuration accepts exactly the URLs the sink can use.
#include <optional>
#include <string>

namespace weir {

struct http_url {
  bool tls = false;  // https://
  std::string host;
  std::string port = "80";
  std::string target = "/";  // path and query
  /// "https://host:port/path" for logs.
  std::string display() const { return (tls ? "https://" : "http://") + host + ":" + port + target; }
};

/// nullopt with `why` set when `url` is not a usable http:// or https:// URL.
std::optional<http_url> parse_http_url(const std::string& url, std::string& why);

}  // namespace weir
