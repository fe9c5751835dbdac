// The console's service worker: shows the notifications this server pushes to a subscribed browser
// (payload `{ title, body, url }`, as the web-push channel sends it) and opens `url` when one is
// clicked. It caches nothing and handles no request: the console works the same without it.

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

/** The push's payload; a push without one (or not JSON) still says something. */
function payloadOf(event) {
  try {
    const data = event.data?.json();
    if (data && typeof data === 'object') return data;
  } catch {
    // Not JSON: the text itself is the message.
    const text = event.data?.text();
    if (text) return { title: 'fleetcore', body: text };
  }
  return { title: 'fleetcore', body: '' };
}

/** Only web addresses are opened: a payload cannot make the browser open another scheme. */
function safeUrl(url) {
  try {
    const parsed = new URL(url, self.location.origin);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

self.addEventListener('push', (event) => {
  const { title, body, url } = payloadOf(event);
  event.waitUntil(self.registration.showNotification(String(title || 'fleetcore'), {
    body: String(body ?? ''),
    icon: '/map/static/icon.svg',
    data: { url: safeUrl(url) ?? safeUrl('/console') },
  }));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const url = event.notification.data?.url;
  if (!url) return;
  event.waitUntil((async () => {
    const open = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    const same = open.find((client) => client.url === url);
    if (same) return same.focus();
    return self.clients.openWindow(url);
  })());
});
