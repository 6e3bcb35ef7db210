#include "soak/soak_setup.hpp"

#include <stdlib.h>
#include <sys/un.h>

#include <stdexcept>

namespace weir::soak {

soak_paths make_work_dir(const options& o) {
  soak_paths p;
  if (o.dir) {
    std::error_code ec;
    if (std::filesystem::exists(*o.dir) && !std::filesystem::is_empty(*o.dir, ec))
      throw std::runtime_error(o.dir->string() + " is not empty: the soak needs a fresh data directory");
    std::filesystem::create_directories(*o.dir);
    p.root = std::filesystem::absolute(*o.dir);
  } else {
    // Short, under /tmp: the socket path must fit a sockaddr_un.
    char pattern[] = "/tmp/weir-soak-XXXXXX";
    if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
    p.root = pattern;
    p.temporary = true;
  }
  p.data_dir = p.root / "var";
  p.socket = (p.data_dir / "run" / "weir.sock").string();
  p.sink = p.root / "sink.db";
  p.log = p.root / "daemon.log";
  if (p.socket.size() >= sizeof(sockaddr_un{}.sun_path))
    throw std::runtime_error("socket path too long for a Unix socket: " + p.socket + " (use a shorter --dir)");
  return p;
}

std::vector<std::string> daemon_args(const options& o, const soak_paths& p) {
  std::vector<std::string> settings{
      "admin.listen=",
      "data_dir=" + p.data_dir.string(),
      "listen.unix=" + p.socket,
      "sink.type=sqlite",
      "sink.sqlite.path=" + p.sink.string(),
      "ingest.shards=" + std::to_string(o.shards),
      "wab.segment_max_bytes=" + o.segment_bytes,
      // Room for a backlog if the sink falls behind, far below the disk.
      "limits.wab_max_bytes=1GiB",
  };
  settings.insert(settings.end(), o.extra_settings.begin(), o.extra_settings.end());
  std::vector<std::string> args;
  // The daemon's cwd is the work directory, which has no config/weir.yaml:
  // built-in defaults plus these flags are the whole configuration.
  for (const auto& s : settings) {
    args.push_back("--set");
    args.push_back(s);
  }
  return args;
}

}  // namespace weir::soak
