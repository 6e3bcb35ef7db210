#include "weir/admin_http.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include "weir/client.hpp"

namespace weir::client {

admin_reply admin_get(const std::string& host_port, const std::string& path, std::chrono::milliseconds timeout) {
  namespace beast = boost::beast;
  namespace http = beast::http;
  using tcp = boost::asio::ip::tcp;
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos)
    throw client_error("admin address " + host_port + " has no port", error_kind::unreachable);
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  // One deadline for the whole exchange: a server that accepts and never
  // answers must not hang the caller (weir-ctl, weir-bench polling a node).
  stream.expires_after(timeout);
  beast::error_code failed;
  auto fail_if = [&](const char* what, error_kind kind) {
    if (!failed) return;
    const bool timed_out = failed == beast::error::timeout;
    throw client_error(std::string(what) + " " + host_port + ": " +
                           (timed_out ? "no answer within " + std::to_string(timeout.count()) + " ms"
                                      : failed.message()),
                       timed_out && kind != error_kind::unreachable ? error_kind::timeout : kind);
  };
  tcp::resolver resolver(io);
  tcp::resolver::results_type addresses;
  resolver.async_resolve(host_port.substr(0, colon), host_port.substr(colon + 1),
                         [&](beast::error_code ec, tcp::resolver::results_type r) {
                           failed = ec;
                           addresses = std::move(r);
                         });
  io.run();
  fail_if("resolving", error_kind::unreachable);
  io.restart();
  stream.async_connect(addresses, [&](beast::error_code ec, const tcp::endpoint&) { failed = ec; });
  io.run();
  fail_if("connecting to", error_kind::unreachable);
  http::request<http::string_body> req{http::verb::get, path, 11};
  req.set(http::field::host, host_port);
  req.keep_alive(false);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> res;
  res.body_limit(64u << 20);  // a status page or a scrape, never more
  io.restart();
  http::async_write(stream, req, [&](beast::error_code ec, std::size_t) {
    failed = ec;
    if (!ec) http::async_read(stream, buffer, res, [&](beast::error_code ec2, std::size_t) { failed = ec2; });
  });
  io.run();
  fail_if("reading from", error_kind::connection_lost);
  return {res.get().result_int(), std::move(res.get().body())};
}

}  // namespace weir::client
