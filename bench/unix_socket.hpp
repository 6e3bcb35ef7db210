#pragma once
// Unix socket addresses for weir-bench. A path must fit sockaddr_un's 108
// bytes; a deep --workdir (a CI checkout's build tree, a round's own
// directory under it) can pass that, and a silently cut path reaches
// another socket or none.
#include <sys/un.h>

#include <string>

namespace weir::bench {

/// The address of `path`; throws naming the path when it does not fit.
sockaddr_un unix_address(const std::string& path);

/// Where the socket `name` of a daemon or server working in `dir` goes:
/// `dir`/`name` when that fits an address, else in a fresh short directory
/// under /tmp, removed with this object.
class socket_place {
 public:
  socket_place(const std::string& dir, const std::string& name);
  ~socket_place();
  socket_place(const socket_place&) = delete;
  socket_place& operator=(const socket_place&) = delete;

  const std::string& path() const { return path_; }
  /// True when the socket is not in `dir`.
  bool moved() const { return !own_dir_.empty(); }

 private:
  std::string own_dir_;
  std::string path_;
};

}  // namespace weir::bench
