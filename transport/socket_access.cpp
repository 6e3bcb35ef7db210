#include "transport/socket_access.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <string>

#include "runtime/startup_error.hpp"

namespace weir {

namespace {

std::optional<unsigned> number(const std::string& text) {
  unsigned v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

/// Looks `name` up with a getpwnam_r-style function, growing the buffer
/// while it is too small (large directory groups need more than a page).
template <class Entry, class Lookup>
Entry* look_up(Lookup lookup, const std::string& name, Entry& entry, std::vector<char>& buffer) {
  buffer.resize(16384);
  for (;;) {
    Entry* found = nullptr;
    const int rc = lookup(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
    if (rc == ERANGE && buffer.size() < (64u << 20)) {
      buffer.resize(buffer.size() * 4);
      continue;
    }
    return rc == 0 ? found : nullptr;
  }
}

uid_t user_id(const std::string& key, const std::string& name) {
  if (auto n = number(name)) return *n;
  passwd entry{};
  std::vector<char> buffer;
  if (auto* found = look_up(::getpwnam_r, name, entry, buffer)) return found->pw_uid;
  throw startup_error(key + " = " + name + ": no such user");
}

gid_t group_id(const std::string& key, const std::string& name) {
  if (auto n = number(name)) return *n;
  group entry{};
  std::vector<char> buffer;
  if (auto* found = look_up(::getgrnam_r, name, entry, buffer)) return found->gr_gid;
  throw startup_error(key + " = " + name + ": no such group");
}

template <class T>
bool contains(const std::vector<T>& v, T x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

bool socket_access::allows(uid_t uid, gid_t gid, const std::vector<gid_t>& groups) const {
  // Root may read and write the WAB itself: refusing it at the socket keeps
  // nothing safe, and would turn away the operator's `sudo weir-ctl push`.
  if (!check_peers || uid == 0 || uid == ::geteuid() || contains(uids, uid) || contains(gids, gid)) return true;
  return std::any_of(groups.begin(), groups.end(), [this](gid_t g) { return contains(gids, g); });
}

socket_access resolve_socket_access(const config& cfg) {
  socket_access a;
  a.mode = static_cast<mode_t>(cfg.listen.socket_mode);
  a.check_peers = cfg.listen.peer_uid_check;
  if (!cfg.listen.socket_group.empty()) {
    a.group = group_id("listen.socket_group", cfg.listen.socket_group);
    a.gids.push_back(*a.group);
  }
  for (const auto& u : cfg.listen.allowed_uids) a.uids.push_back(user_id("listen.allowed_uids", u));
  for (const auto& g : cfg.listen.allowed_gids) a.gids.push_back(group_id("listen.allowed_gids", g));
  return a;
}

}  // namespace weir
