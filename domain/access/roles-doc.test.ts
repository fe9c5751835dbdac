import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROLES, roleGrants } from './roles.ts';

// docs/api/access.md spells out what each role grants: a role changed here without its row there fails.
describe('the roles table in docs/api/access.md', () => {
  const doc = readFileSync(resolve(import.meta.dirname, '../../docs/api/access.md'), 'utf8');
  it.each(ROLES)('lists every permission of %s, and no other', (role) => {
    const row = new RegExp(`^\\| \`${role}\` \\| (.+) \\|$`, 'm').exec(doc);
    expect(row, `no row for ${role}`).not.toBeNull();
    const listed = [...row![1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    expect(listed.sort()).toEqual([...roleGrants(role)].sort());
  });
});
