#pragma once
// An actor that throws is stopped by CAF; this makes sure it says so, with
// the exception's message, before its links and monitors learn of it.
#include <exception>
#include <string>

#include <caf/exit_reason.hpp>
#include <caf/scheduled_actor.hpp>

#include "observability/log.hpp"

namespace weir {

inline void log_exceptions(caf::scheduled_actor* self, std::string actor) {
  self->set_exception_handler([actor = std::move(actor)](caf::scheduled_actor*, std::exception_ptr& e) -> caf::error {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
    log::error("actor failed", {{"actor", actor}, {"error", what}});
    return caf::exit_reason::unhandled_exception;
  });
}

}  // namespace weir
