/** Permission names a key can hold; `*` grants all of them. */
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
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const ALL_PERMISSIONS = '*';

export function parsePermissions(list: string): string[] {
  const names = list.split(',').map((p) => p.trim()).filter(Boolean);
  if (names.length === 0) throw new Error('--permissions needs at least one permission');
  for (const name of names) {
    if (name !== ALL_PERMISSIONS && !(PERMISSIONS as readonly string[]).includes(name)) {
      throw new Error(`unknown permission "${name}"; known: ${ALL_PERMISSIONS}, ${PERMISSIONS.join(', ')}`);
    }
  }
  return names.includes(ALL_PERMISSIONS) ? [ALL_PERMISSIONS] : [...new Set(names)];
}

export function grants(held: readonly string[], needed: Permission): boolean {
  return held.includes(ALL_PERMISSIONS) || held.includes(needed);
}
