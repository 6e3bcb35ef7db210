#pragma once
// Atoms shared by several actor protocols.
#include <caf/atom.hpp>

namespace weir {

/// "Write or sync what is queued now" (an actor's note to itself).
using flush_atom = caf::atom_constant<caf::atom("flush")>;
/// "Finish what is owed, then stop"; answered with done_atom where a reply is asked for.
using shutdown_atom = caf::atom_constant<caf::atom("shutdown")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

}  // namespace weir
