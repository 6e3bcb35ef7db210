#pragma once
// Catches what the process writes to stderr (the daemon's log lines) while
// it lives, for a test that checks what an actor logged.
#include <unistd.h>

#include <cstdio>
#include <string>

namespace weir::test {

class stderr_capture {
 public:
  stderr_capture() : file_(std::tmpfile()) {
    std::fflush(stderr);
    saved_ = ::dup(STDERR_FILENO);
    ::dup2(::fileno(file_), STDERR_FILENO);
  }
  ~stderr_capture() {
    restore();
    std::fclose(file_);
  }
  stderr_capture(const stderr_capture&) = delete;
  stderr_capture& operator=(const stderr_capture&) = delete;

  /// Everything written so far.
  std::string text() {
    std::fflush(stderr);
    std::string out;
    char buf[4096];
    std::rewind(file_);
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file_)) > 0;) out.append(buf, n);
    return out;
  }

  /// How many times `needle` occurs in what was written.
  int count(const std::string& needle) {
    const std::string all = text();
    int n = 0;
    for (auto at = all.find(needle); at != std::string::npos; at = all.find(needle, at + needle.size())) ++n;
    return n;
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    saved_ = -1;
  }

  std::FILE* file_;
  int saved_ = -1;
};

}  // namespace weir::test
