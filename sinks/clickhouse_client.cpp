#include "sinks/clickhouse_client.hpp"

#include <cctype>

#include "sinks/clickhouse_errors.hpp"

namespace weir {

namespace {

namespace http = boost::beast::http;

std::string url_encoded(const std::string& s) {
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

/// TabSeparated's escapes undone (\t, \n, \\, \0 and the rest ClickHouse writes).
std::string tsv_unescaped(std::string_view v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] != '\\' || i + 1 == v.size()) {
      out += v[i];
      continue;
    }
    switch (const char c = v[++i]) {
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case '0': out += '\0'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

clickhouse_client::answer clickhouse_client::run(const std::string& query, std::string& data) {
  const auto& target = s_->url.target;
  http_connection::request req{http::verb::post,
                               target + (target.find('?') == std::string::npos ? "?" : "&") +
                                   "database=" + url_encoded(s_->database) + "&query=" + url_encoded(query),
                               11};
  req.set(http::field::host, s_->url.host);
  req.set(http::field::user_agent, "weir");
  req.set("X-ClickHouse-User", s_->user);
  if (const auto password = s_->password->value(); !password.empty()) req.set("X-ClickHouse-Key", password);
  req.keep_alive(true);
  answer a;
  auto res = conn_.send(req, data);
  if (!res) {
    a.error = "clickhouse: " + res.error();
    return a;
  }
  a.reached = true;
  const unsigned status = res.value().result_int();
  if (status >= 200 && status < 300) {
    a.ok = true;
    last_body_ = std::move(res.value().body());
    return a;
  }
  const std::string& body = res.value().body();
  a.code = clickhouse_error_code(body);
  a.error = "clickhouse HTTP " + std::to_string(status) + ": " + body.substr(0, body.find('\n'));
  if (a.error.size() > 400) a.error.resize(400);
  return a;
}

clickhouse_client::answer clickhouse_client::select(const std::string& query,
                                                    std::vector<std::vector<std::string>>& rows) {
  std::string none;
  auto a = run(query + " FORMAT TabSeparated", none);
  rows.clear();
  if (!a.ok) return a;
  std::string_view body(last_body_);
  while (!body.empty()) {
    const auto eol = body.find('\n');
    const auto line = body.substr(0, eol);
    auto& row = rows.emplace_back();
    for (std::size_t from = 0;;) {
      const auto tab = line.find('\t', from);
      row.push_back(tsv_unescaped(line.substr(from, tab == std::string_view::npos ? std::string_view::npos : tab - from)));
      if (tab == std::string_view::npos) break;
      from = tab + 1;
    }
    if (eol == std::string_view::npos) break;
    body.remove_prefix(eol + 1);
  }
  return a;
}

}  // namespace weir
