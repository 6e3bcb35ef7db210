#pragma once
// Binding a TCP acceptor to a configured "host:port" (admin.listen,
// listen.tcp): a failure is a startup_error naming the key and the address.
#include <string>

#include <boost/asio/ip/tcp.hpp>

namespace weir {

void bind_tcp_acceptor(boost::asio::ip::tcp::acceptor& acceptor, const std::string& key, const std::string& address);

}  // namespace weir
