#include "soak/loss_report.hpp"

#include <map>

#include "support/wab_contents.hpp"

namespace weir::soak {

std::vector<std::string> locate_in_wab(const std::filesystem::path& data_dir, const std::vector<record_origin>& records) {
  std::map<std::string, std::string> where;  // payload -> coordinate
  for (const auto& r : records) where[make_payload(r)] = "";
  for (const auto& shard : weir::test::all_shard_records(data_dir))
    for (const auto& rec : shard)
      if (auto it = where.find(rec.payload); it != where.end())
        it->second = rec.segment + " idx " + std::to_string(rec.index);
  std::vector<std::string> out;
  for (const auto& r : records) {
    const auto& at = where[make_payload(r)];
    out.push_back("p=" + std::to_string(r.producer) + " s=" + std::to_string(r.seq) + ": " +
                  (at.empty() ? "in no WAB segment either" : "still in the WAB at " + at + ", never delivered"));
  }
  return out;
}

}  // namespace weir::soak
