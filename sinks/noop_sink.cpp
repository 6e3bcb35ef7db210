// noop: accepts every batch and keeps nothing (soak tests, measuring ingest alone).
#include "sinks/sink_types.hpp"

namespace weir {

namespace {

class noop_sink final : public sink {
 public:
  commit_result commit(const std::vector<sink_record>&) override { return commit_result::ok(); }
  sink_health probe(std::string&) override { return sink_health::healthy; }
};

class noop_factory final : public sink_factory {
 public:
  std::unique_ptr<sink> make() override { return std::make_unique<noop_sink>(); }
  std::string type() const override { return "noop"; }
};

}  // namespace

std::shared_ptr<sink_factory> make_noop_sink_factory() { return std::make_shared<noop_factory>(); }

}  // namespace weir
