#include "transport/tcp_bind.hpp"

#include "runtime/startup_error.hpp"

namespace weir {

void bind_tcp_acceptor(boost::asio::ip::tcp::acceptor& acceptor, const std::string& key, const std::string& address) {
  namespace asio = boost::asio;
  const auto colon = address.rfind(':');
  const std::string host = address.substr(0, colon), port = colon == std::string::npos ? "" : address.substr(colon + 1);
  boost::system::error_code ec;
  asio::ip::tcp::resolver resolver(acceptor.get_executor());
  auto endpoints = resolver.resolve(host, port, ec);
  if (ec || endpoints.empty()) throw startup_error(key + " = " + address + ": cannot resolve: " + ec.message());
  const asio::ip::tcp::endpoint ep = *endpoints.begin();
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw startup_error(key + " = " + address + ": " + ec.message());
}

}  // namespace weir
