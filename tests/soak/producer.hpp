#pragma once
// One producer thread: connects to the daemon's socket, pushes records of
// every tier and kind until told to stop, and logs each outcome in its
// ledger. A dead or frozen daemon only costs it a reconnect.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "soak/ledger.hpp"

namespace weir::soak {

struct producer_settings {
  std::string socket;
  std::uint64_t seed = 0;
  std::chrono::milliseconds reply_timeout{1000};
  const std::atomic<bool>* stop = nullptr;
  const std::atomic<std::uint32_t>* cycle = nullptr;  // for the ledger's records
};

void run_producer(const producer_settings& s, ledger& log);

}  // namespace weir::soak
