#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "tools/ctl_commands.hpp"
#include "tools/ctl_status_view.hpp"
#include "weir/admin_http.hpp"
#include "weir/client.hpp"

namespace weir::ctl {

int admin_get(const std::string& admin, const std::string& path, status_renderer summarize, bool json) {
  try {
    const auto res = client::admin_get(admin, path);
    if (res.status != 200) {
      std::fprintf(stderr, "weir-ctl: %s answered %u: %s", path.c_str(), res.status, res.body.c_str());
      return 1;
    }
    if (summarize && !json) std::fputs(summarize(nlohmann::json::parse(res.body)).c_str(), stdout);
    else std::cout << res.body << (res.body.empty() || res.body.back() == '\n' ? "" : "\n");
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

}  // namespace weir::ctl
