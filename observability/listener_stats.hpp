#pragma once
// Counters the listeners keep; read by the admin server and tests.
#include <array>
#include <atomic>
#include <cstdint>

#include "observability/log_throttle.hpp"

namespace weir {

/// Why a TLS handshake on listen.tcp failed (the reason label of
/// weir_tls_handshake_failures_total).
enum class tls_failure : std::uint8_t {
  no_client_cert,  // the client sent no certificate
  bad_cert,        // not signed by listen.tls.client_ca, or otherwise invalid
  expired_cert,    // outside its validity period
  protocol,        // not TLS at all (plaintext), or below TLS 1.2
  timeout,         // not done within listen.tls.handshake_timeout_ms
  aborted,         // the client hung up or ended the handshake (it refused the daemon's certificate)
  crowded,         // closed unfinished: the oldest of too many handshakes at once, for a newer one
  other,
  wrong_name,      // cluster links: a certificate that names no weir-node-<id>, or this node's own
};
inline constexpr std::size_t tls_failure_count = 9;
constexpr const char* name_of(tls_failure f) {
  constexpr const char* names[tls_failure_count] = {"no_client_cert", "bad_cert", "expired_cert", "protocol",
                                                    "timeout",        "aborted",  "crowded",      "other",
                                                    "wrong_name"};
  return names[static_cast<std::size_t>(f)];
}

/// The handshakes of one TLS port: completed, and failed by reason.
struct tls_handshake_stats {
  std::atomic<std::uint64_t> completed{0};  // a peer certificate verified
  std::array<std::atomic<std::uint64_t>, tls_failure_count> failures{};
  void count(tls_failure f) { ++failures[static_cast<std::size_t>(f)]; }
};

struct listener_stats {
  std::atomic<std::uint64_t> accepted{0};
  std::atomic<std::int64_t> active{0};
  std::atomic<std::uint64_t> rejected_over_limit{0};
  std::atomic<std::uint64_t> rejected_peer_uid{0};
  std::atomic<std::uint64_t> idle_timeouts{0};  // a frame not whole within listen.read_timeout_ms
  std::atomic<std::uint64_t> evicted{0};        // closed to make room at listen.max_connections
  std::atomic<std::uint64_t> accept_errors{0};  // accept() failed (EMFILE, ENFILE, ENOMEM...)
  // The log lines of those closes and refusals: a line for a burst.
  log_throttle idle_timeout_lines, eviction_lines, over_limit_lines, peer_refused_lines, epoll_fallback_lines,
      accepted_lines;

  // listen.tcp: set once at start when the TLS listener runs.
  std::atomic<bool> tls_enabled{false};
  tls_handshake_stats tls;
  std::atomic<std::uint64_t> tls_reloads_ok{0}, tls_reloads_failed{0};
  std::atomic<std::int64_t> tls_cert_not_after{0};  // the server certificate's, Unix seconds
  std::atomic<std::int64_t> tls_ca_not_after{0};    // listen.tls.client_ca's first certificate's

};

}  // namespace weir
