#include "transport/unix_listener.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <filesystem>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>

#include "runtime/data_dir.hpp"
#include "observability/log.hpp"
#include "transport/socket_session.hpp"
#include "runtime/startup_error.hpp"

namespace weir {

namespace asio = boost::asio;
using stream = asio::local::stream_protocol;

namespace {

/// Why the socket file could not be given to listen.socket_group, and the
/// fix: only a member of a group may hand a file to it (EPERM otherwise).
std::string group_change_refused(gid_t gid, int err) {
  std::string name = std::to_string(gid);
  if (const struct group* g = ::getgrgid(gid)) name = g->gr_name;
  std::string user = std::to_string(::geteuid());
  if (const struct passwd* p = ::getpwuid(::geteuid())) user = p->pw_name;
  std::string said = "cannot give the socket file to listen.socket_group " + name + " (chown: " + std::strerror(err) + ")";
  if (err == EPERM)
    said += "; the daemon's user " + user + " must be a member of that group: usermod -aG " + name + " " + user +
            ", then start it again (docs/operations.md, letting other users push)";
  return said;
}

std::string key_and_path(const std::string& path) { return "listen.unix = " + path; }

sockaddr_un address_of(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

/// True when a daemon answers on the socket at `path`.
bool someone_listens(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const sockaddr_un addr = address_of(path);
  const bool live = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return live;
}

}  // namespace

unix_listener::unix_listener(asio::io_context& io, unix_listener_options options,
                             listener_stats& stats, session_registry& sessions, actor_factory make_actor)
    : io_(io),
      options_(std::move(options)),
      stats_(stats),
      sessions_(sessions),
      make_actor_(std::move(make_actor)),
      strand_(asio::make_strand(io)),
      acceptor_(io),
      accept_timer_(io) {}

unix_listener::~unix_listener() { remove_socket_file(); }

void unix_listener::open() {
  const std::string& path = options_.path;
  if (path.size() >= sizeof(sockaddr_un::sun_path))
    throw startup_error(key_and_path(path) + ": path longer than the " +
                        std::to_string(sizeof(sockaddr_un::sun_path) - 1) +
                        "-byte limit of a Unix socket address");
  const auto parent = std::filesystem::path(path).parent_path().string();
  if (!parent.empty()) ensure_private_directory(parent, "listen.unix parent directory");
  warn_if_unreachable(parent.empty() ? "." : parent);

  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      throw startup_error(key_and_path(path) +
                          ": a file that is not a socket exists at this path; refusing to remove it");
    if (someone_listens(path))
      throw startup_error(key_and_path(path) + ": another daemon is already listening on this socket");
    if (::unlink(path.c_str()) != 0)
      throw startup_error(key_and_path(path) + ": cannot remove stale socket: " + std::strerror(errno));
    log::info("removed stale socket left by a previous daemon", {{"path", path}});
  } else if (errno != ENOENT) {
    throw startup_error(key_and_path(path) + ": " + std::strerror(errno));
  }

  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw startup_error(key_and_path(path) + ": socket(): " + std::strerror(errno));
  const sockaddr_un addr = address_of(path);
  // The socket file must never exist, even briefly, with a wider mode.
  const mode_t old_umask = ::umask(0177);
  const int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int bind_errno = errno;
  ::umask(old_umask);
  if (bound != 0) {
    ::close(fd);
    throw startup_error(key_and_path(path) + ": bind(): " + std::strerror(bind_errno));
  }
  created_file_ = true;
  // The group first, then the mode: the file is never open to more people
  // than the configuration says, not even for a moment.
  const auto& access = options_.access;
  if (access.group && ::chown(path.c_str(), static_cast<uid_t>(-1), *access.group) != 0) {
    const int err = errno;
    ::close(fd);
    throw startup_error(key_and_path(path) + ": " + group_change_refused(*access.group, err));
  }
  if (::chmod(path.c_str(), access.mode) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    const int err = errno;
    ::close(fd);
    throw startup_error(key_and_path(path) + ": " + std::strerror(err));
  }
  acceptor_.assign(stream(), fd);
}

void unix_listener::warn_if_unreachable(const std::string& dir) const {
  // Opening a socket file needs search permission on every directory above
  // it: a 0660 socket in a 0700 directory still lets no one else in.
  const mode_t mode = options_.access.mode;
  struct stat st {};
  if ((mode & 0066) == 0 || ::stat(dir.c_str(), &st) != 0) return;
  const bool group_blocked = (mode & 0060) != 0 && (st.st_mode & S_IXGRP) == 0 && (st.st_mode & S_IXOTH) == 0;
  const bool others_blocked = (mode & 0006) != 0 && (st.st_mode & S_IXOTH) == 0;
  if (!group_blocked && !others_blocked) return;
  char dir_mode[8];
  std::snprintf(dir_mode, sizeof dir_mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  log::warn("listen.socket_mode opens the socket to other users, but its directory does not let them reach it "
            "(give it o+x or g+x, e.g. mode 0711)",
            {{"dir", dir}, {"dir_mode", dir_mode}});
}

void unix_listener::start() {
  asio::post(strand_, [this] { accept_next(); });
}

void unix_listener::accept_next() {
  accept_forever(acceptor_, strand_, accept_timer_, backoff_, "unix", stats_.accept_errors,
                 [this](stream::socket socket) { on_accepted(std::move(socket)); });
}

namespace {

/// The connecting process (pid, uid, gid), as the kernel saw it at connect().
std::optional<ucred> peer_credentials(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return std::nullopt;
  return cred;
}

}  // namespace

/// The peer's supplementary groups (SO_PEERGROUPS); empty when unknown.
std::vector<gid_t> peer_groups(int fd) {
  std::vector<gid_t> groups(64);
  for (int attempt = 0; attempt < 2; ++attempt) {
    socklen_t len = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) == 0) {
      groups.resize(len / sizeof(gid_t));
      return groups;
    }
    if (errno != ERANGE) break;
    groups.resize(len / sizeof(gid_t) + 1);  // len now says how much is needed
  }
  return {};
}

bool unix_listener::peer_allowed(int fd, const std::optional<ucred>& peer) const {
  if (!options_.access.check_peers) return true;
  if (!peer) return false;  // unknown: fail closed
  return options_.access.allows(peer->uid, peer->gid,
                                options_.access.gids.empty() ? std::vector<gid_t>{} : peer_groups(fd));
}

void unix_listener::on_accepted(stream::socket socket) {
  boost::system::error_code ignored;
  // Who it is first: a peer that may not connect must not make room either.
  const auto peer = peer_credentials(socket.native_handle());
  if (!peer_allowed(socket.native_handle(), peer)) {
    ++stats_.rejected_peer_uid;
    // A line for a burst: another user may connect as fast as it likes.
    if (const auto refused = stats_.peer_refused_lines.admit())
      log::warn("connection refused: the peer is not the daemon's user nor allowed by listen.allowed_uids, "
                "listen.allowed_gids or listen.socket_group",
                {{"peer_uid", std::to_string(peer ? peer->uid : -1)},
                 {"peer_gid", std::to_string(peer ? peer->gid : -1)},
                 {"refused_since_last_line", std::to_string(refused)}});
    socket.close(ignored);
    return;
  }
  const bool admitted = sessions_.admit([&](std::function<void()> forget) {
    auto session = std::make_shared<unix_session>(std::move(socket), options_.read_timeout, stats_, std::move(forget),
                                                  options_.activity, options_.poller);
    session->attach(make_actor_);
    return session;
  });
  if (!admitted) {
    socket.close(ignored);  // full of busy producers, or winding down
    return;
  }
  ++stats_.accepted;
  // At debug level too, a line per burst: a client that reconnects in a
  // loop must not flood the log of an operator looking for something else.
  if (log::enabled(log_level::debug))
    if (const auto accepted = stats_.accepted_lines.admit())
      log::debug("connection accepted", {{"peer_pid", peer ? std::to_string(peer->pid) : "?"},
                                         {"peer_uid", peer ? std::to_string(peer->uid) : "?"},
                                         {"active", std::to_string(stats_.active.load())},
                                         {"accepted_since_last_line", std::to_string(accepted)}});
}

void unix_listener::close() {
  asio::post(strand_, [this] {
    boost::system::error_code ignored;
    accept_timer_.cancel();
    acceptor_.close(ignored);
  });
}

void unix_listener::remove_socket_file() {
  if (created_file_) {
    ::unlink(options_.path.c_str());
    created_file_ = false;
  }
}

}  // namespace weir
