#pragma once
// What the daemon asks of its process before it serves: enough file
// descriptors for listen.max_connections, and an allocator that gives large
// buffers (frame payloads) back to the system once they are freed.
#include <chrono>
#include <cstdint>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

namespace weir {

/// Raises the soft RLIMIT_NOFILE to cover `max_connections`, the TLS
/// handshakes that may be in progress beside them, and the daemon's own
/// files; throws startup_error naming listen.max_connections when even the
/// hard limit is too low.
void ensure_open_file_limit(std::int64_t max_connections, std::int64_t shards, std::int64_t pending_handshakes = 0);

/// Large allocations come from mmap and go back on free: glibc would
/// otherwise raise its mmap threshold after the first large free and keep
/// every later 16 MiB frame in a heap that never shrinks.
void configure_allocator();

/// Trims the allocator's free memory back to the system every `interval`.
class memory_trimmer {
 public:
  memory_trimmer(boost::asio::io_context& io, std::chrono::seconds interval);
  void start();
  void stop();

 private:
  void schedule();
  boost::asio::steady_timer timer_;
  std::chrono::seconds interval_;
};

}  // namespace weir
