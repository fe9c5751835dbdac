// Notifications in this browser: the service worker (/console/notification-worker.js) that shows the
// pushes, and the browser's push subscription made with the server's VAPID public key and handed to
// the API. A browser without service workers or PushManager, an insecure page, or a server without a
// VAPID key: no button, and a sentence saying why.

const WORKER = '/console/notification-worker.js';
const SCOPE = '/console';
/** The id the API gave this browser's subscription, to mark it in the list. */
const KEPT_ID = 'fleetcore.pushSubscriptionId';

/** Why this browser cannot be subscribed here, or undefined when it can. */
export function pushUnavailable(channels) {
  if (!channels.available?.push || !channels.vapidPublicKey) {
    return 'Browser notifications are not configured on this server (it has no VAPID key), so there is nothing to subscribe to.';
  }
  if (!window.isSecureContext) return 'Browsers allow notifications only on pages served over HTTPS (or from this computer itself); this page is not.';
  if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window)) {
    return 'This browser does not support web push notifications (no service workers or PushManager).';
  }
  if (Notification.permission === 'denied') return 'Notifications from this site are blocked in this browser\'s settings; allow them there first.';
  return undefined;
}

/** The VAPID key (base64url, as the API gives it) as the bytes PushManager.subscribe takes. */
export function keyBytes(base64url) {
  const base64 = base64url.replaceAll('-', '+').replaceAll('_', '/').padEnd(Math.ceil(base64url.length / 4) * 4, '=');
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

function sameBytes(buffer, bytes) {
  if (!buffer) return false;
  const other = new Uint8Array(buffer);
  return other.length === bytes.length && other.every((b, i) => b === bytes[i]);
}

/** Registers the worker and waits until it is active (the page itself need not be controlled by it). */
async function activeRegistration() {
  const registration = await navigator.serviceWorker.register(WORKER, { scope: SCOPE, type: 'classic' });
  const worker = registration.installing ?? registration.waiting;
  if (worker && !registration.active) {
    await new Promise((resolve, reject) => {
      worker.addEventListener('statechange', () => {
        if (worker.state === 'activated') resolve();
        if (worker.state === 'redundant') reject(new Error('The notification worker could not be installed'));
      });
    });
  }
  return registration;
}

/**
 * Asks the reader's permission, subscribes this browser with the server's key and registers the
 * subscription with the API; the API's answer `{ id }`.
 */
export async function subscribeThisBrowser(api, vapidPublicKey) {
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') throw new Error('Notifications were not allowed in this browser, so none can be shown.');
  const registration = await activeRegistration();
  const key = keyBytes(vapidPublicKey);
  let subscription = await registration.pushManager.getSubscription();
  // One made with another key (the server's was changed) cannot carry this server's pushes: start again.
  if (subscription && !sameBytes(subscription.options?.applicationServerKey, key)) {
    await subscription.unsubscribe();
    subscription = null;
  }
  // The same endpoint handed over again is the same browser to the API (it keeps one row).
  subscription ??= await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  const { data } = await api.post('/users/me/push-subscriptions', subscription.toJSON());
  localStorage.setItem(KEPT_ID, String(data.id));
  return data;
}

/** Whether the API's subscription `id` is this browser's. */
export const isThisBrowser = (id) => localStorage.getItem(KEPT_ID) === String(id);

/** Forgets this browser's subscription (after the API deleted it), so the browser gets no more. */
export async function unsubscribeThisBrowser() {
  localStorage.removeItem(KEPT_ID);
  const registration = await navigator.serviceWorker?.getRegistration(SCOPE);
  await (await registration?.pushManager.getSubscription())?.unsubscribe();
}
