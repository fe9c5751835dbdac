import { DomainError } from '../domain-error.ts';
import { ALL_PERMISSIONS, beyond, covers, grants, PERMISSIONS, type Permission } from './permissions.ts';

/**
 * A user's role: what the user may do, as a list of the permission catalog's names, so a role is
 * checked by the same rule as a key (`grants`, `covers`). A key or OAuth token a user mints never
 * holds more than its user's role; a cookie session holds exactly the role.
 *
 * - `owner`: everything, the named-only permissions included; only an owner makes or unmakes owners.
 * - `admin`: the same permissions as an owner, but cannot make, change or remove an owner.
 * - `dispatcher`: reads the fleet, runs travels, geofences and commands (not raw `custom` text),
 *   records maintenance, sets notification rules; no webhooks, users or audit log.
 * - `viewer`: reads the fleet; changes nothing but their own credentials.
 * Every role keeps `keys:read` / `keys:write` over the user's own keys and clients: minting is bounded
 * by the role, so a viewer can only mint read-only keys.
 */
export const ROLES = ['owner', 'admin', 'dispatcher', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

const NAMED_ONLY_OF_ADMINS: Permission[] = ['commands:write', 'commands:custom', 'keys:write', 'audit:read', 'users:read', 'users:write'];

const FLEET_READS: Permission[] = [
  'devices:read', 'vehicles:read', 'drivers:read', 'geofences:read', 'reports:read', 'travels:read', 'events:read',
  'commands:read', 'maintenance:read', 'media:read', 'keys:read', 'notifications:read',
];

export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly string[]>> = {
  owner: [ALL_PERMISSIONS, ...NAMED_ONLY_OF_ADMINS],
  admin: [ALL_PERMISSIONS, ...NAMED_ONLY_OF_ADMINS],
  dispatcher: [...FLEET_READS, 'geofences:write', 'travels:write', 'commands:write', 'maintenance:write', 'notifications:write', 'keys:write'],
  viewer: [...FLEET_READS, 'keys:write'],
};

export function isRole(name: string): name is Role {
  return (ROLES as readonly string[]).includes(name);
}

/** What holding a role allows, in the catalog's names. */
export function rolePermissions(role: Role): readonly string[] {
  return ROLE_PERMISSIONS[role];
}

/** Whether a user of this role may hold (or mint a credential holding) every permission listed. */
export function roleCovers(role: Role, requested: readonly string[]): boolean {
  return covers(ROLE_PERMISSIONS[role], requested);
}

/** What in `requested` a user of this role may not hold, for an error that names it. */
export function beyondRole(role: Role, requested: readonly string[]): string[] {
  return beyond(ROLE_PERMISSIONS[role], requested);
}

/**
 * What a credential holding `own` may do while its user holds `role`: all of `own` when the role
 * covers it, else the permissions both grant, spelled out (a viewer's `*` key reads, and writes nothing).
 * Read with the credential on each authentication, so a lowered role holds at once on existing keys.
 */
export function effectivePermissions(own: readonly string[], role: Role): string[] {
  if (roleCovers(role, own)) return [...own];
  return PERMISSIONS.filter((p) => grants(own, p) && grants(ROLE_PERMISSIONS[role], p));
}

/** Every permission a role grants, spelled out (no `*`): for documentation and the users API. */
export function roleGrants(role: Role): Permission[] {
  return PERMISSIONS.filter((p) => covers(ROLE_PERMISSIONS[role], [p]));
}

export class RoleChangeError extends DomainError {
  override name = 'RoleChangeError';
  constructor(message: string) {
    super('forbidden', message);
  }
}

/** How roles rank: a user may give or take only roles at or below their own, and only an owner touches owners. */
const RANK: Record<Role, number> = { owner: 3, admin: 2, dispatcher: 1, viewer: 0 };

/**
 * Whether `actor` may set `target` (currently `from`, or a new user when undefined) to role `to`:
 * nobody raises their own role, only an owner makes, changes or removes an owner, and nobody gives a
 * role above their own. Throws RoleChangeError saying why not.
 */
export function checkRoleChange(actor: { id: number; role: Role }, target: { id: number; role: Role } | undefined, to: Role | undefined): void {
  if (target && target.id === actor.id && to !== undefined && RANK[to] > RANK[target.role]) {
    throw new RoleChangeError('a user cannot raise their own role');
  }
  if ((target?.role === 'owner' || to === 'owner') && actor.role !== 'owner') {
    throw new RoleChangeError('only an owner can make, change or remove an owner');
  }
  if (to !== undefined && RANK[to] > RANK[actor.role]) {
    throw new RoleChangeError(`a ${actor.role} cannot give the ${to} role`);
  }
}
