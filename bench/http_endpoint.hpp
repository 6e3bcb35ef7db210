#pragma once
// The bench's own HTTP endpoint on a loopback port, for the scenarios whose
// sink must answer in a way nginx cannot be told to: after a fixed delay
// (a slow API), with 503 for a while (an outage), or noting when each
// stamped record arrived (push-to-sink latency). One thread per connection,
// keep-alive, pipelined requests answered in order.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace weir::bench {

class http_endpoint {
 public:
  /// Every answer waits `delay` first (zero: at once). `no_delay`: answers
  /// leave at once (TCP_NODELAY, as nginx's tcp_nodelay); false leaves
  /// Nagle's algorithm on, as many application servers do.
  explicit http_endpoint(std::chrono::microseconds delay = {}, bool no_delay = true);
  ~http_endpoint();
  http_endpoint(const http_endpoint&) = delete;
  http_endpoint& operator=(const http_endpoint&) = delete;

  /// http://127.0.0.1:PORT/
  std::string url() const;
  /// From now on, answer 503 until `span` has passed.
  void refuse_for(std::chrono::steady_clock::duration span);
  /// When the last refusal window ends (the epoch while none was set).
  std::chrono::steady_clock::time_point refusing_until() const;
  /// Requests answered 2xx so far.
  std::uint64_t accepted() const;
  /// Requests answered 503 so far.
  std::uint64_t refused() const;
  /// Microseconds from each stamped record's send to its arrival here, for
  /// every stamped body answered 2xx so far (see load_spec::stamp).
  std::vector<double> stamped_latencies_us() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace weir::bench
