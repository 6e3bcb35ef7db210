#pragma once
// Turns weir-bench results (BENCH lines of its output, or the JSON lines of
// --out) into Markdown tables: every result against its baseline, then what
// only some measures have (delivery latency, outages, sustained runs,
// startup and recovery).
#include <istream>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

namespace weir::bench {

/// Every result in `in`: lines "BENCH: {json}" or a bare JSON object; other lines are skipped.
std::vector<nlohmann::json> read_results(std::istream& in);

/// The tables of `results`; returns how many results they show.
int write_report(const std::vector<nlohmann::json>& results, std::ostream& out);

}  // namespace weir::bench
