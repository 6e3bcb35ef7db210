#include "support/user_tables.hpp"

#include "config/loader.hpp"

namespace weir::test {

std::vector<std::string> events_mapping_keys(const std::string& type) {
  return {"sink." + type + ".table=events", "sink." + type + ".columns={user_id: /user, kind: /event/kind, at: /ts}"};
}

std::string event(int user, const std::string& kind, const std::string& at) {
  return R"({"user": )" + std::to_string(user) + R"(, "event": {"kind": )" + kind + R"(}, "ts": ")" + at + "\"}";
}

std::shared_ptr<sink_factory> sink_factory_of(const std::vector<std::string>& daemon_args,
                                              const std::vector<std::string>& more) {
  config_sources src;
  src.file_required = false;
  for (std::size_t i = 1; i < daemon_args.size(); i += 2) src.overrides.push_back(daemon_args[i]);  // past each --set
  src.overrides.push_back("sink.timeout_ms=5000");
  src.overrides.insert(src.overrides.end(), more.begin(), more.end());
  return make_sink_factory(load_config(src));
}

}  // namespace weir::test
