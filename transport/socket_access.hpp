#pragma once
// Who may use the producer socket: the file's mode and group (who can open
// it) and the peer check at accept (who is let in). Names in the
// configuration are resolved once, at start.
#include <sys/types.h>

#include <optional>
#include <vector>

#include "config/config.hpp"

namespace weir {

struct socket_access {
  mode_t mode = 0600;
  std::optional<gid_t> group;  // listen.socket_group; none: the daemon's own
  bool check_peers = true;     // listen.peer_uid_check
  std::vector<uid_t> uids;     // besides the daemon's own user
  std::vector<gid_t> gids;     // listen.allowed_gids and listen.socket_group

  /// Whether a peer with these credentials (and supplementary groups) is let in.
  bool allows(uid_t uid, gid_t gid, const std::vector<gid_t>& groups) const;
};

/// Throws startup_error naming the key when a user or group does not exist.
socket_access resolve_socket_access(const config& cfg);

}  // namespace weir
