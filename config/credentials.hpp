#pragma once
// Passwords must never be written into the configuration (they would be
// printed by --print-config, logged in errors and visible in process
// listings): these find them in the forms a URL or a libpq connection string
// can carry them, and keep them out of messages.
#include <string>

namespace weir {

/// True when `url` has a user-info part ("scheme://user:password@host" or "scheme://user@host").
bool has_url_credentials(const std::string& url);

/// True when a libpq connection string carries a password, in any spelling
/// libpq takes (read with PQconninfoParse: the `password` keyword, a
/// `password=` URI parameter, percent-encoded or not, or
/// "postgresql://user:password@…"), or the word "password" anywhere in it.
bool conninfo_has_password(const std::string& conninfo);

/// Whether libpq reads `conninfo` (PQconninfoParse) without an error.
bool conninfo_readable(const std::string& conninfo);

/// `text` with any URL user-info replaced by "(redacted)": safe to echo in an error.
std::string redact_credentials(const std::string& text);

}  // namespace weir
