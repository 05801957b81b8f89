// The page's service worker: shows hive's Web Push notices while no page
// is open (a new approval card). A push carries only which pane and what
// happened (`{kind, pane, tool?}`), as text; the card itself is fetched by
// the page over its own connection once opened.
'use strict';

function clip(text, n) {
  const s = String(text === undefined || text === null ? '' : text);
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

function describe(msg) {
  const pane = clip(msg.pane, 60);
  if (msg.kind === 'approval') {
    return { title: 'hive: ' + pane + ' waits for you', body: 'Approval needed: ' + clip(msg.tool, 80) };
  }
  return { title: 'hive: ' + pane, body: clip(msg.what || msg.kind, 120) };
}

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (ev) => ev.waitUntil(self.clients.claim()));

self.addEventListener('push', (ev) => {
  let msg = {};
  try { msg = ev.data ? ev.data.json() : {}; } catch (_) { msg = {}; }
  const shown = describe(msg);
  ev.waitUntil((async () => {
    // Open pages refresh what they show.
    const pages = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    for (const p of pages) p.postMessage({ push: msg });
    await self.registration.showNotification(shown.title, {
      body: shown.body,
      tag: 'hive-' + clip(msg.pane, 60),
      renotify: true,
      data: { pane: msg.pane },
    });
  })());
});

self.addEventListener('notificationclick', (ev) => {
  ev.notification.close();
  ev.waitUntil((async () => {
    const pages = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    if (pages.length) return pages[0].focus();
    return self.clients.openWindow('/');
  })());
});
