#pragma once
// A one-shot HTTP/1.1 request for tests of the admin server and of Prometheus.
#include <cstdint>
#include <string>

namespace weir::test {

struct http_reply {
  int status = 0;  // 0: no connection
  std::string body;
};

http_reply http_request(std::uint16_t port, const std::string& target, const std::string& method = "GET",
                        const std::string& body = "");

/// The value of one series ("name{labels}", exactly as scraped) in a
/// Prometheus text scrape; -1 when it is not there.
double scrape_series(const std::string& scrape, const std::string& name);

/// A TCP port on 127.0.0.1 that was free a moment ago, below the kernel's
/// ephemeral range: a port the kernel hands out itself (bind to port 0, or
/// the source port of any outgoing connection, such as a cluster node's
/// retries to a peer not started yet) could be taken again before the
/// daemon binds it, and the daemon then exits at start. Never the same port
/// twice in one process.
std::uint16_t free_tcp_port();

/// Headless Chromium on the page at `url` with its own profile under
/// `profile_dir`, after `budget_ms` of the page's time: its DOM into `dom`
/// (empty `screenshot`), or a PNG of the page at `screenshot`. Returns
/// Chromium's exit status.
int headless_chromium(const std::string& url, const std::string& profile_dir, std::string& dom,
                      const std::string& screenshot = "", int budget_ms = 3000);

/// Runs `command` with `input` on its standard input; returns its exit status
/// and fills `output` with what it printed (stdout and stderr).
int run_with_input(const std::string& command, const std::string& input, std::string& output);

}  // namespace weir::test
