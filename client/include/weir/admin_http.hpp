#pragma once
// Reading a daemon's admin HTTP server (metrics, status): one blocking GET.
// Used by weir-ctl and weir-bench; anything that speaks HTTP can do the same.
#include <chrono>
#include <string>

namespace weir::client {

struct admin_reply {
  unsigned status = 0;
  std::string body;
};

/// GET http://<host_port><path>, e.g. admin_get("127.0.0.1:9185", "/metrics").
/// Throws client_error (weir/client.hpp) when the server cannot be reached
/// or has not answered in full within `timeout`.
admin_reply admin_get(const std::string& host_port, const std::string& path,
                      std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace weir::client
