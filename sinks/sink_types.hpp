#pragma once
// The factory of each sink type (sinks/<type>_sink.cpp); make_sink_factory
// picks one from the configuration.
#include <initializer_list>
#include <memory>

#include "config/config.hpp"
#include "sinks/secret.hpp"
#include "sinks/sink.hpp"

namespace weir {

std::shared_ptr<sink_factory> make_noop_sink_factory();
std::shared_ptr<sink_factory> make_file_sink_factory(const config& cfg);
std::shared_ptr<sink_factory> make_sqlite_sink_factory(const config& cfg);
std::shared_ptr<sink_factory> make_postgres_sink_factory(const config& cfg);
std::shared_ptr<sink_factory> make_mysql_sink_factory(const config& cfg);
std::shared_ptr<sink_factory> make_http_sink_factory(const config& cfg);
std::shared_ptr<sink_factory> make_clickhouse_sink_factory(const config& cfg);

/// Reads again each of `secrets` that comes from a file: a factory's reload_secrets.
sink_factory::secret_reload reload_each(std::initializer_list<reloadable_secret*> secrets);

}  // namespace weir
