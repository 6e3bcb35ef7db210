#pragma once
// The best any daemon can do here for many producers, as a yardstick: one
// epoll thread reads frames from every connection (the wire codec checks
// each CRC), appends every record that arrived in one round with a single
// write, and hands the acks to a second thread, which runs fdatasync back to
// back and acks what each sync covered (Buffered frames are acked after the
// write). Nothing else: no actors, no shards, no limits, no metrics, no
// delivery. weir-bench drives it with the same producers as the daemon
// (each connection sends one tier only, as those producers do).
#include <memory>
#include <string>

#include "wab/file_io.hpp"

namespace weir::bench {

class minimal_server {
 public:
  /// Listens on `dir`/minimal.sock (a short path under /tmp when that is too long) and appends to `dir`/minimal.wab.
  /// Writes and syncs through `io` (a test's seam; the real files otherwise).
  explicit minimal_server(const std::string& dir, std::shared_ptr<wab::file_io> io = wab::default_file_io());
  ~minimal_server();
  minimal_server(const minimal_server&) = delete;
  minimal_server& operator=(const minimal_server&) = delete;

  const std::string& socket_path() const;
  /// A write or fdatasync failed (nothing was acked after it).
  bool failed() const;
  /// Durable records each fdatasync acked, over the server's life so far.
  double records_per_fsync() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace weir::bench
