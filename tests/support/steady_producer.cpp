#include "support/steady_producer.hpp"

#include "support/test_helpers.hpp"
#include "weir/client.hpp"

namespace weir::test {

steady_producer::steady_producer(std::string socket, std::string prefix)
    : thread_([this, socket = std::move(socket), prefix = std::move(prefix)] {
        try {
          auto c = client::connection::connect_unix(socket);
          for (int i = 0;; ++i) {
            const std::string p = prefix + std::to_string(i);
            if (!c.push(as_bytes(p), client::durability::durable).acked) return;
            std::lock_guard<std::mutex> guard(mutex_);
            acked_.push_back(p);
          }
        } catch (const client::client_error&) {
          // the daemon went away: the push in flight was not acked
        }
      }) {}

steady_producer::~steady_producer() {
  if (thread_.joinable()) thread_.join();
}

std::vector<std::string> steady_producer::join() {
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> guard(mutex_);
  return acked_;
}

}  // namespace weir::test
