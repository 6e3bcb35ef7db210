#pragma once
// A small HTTP/1.1 server for sink tests (Boost.Beast, one thread per
// connection, keep-alive). Every request is recorded; a test-supplied rule
// decides each answer, so tests can inject 5xx, 429 with Retry-After, slow
// answers, connection resets and refusals of chosen records.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace weir::test {

struct http_request_seen {
  std::string target;
  std::map<std::string, std::string> headers;  // lowercase names
  std::string body;
};

struct http_answer {
  unsigned status = 200;
  std::map<std::string, std::string> headers;
  std::chrono::milliseconds delay{0};
  bool reset = false;  // close the connection instead of answering
  bool close = false;  // answer with Connection: close, then close the connection
};

class http_test_server {
 public:
  using rule = std::function<http_answer(const http_request_seen&, std::size_t nth)>;

  /// Listens on 127.0.0.1 on a free port (or `port`).
  explicit http_test_server(rule r = {}, std::uint16_t port = 0);
  ~http_test_server();

  std::uint16_t port() const { return port_; }
  std::string url(const std::string& path = "/ingest") const;
  /// Requests answered 2xx, in arrival order.
  std::vector<http_request_seen> accepted() const;
  /// Their bodies, each once (a record sent again is one body).
  std::set<std::string> accepted_bodies() const;
  std::size_t requests() const { return count_.load(); }
  /// Requests whose next request had already arrived when they were read
  /// (the client pipelines: it did not wait for the answer).
  std::size_t pipelined() const { return pipelined_.load(); }
  void set_rule(rule r);
  /// Stops listening and drops every connection (an outage); start() resumes on the same port.
  void stop();
  void start();

 private:
  void accept_loop();
  void serve(int fd);

  std::uint16_t port_ = 0;
  int listen_fd_ = -1;
  std::thread acceptor_;
  mutable std::mutex mutex_;
  rule rule_;
  std::vector<http_request_seen> accepted_;
  std::vector<int> connections_;
  std::vector<std::thread> workers_;
  std::atomic<std::size_t> count_{0};
  std::atomic<std::size_t> pipelined_{0};
  std::atomic<bool> running_{false};
};

}  // namespace weir::test
