#include "runtime/process_limits.hpp"

#include <malloc.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <boost/asio/post.hpp>

#include "observability/log.hpp"
#include "runtime/startup_error.hpp"

namespace weir {

namespace {

/// Descriptors besides the connections: WAB segments and cursors per shard,
/// dead letters, the admin server's 32 connections, sinks, logs, CAF.
constexpr rlim_t fixed_descriptors = 128;
constexpr rlim_t descriptors_per_shard = 8;

}  // namespace

void ensure_open_file_limit(std::int64_t max_connections, std::int64_t shards, std::int64_t pending_handshakes) {
  const rlim_t needed = static_cast<rlim_t>(max_connections + pending_handshakes) + fixed_descriptors +
                        descriptors_per_shard * static_cast<rlim_t>(shards);
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur >= needed) return;
  if (lim.rlim_cur == RLIM_INFINITY) return;
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < needed)
    throw startup_error("listen.max_connections = " + std::to_string(max_connections) + ": needs " +
                        std::to_string(needed) + " open files, but the hard RLIMIT_NOFILE is " +
                        std::to_string(lim.rlim_max) +
                        " (raise it, e.g. LimitNOFILE= in the systemd unit, or lower listen.max_connections)");
  const rlim_t before = lim.rlim_cur;
  lim.rlim_cur = needed;
  if (::setrlimit(RLIMIT_NOFILE, &lim) != 0)
    throw startup_error("listen.max_connections = " + std::to_string(max_connections) +
                        ": cannot raise RLIMIT_NOFILE to " + std::to_string(needed) + ": " + std::strerror(errno));
  log::info("raised the open-file limit for listen.max_connections",
            {{"from", std::to_string(before)}, {"to", std::to_string(needed)}});
}

void configure_allocator() {
  // Setting the threshold at all also turns off its dynamic growth.
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

memory_trimmer::memory_trimmer(boost::asio::io_context& io, std::chrono::seconds interval)
    : timer_(io), interval_(interval) {}

void memory_trimmer::start() { schedule(); }

void memory_trimmer::stop() {
  boost::asio::post(timer_.get_executor(), [this] { timer_.cancel(); });
}

void memory_trimmer::schedule() {
  timer_.expires_after(interval_);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    ::malloc_trim(0);
    schedule();
  });
}

}  // namespace weir
