#pragma once
// Records as a sink receives them, for tests that call a sink directly,
// and what a sink's start says about its configuration.
#include <cstdio>
#include <exception>
#include <functional>
#include <string>

#include "wire/sink_record.hpp"

namespace weir::test {

/// The n-th record of segment 1 of shard 0, its id made from n.
inline sink_record record_of(const std::string& payload, int n) {
  char tail[9];
  std::snprintf(tail, sizeof tail, "%08x", static_cast<unsigned>(n));
  sink_record r;
  r.id = std::string(56, 'a') + tail;
  r.segment = "shard_00/seg_00000001.wab";
  r.sequence = 1;
  r.index = static_cast<std::uint64_t>(n);
  r.payload.assign(payload.begin(), payload.end());
  return r;
}

/// What `start` (making a sink factory) refuses with, or "accepted".
inline std::string refusal_of(const std::function<void()>& start) {
  try {
    start();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace weir::test
