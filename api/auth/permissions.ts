/** Permission names a key can hold; `*` grants all of them but those that must be granted by name. */
export const PERMISSIONS = [
  'devices:read',
  'vehicles:read',
  'vehicles:write',
  'drivers:read',
  'drivers:write',
  'geofences:read',
  'geofences:write',
  'reports:read',
  'travels:read',
  'travels:write',
  'events:read',
  'webhooks:read',
  'webhooks:write',
  'commands:read',
  'commands:write',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const ALL_PERMISSIONS = '*';

/**
 * Permissions `*` does not include: sending commands can stop a vehicle, so a key gets it only when
 * someone names it (`--permissions '*,commands:write'`).
 */
export const NAMED_ONLY_PERMISSIONS: ReadonlySet<Permission> = new Set(['commands:write']);

export function parsePermissions(list: string): string[] {
  const names = list.split(',').map((p) => p.trim()).filter(Boolean);
  if (names.length === 0) throw new Error('--permissions needs at least one permission');
  for (const name of names) {
    if (name !== ALL_PERMISSIONS && !(PERMISSIONS as readonly string[]).includes(name)) {
      throw new Error(`unknown permission "${name}"; known: ${ALL_PERMISSIONS}, ${PERMISSIONS.join(', ')}`);
    }
  }
  if (!names.includes(ALL_PERMISSIONS)) return [...new Set(names)];
  // `*` covers the rest; what it leaves out stays only where it was named.
  return [ALL_PERMISSIONS, ...[...new Set(names)].filter((n) => NAMED_ONLY_PERMISSIONS.has(n as Permission))];
}

export function grants(held: readonly string[], needed: Permission): boolean {
  if (held.includes(needed)) return true;
  return held.includes(ALL_PERMISSIONS) && !NAMED_ONLY_PERMISSIONS.has(needed);
}
