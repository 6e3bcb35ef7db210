#pragma once
// Files an operator names (secrets, TLS certificates and keys) are read
// only if they are what they claim to be: a regular file of bounded size. A
// FIFO, a device or a directory put in a file's place is refused at once:
// it is opened without blocking, so a reader that never comes, or a device
// that never ends, cannot stall the daemon (a SIGHUP reload would otherwise
// hang, and every signal after it with it). A symlink to a regular file is
// followed: systemd credentials and Kubernetes secrets are symlinks.
#include <cstddef>
#include <string>

namespace weir {

/// Reads `path` whole into `out`. "" when done, else why not (never the
/// content): "not a regular file (a FIFO)", "larger than 65536 bytes", ...
std::string read_regular_file(const std::string& path, std::size_t max_bytes, std::string& out);

/// Whether `path` is such a file, without reading it: "" or why not.
std::string check_regular_file(const std::string& path, std::size_t max_bytes);

}  // namespace weir
