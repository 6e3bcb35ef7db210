#include "sim/sim_sink.hpp"

#include <algorithm>

namespace weir::sim {

const char* name_of(sink_mode m) {
  switch (m) {
    case sink_mode::healthy: return "healthy";
    case sink_mode::flaky: return "flaky";
    case sink_mode::down: return "down";
  }
  return "?";
}

namespace {

class sim_sink final : public sink {
 public:
  sim_sink(std::shared_ptr<sink_control> control, delivery_observer* observer)
      : c_(std::move(control)), observer_(observer ? observer : c_->observer) {}

  commit_result commit(const std::vector<sink_record>& batch) override {
    auto& c = *c_;
    if (!observer_->accepting()) return commit_result::retry("the daemon is dead");
    if (c.mode == sink_mode::down || (c.mode == sink_mode::flaky && c.rng.percent(25))) {
      ++c.transient;
      return commit_result::retry("sink unavailable");
    }
    ++c.commits;
    commit_result out;
    std::vector<std::size_t> rejected;
    for (std::size_t i = 0; i < batch.size(); ++i)
      if (!batch[i].payload.empty() && batch[i].payload[0] == '!') {
        out.rejected.emplace_back(i, "poison record");
        rejected.push_back(i);
      }
    if (c.broken == sabotage::sink_drops && c.commits % 5 == 0) return out;
    if (c.broken == sabotage::sink_reverses) {
      std::vector<sink_record> reversed(batch.rbegin(), batch.rend());
      std::vector<std::size_t> flipped;
      for (auto i : rejected) flipped.push_back(batch.size() - 1 - i);
      observer_->on_committed(reversed, flipped);
    } else {
      observer_->on_committed(batch, rejected);
    }
    // Stored, but the answer never came back: the batch comes again.
    if (c.mode == sink_mode::flaky && c.rng.percent(10)) {
      ++c.transient;
      return commit_result::retry("timeout after commit");
    }
    return out;
  }

  sink_health probe(std::string&) override { return c_->mode == sink_mode::down ? sink_health::down : sink_health::healthy; }

 private:
  std::shared_ptr<sink_control> c_;
  delivery_observer* observer_;
};

}  // namespace

std::unique_ptr<sink> sim_sink_factory::make() { return std::make_unique<sim_sink>(control_, observer_); }

}  // namespace weir::sim
