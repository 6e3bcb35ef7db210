#include "sim/sim_file_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "wab/confirm_cursor.hpp"

namespace weir::sim {

namespace {

constexpr std::int64_t plenty_of_space = 1ll << 40;

/// "confirm_cursor" and the "confirm_cursor.tmp" it is first made as.
bool is_cursor_name(const std::string& name) { return name.rfind(wab::cursor_file_name, 0) == 0; }

}  // namespace

sim_file_io::sim_file_io(fault_plan& plan, sim_rng rng, io_sabotage sabotage)
    : plan_(plan), rng_(rng), sabotage_(sabotage) {}

sim_file_io::~sim_file_io() {
  for (auto& [fd, f] : fds_) ::close(fd);
}

std::pair<std::string, std::string> sim_file_io::split(const std::string& path) {
  const std::filesystem::path p = std::filesystem::path(path).lexically_normal();
  return {p.parent_path().string(), p.filename().string()};
}

sim_file_io::open_file* sim_file_io::file_of(int fd) {
  auto it = fds_.find(fd);
  return it == fds_.end() ? nullptr : &it->second;
}

std::uint64_t sim_file_io::new_node() {
  const std::uint64_t id = next_node_++;
  nodes_[id];
  return id;
}

void sim_file_io::mark(node& n, std::uint64_t from, std::uint64_t to, byte_state s) {
  if (from >= to) return;
  std::fill(n.state.begin() + static_cast<std::ptrdiff_t>(from), n.state.begin() + static_cast<std::ptrdiff_t>(to), s);
  if (n.dirty_lo == n.dirty_hi) {
    n.dirty_lo = from;
    n.dirty_hi = to;
  } else {
    n.dirty_lo = std::min(n.dirty_lo, from);
    n.dirty_hi = std::max(n.dirty_hi, to);
  }
}

void sim_file_io::adopt_directory(const std::string& dir) {
  const std::string d = std::filesystem::path(dir).lexically_normal().string();
  live_[d];
  durable_[d];
}

int sim_file_io::create_exclusive(const std::string& path) {
  if (frozen_) return -EIO;
  ++counters_.creates;
  if (plan_.strike(fault_kind::create_fail) || (plan_.disk_full() && (plan_.note_disk_full(), true))) {
    event("create " + base(path) + " fails: ENOSPC");
    return -ENOSPC;
  }
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -errno;
  auto [dir, name] = split(path);
  const std::uint64_t id = new_node();
  live_[dir][name] = id;
  fds_[fd] = {id, is_cursor_name(name), 0};
  event("create " + name);
  return fd;
}

int sim_file_io::open_existing(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -errno;
  auto [dir, name] = split(path);
  auto& dir_entries = live_[dir];
  auto it = dir_entries.find(name);
  if (it == dir_entries.end()) {
    // Not made through the seam: take what is there as durable.
    const std::uint64_t id = new_node();
    auto& n = nodes_[id];
    const auto size = std::filesystem::file_size(path);
    n.cache.resize(size);
    if (size > 0 && ::pread(fd, n.cache.data(), size, 0) != static_cast<ssize_t>(size)) {
      ::close(fd);
      return -EIO;
    }
    n.durable = n.cache;
    n.state.assign(size, clean);
    it = dir_entries.emplace(name, id).first;
    durable_[dir][name] = id;
  }
  fds_[fd] = {it->second, is_cursor_name(name), nodes_[it->second].writeback_errors};
  return fd;
}

ssize_t sim_file_io::pwrite(int fd, const std::uint8_t* data, std::size_t n, std::uint64_t offset) {
  auto* f = file_of(fd);
  if (!f) return -EBADF;
  if (frozen_) return -EIO;
  ++counters_.writes;
  auto& nd = nodes_[f->node];
  std::size_t land = n;  // bytes that reach the page cache
  int error = 0;         // returned instead of the count when set
  if (enospc_next_write_) {
    enospc_next_write_ = false;
    return -ENOSPC;
  }
  if (f->cursor && plan_.strike(fault_kind::cursor_fail)) {
    land = static_cast<std::size_t>(rng_.below(n));
    error = -EIO;
  } else if (plan_.strike(fault_kind::write_torn)) {
    land = static_cast<std::size_t>(rng_.below(n));
    error = -EIO;
  } else if (plan_.strike(fault_kind::write_enospc)) {
    land = static_cast<std::size_t>(rng_.below(n));
    if (land == 0) error = -ENOSPC;
    else enospc_next_write_ = true;
  } else if (plan_.disk_full() && offset + n > nd.cache.size()) {
    // Overwriting allocated bytes needs no space; growing the file does.
    land = offset >= nd.cache.size() ? 0 : static_cast<std::size_t>(nd.cache.size() - offset);
    plan_.note_disk_full();
    if (land == 0) error = -ENOSPC;
  }
  if (land > 0) {
    const ssize_t w = ::pwrite(fd, data, land, static_cast<off_t>(offset));
    if (w != static_cast<ssize_t>(land)) return w < 0 ? -errno : -EIO;
    const std::uint64_t old_size = nd.cache.size();
    if (offset + land > old_size) {
      nd.cache.resize(offset + land, 0);
      nd.state.resize(offset + land, clean);
      mark(nd, old_size, offset, dirty);  // a hole extends the file too
    }
    std::copy(data, data + land, nd.cache.begin() + static_cast<std::ptrdiff_t>(offset));
    mark(nd, offset, offset + land, dirty);
  }
  if (error != 0 || land < n)
    event("write of " + std::to_string(n) + " bytes at " + std::to_string(offset) + " lands " + std::to_string(land) +
          (error != 0 ? ", then fails" : ", short"));
  if (error != 0) return error;
  return static_cast<ssize_t>(land);
}

ssize_t sim_file_io::pread(int fd, std::uint8_t* data, std::size_t n, std::uint64_t offset) {
  if (!file_of(fd)) return -EBADF;
  const ssize_t r = ::pread(fd, data, n, static_cast<off_t>(offset));
  return r < 0 ? -errno : r;
}

int sim_file_io::sync_node(open_file& f) {
  if (frozen_) return -EIO;
  ++counters_.syncs;
  auto& nd = nodes_[f.node];
  const bool fail =
      (f.cursor && plan_.strike(fault_kind::cursor_fail)) || plan_.strike(fault_kind::sync_eio);
  if (fail) {
    // Writeback failed: the pages are marked clean anyway, their data is gone.
    for (std::uint64_t i = nd.dirty_lo; i < std::min<std::uint64_t>(nd.dirty_hi, nd.state.size()); ++i)
      if (nd.state[i] == dirty) nd.state[i] = lost;
    f.errors_seen = ++nd.writeback_errors;
    event("fdatasync fails: EIO, its dirty pages are lost");
    return -EIO;
  }
  if (sabotage_ == io_sabotage::lying_fdatasync) return 0;
  // The size is metadata needed to read the data back: it is synced too.
  nd.durable.resize(nd.cache.size(), 0);
  const std::uint64_t hi = std::min<std::uint64_t>(nd.dirty_hi, nd.cache.size());
  bool still_lost = false;
  for (std::uint64_t i = nd.dirty_lo; i < hi; ++i) {
    if (nd.state[i] == dirty) {
      nd.durable[i] = nd.cache[i];
      nd.state[i] = clean;
    } else if (nd.state[i] == lost) {
      still_lost = true;
    }
  }
  if (!still_lost) nd.dirty_lo = nd.dirty_hi = 0;
  ++nd.version;
  ++generation_;
  if (f.errors_seen != nd.writeback_errors) {
    // A sync through another descriptor of this file failed since this one
    // last synced: Linux reports it here too.
    f.errors_seen = nd.writeback_errors;
    event("fdatasync reports an earlier failed writeback of this file: EIO");
    return -EIO;
  }
  return 0;
}

int sim_file_io::fdatasync(int fd) {
  auto* f = file_of(fd);
  return f ? sync_node(*f) : -EBADF;
}

int sim_file_io::fsync(int fd) {
  auto* f = file_of(fd);
  return f ? sync_node(*f) : -EBADF;
}

int sim_file_io::truncate(int fd, std::uint64_t size) {
  auto* f = file_of(fd);
  if (!f) return -EBADF;
  if (frozen_) return -EIO;
  ++counters_.truncates;
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) return -errno;
  auto& nd = nodes_[f->node];
  const std::uint64_t old_size = nd.cache.size();
  nd.cache.resize(size, 0);
  nd.state.resize(size, clean);
  if (size > old_size) mark(nd, old_size, size, dirty);
  // A shrink is synced by the next sync (which takes the cached size);
  // until then a crash brings the old length back.
  return 0;
}

int sim_file_io::close(int fd) {
  if (fds_.erase(fd) == 0) return -EBADF;
  return ::close(fd) == 0 ? 0 : -errno;
}

int sim_file_io::fsync_directory(const std::string& dir) {
  if (frozen_) return -EIO;
  ++counters_.dir_syncs;
  const std::string d = std::filesystem::path(dir).lexically_normal().string();
  std::error_code ec;
  if (!std::filesystem::is_directory(d, ec)) return -ENOENT;
  if (plan_.strike(fault_kind::dir_fsync_fail)) {
    event("fsync of directory " + base(d) + " fails: EIO");
    return -EIO;
  }
  if (sabotage_ == io_sabotage::lying_dir_fsync) return 0;
  if (durable_[d] != live_[d]) event("fsync of directory " + base(d) + " makes its entries durable");
  durable_[d] = live_[d];
  ++generation_;
  return 0;
}

int sim_file_io::rename(const std::string& from, const std::string& to) {
  if (frozen_) return -EIO;
  ++counters_.renames;
  if (plan_.strike(fault_kind::rename_fail)) {
    event("rename " + base(from) + " fails: EIO");
    return -EIO;
  }
  if (::rename(from.c_str(), to.c_str()) != 0) return -errno;
  auto [from_dir, from_name] = split(from);
  auto [to_dir, to_name] = split(to);
  if (std::filesystem::is_directory(to)) {
    // A whole directory moved (the replica store retires a copy so): its
    // files go with it. Taken as durable at once; the store syncs the parent.
    move_directory(from_dir + "/" + from_name, to_dir + "/" + to_name);
    event("rename directory " + from_name + " -> " + to_name);
    return 0;
  }
  auto& src = live_[from_dir];
  auto it = src.find(from_name);
  if (it != src.end()) {
    const std::uint64_t id = it->second;
    src.erase(it);
    live_[to_dir][to_name] = id;
  }
  event("rename " + from_name + " -> " + to_name);
  return 0;
}

void sim_file_io::move_directory(const std::string& from, const std::string& to) {
  for (auto* tree : {&live_, &durable_}) {
    std::map<std::string, entries> moved;
    for (auto it = tree->begin(); it != tree->end();) {
      const std::string& d = it->first;
      if (d == from || d.rfind(from + "/", 0) == 0) {
        moved[to + d.substr(from.size())] = std::move(it->second);
        it = tree->erase(it);
      } else {
        ++it;
      }
    }
    for (auto& [d, names] : moved) (*tree)[d] = std::move(names);
  }
}

int sim_file_io::unlink(const std::string& path) {
  if (frozen_) return -EIO;
  ++counters_.unlinks;
  if (plan_.strike(fault_kind::unlink_fail)) {
    event("unlink " + base(path) + " fails: EIO");
    return -EIO;
  }
  if (::unlink(path.c_str()) != 0) return -errno;
  auto [dir, name] = split(path);
  live_[dir].erase(name);
  event("unlink " + name);
  return 0;
}

std::int64_t sim_file_io::size(int fd) {
  auto* f = file_of(fd);
  if (!f) return -EBADF;
  return static_cast<std::int64_t>(nodes_[f->node].cache.size());
}

std::int64_t sim_file_io::free_bytes(const std::string&) { return plan_.disk_full() ? 0 : plenty_of_space; }

void sim_file_io::crash(bool writeback) {
  for (auto& [fd, f] : fds_) ::close(fd);
  fds_.clear();
  enospc_next_write_ = false;
  if (writeback) {
    for (auto& [id, nd] : nodes_) {
      if (nd.dirty_lo == nd.dirty_hi || rng_.percent(50)) continue;
      // Pages reach the disk in file order up to a random point.
      std::vector<std::uint64_t> dirty_at;
      for (std::uint64_t i = nd.dirty_lo; i < std::min<std::uint64_t>(nd.dirty_hi, nd.state.size()); ++i)
        if (nd.state[i] == dirty) dirty_at.push_back(i);
      const std::size_t keep = static_cast<std::size_t>(rng_.below(dirty_at.size() + 1));
      for (std::size_t k = 0; k < keep; ++k) {
        const std::uint64_t i = dirty_at[k];
        if (i >= nd.durable.size()) nd.durable.resize(i + 1, 0);
        nd.durable[i] = nd.cache[i];
      }
      if (keep > 0) ++nd.version;
    }
  }
  // A directory removed outside the seam (a delivered copy) is gone for good.
  for (auto* tree : {&live_, &durable_})
    for (auto it = tree->begin(); it != tree->end();)
      it = std::filesystem::is_directory(it->first) ? std::next(it) : tree->erase(it);
  // The real directories become what was durable.
  for (auto& [dir, names] : live_)
    for (auto& [name, id] : names) ::unlink((dir + "/" + name).c_str());
  std::set<std::uint64_t> reachable;
  for (auto& [dir, names] : durable_) {
    for (auto& [name, id] : names) {
      auto& nd = nodes_[id];
      const std::string path = dir + "/" + name;
      const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd >= 0) {
        if (!nd.durable.empty()) (void)!::pwrite(fd, nd.durable.data(), nd.durable.size(), 0);
        ::close(fd);
      }
      reachable.insert(id);
    }
  }
  live_ = durable_;
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    if (!reachable.count(it->first)) {
      it = nodes_.erase(it);
      continue;
    }
    auto& nd = it->second;
    nd.cache = nd.durable;
    nd.state.assign(nd.cache.size(), clean);
    nd.dirty_lo = nd.dirty_hi = 0;
    ++it;
  }
  ++generation_;
  frozen_ = false;
}

std::vector<sim_file_io::durable_file> sim_file_io::durable_files(const std::string& dir) const {
  std::vector<durable_file> out;
  auto it = durable_.find(std::filesystem::path(dir).lexically_normal().string());
  if (it == durable_.end()) return out;
  for (const auto& [name, id] : it->second) {
    const auto& nd = nodes_.at(id);
    out.push_back({name, id, nd.version, &nd.durable});
  }
  return out;
}

}  // namespace weir::sim
