#include "support/nginx_server.hpp"

#include "support/http_get.hpp"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <thread>

namespace weir::test {

namespace {

bool accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

constexpr const char* nginx_binary = "/usr/sbin/nginx";

}  // namespace

nginx_server::nginx_server() {
  configure(nullptr);
  start();
}

nginx_server::nginx_server(const nginx_tls& tls) {
  configure(&tls);
  start();
}

void nginx_server::configure(const nginx_tls* tls) {
  tls_ = tls != nullptr;
  if (!std::filesystem::exists(nginx_binary))
    throw std::runtime_error("nginx not found (scripts/install-deps.sh installs it)");
  char tmpl[] = "/tmp/weir-nginx-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  port_ = free_tcp_port();
  // /ingest reads the body (proxied, so that it is logged) to /ok, on a
  // plain port of its own.
  const std::string d = dir_.string(), p = std::to_string(port_), ok_port = std::to_string(free_tcp_port());
  std::string listen = "    listen 127.0.0.1:" + p + (tls ? " ssl" : "") + ";\n";
  if (tls) {
    listen += "    ssl_certificate " + tls->cert + ";\n    ssl_certificate_key " + tls->key + ";\n";
    if (!tls->client_ca.empty())
      listen += "    ssl_client_certificate " + tls->client_ca + ";\n    ssl_verify_client on;\n";
  }
  std::ofstream(dir_ / "nginx.conf") << "daemon off;\nmaster_process off;\npid " << d << "/nginx.pid;\n"
      << "error_log " << d << "/error.log;\nevents { worker_connections 64; }\nhttp {\n"
      << "  access_log off;\n  client_body_buffer_size 1m;\n  client_body_temp_path " << d << "/body;\n"
      << "  proxy_temp_path " << d << "/proxy;\n  fastcgi_temp_path " << d << "/fastcgi;\n"
      << "  uwsgi_temp_path " << d << "/uwsgi;\n  scgi_temp_path " << d << "/scgi;\n"
      << "  log_format bodies escape=json '$http_idempotency_key $request_body';\n"
      << "  log_format fast '$status';\n  keepalive_requests 100000;\n"
      << "  server {\n" << listen
      << "    location = /ingest { access_log " << d << "/bodies.log bodies; proxy_pass http://127.0.0.1:" << ok_port
      << "/ok; }\n"
      << "    location = /fast { access_log " << d << "/fast.log fast; return 200; }\n  }\n"
      << "  server {\n    listen 127.0.0.1:" << ok_port << ";\n    location = /ok { return 200; }\n  }\n}\n";
}

void nginx_server::start() {
  const std::string d = dir_.string();
  const std::string conf = d + "/nginx.conf";  // made before the fork: the child only execs
  pid_ = ::fork();
  if (pid_ == 0) {
    ::execl(nginx_binary, nginx_binary, "-p", d.c_str(), "-c", conf.c_str(), nullptr);
    _exit(127);
  }
  for (int i = 0; i < 500 && !accepts(port_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!accepts(port_)) throw std::runtime_error("nginx did not start; see " + d + "/error.log");
}

void nginx_server::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void nginx_server::stop_gracefully() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGQUIT);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

nginx_server::~nginx_server() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::size_t nginx_server::fast_requests() const {
  std::ifstream in(dir_ / "fast.log");
  std::size_t n = 0;
  std::string line;
  while (std::getline(in, line)) ++n;
  return n;
}

std::vector<std::string> nginx_server::logged() const {
  std::vector<std::string> out;
  std::ifstream in(dir_ / "bodies.log");
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

}  // namespace weir::test
