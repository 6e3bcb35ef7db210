#pragma once
// Nanoseconds since the Unix epoch: the clock of ingest timestamps and of a
// segment's creation time (and so of the window a reader resyncs within).
#include <chrono>
#include <cstdint>

namespace weir::wab {

inline std::int64_t wall_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace weir::wab
