#pragma once
// Files an operator names (secrets, TLS certificates and keys) are read
// only if they are what they claim to be: a regular file of bounded size. A
// FIFO, a device or a directory put in a file's place is refused at once:
// it is opened without blocking, so a reader that never comes, or a device
// that never ends, cannot stall the daemon (a SIGHUP reload would otherwise
// hang, and every signal after it with it). A symlink to a regular file is
// followed: systemd credentials and Kubernetes secrets are symlinks. And
// it is read within a time limit (files/time_limit.hpp), so a file system
// that stops answering cannot stall it either.
#include <cstddef>
#include <string>

namespace weir {

/// Reads `path` whole into `out`. "" when done, else why not (never the
/// content): "not a regular file (a FIFO)", "larger than 65536 bytes",
/// "did not answer within 5 s (...)", ...
std::string read_regular_file(const std::string& path, std::size_t max_bytes, std::string& out);

/// Whether a reason from read_regular_file says the file does not exist.
bool names_missing_file(const std::string& why);

/// Whether `path` is such a file, without reading it: "" or why not.
std::string check_regular_file(const std::string& path, std::size_t max_bytes);

}  // namespace weir
