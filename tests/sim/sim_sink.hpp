#pragma once
// An in-memory sink standing in for the database: what it stored lives in
// the harness (a database outlives the daemon's crashes), the sink objects
// only forward commits to it. The seed decides its moods: healthy, flaky (a
// commit fails transiently, or commits and then loses its answer) or down.
// Records whose payload starts with '!' are refused for good, every time,
// so they must end in the dead letters.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/sim_config.hpp"
#include "sim/sim_rng.hpp"
#include "sinks/sink.hpp"

namespace weir::sim {

enum class sink_mode : std::uint8_t { healthy, flaky, down };

const char* name_of(sink_mode m);

/// The harness's side of the sink: sees every commit that really happened.
class delivery_observer {
 public:
  virtual ~delivery_observer() = default;
  /// False after the crash instant: a commit then never happened.
  virtual bool accepting() const = 0;
  /// `batch` was stored, except the positions in `rejected`.
  virtual void on_committed(const std::vector<sink_record>& batch, const std::vector<std::size_t>& rejected) = 0;
};

struct sink_control {
  sink_mode mode = sink_mode::healthy;
  sim_rng rng{0};
  sabotage broken = sabotage::none;
  delivery_observer* observer = nullptr;
  std::uint64_t commits = 0, transient = 0;
};

class sim_sink_factory final : public sink_factory {
 public:
  /// `observer`: who sees this factory's commits, when not the control's
  /// (the cluster simulation gives each node's life its own, which refuses
  /// commits once that life has crashed).
  explicit sim_sink_factory(std::shared_ptr<sink_control> control, delivery_observer* observer = nullptr)
      : control_(std::move(control)), observer_(observer) {}
  std::unique_ptr<sink> make() override;
  std::string type() const override { return "sim"; }

 private:
  std::shared_ptr<sink_control> control_;
  delivery_observer* observer_;
};

}  // namespace weir::sim
