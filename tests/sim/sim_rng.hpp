#pragma once
// The simulation's only source of randomness. SplitMix64 rather than
// std::mt19937 + std::*_distribution: the distributions are
// implementation-defined, and a seed must replay the same run on any
// compiler and standard library.
#include <cstdint>

namespace weir::sim {

class sim_rng {
 public:
  explicit sim_rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  /// Uniform in [0, n); 0 when n is 0. The modulo bias is irrelevant here.
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
  /// Uniform in [lo, hi].
  std::uint64_t between(std::uint64_t lo, std::uint64_t hi) { return lo + below(hi - lo + 1); }
  /// True with probability percent/100.
  bool percent(unsigned percent) { return below(100) < percent; }

  /// An independent stream: one per concern (steps, scheduling, the sink,
  /// the disk), so that a change in how often one of them draws does not
  /// shift every other decision of the same seed.
  sim_rng fork(std::uint64_t salt) { return sim_rng(next() ^ (salt * 0xd1b54a32d192ed03ull)); }

 private:
  std::uint64_t state_;
};

}  // namespace weir::sim
