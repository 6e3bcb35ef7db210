#pragma once
// Turns BENCH lines (from any number of weir-bench outputs) into a Markdown table.
#include <istream>
#include <ostream>

namespace weir::bench {

/// Reads every "BENCH: {json}" line of `in`; writes one table row per result.
/// Returns the number of results.
int write_report(std::istream& in, std::ostream& out);

}  // namespace weir::bench
