// The page: panes and their state, the approval queue across panes, the
// chosen pane's transcript kept live over one WebSocket (the hive's
// `watch` lines), and the composer. Reloads what it shows whenever the
// socket (re)opens, so a dropped connection loses nothing.
'use strict';

const S = {
  me: null,
  panes: [],
  current: null,
  items: new Map(), // item id -> item, of the current pane
  order: [],
  nodes: new Map(),
  retry: 500,
  refreshing: null,
  screenTimer: null,
};

// How often a terminal pane's text view is fetched again while shown (the
// live socket carries conversations, not terminal screens).
const SCREEN_EVERY = 1000;
const $ = (id) => document.getElementById(id);

function say(text) { $('status').textContent = text || ''; }

async function api(path, body) {
  const opts = { credentials: 'same-origin', headers: {} };
  if (body !== undefined) {
    opts.method = 'POST';
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(path, opts);
  if (res.status === 401) { unpaired(); throw new Error('not paired'); }
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = null; }
  if (!res.ok) {
    const why = data && data.error ? data.error.message : text;
    throw new Error(why || res.statusText);
  }
  return data;
}

function unpaired() {
  $('conn').textContent = 'not paired';
  $('conn').dataset.state = 'unpaired';
  say('This browser is not paired (or was revoked): run `hive web pair` and open its link.');
}

// ---- panes and approvals ----

function schedulePanes() {
  if (S.refreshing) return;
  S.refreshing = setTimeout(() => { S.refreshing = null; refreshPanes(); }, 150);
}

async function refreshPanes() {
  let data;
  try { data = await api('/api/panes'); } catch (e) { say(e.message); return; }
  const known = S.panes.length > 0;
  S.panes = data.panes || [];
  if (!S.current && S.panes.length) select(S.panes[0].id);
  else if (!known && S.current) showKind();
  drawPanes();
  drawCards();
  drawMeta();
}

function drawPanes() {
  const list = $('panes');
  list.replaceChildren(...S.panes.map((p) => paneNode(p, p.id === S.current)));
}

function drawCards() {
  const acts = !!(S.me && S.me.acts);
  const cards = [];
  for (const p of S.panes) {
    for (const a of p.approvals || []) cards.push(cardNode(p, a, acts));
  }
  $('cards').replaceChildren(...cards);
  $('no-approvals').hidden = cards.length > 0;
}

function drawMeta() {
  const p = S.panes.find((x) => x.id === S.current);
  if (!p) return;
  $('pane-title').textContent = p.name;
  const bits = [p.provider, p.model, p.state.replace('_', ' ')];
  if (p.queue && p.queue.length) bits.push(p.queue.length + ' queued');
  if (p.usage && p.usage.cost_usd !== null) bits.push('$' + Number(p.usage.cost_usd).toFixed(2));
  $('pane-meta').textContent = bits.filter(Boolean).join(' · ');
  $('interrupt').disabled = !p.can_interrupt || !S.me || !S.me.acts;
}

$('panes').addEventListener('click', (ev) => {
  const li = ev.target.closest('li[data-pane]');
  if (li) select(li.dataset.pane);
});

$('cards').addEventListener('click', async (ev) => {
  const b = ev.target.closest('button');
  const card = ev.target.closest('.card');
  if (!b || !card) return;
  const pane = encodeURIComponent(card.dataset.pane);
  const request_id = card.dataset.request;
  try {
    if (b.classList.contains('deny')) {
      const reason = card.querySelector('.reason').value.trim() || null;
      await api('/api/panes/' + pane + '/deny', { request_id, reason });
    } else {
      const always = b.classList.contains('always');
      const confirm = b.classList.contains('confirm');
      await api('/api/panes/' + pane + '/approve', { request_id, always, confirm });
    }
    card.remove();
    say('');
  } catch (e) { say(e.message); }
  schedulePanes();
});

// ---- the transcript ----

function select(id) {
  if (S.current === id) return;
  S.current = id;
  S.items = new Map();
  S.order = [];
  S.nodes = new Map();
  $('transcript').replaceChildren();
  $('screen').textContent = '';
  $('pane').hidden = false;
  drawPanes();
  drawMeta();
  showKind();
  loadTranscript();
}

// ---- a terminal pane: its screen as text ----

function isTerminal(id) {
  const p = S.panes.find((x) => x.id === id);
  return !!p && p.provider === 'pty';
}

// A terminal pane shows its screen, a conversation its transcript and the
// composer (for a device that may act).
function showKind() {
  const term = isTerminal(S.current);
  $('transcript').hidden = term;
  $('screen').hidden = !term;
  $('composer').hidden = term || !S.me || !S.me.acts;
  clearInterval(S.screenTimer);
  S.screenTimer = null;
  if (term) {
    loadScreen();
    S.screenTimer = setInterval(loadScreen, SCREEN_EVERY);
  }
}

async function loadScreen() {
  const pane = S.current;
  let scr;
  try { scr = await api('/api/panes/' + encodeURIComponent(pane) + '/screen'); }
  catch (e) { $('screen').textContent = e.message; return; }
  if (pane !== S.current) return;
  // The emulator's rows, as text only.
  $('screen').textContent = scr.lines.join('\n');
  $('screen').dataset.size = scr.cols + 'x' + scr.rows;
  $('screen').dataset.alternate = scr.alternate ? 'yes' : 'no';
}

// A `read` item: {item_id, kind: user|agent|thinking|tool, text, tool?}.
function fromRead(r) {
  return { id: r.item_id, kind: r.kind, text: r.text, tool: r.tool };
}

async function loadTranscript() {
  const pane = S.current;
  if (isTerminal(pane)) return;
  let items;
  try { items = await api('/api/panes/' + encodeURIComponent(pane) + '/transcript'); }
  catch (e) { say(e.message); return; }
  if (pane !== S.current) return;
  // What the socket brought meanwhile is newer: it stays.
  const read = items.map(fromRead).filter((it) => !S.items.has(it.id));
  const order = read.map((it) => it.id).concat(S.order.filter((id) => !read.some((r) => r.id === id)));
  for (const it of read) S.items.set(it.id, it);
  S.order = order;
  S.nodes = new Map();
  const box = $('transcript');
  box.replaceChildren(...order.map((id) => nodeOf(id)));
  if (!order.length) box.append(el('p', 'muted', 'Nothing yet.'));
  box.scrollTop = box.scrollHeight;
}

function nodeOf(id) {
  const n = itemNode(S.items.get(id));
  S.nodes.set(id, n);
  return n;
}

function put(item) {
  const had = S.items.has(item.id);
  S.items.set(item.id, item);
  const box = $('transcript');
  const old = S.nodes.get(item.id);
  const open = old && old.open;
  const n = nodeOf(item.id);
  if (open) n.open = true;
  if (had && old) {
    old.replaceWith(n);
  } else {
    S.order.push(item.id);
    const empty = box.querySelector('p.muted');
    if (empty) empty.remove();
    box.append(n);
  }
  box.scrollTop = box.scrollHeight;
}

// An upsert line's event as an item.
function fromUpsert(ev, prev) {
  const base = { id: ev.item_id, status: ev.status };
  if (ev.type === 'message') {
    const text = ev.delta !== undefined ? (prev ? prev.text : '') + ev.delta : ev.content;
    return Object.assign(base, { kind: ev.origin === 'user' ? 'user' : (ev.origin === 'system' ? 'system' : 'agent'), text });
  }
  if (ev.type === 'thinking') {
    const text = ev.delta !== undefined ? (prev ? prev.text : '') + ev.delta : ev.content;
    return Object.assign(base, { kind: 'thinking', text });
  }
  return Object.assign(base, {
    kind: 'tool', tool: ev.tool_name, args: ev.arguments, output: ev.output,
    error: !!ev.output_is_error,
  });
}

function onLine(line) {
  // It fell behind and missed lines: what is true now, whole.
  if (typeof line.lagged === 'number') {
    refreshPanes();
    if (S.current) loadTranscript();
    return;
  }
  if (line.approval) { schedulePanes(); return; }
  const ev = line.event;
  if (!ev) return;
  if (['message', 'thinking', 'tool_call'].includes(ev.type)) {
    if (line.pane !== S.current) return;
    put(fromUpsert(ev, S.items.get(ev.item_id)));
    return;
  }
  // A turn started or ended: state, queue, cost.
  schedulePanes();
}

// ---- the composer ----

async function send(steer) {
  const text = $('text').value;
  if (!text.trim() || !S.current) return;
  try {
    const r = await api('/api/panes/' + encodeURIComponent(S.current) + '/send', { text, steer });
    $('text').value = '';
    say(r && r.queued ? 'Queued behind the running turn.' : '');
  } catch (e) { say(e.message); }
  schedulePanes();
}

$('composer').addEventListener('submit', (ev) => { ev.preventDefault(); send(false); });
$('steer').addEventListener('click', () => send(true));
$('interrupt').addEventListener('click', async () => {
  try { await api('/api/panes/' + encodeURIComponent(S.current) + '/interrupt', {}); say(''); }
  catch (e) { say(e.message); }
});

// ---- the live socket ----

function connect() {
  const proto = location.protocol === 'https:' ? 'wss://' : 'ws://';
  const ws = new WebSocket(proto + location.host + '/api/live');
  ws.addEventListener('open', () => {
    S.retry = 500;
    $('conn').textContent = 'live';
    $('conn').dataset.state = 'live';
    refreshPanes();
    if (S.current) loadTranscript();
  });
  ws.addEventListener('message', (m) => {
    try { onLine(JSON.parse(m.data)); } catch (e) { say('bad line: ' + e.message); }
  });
  ws.addEventListener('close', async (ev) => {
    if (ev.code === 4001) {
      $('conn').textContent = 'revoked';
      $('conn').dataset.state = 'revoked';
      say('This device was revoked: pair it again with `hive web pair`.');
      return;
    }
    $('conn').textContent = 'reconnecting';
    $('conn').dataset.state = 'down';
    try { await api('/api/me'); } catch (_) { return; }
    setTimeout(connect, S.retry);
    S.retry = Math.min(S.retry * 2, 10000);
  });
}

// ---- notifications (Web Push, src/web/push.rs) ----

async function pushState() {
  const btn = $('notify');
  if (!('serviceWorker' in navigator) || !('PushManager' in window)) { btn.hidden = true; return; }
  try {
    const st = await api('/api/push');
    S.pushKey = st.key;
    btn.hidden = false;
    btn.dataset.on = st.subscribed ? 'on' : 'off';
    btn.textContent = st.subscribed ? 'Notifications on' : 'Notify me';
  } catch (_) { btn.hidden = true; }
}

// The VAPID key as `subscribe` takes it.
function keyBytes(b64) {
  const s = b64.replace(/-/g, '+').replace(/_/g, '/');
  const raw = atob(s + '='.repeat((4 - s.length % 4) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

async function subscribePush() {
  const reg = await navigator.serviceWorker.register('/sw.js');
  const perm = await Notification.requestPermission();
  if (perm !== 'granted') throw new Error('notifications are blocked for this page');
  await navigator.serviceWorker.ready;
  // One made for another key (the server's was made anew) would be refused.
  const old = await reg.pushManager.getSubscription();
  if (old) await old.unsubscribe();
  const sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(S.pushKey) });
  await api('/api/push', sub.toJSON());
}

async function unsubscribePush() {
  const reg = await navigator.serviceWorker.getRegistration('/');
  const sub = reg && await reg.pushManager.getSubscription();
  if (sub) await sub.unsubscribe();
  await api('/api/push/off', {});
}

$('notify').addEventListener('click', async () => {
  try {
    if ($('notify').dataset.on === 'on') await unsubscribePush(); else await subscribePush();
    say('');
  } catch (e) { say('Notifications: ' + e.message); }
  pushState();
});

if ('serviceWorker' in navigator) {
  // A push while the page is open: what it shows is fetched again.
  navigator.serviceWorker.addEventListener('message', (m) => {
    if (m.data && m.data.push) schedulePanes();
  });
}

async function start() {
  try { S.me = await api('/api/me'); } catch (_) { return; }
  $('me').textContent = S.me.id + (S.me.acts ? '' : ' (read-only)');
  if (!S.me.acts) $('composer').hidden = true;
  connect();
  pushState();
  setInterval(schedulePanes, 5000);
}

start();
