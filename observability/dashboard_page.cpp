#include "observability/dashboard_page.hpp"

namespace weir {

std::string_view dashboard_page() {
  static constexpr std::string_view page = R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>weir</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
 body{font:14px system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
 header{display:flex;gap:16px;align-items:baseline;padding:12px 20px;background:#1d2330;color:#fff}
 header h1{font-size:18px;margin:0} header span{opacity:.75}
 #banner{display:none;padding:10px 20px;background:#c62828;color:#fff;font-weight:600}
 main{display:grid;grid-template-columns:repeat(auto-fill,minmax(380px,1fr));gap:14px;padding:14px 20px}
 .card{background:#fff;border-radius:8px;padding:12px 14px;box-shadow:0 1px 2px #0002}
 .card h2{font-size:13px;margin:0 0 6px;text-transform:uppercase;letter-spacing:.04em;color:#5a6172}
 .big{font-size:24px;font-weight:600} .sub{color:#5a6172;font-size:12px}
 canvas{width:100%;height:120px;display:block}
 .pill{display:inline-block;padding:2px 10px;border-radius:10px;font-weight:600}
 .ok{background:#e3f4e6;color:#1b6b2a}.warn{background:#fff3d6;color:#8a5a00}.bad{background:#fde3e3;color:#a11}
 table{border-collapse:collapse;width:100%} td,th{text-align:right;padding:3px 6px;border-bottom:1px solid #eee}
 th:first-child,td:first-child{text-align:left}
</style></head><body>
<header><h1>weir</h1><span id="version"></span><span id="uptime"></span><span id="ready"></span></header>
<div id="banner">The daemon is not answering — the numbers below are the last ones it sent.</div>
<main>
 <div class="card"><h2>Ingest (records/s)</h2><div class="big" id="ingest-rate">–</div>
  <div class="sub">acked <span id="acked-rate">–</span>/s · 60 s avg <span id="ingest-60">–</span>/s</div><canvas id="c-ingest"></canvas></div>
 <div class="card"><h2>Delivery (records/s)</h2><div class="big" id="delivered-rate">–</div>
  <div class="sub">sink <span id="sink-type"></span> <span id="sink-health" class="pill"></span> · drain <span id="sink-state" class="pill"></span></div>
  <div class="sub">oldest undelivered <b id="oldest-age">–</b> · last commit <b id="last-commit">–</b> ago</div>
  <canvas id="c-delivered"></canvas></div>
 <div class="card"><h2>Ack latency (ms, last 10 s)</h2><div class="big"><span id="ack-p50">–</span> <span class="sub">p50</span> · <span id="ack-p99">–</span> <span class="sub">p99</span></div><canvas id="c-latency"></canvas></div>
 <div class="card"><h2>Records per fsync</h2><div class="big" id="per-fsync">–</div><canvas id="c-fsync"></canvas></div>
 <div class="card"><h2>WAB bytes</h2><div class="big" id="wab-bytes">–</div><div class="sub">cap <span id="wab-cap"></span> · rejections <span id="wab-rejections"></span></div><canvas id="c-wab"></canvas></div>
 <div class="card"><h2>Drain lag (records)</h2><div class="big" id="lag">–</div><div class="sub" id="drain-error"></div><canvas id="c-lag"></canvas></div>
 <div class="card"><h2>Shards</h2><table id="shards"><tr><th>shard</th><th>appended</th><th>confirmed</th><th>lag</th><th>state</th></tr></table></div>
 <div class="card"><h2>Connections · dead letters · cluster</h2>
  <div>active connections <b id="conns">–</b> · accepted <b id="conns-total">–</b></div>
  <div>dead-letter bytes <b id="dl-bytes">–</b></div><div>cluster <b id="cluster">–</b></div></div>
</main>
<script>
const N = 120, series = {ingest: [], delivered: [], p50: [], p99: [], fsync: [], wab: [], lag: []};
function push(k, v) { const s = series[k]; s.push(v); if (s.length > N) s.shift(); }
function fmt(n) { if (n >= 1e9) return (n/1e9).toFixed(2)+' G'; if (n >= 1e6) return (n/1e6).toFixed(2)+' M';
  if (n >= 1e3) return (n/1e3).toFixed(1)+' k'; return (Math.round(n*10)/10).toString(); }
function draw(id, lines) {
  const c = document.getElementById(id), r = window.devicePixelRatio || 1;
  c.width = c.clientWidth * r; c.height = c.clientHeight * r;
  const g = c.getContext('2d'); g.scale(r, r); const w = c.clientWidth, h = c.clientHeight;
  let max = 1; for (const l of lines) for (const v of l.data) max = Math.max(max, v);
  g.strokeStyle = '#eee'; g.beginPath(); for (let i = 1; i < 4; i++) { g.moveTo(0, h*i/4); g.lineTo(w, h*i/4); } g.stroke();
  g.fillStyle = '#8a90a0'; g.font = '10px sans-serif'; g.fillText(fmt(max), 2, 10);
  for (const l of lines) { g.strokeStyle = l.color; g.lineWidth = 1.6; g.beginPath();
    l.data.forEach((v, i) => { const x = w - (l.data.length - 1 - i) * w / (N - 1), y = h - v / max * (h - 12);
      i ? g.lineTo(x, y) : g.moveTo(x, y); }); g.stroke(); }
}
function dur(sec) { sec = Math.round(sec); if (sec < 60) return sec + ' s';
  if (sec < 3600) return Math.floor(sec/60) + 'm ' + (sec%60) + 's'; return Math.floor(sec/3600) + 'h ' + Math.floor(sec%3600/60) + 'm'; }
function pill(id, text, cls) { const e = document.getElementById(id); e.textContent = text; e.className = 'pill ' + cls; }
function set(id, v) { document.getElementById(id).textContent = v; }
async function poll() {
  try {
    const r = await fetch('/api/v1/status', {cache: 'no-store'}); if (!r.ok) throw new Error(r.status);
    const s = await r.json(); document.getElementById('banner').style.display = 'none';
    set('version', 'v' + s.version); set('uptime', 'up ' + Math.round(s.uptime_s) + ' s');
    set('ready', s.ready ? 'ready' : 'NOT READY: ' + s.not_ready_reason);
    set('ingest-rate', fmt(s.rates.ingest['1s'])); set('acked-rate', fmt(s.rates.acked['1s']));
    set('ingest-60', fmt(s.rates.ingest['60s'])); set('delivered-rate', fmt(s.rates.delivered['1s']));
    set('ack-p50', fmt(s.ack_latency_ms['10s'].p50)); set('ack-p99', fmt(s.ack_latency_ms['10s'].p99));
    set('per-fsync', fmt(s.records_per_fsync['10s']));
    let lag = 0; const t = document.getElementById('shards'); while (t.rows.length > 1) t.deleteRow(1);
    for (const sh of s.shards) { lag += sh.lag_records; const row = t.insertRow();
      for (const v of [sh.shard, fmt(sh.appended), fmt(sh.confirmed), fmt(sh.lag_records), sh.offline ? 'OFFLINE' : 'ok'])
        row.insertCell().textContent = v; }
    set('lag', fmt(lag));
    if (s.wab) { set('wab-bytes', fmt(s.wab.bytes) + 'B'); set('wab-cap', fmt(s.wab.max_bytes) + 'B');
      set('wab-rejections', s.wab.cap_rejections); push('wab', s.wab.bytes); }
    if (s.sink) { set('sink-type', s.sink.type);
      pill('sink-health', s.sink.health, s.sink.health === 'healthy' ? 'ok' : s.sink.health === 'degraded' ? 'warn' : 'bad');
      set('last-commit', dur(s.sink.seconds_since_last_commit)); }
    if (s.drain) { pill('sink-state', s.drain.state, s.drain.state === 'retrying' || s.drain.state === 'dead_letter_full' ? 'bad' : 'ok');
      set('drain-error', s.drain.state === 'retrying' ? 'retrying in ' + s.drain.backoff_ms + ' ms: ' + s.drain.last_error : '');
      set('oldest-age', s.drain.oldest_undelivered_age_s > 0 ? dur(s.drain.oldest_undelivered_age_s) : 'none'); }
    if (s.connections) { set('conns', s.connections.active); set('conns-total', s.connections.accepted); }
    set('dl-bytes', fmt(s.dead_letter_bytes || 0) + 'B');
    set('cluster', s.cluster.enabled ? s.cluster.members.length + ' members' : 'single node');
    push('ingest', s.rates.ingest['1s']); push('delivered', s.rates.delivered['1s']);
    push('p50', s.ack_latency_ms['10s'].p50); push('p99', s.ack_latency_ms['10s'].p99);
    push('fsync', s.records_per_fsync['10s']); push('lag', lag);
    draw('c-ingest', [{data: series.ingest, color: '#1565c0'}]);
    draw('c-delivered', [{data: series.delivered, color: '#2e7d32'}]);
    draw('c-latency', [{data: series.p99, color: '#c62828'}, {data: series.p50, color: '#1565c0'}]);
    draw('c-fsync', [{data: series.fsync, color: '#6a1b9a'}]);
    draw('c-wab', [{data: series.wab, color: '#ef6c00'}]);
    draw('c-lag', [{data: series.lag, color: '#00838f'}]);
  } catch (e) { document.getElementById('banner').style.display = 'block'; }
}
poll(); setInterval(poll, 1000);
</script></body></html>
)HTML";
  return page;
}

}  // namespace weir
