import { describe, expect, it } from 'vitest';
import { grants, NAMED_ONLY_PERMISSIONS, PERMISSIONS } from './permissions.ts';
import { beyondRole, checkRoleChange, effectivePermissions, RoleChangeError, roleCovers, roleGrants, ROLE_PERMISSIONS } from './roles.ts';

describe('roles', () => {
  it('give owners and admins every permission, the named-only ones included', () => {
    expect(roleGrants('owner')).toEqual(PERMISSIONS);
    expect(roleGrants('admin')).toEqual(PERMISSIONS);
  });

  it('let a dispatcher read the fleet and run travels, geofences and commands, but not raw command text, webhooks, users or the audit log', () => {
    const held = ROLE_PERMISSIONS.dispatcher;
    for (const p of ['vehicles:read', 'devices:read', 'travels:write', 'geofences:write', 'commands:write'] as const) expect(grants(held, p)).toBe(true);
    for (const p of ['commands:custom', 'webhooks:write', 'webhooks:read', 'users:read', 'users:write', 'audit:read', 'vehicles:write'] as const) expect(grants(held, p)).toBe(false);
  });

  it('let a viewer write nothing but their own keys', () => {
    expect(roleGrants('viewer').filter((p) => p.endsWith(':write'))).toEqual(['keys:write']);
    expect(roleGrants('viewer').filter((p) => NAMED_ONLY_PERMISSIONS.has(p))).toEqual(['keys:write']);
  });

  it('bound what a user mints: a viewer mints read keys only, a dispatcher no custom commands', () => {
    expect(roleCovers('viewer', ['vehicles:read', 'events:read'])).toBe(true);
    expect(roleCovers('viewer', ['*'])).toBe(false);
    expect(roleCovers('viewer', ['geofences:write'])).toBe(false);
    expect(roleCovers('dispatcher', ['commands:write'])).toBe(true);
    expect(roleCovers('dispatcher', ['commands:custom'])).toBe(false);
    expect(roleCovers('admin', ['*', 'users:write'])).toBe(true);
  });

  it('refuse raising one\'s own role, touching owners unless an owner, and giving a role above one\'s own', () => {
    const admin = { id: 2, role: 'admin' as const };
    const owner = { id: 1, role: 'owner' as const };
    expect(() => checkRoleChange({ id: 5, role: 'viewer' }, { id: 5, role: 'viewer' }, 'admin')).toThrow(/cannot raise their own role/);
    expect(() => checkRoleChange(admin, { id: 1, role: 'owner' }, 'viewer')).toThrow(RoleChangeError);
    expect(() => checkRoleChange(admin, { id: 1, role: 'owner' }, undefined)).toThrow(/only an owner/);
    expect(() => checkRoleChange(admin, undefined, 'owner')).toThrow(/only an owner/);
    expect(() => checkRoleChange({ id: 3, role: 'dispatcher' }, undefined, 'admin')).toThrow(/cannot give the admin role/);
    expect(() => checkRoleChange(admin, { id: 7, role: 'viewer' }, 'admin')).not.toThrow();
    expect(() => checkRoleChange(owner, { id: 2, role: 'admin' }, 'owner')).not.toThrow();
    expect(() => checkRoleChange(owner, { id: 1, role: 'owner' }, 'viewer')).not.toThrow(); // lowering oneself: the last-owner rule is the store's
  });

  it('limit a credential to its user\'s role: a * key of a viewer reads only, an owner\'s keeps its own list', () => {
    expect(effectivePermissions(['*', 'commands:write'], 'owner')).toEqual(['*', 'commands:write']);
    expect(effectivePermissions(['vehicles:read'], 'viewer')).toEqual(['vehicles:read']);
    const viewerStar = effectivePermissions(['*', 'keys:write'], 'viewer');
    expect(viewerStar).not.toContain('*');
    expect(viewerStar).toContain('vehicles:read');
    expect(viewerStar).toContain('keys:write');
    expect(viewerStar).not.toContain('vehicles:write');
    expect(effectivePermissions(['*'], 'dispatcher')).toEqual(expect.arrayContaining(['geofences:write', 'travels:write']));
    expect(effectivePermissions(['*'], 'dispatcher')).not.toContain('commands:write'); // named-only: * never held it
    expect(effectivePermissions(['webhooks:write'], 'dispatcher')).toEqual([]);
  });

  it('name what a request asks beyond a role', () => {
    expect(beyondRole('viewer', ['vehicles:read', 'vehicles:write', '*'])).toEqual(['vehicles:write', '*']);
    expect(beyondRole('admin', ['*', 'users:write'])).toEqual([]);
  });
});
