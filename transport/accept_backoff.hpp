#pragma once
// What a listener does after a failed accept. EMFILE and friends do not
// clear by trying again at once: the pending connection stays queued and
// accept fails again, a busy loop. So it waits, longer each time up to a
// second, and says so once in a while rather than every time.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>

#include "observability/listener_stats.hpp"
#include "observability/log_throttle.hpp"

namespace weir {

class accept_backoff {
 public:
  /// Counts (in `errors`) and (at most every 10 s) logs the failure `ec`
  /// of `listener`; returns how long to wait before accepting again.
  std::chrono::milliseconds failed(const boost::system::error_code& ec, const std::string& listener,
                                   std::atomic<std::uint64_t>& errors);
  /// An accept worked: the next failure waits the least again.
  void succeeded() { delay_ = std::chrono::milliseconds(0); }

 private:
  std::chrono::milliseconds delay_{0};
  log_throttle lines_;
};

/// The accept loop of a listener: every handler on `strand`; each
/// connection to `on_accepted`; after a failure, the backoff waited out on
/// `timer` (failures counted in `errors`). It ends when the acceptor is
/// closed (on the strand).
template <class Acceptor, class Strand, class OnAccepted>
void accept_forever(Acceptor& acceptor, Strand& strand, boost::asio::steady_timer& timer, accept_backoff& backoff,
                    const char* listener, std::atomic<std::uint64_t>& stats, OnAccepted on_accepted) {
  auto again = [a = &acceptor, s = &strand, t = &timer, b = &backoff, listener, st = &stats, on_accepted] {
    accept_forever(*a, *s, *t, *b, listener, *st, on_accepted);
  };
  acceptor.async_accept(boost::asio::bind_executor(
      strand, [a = &acceptor, t = &timer, b = &backoff, s = &strand, listener, st = &stats, on_accepted, again](
                  const boost::system::error_code& ec, typename Acceptor::protocol_type::socket socket) mutable {
        if (ec == boost::asio::error::operation_aborted || !a->is_open()) return;
        if (!ec) {
          b->succeeded();
          on_accepted(std::move(socket));
          again();
          return;
        }
        t->expires_after(b->failed(ec, listener, *st));
        t->async_wait(boost::asio::bind_executor(*s, [a, again](const boost::system::error_code& wait_ec) {
          if (!wait_ec && a->is_open()) again();
        }));
      }));
}

}  // namespace weir
