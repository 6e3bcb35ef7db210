#include "transport/admin_server.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include "observability/dashboard_page.hpp"
#include "observability/log.hpp"
#include "transport/tcp_bind.hpp"

namespace weir {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr int max_connections = 32;

}  // namespace

/// One admin connection. Every state of it waits on its peer (for a request,
/// or for the peer to take the response), so at the connection cap the
/// oldest session makes room: clients that connect and idle, send a header
/// slowly or never read cannot lock an operator out.
class admin_session : public std::enable_shared_from_this<admin_session> {
 public:
  admin_session(tcp::socket socket, admin_server& server) : stream_(std::move(socket)), server_(server) {
    ++server_.connections;
  }
  ~admin_session() { --server_.connections; }

  void read() {
    since_ = std::chrono::steady_clock::now();
    parser_.emplace();
    parser_->header_limit(8 * 1024);
    parser_->body_limit(1024);
    stream_.expires_after(std::chrono::seconds(10));
    http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return;  // closed, timed out, or oversized: drop it
      self->respond();
    });
  }

  std::chrono::steady_clock::time_point since() const { return since_; }
  void close() {
    beast::error_code ignored;
    stream_.socket().close(ignored);
  }

 private:
  void respond() {
    since_ = std::chrono::steady_clock::now();
    const auto& req = parser_->get();
    auto a = server_.handle(std::string(req.method_string()), std::string(req.target()));
    if (req.method() == http::verb::head) {
      // The length a GET would get, and no body: a body here would be read
      // as the start of the next response on a kept-alive connection.
      auto res = make_response<http::empty_body>(a, req);
      res->content_length(a.body.size());
      send(std::move(res));
      return;
    }
    auto res = make_response<http::string_body>(a, req);
    res->body() = std::move(a.body);
    res->prepare_payload();
    send(std::move(res));
  }

  template <class Body>
  static std::shared_ptr<http::response<Body>> make_response(const admin_server::answer& a,
                                                             const http::request<http::string_body>& req) {
    auto res = std::make_shared<http::response<Body>>(static_cast<http::status>(a.status), req.version());
    res->set(http::field::server, "weir");
    res->set(http::field::content_type, a.content_type);
    res->set(http::field::cache_control, "no-store");
    res->keep_alive(req.keep_alive());
    return res;
  }

  template <class Response>
  void send(std::shared_ptr<Response> res) {
    http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, std::size_t) {
      if (!ec && res->keep_alive()) self->read();
    });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  admin_server& server_;
  std::chrono::steady_clock::time_point since_{};
};

admin_server::admin_server(const std::string& address, metrics& stats, metrics::live_state live)
    : stats_(stats), live_(live), status_(stats, live) {
  bind_tcp_acceptor(acceptor_, "admin.listen", address);
}

admin_server::~admin_server() { stop(); }

std::uint16_t admin_server::port() const { return acceptor_.local_endpoint().port(); }

void admin_server::start() {
  accept_next();
  tick();
  thread_ = std::thread([this] { io_.run(); });
}

void admin_server::stop() {
  if (!thread_.joinable()) return;
  io_.stop();
  thread_.join();
}

void admin_server::tick() {
  status_.sample();
  ticker_.expires_after(std::chrono::seconds(1));
  ticker_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) tick();
  });
}

void admin_server::accept_next() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) {
      forget_closed();
      if (connections.load() >= max_connections) make_room();
      auto session = std::make_shared<admin_session>(std::move(socket), *this);
      sessions_[next_session_++] = session;
      session->read();
    }
    accept_next();
  });
}

// On every accept: a scraper and probes that never hold 32 connections at
// once would otherwise leave an entry (and, through the weak pointer, the
// session's memory) behind for each connection they ever made.
void admin_server::forget_closed() {
  std::erase_if(sessions_, [](const auto& entry) { return entry.second.expired(); });
}

void admin_server::make_room() {
  std::shared_ptr<admin_session> oldest;
  for (const auto& [id, weak] : sessions_)
    if (auto s = weak.lock(); s && (!oldest || s->since() < oldest->since())) oldest = s;
  if (oldest) oldest->close();
}

admin_server::answer admin_server::handle(const std::string& method, const std::string& target) {
  const std::string path = target.substr(0, target.find('?'));
  if (method != "GET" && method != "HEAD") return {405, "text/plain", "only GET\n"};
  if (path == "/metrics") return {200, "text/plain; version=0.0.4; charset=utf-8", stats_.render(live_)};
  if (path == "/healthz") return {200, "text/plain", "ok\n"};
  if (path == "/readyz") {
    if (auto why = status_.not_ready()) return {503, "text/plain", "not ready: " + *why + "\n"};
    // Producers can push; a failing delivery is said, not made a reason to stop them.
    if (auto failing = status_.delivery_problem())
      return {200, "text/plain", "ready\ndelivery retrying: " + *failing + "\n"};
    return {200, "text/plain", "ready\n"};
  }
  if (path == "/api/v1/status") return {200, "application/json", status_.json()};
  if (path == "/api/v1/history") return {200, "application/json", status_.history_json()};
  if (path == "/") return {200, "text/html; charset=utf-8", std::string(dashboard_page())};
  return {404, "text/plain", "not found\n"};
}

}  // namespace weir
