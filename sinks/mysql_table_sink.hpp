#pragma once
// The mysql sink into a table of the user's (sink.mysql.table with
// sink.mysql.columns): see mysql_table_sink.cpp.
#include <memory>

#include "config/config.hpp"
#include "sinks/mysql_session.hpp"
#include "sinks/secret.hpp"
#include "sinks/sink.hpp"

namespace weir {

/// Throws std::runtime_error with one line when the server answers and its
/// table lacks what the mapping needs; a server that does not answer yet is
/// no reason not to start (the table is checked again on every connection).
std::shared_ptr<sink_factory> make_mysql_table_sink_factory(const table_mapping& mapping, mysql_settings settings,
                                                            std::shared_ptr<reloadable_secret> password);

}  // namespace weir
