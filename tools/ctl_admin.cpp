#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tools/ctl_commands.hpp"
#include "tools/ctl_status_view.hpp"
#include "weir/admin_http.hpp"
#include "weir/client.hpp"

namespace weir::ctl {

namespace {

/// Fetches `path` and prints what `show` makes of the body: the one place
/// that turns the admin server's failures into messages and exit codes.
template <class Show>
int fetch_and_show(const std::string& admin, const std::string& path, Show show) {
  if (admin.empty()) {
    std::fprintf(stderr, "weir-ctl: the daemon's admin server is off (admin.listen is \"\"); set admin.listen, or "
                         "point weir-ctl at one with --admin HOST:PORT\n");
    return 2;
  }
  try {
    const auto res = client::admin_get(admin, path);
    if (res.status != 200) {
      std::fprintf(stderr, "weir-ctl: %s answered %u: %s", path.c_str(), res.status, res.body.c_str());
      return 1;
    }
    const std::string out = show(res.body);
    std::cout << out << (out.empty() || out.back() == '\n' ? "" : "\n");
    return 0;
  } catch (const nlohmann::json::exception& e) {
    std::fprintf(stderr, "weir-ctl: %s at %s did not answer a weir status document (%s); is --admin right?\n",
                 path.c_str(), admin.c_str(), e.what());
    return 1;
  } catch (const client::client_error& e) {
    std::fprintf(stderr,
                 "weir-ctl: cannot reach the admin server at %s: %s (is weir-server running with admin.listen "
                 "there? pass --admin HOST:PORT)\n",
                 admin.c_str(), e.what());
    return e.kind() == client::error_kind::unreachable ? 2 : 1;
  }
}

/// A label value as the exposition escapes it (\\, \", \n), from `at` just
/// past its opening quote; `at` ends past the closing one.
std::string label_value(const std::string& line, std::size_t& at) {
  std::string v;
  while (at < line.size() && line[at] != '"') {
    char c = line[at++];
    if (c == '\\' && at < line.size()) {
      c = line[at++];
      if (c == 'n') c = '\n';
    }
    v += c;
  }
  ++at;
  return v;
}

}  // namespace

int admin_get(const std::string& admin, const std::string& path, status_renderer summarize, bool json) {
  return fetch_and_show(admin, path, [&](const std::string& body) {
    return summarize && !json ? summarize(nlohmann::json::parse(body)) : body;
  });
}

int admin_metrics(const std::string& admin, bool json) {
  return fetch_and_show(admin, "/metrics", [&](const std::string& body) {
    return json ? exposition_json(body).dump() : body;
  });
}

nlohmann::json exposition_json(const std::string& text) {
  nlohmann::json out = nlohmann::json::array();
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::size_t at = line.find_first_of("{ ");
    if (at == std::string::npos) continue;
    nlohmann::json sample{{"name", line.substr(0, at)}, {"labels", nlohmann::json::object()}};
    if (line[at] == '{') {
      ++at;
      while (at < line.size() && line[at] != '}') {
        const auto eq = line.find('=', at);
        if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') break;
        const std::string key = line.substr(at, eq - at);
        at = eq + 2;
        sample["labels"][key] = label_value(line, at);
        if (at < line.size() && line[at] == ',') ++at;
      }
      ++at;  // past '}'
    }
    const auto start = line.find_first_not_of(' ', at);
    const std::string rest = start == std::string::npos ? "" : line.substr(start);
    const std::string number = rest.substr(0, rest.find(' '));  // a timestamp may follow
    if (number == "+Inf" || number == "-Inf" || number == "NaN") sample["value"] = number;
    else sample["value"] = std::strtod(number.c_str(), nullptr);
    out.push_back(std::move(sample));
  }
  return out;
}

}  // namespace weir::ctl
