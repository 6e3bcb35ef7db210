#include "support/http_test_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace weir::test {

namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

http_test_server::http_test_server(rule r, std::uint16_t port) : port_(port), rule_(std::move(r)) { start(); }

http_test_server::~http_test_server() { stop(); }

std::string http_test_server::url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

std::vector<http_request_seen> http_test_server::accepted() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return accepted_;
}

std::set<std::string> http_test_server::accepted_bodies() const {
  std::lock_guard<std::mutex> guard(mutex_);
  std::set<std::string> out;
  for (const auto& r : accepted_) out.insert(r.body);
  return out;
}

void http_test_server::set_rule(rule r) {
  std::lock_guard<std::mutex> guard(mutex_);
  rule_ = std::move(r);
}

void http_test_server::start() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port_);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 64) != 0)
    throw std::runtime_error("http_test_server: cannot listen on port " + std::to_string(port_));
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  running_ = true;
  acceptor_ = std::thread([this] { accept_loop(); });
}

void http_test_server::stop() {
  if (!running_.exchange(false)) return;
  ::shutdown(listen_fd_, SHUT_RDWR);
  ::close(listen_fd_);
  acceptor_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    for (int fd : connections_) ::shutdown(fd, SHUT_RDWR);
    workers.swap(workers_);
  }
  for (auto& t : workers) t.join();
}

void http_test_server::accept_loop() {
  while (running_) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (!running_) return;
      continue;
    }
    std::lock_guard<std::mutex> guard(mutex_);
    connections_.push_back(fd);
    workers_.emplace_back([this, fd] { serve(fd); });
  }
}

void http_test_server::serve(int fd) {
  boost::asio::io_context io;
  tcp::socket socket(io, tcp::v4(), fd);
  boost::beast::flat_buffer buffer;
  while (running_) {
    http::request<http::string_body> req;
    boost::system::error_code ec;
    http::read(socket, buffer, req, ec);
    if (ec) break;
    if (buffer.size() > 0) ++pipelined_;
    http_request_seen seen{std::string(req.target()), {}, req.body()};
    for (const auto& f : req) {
      std::string name(f.name_string());
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      seen.headers[name] = std::string(f.value());
    }
    const std::size_t nth = count_++;
    http_answer a;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (rule_) a = rule_(seen, nth);
    }
    if (a.delay.count() > 0) std::this_thread::sleep_for(a.delay);
    if (a.reset) break;
    if (a.status >= 200 && a.status < 300) {
      std::lock_guard<std::mutex> guard(mutex_);
      accepted_.push_back(seen);
    }
    http::response<http::string_body> res{static_cast<http::status>(a.status), 11};
    for (const auto& [k, v] : a.headers) res.set(k, v);
    res.keep_alive(req.keep_alive() && !a.close);
    res.prepare_payload();
    http::write(socket, res, ec);
    if (ec || !res.keep_alive()) break;
  }
  boost::system::error_code ignored;
  socket.close(ignored);
  std::lock_guard<std::mutex> guard(mutex_);
  connections_.erase(std::remove(connections_.begin(), connections_.end(), fd), connections_.end());
}

}  // namespace weir::test
