// The catalogs the console's HTML hands the Settings pages in attributes of its body
// (api/console/console-catalogs.ts): the API refuses what is not in them, so forms offer exactly these.

const data = document.body.dataset;
const list = (text) => (text ?? '').split(',').filter(Boolean);

/** Every permission a key or client can hold: `{ name, description, namedOnly }` (namedOnly: `*` does not cover it). */
export const PERMISSION_CATALOG = JSON.parse(data.permissions || '[]');

/** The event types a webhook can take. */
export const EVENT_TYPES = list(data.eventTypes);

/** Event types `*` does not take: a webhook receives them only when it names them. */
export const OPT_IN_EVENT_TYPES = new Set(list(data.optInEventTypes));

/** The event types a notification rule can take (no positions, no webhook kinds). */
export const NOTIFIABLE_EVENT_TYPES = list(data.notifiableEventTypes);
