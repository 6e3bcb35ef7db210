#include "bench/chart.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace weir::bench {

namespace {

/// Measures in the order of their colour (gnuplot line types 1..).
const char* const measures[] = {"ingest", "delivery", "backlog", "sustained", "outage", "latency", "recovery", "startup"};

int colour_of(const std::string& measure) {
  for (int i = 0; i < static_cast<int>(std::size(measures)); ++i)
    if (measure == measures[i]) return i + 1;
  return 1;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

/// The scenario's name, and what sets this result apart from the others of
/// the same scenario (a payload or batch size, a backlog).
std::string label_of(const nlohmann::json& r, const std::map<std::string, int>& per_scenario) {
  std::string label = r.value("scenario", "?");
  if (per_scenario.at(label) < 2) return label;
  std::ostringstream s;
  s << label;
  if (r.value("backlog_mib_target", 0) > 0) s << " " << r.value("backlog_mib_target", 0) << " MiB";
  else s << " " << r.value("payload_bytes", 0) << " B" << (r.value("batch", 0) > 0 ? " x" + std::to_string(r.value("batch", 0)) : "");
  return s.str();
}

}  // namespace

std::string chart_script(const std::vector<nlohmann::json>& results, const std::string& png_path) {
  std::map<std::string, int> per_scenario;
  for (const auto& r : results) ++per_scenario[r.value("scenario", "?")];
  std::vector<const nlohmann::json*> bars, sustained;
  for (const auto& r : results) {
    if (r.value("ratio", 0.0) > 0) bars.push_back(&r);
    if (r.contains("series") && !r["series"].empty() && !r["series"][0].empty()) sustained.push_back(&r);
  }
  if (bars.empty() && sustained.empty()) throw std::runtime_error("no result with a ratio or a time series to draw");
  const int bar_px = bars.empty() ? 0 : 120 + 22 * static_cast<int>(bars.size());
  const int series_px = sustained.empty() ? 0 : 3 * 240;
  const int height = bar_px + series_px;
  std::ostringstream gp;
  gp << "set terminal pngcairo size 1400," << height << " font 'DejaVu Sans,10'\n"
     << "set output " << quoted(png_path) << "\n"
     << "set multiplot\n";
  if (!bars.empty()) {
    // A log scale: 0.4 and 0.7 stay apart beside a 50x, and the line at 1 always shows.
    double x_max = 1.5, x_min = 0.5;
    for (const auto* r : bars) {
      x_max = std::max(x_max, 1.3 * r->value("ratio_max", r->value("ratio", 0.0)));
      x_min = std::min(x_min, 0.7 * std::max(1e-3, r->value("ratio_min", r->value("ratio", 0.0))));
    }
    gp << "$bars << EOD\n";
    for (std::size_t i = 0; i < bars.size(); ++i) {
      const auto& r = *bars[i];
      const double ratio = r.value("ratio", 0.0);
      gp << i << " " << ratio << " " << colour_of(r.value("measure", "ingest")) << " "
         << r.value("ratio_min", ratio) << " " << r.value("ratio_max", ratio) << "\n";
    }
    gp << "EOD\n"
       << "set origin 0," << static_cast<double>(series_px) / height << "\n"
       << "set size 1," << static_cast<double>(bar_px) / height << "\n"
       << "set title 'weir over the physical reference measured beside it in the same run "
          "(median of the rounds, bar: their range; latency: the floor over weir)'\n"
       << "set style fill solid 0.75 noborder\n"
       << "set yrange [" << bars.size() << "-0.5:-0.5]\n"
       << "set ytics (";
    for (std::size_t i = 0; i < bars.size(); ++i)
      gp << (i ? ", " : "") << quoted(label_of(*bars[i], per_scenario)) << " " << i;
    gp << ") nomirror\n"
       << "set logscale x\nset xrange [" << x_min << ":" << x_max << "]\nset xtics nomirror\nset grid xtics\n"
       << "set xlabel 'ratio to the baseline, log scale (1 = as fast as the baseline)'\n"
       << "set key outside right top\n"
       << "set arrow 1 from 1, graph 0 to 1, graph 1 nohead dashtype 2 lc rgb 'black'\n"
       << "plot $bars using (" << x_min << "):1:(" << x_min << "):2:($1-0.38):($1+0.38):3 with boxxyerror lc variable notitle, \\\n"
       << "     $bars using 2:1:4:5 with xerrorbars pt 0 lc rgb 'black' notitle, \\\n"
       << "     $bars using 5:1:(sprintf('%.2f', $2)) with labels left offset 0.7,0 notitle";
    for (const char* m : measures)
      if (std::any_of(bars.begin(), bars.end(), [&](const auto* r) { return r->value("measure", "ingest") == m; }))
        gp << ", \\\n     NaN with boxes lt " << colour_of(m) << " title '" << m << "'";
    gp << "\nunset arrow 1\nunset logscale x\nunset ytics\nunset yrange\nset ytics\nset yrange [*:*]\n";
  }
  if (!sustained.empty()) {
    gp << "set autoscale\nset key inside right top\nunset title\n";
    const char* panels[][3] = {{"records_per_s", "acked records/s (5 s intervals)", "records per second"},
                               {"fsync_ms", "mean WAB fdatasync per interval", "milliseconds"},
                               {"rss_mib", "weir-server resident memory", "MiB"}};
    for (std::size_t s = 0; s < sustained.size(); ++s) {
      gp << "$series" << s << " << EOD\n";
      for (const auto& p : (*sustained[s])["series"][0])
        gp << p.value("t_s", 0.0) << " " << p.value("records_per_s", 0.0) << " " << p.value("fsync_ms", 0.0) << " "
           << p.value("rss_mib", 0.0) << "\n";
      gp << "EOD\n";
    }
    for (int panel = 0; panel < 3; ++panel) {
      gp << "set origin 0," << static_cast<double>(240 * (2 - panel)) / height << "\n"
         << "set size 1," << 240.0 / height << "\n"
         << "set title '" << panels[panel][1] << "'\n"
         << "set ylabel '" << panels[panel][2] << "'\n"
         << "set xlabel 'seconds into the run'\n"
         << "set yrange [0:*]\nset xrange [0:*]\n"
         << "plot ";
      for (std::size_t s = 0; s < sustained.size(); ++s)
        gp << (s ? ", " : "") << "$series" << s << " using 1:" << panel + 2 << " with linespoints pt 7 ps 0.5 title "
           << quoted((*sustained[s]).value("scenario", "?") + " (" + (*sustained[s]).value("durability", "?") + ")");
      gp << "\n";
    }
  }
  gp << "unset multiplot\n";
  return gp.str();
}

void write_chart(const std::vector<nlohmann::json>& results, const std::string& png_path) {
  const std::string script = chart_script(results, png_path);
  const std::string script_path = png_path + ".gp";
  {
    std::ofstream out(script_path);
    if (!out) throw std::runtime_error("cannot write " + script_path);
    out << script;
  }
  const int status = std::system(("gnuplot '" + script_path + "' 2>&1").c_str());
  std::filesystem::remove(script_path);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) == 127)
    throw std::runtime_error("drawing a chart needs gnuplot (apt-get install gnuplot-nox; make bench installs it)");
  if (WEXITSTATUS(status) != 0) throw std::runtime_error("gnuplot failed to draw " + png_path);
}

}  // namespace weir::bench
