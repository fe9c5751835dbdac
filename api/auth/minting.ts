import type { MintingCredential } from '../../db/minted-credentials.ts';
import type { Principal } from '../app-env.ts';
import { beyond, normalisePermissions } from '../../domain/access/permissions.ts';
import { DomainError, inField } from '../../domain/domain-error.ts';
import { beyondRole } from '../../domain/access/roles.ts';

/**
 * What a credential may hand on when it mints another (an API key, an OAuth client): nothing beyond
 * its user's role, no permission it does not hold itself, and no life longer than its own.
 */
export function mintedPermissions(principal: Principal, requested: readonly string[] | undefined, what = 'permissions'): string[] {
  const permissions = requested === undefined ? [...principal.permissions] : inField(what, () => normalisePermissions(requested, what.replace(/s$/, '')));
  const overRole = beyondRole(principal.role, permissions);
  if (overRole.length > 0) {
    throw new DomainError('forbidden', `A credential cannot grant more than its user's role: the ${principal.role} role does not grant ${overRole.join(', ')}`);
  }
  const extra = beyond(principal.permissions, permissions);
  if (extra.length > 0) {
    throw new DomainError('forbidden', `A credential cannot grant more than it holds: this one lacks ${extra.join(', ')} (it holds ${principal.permissions.join(', ')})`);
  }
  return permissions;
}

export function mintedExpiry(principal: Principal, requested: string | undefined): Date | null {
  // A signed-in session is no parent of what it mints (see mintingCredential), so its end bounds nothing:
  // a key made in the console outlives the sign-in, as one the operator makes with `fleet` does.
  const own = principal.credential.kind === 'session' ? null : principal.expiresAt;
  if (requested === undefined) return own;
  const at = new Date(requested);
  if (Number.isNaN(at.getTime())) throw new DomainError('invalid', 'expiresAt must be an ISO 8601 date-time');
  if (at.getTime() <= Date.now()) throw new DomainError('invalid', 'expiresAt must be in the future');
  if (own && at > own) {
    throw new DomainError('forbidden', `A credential cannot outlive the one that makes it: expiresAt must be at or before ${own.toISOString()}`);
  }
  return at;
}

/**
 * The credential a request mints with, recorded as the parent of what it mints: revoking it revokes
 * that too. A signed-in session is no parent: what a user mints in the console outlives the sign-in.
 */
export function mintingCredential(principal: Principal): MintingCredential | undefined {
  const { credential } = principal;
  if (credential.kind === 'session') return undefined;
  return credential.kind === 'api_key' ? { apiKeyId: credential.id } : { oauthClientId: credential.clientId };
}
