#pragma once
// A named file can live on a file system that stops answering (an NFS
// server gone away, a FUSE daemon stuck): open() or read() then blocks, and
// no flag makes it return. So such a file is read on a thread of its own and
// waited for at most a time limit; a read past it is given up on (its thread
// finishes, or not, on its own, and keeps nothing of the caller's). A
// shutdown gives up on every wait in progress at once, so that no file can
// delay it.
#include <chrono>
#include <functional>
#include <string>

namespace weir {

/// How long opening and reading one named file (a secret, a certificate,
/// the configuration) may take.
inline constexpr std::chrono::seconds named_file_time_limit{5};

/// Reads given up on whose threads are still blocked; past this many, no
/// new one is started (each is a thread stuck in the kernel).
inline constexpr int max_stuck_file_reads = 8;

/// Runs `read` (which fills its argument and returns "" or why not) on a
/// thread of its own and waits for it at most `limit`. `read` is copied and
/// may outlive the call: it must own what it uses (capture by value). Its result is moved
/// into `out` when it finishes in time; otherwise `out` is left alone and
/// the reason says the file did not answer.
std::string read_within(const std::function<std::string(std::string&)>& read, std::string& out,
                        std::chrono::milliseconds limit = named_file_time_limit);

/// Every read_within waiting now returns at once, giving up on its file
/// ("given up at shutdown"); reads started later wait as usual.
void give_up_file_reads_in_progress();

/// Reads given up on whose threads have not returned yet.
int stuck_file_reads();

}  // namespace weir
