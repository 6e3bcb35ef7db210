#include <stdexcept>

#include "sinks/sink_types.hpp"

namespace weir {

std::shared_ptr<sink_factory> make_sink_factory(const config& cfg) {
  const auto& t = cfg.sink.type;
  if (t == "noop") return make_noop_sink_factory();
  if (t == "file") return make_file_sink_factory(cfg);
  if (t == "sqlite") return make_sqlite_sink_factory(cfg);
  if (t == "postgres") return make_postgres_sink_factory(cfg);
  if (t == "mysql") return make_mysql_sink_factory(cfg);
  if (t == "http") return make_http_sink_factory(cfg);
  if (t == "clickhouse") return make_clickhouse_sink_factory(cfg);
  throw std::runtime_error("sink.type = " + t + ": expected noop, file, sqlite, postgres, mysql, http or clickhouse");
}

sink_factory::secret_reload reload_each(std::initializer_list<reloadable_secret*> secrets) {
  sink_factory::secret_reload out;
  for (auto* secret : secrets) {
    if (!secret->from_file()) continue;
    std::string error;
    if (secret->reload(error)) out.reloaded.push_back(secret->key());
    else out.failed.push_back(error);
  }
  return out;
}

}  // namespace weir
