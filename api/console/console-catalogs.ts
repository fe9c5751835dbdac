import { NAMED_ONLY_PERMISSIONS, PERMISSION_CATALOG } from '../../domain/access/permissions.ts';
import { EVENT_TYPES, OPT_IN_EVENT_TYPES } from '../../domain/events/event-catalog.ts';
import { ruleEventPatterns } from '../../domain/notifications/notification-rule.ts';

/** A value inside a double-quoted attribute. */
const attribute = (text: string) => text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** The kinds a notification rule may name: those the rules' own check takes (no positions, no webhook kinds). */
export const NOTIFIABLE_EVENT_TYPES = EVENT_TYPES.filter((type) => {
  try {
    ruleEventPatterns([type]);
    return true;
  } catch {
    return false;
  }
});

/**
 * The catalogs the Settings pages offer as checkboxes, as attributes of the page's body: every
 * permission with what it allows (the ones `*` does not cover marked), the event types a webhook
 * can take (`vehicle.position` only when named; `webhook.test` is sent by the test button, never
 * subscribed to), and those a notification rule can take. The API refuses what is not in them, so
 * the forms offer exactly these.
 */
export function catalogAttributes(): string {
  const permissions = Object.entries(PERMISSION_CATALOG).map(([name, description]) => ({
    name, description, namedOnly: NAMED_ONLY_PERMISSIONS.has(name as keyof typeof PERMISSION_CATALOG),
  }));
  const eventTypes = EVENT_TYPES.filter((type) => type !== 'webhook.test');
  return ` data-permissions="${attribute(JSON.stringify(permissions))}" data-event-types="${eventTypes.join(',')}" data-opt-in-event-types="${[...OPT_IN_EVENT_TYPES].join(',')}" data-notifiable-event-types="${NOTIFIABLE_EVENT_TYPES.join(',')}"`;
}
