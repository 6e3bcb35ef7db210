#include "sinks/http_connection.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/tcp.hpp>
#include <cerrno>
#include <stdexcept>

#include "files/pem.hpp"

namespace weir {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

std::shared_ptr<asio::ssl::context> make_client_tls_context(const std::string& prefix, const std::string& ca_file,
                                                            const std::string& cert, const std::string& key) {
  auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
  SSL_CTX* native = ctx->native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  SSL_CTX_set_verify(native, SSL_VERIFY_PEER, nullptr);
  // Read as regular files within the time limit (files/pem.hpp), never by
  // OpenSSL from the path: a FIFO there would block the sink's start.
  auto pem_of = [&](const char* name, const std::string& path) {
    std::string pem;
    if (const auto why = read_pem_file(path, pem); !why.empty())
      throw std::runtime_error(prefix + name + " = " + path + ": " + why + "; expected a PEM file");
    return pem;
  };
  auto refuse = [&](const char* name, const std::string& path, const std::string& what, const std::string& why) {
    throw std::runtime_error(prefix + name + " = " + path + ": " + what + ": " + why);
  };
  if (ca_file.empty()) {
    if (SSL_CTX_set_default_verify_paths(native) != 1)
      throw std::runtime_error(prefix + ".ca_file = \"\" (the system's CAs): cannot load CA certificates");
  } else if (const auto why = trust_ca_pem(native, pem_of(".ca_file", ca_file), false); !why.empty()) {
    refuse(".ca_file", ca_file, "cannot load CA certificates from it", why);
  }
  if (!cert.empty())
    if (const auto why = use_certificate_chain_pem(native, pem_of(".tls.cert", cert)); !why.empty())
      refuse(".tls.cert", cert, "not a PEM certificate chain", why);
  if (!key.empty())
    if (const auto why = use_private_key_pem(native, pem_of(".tls.key", key)); !why.empty())
      refuse(".tls.key", key, why == key_does_not_match ? "not " + prefix + ".tls.cert's key" : std::string("not a usable key"),
             why);
  return ctx;
}

std::string http_connection::ensure_connected() {
  if (lowest().socket().is_open()) return "";
  boost::system::error_code ec;
  tcp::resolver resolver(io_);
  const auto endpoints = resolver.resolve(url_.host, url_.port, ec);
  if (!ec && tls_) secure_.emplace(io_, *tls_);
  if (!ec) ec = run([&](auto handler) { lowest().async_connect(endpoints, handler); });
  if (ec) return "connecting to " + url_.display() + ": " + ec.message();
  // Requests go out whole, one write each window; Nagle would only hold
  // the next one back until the endpoint's (possibly delayed) ACK.
  boost::system::error_code no_delay_failed;  // only latency: not a reason to drop the connection
  lowest().socket().set_option(tcp::no_delay(true), no_delay_failed);
  if (!secure_) return "";
  SSL* ssl = secure_->native_handle();
  // SNI, and the certificate must name the URL's host (or IP address).
  unsigned char ip[16];
  const bool is_ip = ::inet_pton(AF_INET, url_.host.c_str(), ip) == 1 || ::inet_pton(AF_INET6, url_.host.c_str(), ip) == 1;
  if (is_ip) X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), url_.host.c_str());
  else {
    SSL_set_tlsext_host_name(ssl, url_.host.c_str());
    SSL_set1_host(ssl, url_.host.c_str());
  }
  ec = run([&](auto handler) { secure_->async_handshake(asio::ssl::stream_base::client, handler); });
  if (!ec) return "";
  const long verify = SSL_get_verify_result(ssl);
  std::string why = "TLS handshake with " + url_.display() + ": ";
  if (verify != X509_V_OK)
    why += std::string("the endpoint's certificate is not trusted: ") + X509_verify_cert_error_string(verify) +
           " (check sink.http.ca_file and the URL's host)";
  else
    why += ec.message();
  disconnect();
  return why;
}

bool http_connection::maybe_stale() {
  char byte;
  const ssize_t n = ::recv(lowest().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

void http_connection::ack_answers_at_once() {
  const int one = 1;
  ::setsockopt(lowest().socket().native_handle(), IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
}

outcome<http_connection::response, std::string> http_connection::send(request& req, std::string& body) {
  req.body().swap(body);
  struct give_back {
    std::string& lent;
    std::string& owner;
    ~give_back() { owner.swap(lent); }
  } body_back{req.body(), body};
  req.prepare_payload();
  std::string failure;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool reused = is_open();
    if (failure = ensure_connected(); !failure.empty()) {
      disconnect();
      break;
    }
    auto ec = with_stream([&](auto& stream) { return run([&](auto handler) { http::async_write(stream, req, handler); }); });
    response res;
    if (!ec)
      ec = with_stream(
          [&](auto& stream) { return run([&](auto handler) { http::async_read(stream, buffer_, res, handler); }); });
    if (!ec) {
      if (!res.keep_alive()) disconnect();
      return res;
    }
    disconnect();
    failure = "POST " + url_.display() + ": " + ec.message();
    if (!reused) break;  // a stale keep-alive connection earns one retry on a fresh one
  }
  return failure;
}

void http_connection::disconnect() {
  boost::system::error_code ignored;
  lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
  lowest().close();
  secure_.reset();  // a TLS session is not reused after its connection
  buffer_.clear();
}

}  // namespace weir
