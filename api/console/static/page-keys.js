// API keys: the signed-in user's keys, a new one (its secret shown once), and revoking one.
import { credentialPage } from './credential-page.js';

export const render = credentialPage({
  path: '/api-keys',
  noun: 'API key',
  grantsField: 'permissions',
  secretField: 'key',
  idColumn: { label: 'Prefix', text: (k) => k.prefix },
  intro: 'Keys let scripts and integrations use the API as you: send one in the header Authorization: Bearer <key>. A key never holds more than your role allows, and only the permissions given here.',
  secretLabel: (k) => `Your new API key ${k.name ?? k.prefix}.`,
});
