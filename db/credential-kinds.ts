/** The two kinds of credential a user hands to software: API keys and OAuth clients. */
export type CredentialKind = 'api_key' | 'oauth_client';

export const CREDENTIAL_KIND_NAMES: readonly CredentialKind[] = ['api_key', 'oauth_client'];

/**
 * Where the two kinds differ, as data; their lifecycle (list, mint, revoke with what they minted,
 * audit) is one code path over both. `label` is the column kept in clear that names one (a key's
 * first characters, a client's public id), `grants` the column of permission names it may hand on;
 * `labelName` and `grantsName` are what the API, the audit log and the command line call those.
 */
export const CREDENTIAL_KINDS = {
  api_key: {
    table: 'api_keys', label: 'prefix', grants: 'permissions', labelName: 'prefix', grantsName: 'permissions',
    noun: 'API key', shortNoun: 'key',
    /** A prefix is only the start of the key. */
    labelEnd: '…',
  },
  oauth_client: {
    table: 'oauth_clients', label: 'client_id', grants: 'scopes', labelName: 'clientId', grantsName: 'scopes',
    noun: 'OAuth client', shortNoun: 'client',
    labelEnd: '',
  },
} as const satisfies Record<CredentialKind, object>;

/** `API key 7 (fc_live_AbC123…)`, `OAuth client 3 (fcc_4fQ2…)`: one credential, as messages name it. */
export function credentialName(kind: CredentialKind, id: number, label: string): string {
  const { noun, labelEnd } = CREDENTIAL_KINDS[kind];
  return `${noun} ${id} (${label}${labelEnd})`;
}
