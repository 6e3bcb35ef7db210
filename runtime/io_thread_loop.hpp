#pragma once
// How an io thread runs the Asio loop (runtime.buffered_spin_us).
//
// A lone Buffered producer sends its next frame a few tens of microseconds
// after its ack. An io thread asleep in epoll_wait by then is woken by the
// kernel, and on a small virtual machine that wake-up (an interrupt to a
// vCPU that halted meanwhile) took longer than everything weir does for the
// record (decision 0021). So while the last Buffered ack
// of any shard writer is less than `spin` old, the io thread polls its
// sockets (Asio's poll(): epoll_wait with a zero timeout, then a
// sched_yield so that a thread waiting for this CPU, the writer it handed a
// frame to, runs first) instead of sleeping, and reads the next frame as it
// lands; a new ack extends the window. Once the last ack is `spin` old it sleeps in epoll_wait as before.
// Durable-only traffic never polls: its next frame follows an fdatasync, and
// a polling thread there only took the CPU the writer needed (tried and
// dropped: decision 0021). Nor does it poll while more than 8
// connections send (read batching on, read_poller.hpp): their frames keep
// the thread busy anyway, and producers that each push now and then would
// keep it polling for no one in particular.
//
// The price is CPU time while few Buffered producers are active (counted in
// io_spin_stats and weir_io_spin_seconds_total): up to `spin` of polling
// after each ack, at most one CPU.
#include <chrono>

#include <boost/asio/io_context.hpp>

#include "actors/buffered_activity.hpp"
#include "observability/io_spin_stats.hpp"
#include "observability/read_batching_stats.hpp"

namespace weir {

struct io_spin_policy {
  std::chrono::microseconds spin{0};            // 0: never poll, sleep at once
  const buffered_activity* buffered = nullptr;  // null: never poll
  io_spin_stats* stats = nullptr;               // may be null (tests)
  /// While it says the reads are batched (many connections sending), no
  /// polling. Null: no such rule (runtime.read_batching: off).
  const read_batching_stats* reads = nullptr;
};

/// Runs `io` until it is stopped or out of work, as io_context::run() does,
/// polling instead of sleeping as `policy` says.
void run_io_thread(boost::asio::io_context& io, const io_spin_policy& policy);

}  // namespace weir
