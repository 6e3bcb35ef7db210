#pragma once
// How an io thread runs the Asio loop (runtime.buffered_spin_us).
//
// A lone Buffered producer sends its next frame a few tens of microseconds
// after its ack. An io thread asleep in epoll_wait by then is woken by the
// kernel, and on a small virtual machine that wake-up (an interrupt to a
// vCPU that halted meanwhile) took longer than everything weir does for the
// record: measured on a 2-vCPU VM, the io thread ran 30 µs after the
// producer's send, of a 53 µs round trip. So for `spin` after a shard writer
// acked a Buffered push, the io thread polls its sockets without sleeping
// (epoll with no timeout) and reads the next frame as it lands; once nothing
// came for `spin`, or no Buffered push was acked that recently, it sleeps in
// epoll_wait as before. Durable-only traffic never polls: there the next
// frame follows an fdatasync, far beyond any window worth spinning for, and
// a polling thread only took the CPU the writer needed.
//
// The price is CPU time while Buffered producers are active (counted in
// io_spin_stats and weir_io_spin_seconds_total); with many producers the
// sockets always have work and nothing is spun.
#include <chrono>

#include <boost/asio/io_context.hpp>

#include "actors/buffered_activity.hpp"
#include "observability/io_spin_stats.hpp"

namespace weir {

struct io_spin_policy {
  std::chrono::microseconds spin{0};          // 0: never poll, sleep at once
  const buffered_activity* buffered = nullptr;  // null: never poll
  io_spin_stats* stats = nullptr;             // may be null (tests)
};

/// Runs `io` until it is stopped or out of work, as io_context::run() does,
/// polling instead of sleeping as `policy` says.
void run_io_thread(boost::asio::io_context& io, const io_spin_policy& policy);

}  // namespace weir
