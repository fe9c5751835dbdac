import { z } from '@hono/zod-openapi';
import type { CredentialRecord } from '../../db/credentials.ts';

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

const MintedBySchema = z
  .object({ kind: z.enum(['api_key', 'oauth_client']), id: z.number().int() })
  .nullable()
  .openapi('MintedBy', {
    description: 'The credential that minted it through the API (an API key, or an OAuth client through its token); revoking that one revokes this one. null: made by the operator with `fleet`',
  });

function mintedBy(r: { parent_api_key_id: number | null; parent_oauth_client_id: number | null }): z.infer<typeof MintedBySchema> {
  if (r.parent_api_key_id !== null) return { kind: 'api_key', id: r.parent_api_key_id };
  if (r.parent_oauth_client_id !== null) return { kind: 'oauth_client', id: r.parent_oauth_client_id };
  return null;
}
const time = (description: string) => z.string().nullable().openapi({ format: 'date-time', description });

/** What every credential shows of its life, after the fields of its kind. */
const lifeFields = () => ({
  createdAt: z.string().openapi({ format: 'date-time' }),
  expiresAt: time('null: it does not expire'),
  lastUsedAt: time('To the minute'),
  revokedAt: time('null while it works'),
  mintedBy: MintedBySchema,
});

const lifeView = (r: CredentialRecord) => ({
  createdAt: r.created_at.toISOString(), expiresAt: iso(r.expires_at), lastUsedAt: iso(r.last_used_at), revokedAt: iso(r.revoked_at), mintedBy: mintedBy(r),
});

export const ApiKeySchema = z
  .object({
    id: z.number().int(),
    name: z.string().nullable(),
    prefix: z.string().openapi({ description: 'The first characters of the key, kept in clear to tell keys apart', example: 'fc_live_AbC123' }),
    mode: z.enum(['live', 'test']),
    permissions: z.array(z.string()).openapi({ example: ['*'] }),
    ...lifeFields(),
  })
  .openapi('ApiKey');

export const NewApiKeySchema = ApiKeySchema.extend({
  key: z.string().openapi({ description: 'The whole key: shown only now (only its hash is kept)', example: 'fc_live_AbC123xYz…' }),
}).openapi('ApiKeyCreated');

export function apiKeyView(k: CredentialRecord): z.infer<typeof ApiKeySchema> {
  return { id: k.id, name: k.name, prefix: k.label, mode: k.mode, permissions: k.grants, ...lifeView(k) };
}

export const OauthClientSchema = z
  .object({
    id: z.number().int(),
    clientId: z.string().openapi({ description: 'The public client_id of RFC 6749', example: 'fcc_4fQ2bWb7ZkR0mN1pXyT8' }),
    name: z.string().nullable(),
    mode: z.enum(['live', 'test']),
    scopes: z.array(z.string()).openapi({ description: 'Permission names its tokens may hold', example: ['vehicles:read', 'events:read'] }),
    ...lifeFields(),
  })
  .openapi('OauthClient');

export const NewOauthClientSchema = OauthClientSchema.extend({
  clientSecret: z.string().openapi({ description: 'Shown only now (only its hash is kept)', example: 'fcs_…' }),
}).openapi('OauthClientCreated');

export function oauthClientView(c: CredentialRecord): z.infer<typeof OauthClientSchema> {
  return { id: c.id, clientId: c.label, name: c.name, mode: c.mode, scopes: c.grants, ...lifeView(c) };
}
