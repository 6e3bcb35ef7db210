#pragma once
// The chart of a results file: one bar per result, its ratio to the
// baseline measured beside it (median, with the rounds' range), coloured by
// what it measures; below, for a sustained run, its throughput, fdatasync
// time and resident memory over time. Drawn by gnuplot (make bench
// installs gnuplot-nox), which keeps axes, fonts and scaling out of weir.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace weir::bench {

/// The gnuplot script that draws `results` into `png_path`.
std::string chart_script(const std::vector<nlohmann::json>& results, const std::string& png_path);

/// Runs gnuplot on chart_script(); throws naming the problem (no gnuplot,
/// nothing to draw, gnuplot failed).
void write_chart(const std::vector<nlohmann::json>& results, const std::string& png_path);

}  // namespace weir::bench
