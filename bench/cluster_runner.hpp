#pragma once
// A cluster of weir-servers on loopback ports for a scenario with `cluster:`,
// each in its own working directory under the round's, started together and
// ready once the first node sees every peer up. The load goes to the first.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/daemon_runner.hpp"

namespace weir::bench {

class cluster_runner {
 public:
  cluster_runner(const std::string& server_binary, const std::string& workdir,
                 const std::map<std::string, std::string>& settings, int nodes, int replicas);
  daemon_runner& first() { return *nodes_.front(); }
  void stop();

 private:
  void start(const std::string& server_binary, const std::string& workdir,
             const std::map<std::string, std::string>& settings, int nodes, int replicas);
  std::vector<std::unique_ptr<daemon_runner>> nodes_;
};

}  // namespace weir::bench
