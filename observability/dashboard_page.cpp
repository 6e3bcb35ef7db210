#include "observability/dashboard_page.hpp"

namespace weir {

// One self-contained page (no external assets): it loads the last 15
// minutes from /api/v1/history, so a reload keeps its charts, then polls
// /api/v1/status once a second.
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
 .card.alert{box-shadow:0 0 0 2px #c62828}
 .card h2{font-size:13px;margin:0 0 6px;text-transform:uppercase;letter-spacing:.04em;color:#5a6172}
 .big{font-size:24px;font-weight:600} .sub{color:#5a6172;font-size:12px}
 canvas{width:100%;height:130px;display:block}
 .pill{display:inline-block;padding:2px 10px;border-radius:10px;font-weight:600}
 .ok{background:#e3f4e6;color:#1b6b2a}.warn{background:#fff3d6;color:#8a5a00}.bad{background:#fde3e3;color:#a11}
 table{border-collapse:collapse;width:100%} td,th{text-align:right;padding:3px 6px;border-bottom:1px solid #eee}
 th:first-child,td:first-child{text-align:left}
</style></head><body>
<header><h1>weir</h1><span id="version"></span><span id="uptime"></span><span id="ready"></span>
 <span>history <b id="history">–</b></span></header>
<div id="banner">The daemon is not answering — the numbers below are the last ones it sent.</div>
<main>
 <div class="card"><h2>Ingest (records/s)</h2><div class="big" id="ingest-rate">–</div>
  <div class="sub">acked <span id="acked-rate">–</span>/s · 60 s avg <span id="ingest-60">–</span>/s</div><canvas id="c-ingest"></canvas></div>
 <div class="card" id="card-delivery"><h2>Delivery (records/s)</h2><div class="big" id="delivered-rate">–</div>
  <div class="sub">sink <span id="sink-type"></span> <span id="sink-health" class="pill"></span> · drain <span id="sink-state" class="pill"></span></div>
  <div class="sub">oldest undelivered <b id="oldest-age">–</b> · last commit <b id="last-commit">–</b></div>
  <div class="sub" id="drain-error"></div>
  <canvas id="c-delivered"></canvas></div>
 <div class="card"><h2>Ack latency (ms, last 10 s)</h2><div class="big"><span id="ack-p50">–</span> <span class="sub">ms p50</span> · <span id="ack-p99">–</span> <span class="sub">ms p99</span></div><canvas id="c-latency"></canvas></div>
 <div class="card"><h2>Records per fsync</h2><div class="big" id="per-fsync">–</div><canvas id="c-fsync"></canvas></div>
 <div class="card"><h2>WAB (bytes)</h2><div class="big" id="wab-bytes">–</div><div class="sub">cap <span id="wab-cap"></span> · refused at the cap <span id="wab-rejections"></span></div><canvas id="c-wab"></canvas></div>
 <div class="card"><h2>Undelivered (records)</h2><div class="big" id="lag">–</div><div class="sub">the oldest waiting for <b id="lag-oldest">–</b></div><canvas id="c-lag"></canvas></div>
 <div class="card" id="card-sinks"><h2>Sinks</h2><table id="sinks"><tr><th>sink</th><th>type</th><th>health</th><th>drain</th><th>waiting</th><th>oldest waiting</th><th>last commit</th><th>dead letters</th></tr></table></div>
 <div class="card"><h2>Shards</h2><table id="shards"><tr><th>shard</th><th>appended</th><th>confirmed</th><th>lag</th><th>oldest waiting</th><th>state</th></tr></table></div>
 <div class="card" id="card-misc"><h2>Connections · dead letters · cluster</h2>
  <div>active connections <b id="conns">–</b> · accepted <b id="conns-total">–</b></div>
  <div>dead letters <b id="dl-bytes">–</b> <span id="dl-note" class="sub"></span></div><div>cluster <b id="cluster">–</b></div></div>
</main>
<script>
const SPAN = 900;  // seconds of history kept and drawn
const keys = ['ingest', 'acked', 'delivered', 'p50', 'p99', 'fsync', 'wab', 'lag', 'oldest'];
const hist = {t: []}; for (const k of keys) hist[k] = [];
function push(t, values) { hist.t.push(t); for (const k of keys) hist[k].push(values[k] || 0);
  while (hist.t.length && hist.t[0] < t - SPAN) { hist.t.shift(); for (const k of keys) hist[k].shift(); } }
function fmt(n) { if (n >= 1e9) return (n/1e9).toFixed(2)+' G'; if (n >= 1e6) return (n/1e6).toFixed(2)+' M';
  if (n >= 1e3) return (n/1e3).toFixed(1)+' k'; return (Math.round(n*100)/100).toString(); }
function bytes(n) { const u = ['B','KiB','MiB','GiB','TiB']; let i = 0; while (n >= 1024 && i < 4) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : Math.round(n)) + ' ' + u[i]; }
function dur(sec) { if (sec < 10) return sec.toFixed(1) + ' s'; sec = Math.round(sec); if (sec < 60) return sec + ' s';
  if (sec < 3600) return Math.floor(sec/60) + 'm ' + (sec%60) + 's'; return Math.floor(sec/3600) + 'h ' + Math.floor(sec%3600/60) + 'm'; }
// A time chart: x is seconds before now (axis labelled), y from 0 to the
// largest value shown (labelled in `unit`), one line per series with a legend.
function draw(id, lines, unit) {
  const c = document.getElementById(id), r = window.devicePixelRatio || 1;
  c.width = c.clientWidth * r; c.height = c.clientHeight * r;
  const g = c.getContext('2d'); g.scale(r, r);
  const w = c.clientWidth, h = c.clientHeight, top = 14, bottom = h - 14;
  const now = hist.t.length ? hist.t[hist.t.length - 1] : 0;
  const span = Math.max(60, Math.min(SPAN, hist.t.length ? now - hist.t[0] : 60));
  let max = 0; for (const l of lines) for (const v of l.data) max = Math.max(max, v); if (max <= 0) max = 1;
  g.strokeStyle = '#eee'; g.beginPath(); for (let i = 0; i <= 4; i++) { const y = top + (bottom - top) * i / 4; g.moveTo(0, y); g.lineTo(w, y); } g.stroke();
  g.fillStyle = '#8a90a0'; g.font = '10px sans-serif';
  g.fillText(unit === 'bytes' ? bytes(max) : fmt(max) + (unit ? ' ' + unit : ''), 2, 10);
  const step = span > 300 ? 300 : 60;  // a tick every 5 or 1 minute(s)
  for (let s = 0; s <= span; s += step) { const x = w - s / span * w;
    g.fillText(s === 0 ? 'now' : '-' + (s / 60) + 'm', Math.min(Math.max(x - 10, 0), w - 24), h - 2); }
  let lx = w;
  for (const l of lines.slice().reverse()) { lx -= g.measureText(l.name).width + 18;
    g.fillStyle = l.color; g.fillRect(lx, 3, 10, 6); g.fillStyle = '#5a6172'; g.fillText(l.name, lx + 13, 10); }
  for (const l of lines) { g.strokeStyle = l.color; g.lineWidth = 1.6; g.beginPath();
    l.data.forEach((v, i) => { const x = w - (now - hist.t[i]) / span * w, y = bottom - v / max * (bottom - top);
      i ? g.lineTo(x, y) : g.moveTo(x, y); }); g.stroke(); }
}
function redraw() {
  set('history', hist.t.length > 1 ? dur(hist.t[hist.t.length - 1] - hist.t[0]) : '–');
  draw('c-ingest', [{name: 'ingest', data: hist.ingest, color: '#1565c0'}, {name: 'acked', data: hist.acked, color: '#2e7d32'}], '/s');
  draw('c-delivered', [{name: 'delivered', data: hist.delivered, color: '#2e7d32'}], '/s');
  draw('c-latency', [{name: 'p50', data: hist.p50, color: '#1565c0'}, {name: 'p99', data: hist.p99, color: '#c62828'}], 'ms');
  draw('c-fsync', [{name: 'records per fsync', data: hist.fsync, color: '#6a1b9a'}], '');
  draw('c-wab', [{name: 'WAB', data: hist.wab, color: '#ef6c00'}], 'bytes');
  draw('c-lag', [{name: 'undelivered records', data: hist.lag, color: '#00838f'}], '');
}
function pill(id, text, cls) { const e = document.getElementById(id); e.textContent = text; e.className = 'pill ' + cls; }
function set(id, v) { document.getElementById(id).textContent = v; }
async function loadHistory() {
  try {
    const r = await fetch('/api/v1/history', {cache: 'no-store'}); if (!r.ok) return;
    const h = await r.json();
    for (let i = 0; i < h.t.length; i++)
      push(h.t[i], {ingest: h.ingest[i], acked: h.acked[i], delivered: h.delivered[i], p50: h.p50_ms[i], p99: h.p99_ms[i],
                    fsync: h.per_fsync[i], wab: h.wab_bytes[i], lag: h.lag[i], oldest: h.oldest_age_s[i]});
    redraw();
  } catch (e) {}
}
async function poll() {
  try {
    const r = await fetch('/api/v1/status', {cache: 'no-store'}); if (!r.ok) throw new Error(r.status);
    const s = await r.json(); document.getElementById('banner').style.display = 'none';
    set('version', 'v' + s.version); set('uptime', 'up ' + dur(s.uptime_s));
    set('ready', s.ready ? 'ready' : 'NOT READY: ' + s.not_ready_reason);
    set('ingest-rate', fmt(s.rates.ingest['1s'])); set('acked-rate', fmt(s.rates.acked['1s']));
    set('ingest-60', fmt(s.rates.ingest['60s'])); set('delivered-rate', fmt(s.rates.delivered['1s']));
    set('ack-p50', s.ack_latency_ms['10s'].p50.toFixed(2)); set('ack-p99', s.ack_latency_ms['10s'].p99.toFixed(2));
    set('per-fsync', fmt(s.records_per_fsync['10s']));
    let lag = 0; const t = document.getElementById('shards'); while (t.rows.length > 1) t.deleteRow(1);
    for (const sh of s.shards) { lag += sh.lag_records; const row = t.insertRow();
      for (const v of [sh.shard, fmt(sh.appended), fmt(sh.confirmed), fmt(sh.lag_records),
                       sh.oldest_undelivered_age_s > 0 ? dur(sh.oldest_undelivered_age_s) : '–', sh.offline ? 'OFFLINE' : 'ok'])
        row.insertCell().textContent = v; }
    set('lag', fmt(lag));
    if (s.wab) { set('wab-bytes', bytes(s.wab.bytes)); set('wab-cap', bytes(s.wab.max_bytes)); set('wab-rejections', fmt(s.wab.cap_rejections)); }
    // Each sink on its own row; the delivery card speaks of the one in the worst state.
    const sinks = s.sinks || [], st = document.getElementById('sinks'); while (st.rows.length > 1) st.deleteRow(1);
    const rank = k => (k.health === 'down' ? 3 : k.state === 'dead_letter_full' ? 3 : k.health === 'degraded' ? 2 : k.state === 'retrying' ? 1 : 0);
    let worst = null, sinkAlarm = false;
    for (const k of sinks) { if (!worst || rank(k) > rank(worst)) worst = k; sinkAlarm = sinkAlarm || rank(k) >= 2;
      const row = st.insertRow(); row.className = rank(k) >= 2 ? 'bad' : rank(k) === 1 ? 'warn' : '';
      for (const v of [k.name, k.type, k.health, k.state, fmt(k.lag_records), k.oldest_undelivered_age_s > 0 ? dur(k.oldest_undelivered_age_s) : '–',
                       k.committed_yet ? dur(k.seconds_since_last_commit) + ' ago' : 'none yet', k.dead_letter_bytes > 0 ? bytes(k.dead_letter_bytes) : 'none'])
        row.insertCell().textContent = v; }
    document.getElementById('card-sinks').className = 'card' + (sinkAlarm ? ' alert' : '');
    let alarm = false;
    if (worst) { set('sink-type', sinks.length > 1 ? sinks.length + ' sinks, worst ' + worst.name + ' (' + worst.type + ')' : worst.type);
      pill('sink-health', worst.health, worst.health === 'healthy' ? 'ok' : worst.health === 'degraded' ? 'warn' : 'bad');
      alarm = worst.health === 'down' || worst.state === 'dead_letter_full'; set('last-commit', worst.committed_yet ? dur(worst.seconds_since_last_commit) + ' ago' : 'none yet');
      pill('sink-state', worst.state, worst.state === 'retrying' || worst.state === 'dead_letter_full' ? 'bad' : 'ok');
      set('drain-error', worst.last_error ? 'last error: ' + worst.last_error + (worst.state === 'retrying' ? ' (retry in ' + worst.backoff_ms + ' ms)' : '') : ''); }
    const oldestAge = sinks.reduce((m, k) => Math.max(m, k.oldest_undelivered_age_s || 0), 0);
    const oldest = oldestAge > 0 ? dur(oldestAge) : 'none';
    set('oldest-age', oldest); set('lag-oldest', oldest);
    document.getElementById('card-delivery').className = 'card' + (alarm ? ' alert' : '');
    if (s.connections) { set('conns', s.connections.active); set('conns-total', s.connections.accepted); }
    const dl = sinks.reduce((n, k) => n + (k.dead_letter_bytes || 0), 0);
    set('dl-bytes', dl > 0 ? bytes(dl) : 'none'); set('dl-note', dl > 0 ? 'weir-ctl dl list shows them' : '');
    document.getElementById('card-misc').className = 'card' + (dl > 0 ? ' alert' : '');
    if (s.cluster.enabled) {
      // Each peer and its state; one in failover is marked: this node delivers its records.
      const peers = s.cluster.members.map(m => 'node ' + m.node + ' ' + m.state + (m.failover ? ' (FAILOVER: delivering its records here)' : ''));
      set('cluster', 'node ' + s.cluster.node + '; ' + (peers.length ? peers.join(', ') : 'no peers'));
      if (s.cluster.members.some(m => m.failover)) document.getElementById('card-misc').className = 'card alert';
    } else {
      set('cluster', 'single node');
    }
    push(Math.round(s.time_unix_s), {ingest: s.rates.ingest['1s'], acked: s.rates.acked['1s'], delivered: s.rates.delivered['1s'],
      p50: s.ack_latency_ms['1s'].p50, p99: s.ack_latency_ms['1s'].p99, fsync: s.records_per_fsync['1s'],
      wab: s.wab ? s.wab.bytes : 0, lag: lag, oldest: oldestAge});
    redraw();
  } catch (e) { document.getElementById('banner').style.display = 'block'; }
}
loadHistory().then(() => { poll(); setInterval(poll, 1000); });
</script></body></html>
)HTML";
  return page;
}

}  // namespace weir
