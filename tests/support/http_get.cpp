#include "support/http_get.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <sstream>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace weir::test {

namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

http_reply http_request(std::uint16_t port, const std::string& target, const std::string& method,
                        const std::string& body) {
  try {
    boost::asio::io_context io;
    tcp::socket socket(io);
    socket.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.keep_alive(false);
    req.body() = body;
    req.prepare_payload();
    http::write(socket, req);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    return {static_cast<int>(res.result_int()), res.body()};
  } catch (const std::exception&) {
    return {};
  }
}

namespace {

/// The lowest port of the kernel's ephemeral range (32768 when unreadable).
int ephemeral_low() {
  int low = 32768, high = 0;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low >> high;
  return low;
}

bool bindable(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::uint16_t free_tcp_port() {
  static std::mutex mutex;
  static std::set<std::uint16_t> given;
  static std::mt19937 pick(std::random_device{}());
  const int high = std::max(ephemeral_low() - 1, 11024);
  std::uniform_int_distribution<int> in_range(std::max(1024, high - 10000), high);
  std::lock_guard lock(mutex);
  for (;;) {
    const auto port = static_cast<std::uint16_t>(in_range(pick));
    if (!given.count(port) && bindable(port)) {
      given.insert(port);
      return port;
    }
  }
}

int run_with_input(const std::string& command, const std::string& input, std::string& output) {
  char tmpl[] = "/tmp/weir-input-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) return -1;
  ::close(fd);
  std::ofstream(tmpl, std::ios::binary) << input;
  FILE* p = ::popen((command + " < " + tmpl + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf{};
  output.clear();
  while (p && std::fgets(buf.data(), buf.size(), p)) output += buf.data();
  const int rc = p ? ::pclose(p) : -1;
  ::unlink(tmpl);
  return rc;
}

double scrape_series(const std::string& scrape, const std::string& name) {
  std::istringstream lines(scrape);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
  return -1;
}

int headless_chromium(const std::string& url, const std::string& profile_dir, std::string& dom,
                      const std::string& screenshot, int budget_ms) {
  const std::string chromium = "chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
                               "--no-first-run --user-data-dir=" + profile_dir +
                               " --virtual-time-budget=" + std::to_string(budget_ms);
  if (screenshot.empty()) return run_with_input(chromium + " --dump-dom " + url + " 2>/dev/null", "", dom);
  return run_with_input(chromium + " --window-size=1400,1100 --screenshot=" + screenshot + " " + url, "", dom);
}

}  // namespace weir::test
