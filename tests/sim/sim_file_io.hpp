#pragma once
// The WAB's file I/O seam over a real private directory (the WAB code also
// lists directories and sizes files with std::filesystem, so the files must
// exist), with a model of the page cache on top:
//
//   - per file, the bytes as of its last successful fdatasync/fsync, and the
//     state of every cached byte: clean, dirty (written, not yet synced) or
//     lost (a sync failed while it was dirty: Linux marks such pages clean,
//     so a later "successful" sync does not write them — they are gone at the
//     next crash unless rewritten);
//   - per file, its writeback errors, reported as Linux (4.13 and later)
//     does: once to each open file description that was open when the error
//     happened, at its next sync, so a file opened twice (a recycled
//     segment, still synced through its old name's descriptor) cannot pass a
//     failed writeback off as success through the other;
//   - per directory, which entries (creates, renames, unlinks) an
//     fsync_directory made durable.
//
// crash() throws away everything not durable: each file goes back to its
// synced bytes, an entry whose creation was never made durable disappears,
// and an unlink or rename that was not made durable is undone. The real
// files are rewritten to match, so recovery reads exactly what survived.
//
// Faults come from the fault_plan, one call at a time. Single-threaded by
// design: every actor runs on the test scheduler, in the caller's thread.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "wab/file_io.hpp"
#include "sim/fault_plan.hpp"
#include "sim/sim_rng.hpp"

namespace weir::sim {

/// Deliberate breakage of the model, to prove that the invariants catch it.
enum class io_sabotage : std::uint8_t {
  none,
  lying_fdatasync,  // fdatasync succeeds without making anything durable
  lying_dir_fsync,  // fsync_directory succeeds without making an entry durable
};

struct io_counters {
  std::uint64_t writes = 0, syncs = 0, dir_syncs = 0, creates = 0, renames = 0, unlinks = 0, truncates = 0;
};

class sim_file_io final : public wab::file_io {
 public:
  sim_file_io(fault_plan& plan, sim_rng rng, io_sabotage sabotage = io_sabotage::none);
  ~sim_file_io() override;
  sim_file_io(const sim_file_io&) = delete;
  sim_file_io& operator=(const sim_file_io&) = delete;

  int create_exclusive(const std::string& path) override;
  int open_existing(const std::string& path) override;
  ssize_t pwrite(int fd, const std::uint8_t* data, std::size_t n, std::uint64_t offset) override;
  ssize_t pread(int fd, std::uint8_t* data, std::size_t n, std::uint64_t offset) override;
  int fdatasync(int fd) override;
  int fsync(int fd) override;
  int truncate(int fd, std::uint64_t size) override;
  int close(int fd) override;
  int fsync_directory(const std::string& dir) override;
  int rename(const std::string& from, const std::string& to) override;
  int unlink(const std::string& path) override;
  std::int64_t size(int fd) override;
  std::int64_t free_bytes(const std::string& dir) override;

  /// A directory made outside the seam (mkdir at startup): its (empty)
  /// entry list is durable from the start.
  void adopt_directory(const std::string& dir);

  /// The crash instant: from now on every call that would change the disk
  /// fails, since the process is dead while its actors are torn down.
  void freeze() { frozen_ = true; }
  /// Applies the crash to the files and thaws. With `writeback`, the kernel
  /// had flushed part of the dirty pages first: a random prefix of each
  /// file's unsynced bytes survives (a torn tail for recovery to cut).
  void crash(bool writeback);

  /// What a crash right now would leave of one file in `dir`.
  struct durable_file {
    std::string name;
    std::uint64_t node = 0;
    std::uint64_t version = 0;  // changes whenever `bytes` do
    const byte_buffer* bytes = nullptr;
  };
  std::vector<durable_file> durable_files(const std::string& dir) const;

  const io_counters& counters() const { return counters_; }
  /// Told of every change to the name space and of every failed call (for a
  /// traced replay).
  std::function<void(const std::string&)> on_event;
  /// Changes whenever anything durable does: lets views cache what they read.
  std::uint64_t durable_generation() const { return generation_; }

 private:
  enum byte_state : std::uint8_t { clean, dirty, lost };

  struct node {
    byte_buffer cache;    // what reads see (mirrors the real file)
    byte_buffer durable;  // what survives a crash
    std::vector<std::uint8_t> state;  // byte_state per cached byte
    std::uint64_t dirty_lo = 0, dirty_hi = 0;  // bounds of the non-clean bytes
    std::uint64_t version = 0;
    std::uint64_t writeback_errors = 0;  // failed syncs so far
  };
  struct open_file {
    std::uint64_t node = 0;
    bool cursor = false;  // the confirm cursor file (or its temporary)
    std::uint64_t errors_seen = 0;  // the node's writeback_errors this descriptor was told of
  };
  using entries = std::map<std::string, std::uint64_t>;  // name -> node

  static std::pair<std::string, std::string> split(const std::string& path);
  open_file* file_of(int fd);
  void mark(node& n, std::uint64_t from, std::uint64_t to, byte_state s);
  int sync_node(open_file& f);
  std::uint64_t new_node();
  /// Every entry under directory `from` now lies under `to`.
  void move_directory(const std::string& from, const std::string& to);
  void event(const std::string& what) {
    if (on_event) on_event(what);
  }
  static std::string base(const std::string& path) { return std::filesystem::path(path).filename().string(); }

  fault_plan& plan_;
  sim_rng rng_;
  io_sabotage sabotage_;
  bool frozen_ = false;
  bool enospc_next_write_ = false;  // the retry after a short write finds the disk full
  std::uint64_t next_node_ = 1;
  std::map<std::uint64_t, node> nodes_;
  std::map<std::string, entries> live_, durable_;  // directory -> its entries
  std::map<int, open_file> fds_;                   // real fd -> file
  io_counters counters_;
  std::uint64_t generation_ = 0;
};

}  // namespace weir::sim
