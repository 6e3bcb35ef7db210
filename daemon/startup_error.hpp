#pragma once
#include <stdexcept>

namespace weir {

/// A reason the daemon cannot start; its message is the one line printed
/// before exiting with status 2.
struct startup_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace weir
