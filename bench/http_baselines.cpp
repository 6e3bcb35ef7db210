#include "bench/http_baselines.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench/http_text.hpp"
#include "bench/load_driver.hpp"

namespace weir::bench {

namespace {

using clock = std::chrono::steady_clock;

struct endpoint {
  std::string host, port, target;
};

endpoint parse_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) throw std::runtime_error("--http " + url + ": expected an http:// URL");
  const auto rest = url.substr(scheme.size());
  const auto slash = rest.find('/');
  const auto authority = rest.substr(0, slash);
  const auto colon = authority.rfind(':');
  endpoint e;
  e.host = authority.substr(0, colon);
  e.port = colon == std::string::npos ? "80" : authority.substr(colon + 1);
  e.target = slash == std::string::npos ? "/" : rest.substr(slash);
  return e;
}

int connect_to(const endpoint& e) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(e.host.c_str(), e.port.c_str(), &hints, &found) != 0 || !found)
    throw std::runtime_error("http baseline: cannot resolve " + e.host);
  const int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, 0);
  const bool ok = fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0;
  ::freeaddrinfo(found);
  if (!ok) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("http baseline: cannot connect to " + e.host + ":" + e.port);
  }
  return fd;
}

/// One answer off the connection: its status, and whether the connection
/// stays open. `pending` keeps bytes read past it. False when the
/// connection ends first.
bool read_answer(int fd, std::string& pending, unsigned& status, bool& keep_alive) {
  char buf[16 * 1024];
  std::size_t head_end;
  while ((head_end = pending.find("\r\n\r\n")) == std::string::npos) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return false;
    pending.append(buf, static_cast<std::size_t>(n));
  }
  std::string head = pending.substr(0, head_end);
  std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::tolower(c); });
  status = head.size() > 12 ? static_cast<unsigned>(std::atoi(head.c_str() + 9)) : 0;
  keep_alive = head.find("\r\nconnection: close") == std::string::npos;
  const std::size_t total = head_end + 4 + content_length(head);
  while (pending.size() < total) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return false;
    pending.append(buf, static_cast<std::size_t>(n));
  }
  pending.erase(0, total);
  return true;
}

}  // namespace

baseline_result measure_http_post(const std::string& url, int connections, std::size_t payload_bytes, double seconds) {
  const endpoint e = parse_url(url);
  const std::string request = "POST " + e.target + " HTTP/1.1\r\nHost: " + e.host +
                              "\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
                              std::to_string(payload_bytes) + "\r\n\r\n" + std::string(payload_bytes, 'p');
  std::mutex mutex;
  std::vector<double> all;
  std::string failure;
  std::atomic<std::uint64_t> answered{0};
  const auto start = clock::now();
  const auto stop_at = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<std::thread> threads;
  for (int c = 0; c < connections; ++c)
    threads.emplace_back([&] {
      std::vector<double> lat;
      try {
        int fd = connect_to(e);
        std::string pending;
        while (clock::now() < stop_at) {
          const auto t0 = clock::now();
          unsigned status = 0;
          bool keep_alive = true;
          if (::write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size()) ||
              !read_answer(fd, pending, status, keep_alive))
            throw std::runtime_error("http baseline: the connection to " + url + " ended");
          if (status < 200 || status >= 300)
            throw std::runtime_error("http baseline: " + url + " answered " + std::to_string(status));
          lat.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
          ++answered;
          if (!keep_alive) {
            ::close(fd);
            fd = connect_to(e);
            pending.clear();
          }
        }
        ::close(fd);
      } catch (const std::exception& ex) {
        std::lock_guard<std::mutex> guard(mutex);
        failure = ex.what();
      }
      std::lock_guard<std::mutex> guard(mutex);
      all.insert(all.end(), lat.begin(), lat.end());
    });
  for (auto& t : threads) t.join();
  if (!failure.empty()) throw std::runtime_error(failure);
  const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
  return {static_cast<double>(answered.load()) / elapsed, quantile(all, 0.5)};
}

}  // namespace weir::bench
