import { DomainError } from '../domain-error.ts';

/**
 * Every permission a key or an OAuth token can hold, in one list: `<resource>:read` to read a
 * resource, `<resource>:write` to change it, where an endpoint of that kind exists. Each endpoint
 * declares the one it needs (requirePermission), and a test walks every route of the app to prove
 * none is left without one.
 */
export const PERMISSION_CATALOG = {
  'devices:read': 'device status (GET /devices/status, /devices/{id}/status)',
  'vehicles:read': 'vehicles and their position history',
  'vehicles:write': 'register, change and delete vehicles',
  'drivers:read': 'drivers, their ratings and assignments',
  'drivers:write': 'register, change and delete drivers; assign them by hand',
  'maintenance:read': 'vehicles\' maintenance items, their services and the fleet\'s maintenance report',
  'maintenance:write': 'create, change and delete maintenance items; record services',
  'geofences:read': 'geofences',
  'geofences:write': 'create, change and delete geofences',
  'reports:read': 'the geofence and trips reports',
  'travels:read': 'travels and their live ETAs',
  'travels:write': 'create and cancel travels',
  'events:read': 'the event log and its live stream',
  'webhooks:read': 'webhooks and their delivery log',
  'webhooks:write': 'register, change, test and delete webhooks; retry deliveries',
  'notifications:read': 'the account\'s notification rules and their delivery log',
  'notifications:write': 'create, change and delete notification rules',
  'commands:read': 'remote commands and their state',
  'media:read': 'photos trackers sent: their list and their bytes',
  'commands:write': 'send and cancel remote commands (engine cut-off...); only when granted by name',
  'commands:custom': 'send raw `custom` command text, which no safety rule can read (with commands:write); only when granted by name',
  'keys:read': 'the user\'s API keys and OAuth clients (never their secrets)',
  'keys:write': 'create and revoke API keys and OAuth clients; only when granted by name',
  'audit:read': 'the audit log of access, webhook and command changes; only when granted by name',
  'users:read': 'the account\'s users, their roles and vehicle groups; only when granted by name',
  'users:write': 'invite, change and remove the account\'s users, their roles and vehicle groups; only when granted by name',
} as const;

export type Permission = keyof typeof PERMISSION_CATALOG;
export const PERMISSIONS = Object.keys(PERMISSION_CATALOG) as Permission[];

export const ALL_PERMISSIONS = '*';

/**
 * Permissions `*` does not include: sending commands can stop a vehicle, raw command text can do
 * anything the tracker accepts with no safety rule in the way, minting credentials hands access on,
 * the audit log tells who did what from where, and the users' list and roles decide who sees what; so a key or client holds them only when someone
 * names them (`--permissions '*,commands:write'`).
 */
export const NAMED_ONLY_PERMISSIONS: ReadonlySet<Permission> = new Set(['commands:write', 'commands:custom', 'keys:write', 'audit:read', 'users:read', 'users:write']);

/** A permission list that names an unknown permission, or none. */
export class PermissionListError extends DomainError {
  override name = 'PermissionListError';
  constructor(message: string) {
    super('invalid', message);
  }
}

/**
 * A list of permission names (`*` included) in one spelling: unknown names refused, duplicates
 * dropped, and what `*` already covers folded into it (the named-only ones stay beside it).
 */
export function normalisePermissions(names: readonly string[], what = 'permission'): string[] {
  const trimmed = names.map((p) => p.trim()).filter(Boolean);
  if (trimmed.length === 0) throw new PermissionListError(`at least one ${what} is needed`);
  for (const name of trimmed) {
    if (name !== ALL_PERMISSIONS && !(PERMISSIONS as readonly string[]).includes(name)) {
      throw new PermissionListError(`unknown ${what} "${name}"; known: ${ALL_PERMISSIONS}, ${PERMISSIONS.join(', ')}`);
    }
  }
  const unique = [...new Set(trimmed)];
  if (!unique.includes(ALL_PERMISSIONS)) return unique;
  return [ALL_PERMISSIONS, ...unique.filter((n) => NAMED_ONLY_PERMISSIONS.has(n as Permission))];
}

/** `--permissions a,b,c` as the CLI takes it. */
export function parsePermissions(list: string): string[] {
  try {
    return normalisePermissions(list.split(','));
  } catch (error) {
    if (error instanceof PermissionListError && /at least one/.test(error.message)) throw new Error('--permissions needs at least one permission');
    throw error;
  }
}

export function grants(held: readonly string[], needed: Permission): boolean {
  if (held.includes(needed)) return true;
  return held.includes(ALL_PERMISSIONS) && !NAMED_ONLY_PERMISSIONS.has(needed);
}

/** Whether holding `held` allows handing on everything in `requested` (a key minting a key, a token narrowing its client's scopes). */
export function covers(held: readonly string[], requested: readonly string[]): boolean {
  return requested.every((p) => (p === ALL_PERMISSIONS ? held.includes(ALL_PERMISSIONS) : grants(held, p as Permission)));
}

/** What `requested` asks for beyond `held`, for an error that names it. */
export function beyond(held: readonly string[], requested: readonly string[]): string[] {
  return requested.filter((p) => !covers(held, [p]));
}
