#include "weir/admin_http.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "weir/client.hpp"

namespace weir::client {

admin_reply admin_get(const std::string& host_port, const std::string& path) {
  namespace http = boost::beast::http;
  using tcp = boost::asio::ip::tcp;
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos) throw client_error("admin address " + host_port + " has no port");
  try {
    boost::asio::io_context io;
    tcp::resolver resolver(io);
    tcp::socket socket(io);
    boost::asio::connect(socket, resolver.resolve(host_port.substr(0, colon), host_port.substr(colon + 1)));
    http::request<http::string_body> req{http::verb::get, path, 11};
    req.set(http::field::host, host_port);
    req.keep_alive(false);
    http::write(socket, req);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    return {res.result_int(), std::move(res.body())};
  } catch (const boost::system::system_error& e) {
    throw client_error(e.what());
  }
}

}  // namespace weir::client
