#pragma once
// The postgres sink into a table of the user's (sink.postgres.table with
// sink.postgres.columns): see postgres_table_sink.cpp.
#include <memory>
#include <string>

#include "config/config.hpp"
#include "sinks/secret.hpp"
#include "sinks/sink.hpp"

namespace weir {

/// Throws std::runtime_error with one line when PostgreSQL answers and its
/// table lacks what the mapping needs; a server that does not answer yet is
/// no reason not to start (the table is checked again on every connection).
std::shared_ptr<sink_factory> make_postgres_table_sink_factory(const table_mapping& mapping,
                                                               const std::string& conninfo,
                                                               std::shared_ptr<reloadable_secret> password,
                                                               int timeout_ms);

}  // namespace weir
