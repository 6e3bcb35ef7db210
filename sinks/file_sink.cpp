// file: appends one NDJSON line per record and fsyncs once per batch.
//
//   {"id":"<hex>","shard":0,"segment":"shard_00/seg_00000001.wab","idx":1,"ts":<ns>,"payload_b64":"..."}
//
// Idempotent on the id: the ids already in the file are loaded at start and a
// record seen before is skipped. A line torn by a crash (no final newline) is
// cut off at start; its batch was never confirmed and comes again.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <unordered_set>

#include "sinks/base64.hpp"
#include "sinks/sink_types.hpp"

namespace weir {

namespace {

/// One file shared by every commit slot.
struct ndjson_file {
  std::mutex mutex;
  int fd = -1;
  std::unordered_set<std::string> ids;

  explicit ndjson_file(const std::string& path) {
    std::filesystem::path p(path);
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) throw std::runtime_error("sink.file.path = " + path + ": " + std::strerror(errno));
    std::ifstream in(path, std::ios::binary);
    std::string line;
    std::uint64_t whole = 0;
    while (std::getline(in, line)) {
      if (in.eof()) break;  // no newline after it: torn
      whole += line.size() + 1;
      const auto at = line.find("\"id\":\"");
      if (at != std::string::npos) ids.insert(line.substr(at + 6, 64));
    }
    if (static_cast<std::uint64_t>(std::filesystem::file_size(p)) != whole && ::ftruncate(fd, static_cast<off_t>(whole)) != 0)
      throw std::runtime_error("sink.file.path = " + path + ": cannot cut a torn last line: " + std::strerror(errno));
  }
  ~ndjson_file() {
    if (fd >= 0) ::close(fd);
  }
};

std::string line_of(const sink_record& r) {
  std::string s = "{\"id\":\"" + r.id + "\",\"shard\":" + std::to_string(r.shard) + ",\"segment\":\"" + r.segment +
                  "\",\"idx\":" + std::to_string(r.index) + ",\"ts\":" + std::to_string(r.ts_ns) +
                  ",\"payload_b64\":\"" + base64_encode(r.payload) + "\"}\n";
  return s;
}

class file_sink final : public sink {
 public:
  explicit file_sink(std::shared_ptr<ndjson_file> file) : file_(std::move(file)) {}

  commit_result commit(const std::vector<sink_record>& batch) override {
    std::lock_guard<std::mutex> guard(file_->mutex);
    std::string out;
    std::vector<const std::string*> added;
    for (const auto& r : batch) {
      if (file_->ids.count(r.id)) continue;
      out += line_of(r);
      added.push_back(&r.id);
    }
    if (out.empty()) return commit_result::ok();
    const off_t before = ::lseek(file_->fd, 0, SEEK_END);
    std::size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::write(file_->fd, out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const std::string why = n < 0 ? std::strerror(errno) : "nothing written";
        // Cut the partial lines off; the whole batch comes again.
        if (before >= 0) (void)!::ftruncate(file_->fd, before);
        return commit_result::retry("write failed: " + why, /*answered=*/true);  // local: its probe cannot tell more
      }
      done += static_cast<std::size_t>(n);
    }
    if (::fdatasync(file_->fd) != 0)
      return commit_result::retry("fdatasync failed: " + std::string(std::strerror(errno)), /*answered=*/true);
    for (auto* id : added) file_->ids.insert(*id);
    return commit_result::ok();
  }

  sink_health probe(std::string&) override { return sink_health::healthy; }

 private:
  std::shared_ptr<ndjson_file> file_;
};

class file_factory final : public sink_factory {
 public:
  explicit file_factory(const std::string& path) : path_(path) {}
  std::unique_ptr<sink> make() override {
    std::lock_guard<std::mutex> guard(mutex_);
    if (!file_) file_ = std::make_shared<ndjson_file>(path_);
    return std::make_unique<file_sink>(file_);
  }
  std::string type() const override { return "file"; }

 private:
  std::string path_;
  std::mutex mutex_;
  std::shared_ptr<ndjson_file> file_;
};

}  // namespace

std::shared_ptr<sink_factory> make_file_sink_factory(const config& cfg) {
  return std::make_shared<file_factory>(cfg.sink.file.path);
}

}  // namespace weir
