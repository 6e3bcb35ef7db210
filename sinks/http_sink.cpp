// http: POSTs records to sink.http.url over keep-alive connections, plain
// or TLS (https://: the endpoint's certificate checked against
// sink.http.ca_file or the system's CAs, and its name against the URL's
// host; SNI; a client certificate when configured).
//
//   format raw:    one POST per record, body = payload,
//                  Idempotency-Key: sha256:<record id>; up to
//                  sink.http.pipeline of them written on the connection
//                  at once (HTTP/1.1 pipelining), their answers read in order
//   format ndjson: one POST per batch, one payload per line,
//                  Idempotency-Key: sha256:<SHA-256 of the batch's ids>;
//                  a record containing a newline cannot be framed: dead letter
//
// 2xx commits; 408, 429, 5xx, 3xx (redirects are not followed) and transport
// errors retry the batch, honouring Retry-After; any other 4xx rejects the
// record (raw) or the batch's records (ndjson) for good. A certificate that
// does not verify is a transport error: the records wait in the WAB (it is
// the configuration that is wrong, not the data), and the reason is the
// delivery's last error.
#include <openssl/evp.h>

#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>
#include <optional>
#include <stdexcept>

#include "wire/coordinate.hpp"
#include "wire/outcome.hpp"
#include "config/http_url.hpp"
#include "sinks/http_connection.hpp"
#include "sinks/json_envelope.hpp"
#include "sinks/secret.hpp"
#include "sinks/sink_types.hpp"

namespace weir {

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;

struct http_settings {
  http_url url;
  bool ndjson = false;
  std::size_t pipeline = 16;
  std::map<std::string, std::string> headers;
  std::shared_ptr<reloadable_secret> bearer_token;
  int timeout_ms = 10000;
  std::shared_ptr<asio::ssl::context> tls;  // set for https://
};

enum class verdict { ok, retry, reject };

verdict classify(unsigned status) {
  if (status >= 200 && status < 300) return verdict::ok;
  if (status == 408 || status == 429 || status >= 500 || (status >= 300 && status < 400)) return verdict::retry;
  return verdict::reject;
}

std::optional<std::chrono::milliseconds> retry_after_of(const http::response<http::string_body>& res) {
  auto it = res.find(http::field::retry_after);
  if (it == res.end()) return std::nullopt;
  const std::string v(it->value());
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;  // HTTP dates: ignored
  return std::chrono::milliseconds(std::min<long long>(std::stoll(v), 300) * 1000);
}

std::string batch_key(const std::vector<const sink_record*>& records) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  for (const auto* r : records) EVP_DigestUpdate(ctx.get(), r->id.data(), r->id.size());
  std::array<std::uint8_t, 32> digest{};
  EVP_DigestFinal_ex(ctx.get(), digest.data(), nullptr);
  return wire::to_hex(digest);
}

class http_sink final : public sink {
 public:
  explicit http_sink(std::shared_ptr<const http_settings> s) : s_(s), conn_(s->url, s->tls, s->timeout_ms) {}

  commit_result commit(const std::vector<sink_record>& batch) override {
    return s_->ndjson ? commit_ndjson(batch) : commit_raw(batch);
  }

  /// Healthy when a connection stands: the kept-alive one while nothing
  /// says the endpoint left it, else a new one.
  sink_health probe(std::string& why) override {
    if (conn_.is_open() && conn_.maybe_stale()) conn_.disconnect();
    why = conn_.ensure_connected();
    if (why.empty()) return sink_health::healthy;
    conn_.disconnect();  // a failed connect leaves the socket open, and "connected" for the next look
    return sink_health::down;
  }

 private:
  /// A window of POSTs goes out in one write, and their answers come back
  /// in order: the round trip is paid once per window, not per record. A
  /// window cut short (the server closed after an answer, or the connection
  /// broke after some) goes on from the first record left unanswered on a
  /// new connection; a connection that answers nothing at all earns one
  /// fresh try (a stale keep-alive connection), then the batch is retried —
  /// from the first record not answered: those before it are settled.
  commit_result commit_raw(const std::vector<sink_record>& batch) {
    commit_result out;
    const std::string head = raw_request_head();
    bool fresh_try_used = false;
    std::size_t next = 0;  // the first record not answered yet
    auto retry_from = [&](std::size_t first_unsettled, commit_result r) {
      r.settled = first_unsettled;
      r.rejected = std::move(out.rejected);
      return r;
    };
    while (next < batch.size()) {
      const bool reused = conn_.is_open();
      if (auto failure = conn_.ensure_connected(); !failure.empty()) {
        conn_.disconnect();
        return retry_from(next, commit_result::retry(failure));
      }
      const std::size_t end = std::min(batch.size(), next + s_->pipeline);
      requests_.clear();
      for (std::size_t i = next; i < end; ++i) append_raw_request(head, batch[i]);
      auto ec = conn_.with_stream([&](auto& stream) {
        return conn_.run([&](auto handler) { asio::async_write(stream, asio::buffer(requests_), handler); });
      });
      if (!ec) conn_.ack_answers_at_once();
      std::size_t answered = 0;
      bool closed_by_server = false;
      for (std::size_t i = next; i < end && !ec && !closed_by_server; ++i) {
        response res;
        ec = conn_.with_stream([&](auto& stream) {
          return conn_.run([&](auto handler) { http::async_read(stream, conn_.buffer(), res, handler); });
        });
        if (ec) break;
        ++answered;
        const unsigned status = res.result_int();
        const verdict v = classify(status);
        if (v == verdict::retry) {
          conn_.disconnect();  // answers to the rest of the window may still be on their way
          auto t = commit_result::retry("HTTP " + std::to_string(status) + " from " + s_->url.display(), true);
          t.retry_after = retry_after_of(res);
          return retry_from(i, std::move(t));
        }
        if (v == verdict::reject) out.rejected.emplace_back(i, "HTTP " + std::to_string(status));
        closed_by_server = !res.keep_alive();
      }
      next += answered;
      if (closed_by_server) conn_.disconnect();
      if (!ec) continue;
      conn_.disconnect();
      if (answered == 0 && (!reused || fresh_try_used))
        return retry_from(next, commit_result::retry("POST " + s_->url.display() + ": " + ec.message()));
      if (answered == 0) fresh_try_used = true;
    }
    return out;
  }

  /// The request line and the headers every raw POST of this commit shares
  /// (read per commit: the bearer token may have been rotated). Extra
  /// headers replace the sink's own of the same name.
  std::string raw_request_head() const {
    auto overridden = [&](const char* name) {
      for (const auto& [k, v] : s_->headers)
        if (boost::beast::iequals(k, name)) return true;
      return false;
    };
    std::string head = "POST " + s_->url.target + " HTTP/1.1\r\n";
    if (!overridden("Host")) head += "Host: " + s_->url.host + "\r\n";
    if (!overridden("Content-Type")) head += "Content-Type: application/octet-stream\r\n";
    if (!overridden("User-Agent")) head += "User-Agent: weir\r\n";
    if (const auto token = s_->bearer_token->value(); !token.empty() && !overridden("Authorization"))
      head += "Authorization: Bearer " + token + "\r\n";
    for (const auto& [k, v] : s_->headers) head += k + ": " + v + "\r\n";
    return head;
  }

  void append_raw_request(const std::string& head, const sink_record& r) {
    requests_ += head;
    requests_ += "Idempotency-Key: sha256:";
    requests_ += r.id;
    requests_ += "\r\nContent-Length: ";
    requests_ += std::to_string(r.payload.size());
    requests_ += "\r\n\r\n";
    requests_.append(reinterpret_cast<const char*>(r.payload.data()), r.payload.size());
  }

  commit_result commit_ndjson(const std::vector<sink_record>& batch) {
    commit_result out;
    std::vector<const sink_record*> sent;
    body_.clear();
    for (const auto& r : batch) {
      body_ += json_envelope(r);
      body_.push_back('\n');
      sent.push_back(&r);
    }
    if (sent.empty()) return out;
    auto res = post(body_, "application/x-ndjson", "sha256:" + batch_key(sent));
    if (!res) return commit_result::retry(res.error());
    switch (classify(res.value().result_int())) {
      case verdict::ok:
        return out;
      case verdict::reject:
        for (std::size_t i = 0; i < batch.size(); ++i)
          out.rejected.emplace_back(i, "HTTP " + std::to_string(res.value().result_int()));
        return out;
      case verdict::retry:
        break;
    }
    auto t = commit_result::retry("HTTP " + std::to_string(res.value().result_int()) + " from " + s_->url.display(),
                                  true);
    t.retry_after = retry_after_of(res.value());
    return t;
  }

  using response = http_connection::response;

  /// One POST on the slot's connection; the reason on a transport error.
  /// `body` is lent to the request and given back, for the next batch's.
  outcome<response, std::string> post(std::string& body, const char* content_type, const std::string& key) {
    http_connection::request req{http::verb::post, s_->url.target, 11};
    req.set(http::field::host, s_->url.host);
    req.set(http::field::content_type, content_type);
    req.set("Idempotency-Key", key);
    req.set(http::field::user_agent, "weir");
    if (const auto token = s_->bearer_token->value(); !token.empty())
      req.set(http::field::authorization, "Bearer " + token);
    for (const auto& [k, v] : s_->headers) req.set(k, v);
    req.keep_alive(true);
    return conn_.send(req, body);
  }

  std::shared_ptr<const http_settings> s_;
  http_connection conn_;
  std::string requests_;  // a raw window's requests, kept between commits: one allocation for the slot's life
  // An NDJSON batch's body, kept between commits the same way: a fresh one is
  // a fresh mapping each time, whose page faults cost more than writing it.
  std::string body_;
};

class http_factory final : public sink_factory {
 public:
  explicit http_factory(std::shared_ptr<const http_settings> s) : s_(std::move(s)) {}
  std::unique_ptr<sink> make() override { return std::make_unique<http_sink>(s_); }
  std::string type() const override { return "http"; }
  secret_reload reload_secrets() override { return reload_each({s_->bearer_token.get()}); }

 private:
  std::shared_ptr<const http_settings> s_;
};

}  // namespace

std::shared_ptr<sink_factory> make_http_sink_factory(const config& cfg) {
  auto s = std::make_shared<http_settings>();
  std::string why;
  auto url = parse_http_url(cfg.sink.http.url, why);
  if (!url) throw std::runtime_error("sink.http.url: " + why);
  s->url = *url;
  s->ndjson = cfg.sink.http.format == "ndjson";
  s->pipeline = static_cast<std::size_t>(cfg.sink.http.pipeline);
  s->headers = cfg.sink.http.headers;
  s->bearer_token = std::make_shared<reloadable_secret>("sink.http.bearer_token_file", cfg.sink.http.bearer_token_file,
                                                        "WEIR_SINK_BEARER_TOKEN", secret_use::bearer_token);
  s->timeout_ms = static_cast<int>(cfg.sink.timeout_ms);
  if (s->url.tls)
    s->tls = make_client_tls_context("sink.http", cfg.sink.http.ca_file, cfg.sink.http.tls.cert, cfg.sink.http.tls.key);
  return std::make_shared<http_factory>(std::move(s));
}

}  // namespace weir
