#include "daemon/config_reload.hpp"

#include <map>

#include <yaml-cpp/yaml.h>

#include "config/loader.hpp"
#include "config/schema.hpp"
#include "config/sink_list.hpp"
#include "observability/log.hpp"

namespace weir {

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out.empty() ? "none" : out;
}

}  // namespace

namespace {

/// The keys of a `sinks:` list that changed, per sink: "sinks[hook]" for a
/// sink added or taken out, "sinks[hook].sink.http.url" for one of its keys.
void changed_sinks(const config& a, const config& b, std::vector<std::string>& out) {
  if (a.sinks.empty() && b.sinks.empty()) return;  // the sink: section's keys say it all
  std::map<std::string, config> before, after;
  for (const auto& s : configured_sinks(a)) before.emplace(s.name, with_only_sink(a, s));
  for (const auto& s : configured_sinks(b)) after.emplace(s.name, with_only_sink(b, s));
  for (const auto& [name, was] : before)
    if (!after.count(name)) out.push_back("sinks[" + name + "]");
  for (const auto& [name, now] : after) {
    const auto was = before.find(name);
    if (was == before.end()) {
      out.push_back("sinks[" + name + "]");
      continue;
    }
    for (const auto& s : settings())
      if (s.key.starts_with("sink.") && YAML::Dump(s.show(was->second)) != YAML::Dump(s.show(now)))
        out.push_back("sinks[" + name + "]." + s.key);
  }
}

}  // namespace

std::vector<std::string> changed_keys(const config& a, const config& b) {
  std::vector<std::string> out;
  for (const auto& s : settings())
    if (YAML::Dump(s.show(a)) != YAML::Dump(s.show(b))) out.push_back(s.key);
  changed_sinks(a, b, out);
  return out;
}

bool reloads_live(const std::string& key) {
  return key == "log.level" || key == "log.format" || key == "listen.tls.cert" || key == "listen.tls.key" ||
         key == "listen.tls.client_ca" || key == "cluster.tls.cert" || key == "cluster.tls.key" ||
         key == "cluster.tls.ca";
}

void reload_config(config& running, const std::function<config()>& reread,
                   const std::function<sink_factory::secret_reload()>& reload_secrets,
                   const std::function<std::string(const config::tls_files&)>& reload_tls,
                   const std::function<std::string(const config&)>& reload_cluster_tls) {
  log::info("reloading the configuration and the files it names");
  config fresh;
  try {
    fresh = reread();
  } catch (const config_error& e) {
    log::error("reload refused: the configuration is invalid; nothing changed", {{"error", e.what()}});
    return;
  }
  for (const auto& d : fresh.deprecations) log::warn("config: a key is read under its earlier name", {{"key", d}});
  std::vector<std::string> applied, restart;
  for (const auto& key : changed_keys(running, fresh)) (reloads_live(key) ? applied : restart).push_back(key);
  running.log = fresh.log;
  log::configure(running.log.level, running.log.format);
  const auto secrets = reload_secrets ? reload_secrets() : sink_factory::secret_reload{};
  // Certificates are rotated in place as often as their paths change: the
  // files are read again on every reload, and a failure keeps what is in use.
  std::vector<std::string> not_applied;
  auto keep_old = [&](const std::string& prefix) {
    std::erase_if(applied, [&](const std::string& key) {
      const bool ours = key.starts_with(prefix);
      if (ours) not_applied.push_back(key);
      return ours;
    });
  };
  std::string tls_failed;
  if (reload_tls) {
    tls_failed = reload_tls(fresh.listen.tls);
    if (tls_failed.empty()) running.listen.tls = fresh.listen.tls;
    else keep_old("listen.tls.");
  }
  std::string cluster_tls_failed;
  if (reload_cluster_tls) {
    config next = running;  // the node id stays what it is until a restart
    next.cluster.tls = fresh.cluster.tls;
    cluster_tls_failed = reload_cluster_tls(next);
    if (cluster_tls_failed.empty()) running.cluster.tls = fresh.cluster.tls;
    else keep_old("cluster.tls.");
  }
  const auto outcome = [](bool on, const std::string& failed) { return !on ? "off" : failed.empty() ? "reloaded" : "failed"; };
  log::info("configuration reloaded", {{"applied", joined(applied)},
                                       {"not_applied", joined(not_applied)},
                                       {"secret_files_read", joined(secrets.reloaded)},
                                       {"tls", outcome(bool(reload_tls), tls_failed)},
                                       {"cluster_tls", outcome(bool(reload_cluster_tls), cluster_tls_failed)},
                                       {"needs_restart", joined(restart)}});
  if (!tls_failed.empty())
    log::error("reload: the TLS files could not be loaded; the previous certificate, key and CA stay in use",
               {{"error", tls_failed}});
  if (!cluster_tls_failed.empty())
    log::error("reload: the cluster's TLS files could not be loaded; new links use the previous ones",
               {{"error", cluster_tls_failed}});
  for (const auto& why : secrets.failed)
    log::error("reload: a secret file could not be read; the previous secret stays in use", {{"error", why}});
  if (!restart.empty())
    log::warn("changed keys take effect only after a restart", {{"keys", joined(restart)}});
}

}  // namespace weir
