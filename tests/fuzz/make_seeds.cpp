// fuzz_make_seeds <source-dir> <conformance-dir> <out-dir>: writes each
// target's seeds to <out-dir>/<target>/ (emptied first) and prints the target
// names, one a line, for the runner. A missing conformance dir is not an error.
#include <cstdio>
#include <exception>
#include <iostream>

#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/fuzz_targets.hpp"
#include "tests/fuzz/seeds.hpp"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc != 4) {
    std::cerr << "usage: fuzz_make_seeds <source-dir> <conformance-dir> <out-dir>\n";
    return 2;
  }
  try {
    const fs::path out_dir = argv[3];
    const auto seeds = weir::fuzz::derive_seeds({argv[1], fs::path(argv[2]), weir::fuzz::scratch_dir()});
    for (const auto& t : weir::fuzz::all_targets()) {
      const auto found = seeds.find(t.name);
      if (found == seeds.end() || found->second.empty()) {
        std::cerr << "fuzz_make_seeds: no seed for target " << t.name << "\n";
        return 1;
      }
      const fs::path dir = out_dir / t.name;
      fs::remove_all(dir);
      fs::create_directories(dir);
      for (std::size_t i = 0; i < found->second.size(); ++i) {
        char name[32];
        std::snprintf(name, sizeof name, "seed-%04zu", i);
        weir::fuzz::write_file(dir / name, found->second[i]);
      }
      std::cout << t.name << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "fuzz_make_seeds: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
